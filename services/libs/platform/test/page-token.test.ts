// Page tokens: what a client can and cannot do with the opaque cursor it was given.
import { describe, expect, it } from "vitest";
import { PageTokens } from "@qrplatform/platform";

const tokens = new PageTokens("test-secret");
const position = { accountId: "acc-1", scope: "ws-1", after: "2026-11-28T06:00:00.000Z", afterId: "qr-9" };

/** Every other spelling of the last base64url character that decodes to the same bits. */
function sameBitsSpellings(part: string): string[] {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const head = part.slice(0, -1);
  const bytes = Buffer.from(part, "base64url");
  return [...alphabet].map((c) => head + c).filter((s) => s !== part && Buffer.from(s, "base64url").equals(bytes));
}

describe("page tokens", () => {
  it("decodes a token in the account and scope it was issued for", () => {
    expect(tokens.decode(tokens.encode(position), "acc-1", "ws-1")).toEqual(position);
  });

  it("refuses a token from another account, another scope or another secret", () => {
    const token = tokens.encode(position);
    expect(tokens.decode(token, "acc-2", "ws-1")).toBeUndefined();
    expect(tokens.decode(token, "acc-1", "ws-2")).toBeUndefined();
    expect(new PageTokens("other-secret").decode(token, "acc-1", "ws-1")).toBeUndefined();
  });

  it("refuses a signature spelled differently even when it decodes to the same bytes", () => {
    const token = tokens.encode(position);
    const [payload, signature] = token.split(".") as [string, string];
    // A 32-byte HMAC leaves two unused bits in its last character, so three other spellings exist.
    const respellings = sameBitsSpellings(signature);
    expect(respellings).toHaveLength(3);
    for (const other of respellings) expect(tokens.decode(`${payload}.${other}`, "acc-1", "ws-1")).toBeUndefined();
  });

  it("refuses tokens that are not two base64url parts", () => {
    const token = tokens.encode(position);
    for (const bad of ["", ".", token.split(".")[0] ?? "", `${token}.x`, token.replace(".", "!")]) {
      expect(tokens.decode(bad, "acc-1", "ws-1")).toBeUndefined();
    }
  });
});
