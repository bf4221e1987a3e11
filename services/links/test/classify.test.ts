import { beforeAll, describe, expect, it } from "vitest";
import {
  scanClassifier,
  visitorKey,
  type ClassifiedRequest,
  type ScanClassifierOptions,
} from "../src/scans/recording/classify.js";
import { openCountryDatabase } from "../src/scans/recording/country.js";
import { redirectPathEnv } from "../src/redirects/redirect-path.js";

// Plain unit tests of scan classification, with the real bundled country database.

const UA = {
  iPhoneSafari:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  androidChrome:
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.113 Mobile Safari/537.36",
  iPadSafari:
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  androidTablet:
    "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36",
  windowsChrome:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36",
  macFirefox: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:126.0) Gecko/20100101 Firefox/126.0",
  ubuntuFirefox: "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0",
  chromeOs:
    "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.0.0 Safari/537.36",
  facebookInApp:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/468.0.0.44.107;FBBV/612343553;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5;FBRV/614133577]",
  instagramInApp:
    "Mozilla/5.0 (Linux; Android 13; SM-S918B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.179 Mobile Safari/537.36 Instagram 331.0.0.37.90 Android (33/13; 450dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 606558400)",
  samsungTv:
    "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36",
  slackbot: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
  facebook: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
  twitterbot: "Twitterbot/1.0",
  whatsApp: "WhatsApp/2.23.20.0 A",
  telegram: "TelegramBot (like TwitterBot)",
  discord: "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
  googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  googlebotSmartphone:
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/125.0.6422.60 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  curl: "curl/8.5.0",
  pythonRequests: "python-requests/2.31.0",
};

interface FakeRequest {
  peer?: string | undefined;
  headers?: Record<string, string>;
}

// proxy-addr (through `forwarded`) and the classifier read only these two fields. An explicit
// `peer: undefined` is a socket that has already closed.
const request = (init: FakeRequest = {}): ClassifiedRequest => ({
  headers: init.headers ?? {},
  socket: { remoteAddress: "peer" in init ? init.peer : "203.0.113.9" },
});

let countryOf: (address: string) => string;
beforeAll(async () => {
  countryOf = await openCountryDatabase();
});

const classifier = (options: Partial<ScanClassifierOptions> = {}) =>
  scanClassifier({ trustedProxies: [], countryOf: (address) => countryOf(address), ...options });

describe("the bundled country database", () => {
  // The package version is pinned, so these answers are fixed until it is deliberately upgraded.
  it("places well-known public addresses, IPv4 and IPv6", () => {
    expect(countryOf("8.8.8.8")).toBe("US");
    expect(countryOf("81.169.145.1")).toBe("DE");
    expect(countryOf("2a00:1450:4001::1")).toBe("DE");
  });

  it("reads IPv4-mapped IPv6 as the IPv4 address", () => {
    expect(countryOf("::ffff:8.8.8.8")).toBe("US");
  });

  it("knows nothing of private, loopback, link-local, shared or unspecified addresses", () => {
    for (const address of [
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "127.0.0.1",
      "169.254.1.1",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fd00::1",
    ]) {
      expect(countryOf(address), address).toBe("");
    }
  });

  it('answers "" for anything that is not a strictly written address', () => {
    for (const junk of ["", "junk", "1", "1.2.3", "0x08080808", "8.8.8.8:80", "[::1]", "08.8.8.8"]) {
      expect(countryOf(junk), junk).toBe("");
    }
  });

  it("is opened once per process", async () => {
    expect(await openCountryDatabase()).toBe(countryOf);
  });
});

describe("user agents", () => {
  const classify = classifier();
  const facts = (userAgent: string) => {
    const { deviceType, os, browser, automated } = classify(request({ headers: { "user-agent": userAgent } }));
    return { deviceType, os, browser, automated };
  };

  it("name the device, OS family and browser of people", () => {
    expect(facts(UA.iPhoneSafari)).toEqual({
      deviceType: "mobile",
      os: "iOS",
      browser: "Mobile Safari",
      automated: false,
    });
    expect(facts(UA.androidChrome)).toEqual({
      deviceType: "mobile",
      os: "Android",
      browser: "Chrome",
      automated: false,
    });
    expect(facts(UA.iPadSafari)).toEqual({
      deviceType: "tablet",
      os: "iOS",
      browser: "Mobile Safari",
      automated: false,
    });
    expect(facts(UA.androidTablet)).toEqual({
      deviceType: "tablet",
      os: "Android",
      browser: "Chrome",
      automated: false,
    });
    expect(facts(UA.windowsChrome)).toEqual({
      deviceType: "desktop",
      os: "Windows",
      browser: "Chrome",
      automated: false,
    });
    expect(facts(UA.macFirefox)).toEqual({ deviceType: "desktop", os: "macOS", browser: "Firefox", automated: false });
    expect(facts(UA.ubuntuFirefox)).toEqual({
      deviceType: "desktop",
      os: "Linux",
      browser: "Firefox",
      automated: false,
    });
    expect(facts(UA.chromeOs)).toEqual({
      deviceType: "desktop",
      os: "Chromium OS",
      browser: "Chrome",
      automated: false,
    });
  });

  it("count in-app browsers, where most QR scans land, as people", () => {
    expect(facts(UA.facebookInApp)).toEqual({ deviceType: "mobile", os: "iOS", browser: "Facebook", automated: false });
    expect(facts(UA.instagramInApp)).toEqual({
      deviceType: "mobile",
      os: "Android",
      browser: "Instagram",
      automated: false,
    });
  });

  it("call devices that are neither phones, tablets nor desktops other", () => {
    expect(facts(UA.samsungTv)).toMatchObject({ deviceType: "other", os: "Tizen", automated: false });
  });

  it("mark crawlers, link-preview fetchers and bare HTTP clients as automated", () => {
    for (const [name, userAgent] of Object.entries(UA).filter(([name]) =>
      [
        "slackbot",
        "facebook",
        "twitterbot",
        "whatsApp",
        "telegram",
        "discord",
        "googlebot",
        "googlebotSmartphone",
        "curl",
        "pythonRequests",
      ].includes(name),
    )) {
      expect(facts(userAgent).automated, name).toBe(true);
    }
    expect(facts(UA.curl)).toEqual({ deviceType: "other", os: "", browser: "", automated: true });
  });

  it("mark an empty, blank or missing User-Agent as automated", () => {
    expect(facts("").automated).toBe(true);
    expect(facts("   ").automated).toBe(true);
    expect(classify(request()).automated).toBe(true);
    expect(classify(request())).toMatchObject({ userAgent: "", deviceType: "other", os: "", browser: "" });
  });

  it("keep the raw User-Agent for hashing, cut to 512 characters", () => {
    expect(classify(request({ headers: { "user-agent": UA.iPhoneSafari } })).userAgent).toBe(UA.iPhoneSafari);
    const long = `${UA.windowsChrome} ${"x".repeat(2000)}`;
    expect(classify(request({ headers: { "user-agent": long } })).userAgent).toBe(long.slice(0, 512));
  });
});

describe("remembered verdicts", () => {
  it("give every repeat of an agent and an address the verdict of its first classification, address by address", () => {
    const lookups: string[] = [];
    const classify = classifier({
      countryOf: (address) => {
        lookups.push(address);
        return countryOf(address);
      },
    });
    const from = (address: string, userAgent: string) =>
      classify(request({ peer: address, headers: { "user-agent": userAgent } }));
    const first = from("8.8.8.8", UA.iPhoneSafari);
    for (let i = 0; i < 3; i++) {
      expect(from("8.8.8.8", UA.iPhoneSafari)).toEqual(first);
      // The same agent from elsewhere keeps its own address and country; a bot stays a bot.
      expect(from("2a00:1450:4001:82b::200e", UA.iPhoneSafari)).toMatchObject({
        clientAddress: "2a00:1450:4001:82b::200e",
        country: countryOf("2a00:1450:4001:82b::200e"),
        os: "iOS",
      });
      expect(from("8.8.8.8", UA.slackbot).automated).toBe(true);
    }
    expect(first).toMatchObject({
      country: "US",
      deviceType: "mobile",
      os: "iOS",
      browser: "Mobile Safari",
      automated: false,
    });
    // Countries are looked up on every scan (a cache of them missed more than it saved), always by the canonical address.
    expect(new Set(lookups)).toEqual(new Set(["8.8.8.8", "2a00:1450:4001:82b::200e"]));
  });

  it("follow X-Forwarded-For behind a trusted proxy, header by header", () => {
    const classify = classifier({ trustedProxies: ["loopback"] });
    const via = (peer: string, forwardedFor: string) =>
      classify(request({ peer, headers: { "user-agent": UA.iPhoneSafari, "x-forwarded-for": forwardedFor } }))
        .clientAddress;
    for (let i = 0; i < 2; i++) {
      expect(via("127.0.0.1", "8.8.8.8")).toBe("8.8.8.8");
      expect(via("127.0.0.1", "1.1.1.1, 127.0.0.2")).toBe("1.1.1.1");
      expect(via("127.0.0.1", "::ffff:1.1.1.1")).toBe("1.1.1.1");
      // The same header from a peer that is no proxy of ours is not believed.
      expect(via("203.0.113.9", "8.8.8.8")).toBe("203.0.113.9");
    }
  });
});

describe("the client address", () => {
  it("is the socket peer when no proxy is trusted, whatever X-Forwarded-For claims", () => {
    const facts = classifier()(request({ peer: "8.8.8.8", headers: { "x-forwarded-for": "81.169.145.1" } }));
    expect(facts).toMatchObject({ clientAddress: "8.8.8.8", country: "US" });
  });

  it("is the socket peer when the peer is not one of the trusted proxies (spoofing)", () => {
    const classify = classifier({ trustedProxies: ["10.0.0.0/8"], countryHeader: "cf-ipcountry" });
    const facts = classify(
      request({ peer: "8.8.8.8", headers: { "x-forwarded-for": "81.169.145.1", "cf-ipcountry": "DE" } }),
    );
    expect(facts).toMatchObject({ clientAddress: "8.8.8.8", country: "US" });
  });

  it("is the forwarded address when the peer is a trusted proxy", () => {
    const facts = classifier({ trustedProxies: ["10.0.0.0/8"] })(
      request({ peer: "10.0.0.2", headers: { "x-forwarded-for": "81.169.145.1" } }),
    );
    expect(facts).toMatchObject({ clientAddress: "81.169.145.1", country: "DE" });
  });

  it("is the hop in front of the last trusted proxy, not what the visitor wrote before it", () => {
    const classify = classifier({ trustedProxies: ["loopback", "uniquelocal"] });
    // The visitor sent "X-Forwarded-For: 6.6.6.6"; the edge proxy appended the real address, an inner proxy its own.
    const facts = classify(
      request({ peer: "127.0.0.1", headers: { "x-forwarded-for": "6.6.6.6, 8.8.8.8, 10.1.2.3" } }),
    );
    expect(facts.clientAddress).toBe("8.8.8.8");
  });

  it("falls back to the nearest readable hop when a trusted proxy forwarded junk, without throwing", () => {
    const classify = classifier({ trustedProxies: ["10.0.0.0/8"] });
    for (const junk of [
      "unknown",
      "not an address",
      "1",
      "0x08080808",
      "08.8.8.8",
      ",,,",
      "8.8.8.8, unknown",
      "999.1.1.1",
    ]) {
      const facts = classify(request({ peer: "10.0.0.2", headers: { "x-forwarded-for": junk } }));
      expect(facts.clientAddress, junk).toBe("10.0.0.2");
      expect(facts.country, junk).toBe("");
    }
    const behindInnerProxy = classify(
      request({ peer: "10.0.0.2", headers: { "x-forwarded-for": "garbage, 10.0.0.3" } }),
    );
    expect(behindInnerProxy.clientAddress).toBe("10.0.0.3");
    expect(classify(request({ peer: "10.0.0.2" })).clientAddress).toBe("10.0.0.2");
  });

  it("is a lone forwarded hop whenever that hop is an address, even a trusted proxy's own, and the peer when the header is empty", () => {
    const classify = classifier({ trustedProxies: ["10.0.0.0/8"] });
    const via = (forwardedFor: string) =>
      classify(request({ peer: "10.0.0.2", headers: { "x-forwarded-for": forwardedFor } })).clientAddress;
    expect(via("81.169.145.1")).toBe("81.169.145.1");
    // Nothing stands in front of it, so proxy-addr's walk stops there too.
    expect(via("10.0.0.3")).toBe("10.0.0.3");
    expect(via("")).toBe("10.0.0.2");
    // A new visitor on every scan: each answered for itself, none mistaken for the one before.
    for (let i = 1; i <= 300; i++) expect(via(`81.169.${i >> 8}.${i & 255}`)).toBe(`81.169.${i >> 8}.${i & 255}`);
  });

  it("drops a port a proxy appended to the forwarded address", () => {
    const classify = classifier({ trustedProxies: ["10.0.0.0/8"] });
    expect(classify(request({ peer: "10.0.0.2", headers: { "x-forwarded-for": "8.8.8.8:51234" } })).clientAddress).toBe(
      "8.8.8.8",
    );
    expect(
      classify(request({ peer: "10.0.0.2", headers: { "x-forwarded-for": "[2a00:1450:4001::1]:443" } })).clientAddress,
    ).toBe("2a00:1450:4001::1");
  });

  it("unwraps IPv4-mapped IPv6 wherever it appears, and trusts a mapped proxy as its IPv4 address", () => {
    expect(classifier()(request({ peer: "::ffff:8.8.8.8" }))).toMatchObject({
      clientAddress: "8.8.8.8",
      country: "US",
    });
    const classify = classifier({ trustedProxies: ["10.0.0.0/8"] });
    const facts = classify(request({ peer: "::ffff:10.0.0.2", headers: { "x-forwarded-for": "::ffff:81.169.145.1" } }));
    expect(facts).toMatchObject({ clientAddress: "81.169.145.1", country: "DE" });
  });

  it("spells IPv6 one way, so one visitor hashes the same", () => {
    expect(classifier()(request({ peer: "2A00:1450:4001:0:0:0:0:1" })).clientAddress).toBe("2a00:1450:4001::1");
  });

  it('is "" with no country when the socket is already gone', () => {
    expect(classifier({ trustedProxies: ["loopback"] })(request({ peer: undefined }))).toMatchObject({
      clientAddress: "",
      country: "",
    });
  });

  it("refuses a malformed trusted-proxy list when the classifier is built", () => {
    expect(() => classifier({ trustedProxies: ["10.0.0.0/33"] })).toThrow(TypeError);
    expect(() => classifier({ trustedProxies: ["proxy.internal"] })).toThrow(TypeError);
  });
});

describe("the country", () => {
  const classify = classifier({ trustedProxies: ["10.0.0.0/8"], countryHeader: "CF-IPCountry" });
  const viaProxy = (headers: Record<string, string>) =>
    classify(request({ peer: "10.0.0.2", headers: { "x-forwarded-for": "8.8.8.8", ...headers } }));

  it("comes from the trusted proxy's header, upper-cased, in preference to the database", () => {
    expect(viaProxy({ "cf-ipcountry": "DE" }).country).toBe("DE");
    expect(viaProxy({ "cf-ipcountry": "fr" }).country).toBe("FR");
  });

  it("is unknown when the proxy says so (XX) or sees a Tor exit (T1)", () => {
    expect(viaProxy({ "cf-ipcountry": "XX" }).country).toBe("");
    expect(viaProxy({ "cf-ipcountry": "T1" }).country).toBe("");
  });

  it("comes from the database when the header is absent or not two ASCII letters", () => {
    for (const value of ["", "DEU", "D", "1", "D1", "ßS", "DE, FR", "Ü"]) {
      expect(viaProxy({ "cf-ipcountry": value }).country, value).toBe("US");
    }
    expect(viaProxy({}).country).toBe("US");
  });

  it("is never taken from a header unless a country header is configured", () => {
    const facts = classifier({ trustedProxies: ["10.0.0.0/8"] })(
      request({ peer: "10.0.0.2", headers: { "x-forwarded-for": "8.8.8.8", "cf-ipcountry": "DE" } }),
    );
    expect(facts.country).toBe("US");
  });

  it('is "" for private and loopback visitors', () => {
    expect(classifier()(request({ peer: "127.0.0.1" })).country).toBe("");
    expect(classifier()(request({ peer: "::1" })).country).toBe("");
    expect(classifier()(request({ peer: "192.168.1.20" })).country).toBe("");
  });
});

describe("the referrer host", () => {
  const referrerHost = (referer?: string) =>
    classifier()(request({ headers: referer === undefined ? {} : { referer } })).referrerHost;

  it("is the lower-case hostname of an http(s) Referer, without port, path or credentials", () => {
    expect(referrerHost("https://WWW.Example.COM:8443/some/path?q=1#x")).toBe("www.example.com");
    expect(referrerHost("http://user:secret@news.example.org/")).toBe("news.example.org");
    expect(referrerHost("https://example.com./")).toBe("example.com");
    expect(referrerHost("https://bücher.example/")).toBe("xn--bcher-kva.example");
    expect(referrerHost("http://[2001:db8::1]:8080/")).toBe("[2001:db8::1]");
  });

  it('is "" when absent, invalid or not http(s)', () => {
    for (const referer of [
      undefined,
      "",
      "not a url",
      "/relative/path",
      "android-app://com.google.android.gm/",
      "javascript:alert(1)",
      "ftp://example.com/",
      "data:text/html,hi",
    ]) {
      expect(referrerHost(referer), String(referer)).toBe("");
    }
  });

  it('is "" when the hostname is longer than a DNS name can be', () => {
    const label = "a".repeat(63);
    const longest = `${label}.${label}.${label}.${"a".repeat(61)}`;
    expect(longest).toHaveLength(253);
    expect(referrerHost(`https://${longest}/`)).toBe(longest);
    expect(referrerHost(`https://${longest}a/`)).toBe("");
  });
});

describe("visitor keys", () => {
  const visitor = { clientAddress: "81.169.145.1", userAgent: UA.iPhoneSafari };

  it("are 22 base64url characters, stable for one visitor of one link", () => {
    const key = visitorKey("secret-1", "link-1", visitor);
    expect(key).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(visitorKey("secret-1", "link-1", { ...visitor })).toBe(key);
  });

  it("differ by link, secret, address and user agent", () => {
    const keys = [
      visitorKey("secret-1", "link-1", visitor),
      visitorKey("secret-1", "link-2", visitor),
      visitorKey("secret-2", "link-1", visitor),
      visitorKey("secret-1", "link-1", { ...visitor, clientAddress: "81.169.145.2" }),
      visitorKey("secret-1", "link-1", { ...visitor, userAgent: UA.androidChrome }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("keep the fields apart, so shifting text between them changes the key", () => {
    expect(visitorKey("s", "link-1", { clientAddress: "1.2.3.4", userAgent: "x" })).not.toBe(
      visitorKey("s", "link-1", { clientAddress: "1.2.3.4x", userAgent: "" }),
    );
  });

  it("never contain the address", () => {
    for (let i = 0; i < 200; i++) {
      const clientAddress = `8.8.${i}.8`;
      const key = visitorKey("secret-1", "link-1", { clientAddress, userAgent: "" });
      expect(key).not.toContain(clientAddress);
      expect(key).not.toContain(Buffer.from(clientAddress).toString("base64url"));
    }
  });
});

describe("the redirect path's environment", () => {
  it("reads TRUSTED_PROXIES as a comma-separated list and COUNTRY_HEADER as a header name", () => {
    expect(
      redirectPathEnv.parse({ TRUSTED_PROXIES: " 10.0.0.0/8, loopback ,", COUNTRY_HEADER: "cf-ipcountry" }),
    ).toEqual({
      TRUSTED_PROXIES: ["10.0.0.0/8", "loopback"],
      COUNTRY_HEADER: "cf-ipcountry",
      SCAN_RECORDING_THREAD: "true",
    });
    expect(redirectPathEnv.parse({}).TRUSTED_PROXIES).toEqual([]);
    expect(redirectPathEnv.safeParse({ COUNTRY_HEADER: "bad header" }).success).toBe(false);
  });

  it("records on a thread of its own unless SCAN_RECORDING_THREAD is false, and refuses anything but true or false", () => {
    expect(redirectPathEnv.parse({}).SCAN_RECORDING_THREAD).toBe("true");
    expect(redirectPathEnv.parse({ SCAN_RECORDING_THREAD: "" }).SCAN_RECORDING_THREAD).toBe("true");
    expect(redirectPathEnv.parse({ SCAN_RECORDING_THREAD: "false" }).SCAN_RECORDING_THREAD).toBe("false");
    expect(redirectPathEnv.safeParse({ SCAN_RECORDING_THREAD: "yes" }).success).toBe(false);
  });
});
