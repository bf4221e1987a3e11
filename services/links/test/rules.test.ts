import { describe, expect, it } from "vitest";
import { verificationOutcome } from "../src/domains/challenge.js";
import { parseHostname } from "../src/domains/hostname.js";
import { destinationUrlProblem, parseVanitySlug } from "@qrplatform/platform";
import { queryParameterProblems, redirectLocation } from "../src/links/destination-url.js";
import { generateSlug, SLUG_ALPHABET } from "../src/links/slugs.js";
import { parseRequestHost, shortDomainMatcher } from "../src/redirects/hosts.js";

// Plain unit tests of the pure rules; the component tests check the same rules through the RPCs.

describe("generated slugs", () => {
  it("are 8 characters of the look-alike-free lower-case alphabet, unique over many draws, using every character", () => {
    expect(SLUG_ALPHABET).toBe("23456789abcdefghjkmnpqrstuvwxyz");
    const slugs = Array.from({ length: 20_000 }, generateSlug);
    for (const slug of slugs) expect(slug).toMatch(/^[23456789abcdefghjkmnpqrstuvwxyz]{8}$/);
    expect(new Set(slugs).size).toBe(slugs.length);
    const counts = new Map<string, number>();
    for (const c of slugs.join("")) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect([...counts.keys()].sort().join("")).toBe(SLUG_ALPHABET);
    // 160,000 characters over 31 symbols: about 5,161 each; an unbiased source stays well within ±10%.
    for (const n of counts.values()) expect(Math.abs(n - 160_000 / 31)).toBeLessThan(516);
  });
});

describe("vanity slugs", () => {
  it("are stored in lower case", () => {
    expect(parseVanitySlug("Spring-Sale_2026")).toEqual({ slug: "spring-sale_2026" });
    expect(parseVanitySlug("abc")).toEqual({ slug: "abc" });
    expect(parseVanitySlug("a".repeat(64))).toEqual({ slug: "a".repeat(64) });
  });

  it("refuse the wrong length, characters and ends as invalid_format", () => {
    for (const bad of ["ab", "a".repeat(65), "-abc", "abc-", "_abc", "ab c", "abc/d", "ab.cd", "ünï", ""]) {
      const parsed = parseVanitySlug(bad);
      expect(parsed, bad).toHaveProperty("problem.reason", "invalid_format");
      expect(parsed).toHaveProperty("problem.field", "vanity_slug");
    }
  });

  it("refuse reserved names, in any case, as reserved", () => {
    for (const reserved of [
      "api",
      "DOCS",
      "healthz",
      "readyz",
      "admin",
      "static",
      "assets",
      "favicon.ico",
      "robots.txt",
      ".well-known",
    ]) {
      expect(parseVanitySlug(reserved), reserved).toHaveProperty("problem.reason", "reserved");
    }
  });
});

describe("destination URLs", () => {
  it("accept absolute http and https URLs", () => {
    for (const ok of [
      "https://example.com",
      "http://example.com/a?b=c#d",
      "https://例え.jp/パス",
      "https://example.com:8443/x",
    ]) {
      expect(destinationUrlProblem(ok), ok).toBeUndefined();
    }
  });

  it("refuse other schemes, relative URLs, credentials, control characters and overlong URLs", () => {
    const cases: [string, string][] = [
      ["javascript:alert(1)", "unsupported_scheme"],
      ["data:text/html,<script>alert(1)</script>", "unsupported_scheme"],
      ["ftp://example.com/file", "unsupported_scheme"],
      ["file:///etc/passwd", "unsupported_scheme"],
      ["/relative/path", "invalid_url"],
      ["example.com", "invalid_url"],
      ["https://user:pass@example.com/", "credentials_not_allowed"],
      ["https://user@example.com/", "credentials_not_allowed"],
      ["https://example.com/\r\nSet-Cookie: a=b", "invalid_characters"],
      ["https://example.com/\nx", "invalid_characters"],
      ["https://example.com/\tx", "invalid_characters"],
      ["https://example.com/\u0000", "invalid_characters"],
      ["https://example.com/\u0085", "invalid_characters"],
      [" https://example.com/", "invalid_url"],
      [`https://example.com/${"a".repeat(2029)}`, "too_long"],
      ["", "required"],
    ];
    for (const [url, reason] of cases) {
      expect(destinationUrlProblem(url), JSON.stringify(url)).toMatchObject({ field: "destination_url", reason });
    }
    expect(destinationUrlProblem(`https://example.com/${"a".repeat(2028)}`)).toBeUndefined();
  });

  it("merge parameters into the destination, replacing those of the same name", () => {
    expect(
      redirectLocation("https://example.com/p?utm_source=old&keep=1", { utm_source: "qr", utm_medium: "print" }),
    ).toBe("https://example.com/p?utm_source=qr&keep=1&utm_medium=print");
    expect(redirectLocation("https://example.com/p?a=1#frag", {})).toBe("https://example.com/p?a=1#frag");
    expect(redirectLocation("https://例え.jp/パス", { q: "a b" })).toBe(
      "https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9?q=a+b",
    );
  });

  it("limit query parameters", () => {
    expect(queryParameterProblems({ utm_source: "x" })).toEqual([]);
    expect(
      queryParameterProblems(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, "v"]))),
    ).toHaveLength(1);
    expect(queryParameterProblems({ "": "v" })[0]?.field).toBe("query_parameters");
    expect(queryParameterProblems({ a: "x".repeat(1001) })).toHaveLength(1);
    expect(queryParameterProblems({ a: "x\ny" })).toHaveLength(1);
  });
});

describe("hostnames", () => {
  it("are trimmed, lower-cased, stripped of one trailing dot and converted to ASCII", () => {
    expect(parseHostname("  Go.Example.COM. ")).toEqual({ hostname: "go.example.com" });
    expect(parseHostname("Bücher.example.org")).toEqual({ hostname: "xn--bcher-kva.example.org" });
    expect(parseHostname("例え.jp")).toEqual({ hostname: "xn--r8jz45g.jp" });
    expect(parseHostname("a-b.c-d.example.com")).toEqual({ hostname: "a-b.c-d.example.com" });
  });

  it("refuse IP addresses, localhost, single labels, bad labels and URLs", () => {
    const cases: [string, string][] = [
      ["127.0.0.1", "ip_address"],
      ["127.1", "ip_address"],
      ["0x7f.1", "ip_address"],
      ["::1", "ip_address"],
      ["[::1]", "ip_address"],
      ["1.2.3.4", "ip_address"],
      ["example.123", "invalid_format"],
      ["localhost", "not_public"],
      ["app.localhost", "not_public"],
      ["printer.local", "not_public"],
      ["com", "single_label"],
      ["intranet", "single_label"],
      [`${"a".repeat(64)}.example.com`, "invalid_format"],
      [`${"abcdefghi.".repeat(26)}com`, "too_long"],
      ["-a.example.com", "invalid_format"],
      ["a-.example.com", "invalid_format"],
      ["a..example.com", "invalid_format"],
      ["a_b.example.com", "invalid_format"],
      ["*.example.com", "invalid_format"],
      ["https://example.com", "invalid_format"],
      ["example.com/path", "invalid_format"],
      ["example.com:443", "invalid_format"],
      ["user@example.com", "invalid_format"],
      ["exa mple.com", "invalid_format"],
      ["", "required"],
      ["  .", "required"],
    ];
    for (const [input, reason] of cases) {
      expect(parseHostname(input), input).toEqual({ problem: expect.objectContaining({ field: "hostname", reason }) });
    }
    expect(parseHostname(`${"a".repeat(63)}.example.com`)).toHaveProperty("hostname");
    // 253 characters is the longest name DNS allows.
    expect(parseHostname(`${"abcdefghi.".repeat(25)}com`)).toHaveProperty("hostname");
  });
});

describe("request hosts", () => {
  it("match the short domain by name and port, with loopback names interchangeable", () => {
    const isShort = shortDomainMatcher("https://s.qr.example");
    const parse = (h: string) => parseRequestHost(h)!;
    expect(isShort(parse("s.qr.example"))).toBe(true);
    expect(isShort(parse("S.QR.Example."))).toBe(true);
    expect(isShort(parse("s.qr.example:443"))).toBe(true);
    expect(isShort(parse("s.qr.example:8443"))).toBe(false);
    expect(isShort(parse("other.example"))).toBe(false);

    const local = shortDomainMatcher("http://127.0.0.1:8080");
    expect(local(parse("127.0.0.1:8080"))).toBe(true);
    expect(local(parse("localhost:8080"))).toBe(true);
    expect(local(parse("[::1]:8080"))).toBe(true);
    expect(local(parse("127.0.0.1:9090"))).toBe(false);
  });

  it("refuse anything that is not a host with an optional port", () => {
    for (const bad of ["", "a b", "user@host", "host/path", "host?x"])
      expect(parseRequestHost(bad), bad).toBeUndefined();
    expect(parseRequestHost("Go.Example.com:8080")).toEqual({ hostname: "go.example.com", port: "8080" });
  });
});

describe("the verification policy", () => {
  const name = "_qr-platform-challenge.go.example.com";
  const expected = "qr-platform-verification=abc";

  it("verifies on the expected value among others and fails on definite answers", () => {
    expect(verificationOutcome("pending", name, expected, { kind: "records", values: ["other", expected] })).toEqual({
      state: "verified",
    });
    expect(verificationOutcome("verified", name, expected, { kind: "records", values: ["wrong"] })).toMatchObject({
      state: "failed",
    });
    expect(verificationOutcome("pending", name, expected, { kind: "no_domain" })).toMatchObject({
      state: "failed",
      reason: expect.stringContaining("NXDOMAIN"),
    });
    expect(verificationOutcome("failed", name, expected, { kind: "no_records" })).toMatchObject({ state: "failed" });
  });

  it("keeps a verified domain verified when DNS cannot answer, and changes nothing when the resolver is unreachable", () => {
    expect(verificationOutcome("pending", name, expected, { kind: "timeout" })).toMatchObject({
      state: "failed",
      reason: expect.stringContaining("timed out"),
    });
    expect(verificationOutcome("verified", name, expected, { kind: "timeout" })).toHaveProperty("unavailable");
    expect(
      verificationOutcome("verified", name, expected, { kind: "server_failure", code: "ESERVFAIL" }),
    ).toHaveProperty("unavailable");
    expect(
      verificationOutcome("pending", name, expected, { kind: "unreachable", code: "ECONNREFUSED" }),
    ).toHaveProperty("unavailable");
  });
});
