// Password hashes: scrypt with the cost in the string, a fresh salt each time, and nothing but the
// right password (in any Unicode spelling of it) verifying.
import { describe, expect, it } from "vitest";
import { hashPassword, PASSWORD_HASH_COST, verifyPassword } from "@qrplatform/routing";

// A cheap cost for the many hashes below; one test runs the real one.
const CHEAP = { ln: 4, r: 8, p: 1 };

describe("password hashes", () => {
  it("verify the password they were made from, at the production cost", async () => {
    const stored = await hashPassword("correct horse battery");
    expect(stored).toMatch(/^\$scrypt\$ln=15,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(PASSWORD_HASH_COST).toEqual({ ln: 15, r: 8, p: 1 });
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
  });

  it("salt each hash anew and never hold the password", async () => {
    const [a, b] = await Promise.all([hashPassword("same password", CHEAP), hashPassword("same password", CHEAP)]);
    expect(a).not.toBe(b);
    expect(a).not.toContain("same password");
    expect(Buffer.from(a.split("$")[4]!, "base64").toString("latin1")).not.toContain("same");
  });

  it("refuse near misses", async () => {
    const stored = await hashPassword("password1", CHEAP);
    for (const guess of ["password", "password12", "Password1", " password1", "password1 ", ""])
      expect(await verifyPassword(guess, stored)).toBe(false);
  });

  it("take either Unicode spelling of the same password", async () => {
    const stored = await hashPassword("caf\u00e9 au lait", CHEAP);
    expect(await verifyPassword("cafe\u0301 au lait", stored)).toBe(true);
  });

  it("match nothing against a stored value that is not a hash", async () => {
    const stored = await hashPassword("password1", CHEAP);
    for (const bad of ["", "password1", stored.replace("ln=4", "ln=40"), stored.slice(0, -2), "$scrypt$ln=4,r=8,p=1$$"])
      expect(await verifyPassword("password1", bad)).toBe(false);
  });
});
