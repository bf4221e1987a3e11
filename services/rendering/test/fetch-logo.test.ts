import {
  createServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type RequestListener,
  type Server,
} from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readLogoDataUri } from "../src/design/logo-data-uri.js";
import { isPublicAddress, type ResolvedAddress } from "@qrplatform/platform";
import { EMBEDDED_IPV4_ADDRESSES, EMBEDDED_PUBLIC_IPV4_ADDRESSES } from "@qrplatform/testing";
import { fetchLogo, type LogoFetchOptions } from "../src/logo/fetch-logo.js";

/** A loopback HTTP server that records every request it receives and answers with `handle`. */
interface TestServer {
  server: Server;
  port: number;
  received: { url: string; headers: IncomingHttpHeaders }[];
  handle: RequestListener;
  url(path: string): string;
}

async function startServer(host: string, handle: RequestListener): Promise<TestServer> {
  const testServer: TestServer = {
    server: createServer((request, response) => {
      testServer.received.push({ url: request.url ?? "", headers: request.headers });
      testServer.handle(request, response);
    }),
    port: 0,
    received: [],
    handle,
    url: (path) => `http://${host}:${testServer.port}${path}`,
  };
  await new Promise<void>((resolve) => testServer.server.listen(0, host, resolve));
  testServer.port = (testServer.server.address() as AddressInfo).port;
  return testServer;
}

function stop({ server }: TestServer): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

const answer =
  (status: number, headers: OutgoingHttpHeaders, body: Buffer | string = ""): RequestListener =>
  (_request, response) => {
    response.writeHead(status, headers).end(body);
  };

const redirect = (status: number, location: string) => answer(status, { location });

/** Resolves every host name to the test server's address, recording the names asked for. */
function lookupTo(address: string, asked: string[] = []) {
  return async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    return [{ address, family: 4 }];
  };
}

let png: Buffer;
let jpeg: Buffer;
/** Serves real logos, so that a request that slips through would come back as a logo, not a problem. */
let canary: TestServer;
/** Stands in for a public server; tests allow its address explicitly. */
let origin: TestServer;
const servePng = () => answer(200, { "content-type": "image/png" }, png);
const allowOrigin: LogoFetchOptions = { isAllowedAddress: (address) => address === "127.0.0.1" };

beforeAll(async () => {
  const red = sharp({ create: { width: 8, height: 8, channels: 3, background: "#f00" } });
  png = await red.clone().png().toBuffer();
  jpeg = await red.clone().jpeg().toBuffer();
  // Linux routes all of 127/8 to loopback, so this is a second local host.
  canary = await startServer("127.0.0.2", servePng());
  origin = await startServer("127.0.0.1", servePng());
});

afterEach(() => {
  canary.received.length = 0;
  origin.received.length = 0;
  origin.handle = servePng();
  origin.server.closeAllConnections();
});

afterAll(async () => {
  await stop(canary);
  await stop(origin);
});

describe("isPublicAddress", () => {
  it.each([
    "127.0.0.1",
    "127.0.0.2",
    "::1",
    "0.0.0.0",
    "::",
    "169.254.169.254",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "224.0.0.1",
    "ff02::1",
    "255.255.255.255",
    "240.0.0.1",
    "2001:db8::1",
    "010.0.0.1",
    "127.1",
    "2130706433",
    "example.com",
    "",
  ])("refuses %j", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", ...EMBEDDED_PUBLIC_IPV4_ADDRESSES])(
    "accepts %j",
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it.each(EMBEDDED_IPV4_ADDRESSES)("refuses $address ($form of $inside)", ({ address }) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});

describe("IPv4 carried inside IPv6", () => {
  it.each(EMBEDDED_IPV4_ADDRESSES)(
    "refuses a logo at [$address] ($form of $inside), without a request",
    async ({ address }) => {
      const result = await fetchLogo(`http://[${address}]:${canary.port}/logo.png`);
      expect(result).toMatchObject({ reason: "forbidden_address" });
      expect(canary.received).toHaveLength(0);
    },
  );

  it.each(EMBEDDED_IPV4_ADDRESSES)(
    "refuses a logo host that resolves to $address ($form of $inside)",
    async ({ address }) => {
      const result = await fetchLogo(`http://logo.test:${canary.port}/logo.png`, { lookup: lookupTo(address) });
      expect(result).toMatchObject({ reason: "forbidden_address" });
      expect(canary.received).toHaveLength(0);
    },
  );
});

describe("addresses refused before connecting", () => {
  it("refuses a URL that names a loopback address, without a request reaching it", async () => {
    const result = await fetchLogo(canary.url("/logo.png"));
    expect(result).toMatchObject({ reason: "forbidden_address" });
    expect(canary.received).toHaveLength(0);
  });

  it.each([
    "http://[::1]:PORT/logo.png",
    "http://0.0.0.0:PORT/logo.png",
    "http://[::ffff:127.0.0.2]:PORT/logo.png",
    "http://2130706434:PORT/logo.png",
  ])("refuses the address literal %s", async (url) => {
    const result = await fetchLogo(url.replace("PORT", String(canary.port)));
    expect(result).toMatchObject({ reason: "forbidden_address" });
    expect(canary.received).toHaveLength(0);
  });

  it("refuses a host name that resolves to a loopback address, without saying which", async () => {
    const result = await fetchLogo(`http://logo.test:${canary.port}/logo.png`, { lookup: lookupTo("127.0.0.2") });
    expect(result).toEqual({
      reason: "forbidden_address",
      description: "resolves to a private, loopback or link-local address",
    });
    expect(canary.received).toHaveLength(0);
  });

  it("refuses a host name when any one of its addresses is refused", async () => {
    const lookup = async (): Promise<ResolvedAddress[]> => [
      { address: "127.0.0.1", family: 4 },
      { address: "127.0.0.2", family: 4 },
    ];
    const result = await fetchLogo(`http://logo.test:${origin.port}/logo.png`, { ...allowOrigin, lookup });
    expect(result).toMatchObject({ reason: "forbidden_address" });
    expect(origin.received).toHaveLength(0);
    expect(canary.received).toHaveLength(0);
  });
});

describe("fetching a logo", () => {
  it("returns the PNG with its canonical data URI, asking only for images and sending no credentials", async () => {
    const result = await fetchLogo(origin.url("/logo.png"), allowOrigin);
    const dataUri = `data:image/png;base64,${png.toString("base64")}`;
    expect(result).toEqual({ mediaType: "image/png", bytes: png, dataUri });
    expect(readLogoDataUri(dataUri)).toEqual(result);
    const headers = origin.received[0]?.headers;
    expect(headers).toMatchObject({ accept: "image/png, image/jpeg", "user-agent": "qr-platform-logo-fetcher" });
    expect(headers).not.toHaveProperty("cookie");
    expect(headers).not.toHaveProperty("authorization");
  });

  it("returns a JPEG, ignoring parameters of its content type", async () => {
    origin.handle = answer(200, { "content-type": "Image/JPEG; charset=binary" }, jpeg);
    const result = await fetchLogo(origin.url("/logo.jpg"), allowOrigin);
    expect(result).toMatchObject({ mediaType: "image/jpeg", bytes: jpeg });
  });

  it("accepts a body of exactly maxBytes", async () => {
    const body = Buffer.concat([png, Buffer.alloc(100)]);
    origin.handle = answer(200, { "content-type": "image/png" }, body);
    const result = await fetchLogo(origin.url("/logo.png"), { ...allowOrigin, maxBytes: body.length });
    expect(result).toMatchObject({ mediaType: "image/png", bytes: body });
  });

  it("connects to the address it checked, keeping the URL's host name in the request", async () => {
    // Were the name looked up again when connecting, a rebinding DNS server could answer differently.
    const answers = ["127.0.0.1", "127.0.0.2"];
    const asked: string[] = [];
    const rebinding = async (hostname: string): Promise<ResolvedAddress[]> => {
      asked.push(hostname);
      return [{ address: answers[Math.min(asked.length - 1, 1)]!, family: 4 }];
    };
    const result = await fetchLogo(`http://logo.test:${origin.port}/logo.png`, { ...allowOrigin, lookup: rebinding });
    expect(result).toMatchObject({ mediaType: "image/png" });
    expect(asked).toEqual(["logo.test"]);
    expect(origin.received.map(({ headers }) => headers.host)).toEqual([`logo.test:${origin.port}`]);
    expect(canary.received).toHaveLength(0);
  });
});

describe("redirects", () => {
  it.each([301, 302, 303, 307, 308])("follows a relative redirect with status %i", async (status) => {
    origin.handle = (request, response) =>
      request.url === "/moved" ? redirect(status, "/logo.png")(request, response) : servePng()(request, response);
    const result = await fetchLogo(origin.url("/moved"), allowOrigin);
    expect(result).toMatchObject({ mediaType: "image/png" });
    expect(origin.received.map(({ url }) => url)).toEqual(["/moved", "/logo.png"]);
  });

  /** Redirects /hops/n to /hops/n-1, and serves the logo at /hops/0. */
  const hops: RequestListener = (request, response) => {
    const left = Number(request.url?.split("/").pop());
    if (left === 0) servePng()(request, response);
    else redirect(302, `/hops/${left - 1}`)(request, response);
  };

  it("follows as many redirects as allowed, and refuses one more", async () => {
    origin.handle = hops;
    const allowed = await fetchLogo(origin.url("/hops/2"), { ...allowOrigin, maxRedirects: 2 });
    expect(allowed).toMatchObject({ mediaType: "image/png" });
    origin.received.length = 0;
    const result = await fetchLogo(origin.url("/hops/3"), { ...allowOrigin, maxRedirects: 2 });
    expect(result).toMatchObject({ reason: "logo_unreachable" });
    expect(origin.received.map(({ url }) => url)).toEqual(["/hops/3", "/hops/2", "/hops/1"]);
  });

  it("follows three redirects by default", async () => {
    origin.handle = hops;
    expect(await fetchLogo(origin.url("/hops/3"), allowOrigin)).toMatchObject({ mediaType: "image/png" });
    expect(await fetchLogo(origin.url("/hops/4"), allowOrigin)).toMatchObject({ reason: "logo_unreachable" });
  });

  it("refuses a redirect to a loopback address, without a request reaching it", async () => {
    origin.handle = redirect(302, canary.url("/logo.png"));
    const result = await fetchLogo(origin.url("/moved"), allowOrigin);
    expect(result).toMatchObject({ reason: "forbidden_address" });
    expect(canary.received).toHaveLength(0);
  });

  it("looks up the host name of every hop", async () => {
    origin.handle = (request, response) =>
      request.url === "/moved"
        ? redirect(302, `http://cdn.test:${origin.port}/logo.png`)(request, response)
        : servePng()(request, response);
    const asked: string[] = [];
    const lookup = lookupTo("127.0.0.1", asked);
    const result = await fetchLogo(`http://logo.test:${origin.port}/moved`, { ...allowOrigin, lookup });
    expect(result).toMatchObject({ mediaType: "image/png" });
    expect(asked).toEqual(["logo.test", "cdn.test"]);
    const hosts = origin.received.map(({ headers }) => headers.host);
    expect(hosts).toEqual([`logo.test:${origin.port}`, `cdn.test:${origin.port}`]);
  });

  it("refuses a redirect to a host name that resolves to a loopback address", async () => {
    origin.handle = redirect(302, `http://internal.test:${canary.port}/logo.png`);
    const lookup = async (hostname: string): Promise<ResolvedAddress[]> => [
      { address: hostname === "internal.test" ? "127.0.0.2" : "127.0.0.1", family: 4 },
    ];
    const result = await fetchLogo(`http://logo.test:${origin.port}/moved`, { ...allowOrigin, lookup });
    expect(result).toMatchObject({ reason: "forbidden_address" });
    expect(canary.received).toHaveLength(0);
  });

  it.each(["ftp://127.0.0.1/logo.png", "http://user:secret@127.0.0.1:PORT/logo.png", "http://[oops"])(
    "refuses a redirect to %s as an invalid logo URL",
    async (location) => {
      origin.handle = redirect(302, location.replace("PORT", String(origin.port)));
      const result = await fetchLogo(origin.url("/moved"), allowOrigin);
      expect(result).toMatchObject({ reason: "invalid_logo" });
      expect(origin.received).toHaveLength(1);
    },
  );

  it("treats a redirect without a location as unreachable", async () => {
    origin.handle = answer(302, {});
    expect(await fetchLogo(origin.url("/moved"), allowOrigin)).toMatchObject({ reason: "logo_unreachable" });
  });
});

describe("URLs refused as invalid", () => {
  it.each([
    "ftp://127.0.0.1:PORT/logo.png",
    "javascript:alert(1)",
    "http://user:pass@127.0.0.1:PORT/logo.png",
    "http://user@127.0.0.1:PORT/logo.png",
    "data:image/png;base64,iVBORw0KGgo=",
    "not a URL",
    "",
  ])("refuses %j without a request", async (url) => {
    const result = await fetchLogo(url.replace("PORT", String(origin.port)), allowOrigin);
    expect(result).toMatchObject({ reason: "invalid_logo" });
    expect(origin.received).toHaveLength(0);
  });
});

describe("content that is not a logo", () => {
  it.each(["text/html", "image/svg+xml", "image/gif", "application/octet-stream", undefined])(
    "refuses the content type %s before reading the body",
    async (contentType) => {
      // The body never ends: only refusing on the header gives invalid_logo rather than a timeout.
      origin.handle = (_request, response) => {
        response.writeHead(200, contentType ? { "content-type": contentType } : {}).write(png);
      };
      const result = await fetchLogo(origin.url("/logo"), { ...allowOrigin, timeoutMs: 2000 });
      expect(result).toMatchObject({ reason: "invalid_logo" });
    },
  );

  it.each([
    ["JPEG", () => jpeg],
    ["HTML", () => Buffer.from("<!doctype html><p>not an image</p>")],
    ["empty", () => Buffer.alloc(0)],
  ])("refuses %s bytes served as image/png", async (_kind, body) => {
    origin.handle = answer(200, { "content-type": "image/png" }, body());
    expect(await fetchLogo(origin.url("/logo.png"), allowOrigin)).toMatchObject({ reason: "invalid_logo" });
  });
});

describe("size", () => {
  const maxBytes = 1000;
  const oversized = () => Buffer.concat([png, Buffer.alloc(2 * maxBytes)]);

  it("refuses a body over maxBytes that declares its length", async () => {
    origin.handle = answer(200, { "content-type": "image/png", "content-length": oversized().length }, oversized());
    const result = await fetchLogo(origin.url("/logo.png"), { ...allowOrigin, maxBytes });
    expect(result).toEqual({ reason: "too_large", description: "must be at most 1000 bytes" });
  });

  it("refuses on the declared length alone, without waiting for the body", async () => {
    origin.handle = (_request, response) => {
      response.writeHead(200, { "content-type": "image/png", "content-length": oversized().length }).flushHeaders();
    };
    const result = await fetchLogo(origin.url("/logo.png"), { ...allowOrigin, maxBytes, timeoutMs: 2000 });
    expect(result).toMatchObject({ reason: "too_large" });
  });

  it("stops reading a body of unknown length once it passes maxBytes", async () => {
    // The body never ends: only stopping at the limit gives too_large rather than a timeout.
    origin.handle = (_request, response) => {
      response.writeHead(200, { "content-type": "image/png" });
      response.write(png);
      response.write(Buffer.alloc(maxBytes));
    };
    const result = await fetchLogo(origin.url("/logo.png"), { ...allowOrigin, maxBytes, timeoutMs: 2000 });
    expect(result).toMatchObject({ reason: "too_large" });
    expect(origin.received[0]?.headers).not.toHaveProperty("content-length");
  });

  it("describes the default limit in KiB", async () => {
    const body = Buffer.alloc(256 * 1024 + 1);
    origin.handle = answer(200, { "content-type": "image/png", "content-length": body.length }, body);
    const result = await fetchLogo(origin.url("/logo.png"), allowOrigin);
    expect(result).toEqual({ reason: "too_large", description: "must be at most 256 KiB" });
  });
});

describe("servers that do not deliver", () => {
  it.each([404, 500])("treats HTTP %i as unreachable", async (status) => {
    origin.handle = answer(status, { "content-type": "image/png" }, png);
    expect(await fetchLogo(origin.url("/logo.png"), allowOrigin)).toMatchObject({ reason: "logo_unreachable" });
  });

  it("gives up on a server that never answers", async () => {
    origin.handle = () => {};
    const result = await fetchLogo(origin.url("/logo.png"), { ...allowOrigin, timeoutMs: 300 });
    expect(result).toEqual({ reason: "logo_unreachable", description: "did not answer in time" });
    expect(origin.received).toHaveLength(1);
  });

  it("gives up on a server that stops part way through the body", async () => {
    origin.handle = (_request, response) => {
      response.writeHead(200, { "content-type": "image/png", "content-length": png.length });
      response.write(png.subarray(0, 10));
    };
    const result = await fetchLogo(origin.url("/logo.png"), { ...allowOrigin, timeoutMs: 300 });
    expect(result).toEqual({ reason: "logo_unreachable", description: "did not answer in time" });
  });

  it("gives up on a host name that never resolves", async () => {
    const lookup = () => new Promise<ResolvedAddress[]>(() => {});
    const result = await fetchLogo("http://logo.test/logo.png", { ...allowOrigin, lookup, timeoutMs: 300 });
    expect(result).toEqual({ reason: "logo_unreachable", description: "did not answer in time" });
  });

  it.each([
    ["fails", () => Promise.reject(new Error("ENOTFOUND"))],
    ["finds no address", () => Promise.resolve([])],
  ] as const)("treats a host name whose lookup %s as unreachable", async (_outcome, lookup) => {
    const result = await fetchLogo("http://logo.test/logo.png", { ...allowOrigin, lookup });
    expect(result).toEqual({ reason: "logo_unreachable", description: "has a host name that could not be resolved" });
  });

  it("treats a refused connection as unreachable", async () => {
    const closed = await startServer("127.0.0.1", servePng());
    await stop(closed);
    const result = await fetchLogo(closed.url("/logo.png"), allowOrigin);
    expect(result).toEqual({ reason: "logo_unreachable", description: "could not be reached" });
  });
});
