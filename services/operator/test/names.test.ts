import { describe, expect, it } from "vitest";
import { childLabels, childNames, hostnameLabelValue } from "../src/custom-domain.js";

describe("child names", () => {
  it("are the hostname, and the hostname with -tls for the secret", () => {
    expect(childNames("go.example.com")).toEqual({
      route: "go.example.com",
      certificate: "go.example.com",
      secret: "go.example.com-tls",
    });
  });

  it("fall back to a stable hash when the secret's name would exceed 253 characters", () => {
    const long = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(57)}.com`;
    expect(long.length).toBe(253);
    const names = childNames(long);
    expect(names.route).toMatch(/^custom-domain-[0-9a-f]{40}$/);
    expect(names.secret).toBe(`${names.route}-tls`);
    expect(childNames(long)).toEqual(names);
    expect(childNames(long.replace("a", "e")).route).not.toBe(names.route);
    // 249 characters still fit with "-tls".
    expect(childNames(long.slice(4)).route).toBe(long.slice(4));
  });

  it("label the hostname when it fits a label value, else its hash", () => {
    expect(hostnameLabelValue("go.example.com")).toBe("go.example.com");
    const long = `${"x".repeat(60)}.example.com`;
    expect(hostnameLabelValue(long)).toMatch(/^sha256-[0-9a-f]{56}$/);
    expect(hostnameLabelValue(long)).toHaveLength(63);
    expect(childLabels("go.example.com")).toEqual({
      "app.kubernetes.io/managed-by": "qr-platform-operator",
      "qr-platform.io/hostname": "go.example.com",
    });
  });
});
