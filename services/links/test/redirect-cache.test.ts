// The redirector's cache: no database round trip for a warm link, and every change to a link or a
// custom domain taking effect at once in this process and within a second in every other one,
// Redis or no Redis.
import { randomUUID } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import { createClient } from "redis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LinkStatus, type Link } from "@qrplatform/api/links";
import { inProcessTransport, listenHttp, type HttpServer } from "@qrplatform/platform";
import {
  INVALIDATION_CHANNEL,
  memoryInvalidationBus,
  redisInvalidationBus,
  type InvalidationBus,
  type InvalidationEvent,
  type LinkChange,
} from "../src/redirects/invalidations.js";
import { cachedResolver, type CachedResolver } from "../src/redirects/redirect-cache.js";
import { buildRedirector, resolveVia, type RedirectTarget, type ResolveLink } from "../src/redirects/redirector.js";
import { credentials, logger, SHORT_HOST, startLinks, type LinksStack } from "./support/links-stack.js";
import { freePort, hasRedisServer, killRedis, startRedis } from "@qrplatform/testing";

/** A resolver that counts its calls: each one stands for a database round trip. */
function counting(resolve: ResolveLink): ResolveLink & { calls: number } {
  const counted = Object.assign(
    (host: string, slug: string) => {
      counted.calls++;
      return resolve(host, slug);
    },
    { calls: 0 },
  );
  return counted;
}

/** A clock the test moves by hand. */
function manualClock() {
  let ms = 1_000_000;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

/** A promise the test settles by hand. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const target = (linkId: string, location: string, paused = false): RedirectTarget => ({
  linkId,
  accountId: "account",
  location: paused ? "" : location,
  paused,
});

/** Polls until `check` holds, for at most `withinMs`; returns how long it took. */
async function within(withinMs: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - started;
}

describe("cachedResolver", () => {
  const links = new Map<string, RedirectTarget>();
  const fromMap = () => counting(async (host, slug) => links.get(`${host.toLowerCase()}/${slug.toLowerCase()}`));
  let cache: CachedResolver | undefined;
  afterEach(() => {
    cache?.close();
    links.clear();
  });

  it("resolves a warm link without asking again, whatever the spelling of host and slug", async () => {
    const resolve = fromMap();
    cache = cachedResolver(resolve, memoryInvalidationBus());
    links.set("s.qr.example/abc", target("l1", "https://example.com/a"));
    for (let i = 0; i < 100; i++) {
      const [host, slug] = i % 2 === 0 ? ["s.qr.example", "abc"] : ["s.qr.example", "ABC"];
      expect(await cache.resolve(host, slug)).toEqual(target("l1", "https://example.com/a"));
    }
    expect(resolve.calls).toBe(1);
  });

  it("shares one lookup among concurrent requests for the same link", async () => {
    const pending = deferred<RedirectTarget | undefined>();
    const resolve = counting(() => pending.promise);
    cache = cachedResolver(resolve, memoryInvalidationBus());
    const answers = Promise.all(Array.from({ length: 50 }, () => cache!.resolve("s.qr.example", "abc")));
    pending.resolve(target("l1", "https://example.com/a"));
    expect(new Set((await answers).map((a) => a?.location))).toEqual(new Set(["https://example.com/a"]));
    expect(resolve.calls).toBe(1);
  });

  it("keeps a miss for a second at most, and never keeps an error", async () => {
    const clock = manualClock();
    let failing = true;
    const resolve = counting(async () => {
      if (failing) throw new Error("database down");
      return undefined;
    });
    cache = cachedResolver(resolve, memoryInvalidationBus(), { now: clock.now });
    await expect(cache.resolve("s.qr.example", "nope")).rejects.toThrow("database down");
    await expect(cache.resolve("s.qr.example", "nope")).rejects.toThrow("database down");
    expect(resolve.calls).toBe(2);

    failing = false;
    for (let i = 0; i < 10; i++) expect(await cache.resolve("s.qr.example", "nope")).toBeUndefined();
    expect(resolve.calls).toBe(3);
    clock.advance(999);
    await cache.resolve("s.qr.example", "nope");
    expect(resolve.calls).toBe(3);
    clock.advance(1);
    await cache.resolve("s.qr.example", "nope");
    expect(resolve.calls).toBe(4);
  });

  it("keeps a link for its TTL at most, as a safety net", async () => {
    const clock = manualClock();
    const resolve = fromMap();
    cache = cachedResolver(resolve, memoryInvalidationBus(), { now: clock.now, ttlMs: 60_000 });
    links.set("s.qr.example/abc", target("l1", "https://example.com/a"));
    await cache.resolve("s.qr.example", "abc");
    clock.advance(59_999);
    expect(resolve.calls).toBe(1);
    clock.advance(1);
    await cache.resolve("s.qr.example", "abc");
    expect(resolve.calls).toBe(2);
  });

  it("looks a link still scanned up again in the background between 70 % and 95 % of its TTL", async () => {
    const clock = manualClock();
    const resolve = fromMap();
    cache = cachedResolver(resolve, memoryInvalidationBus(), { now: clock.now, ttlMs: 60_000 });
    links.set("s.qr.example/abc", target("l1", "https://example.com/a"));
    await cache.resolve("s.qr.example", "abc");
    clock.advance(41_999);
    await cache.resolve("s.qr.example", "abc");
    expect(resolve.calls).toBe(1);
    // An unannounced change, which only the refresh can find.
    links.set("s.qr.example/abc", target("l1", "https://example.com/b"));
    clock.advance(57_000 - 41_999);
    expect((await cache.resolve("s.qr.example", "abc"))?.location).toBe("https://example.com/a");
    expect(resolve.calls).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await cache.resolve("s.qr.example", "abc"))?.location).toBe("https://example.com/b");
    expect(resolve.calls).toBe(2);
  });

  it("serves a link's expired answer while lookups fail, unless a change was announced or may have gone unheard", async () => {
    const clock = manualClock();
    const bus = { ...memoryInvalidationBus(), connected: true };
    let failing = false;
    const resolve = counting(async (host, slug) => {
      if (failing) throw new Error("database down");
      return links.get(`${host}/${slug}`);
    });
    cache = cachedResolver(resolve, bus, { now: clock.now, ttlMs: 60_000 });
    links.set("s.qr.example/abc", target("l1", "https://example.com/a"));
    links.set("s.qr.example/def", target("l2", "https://example.com/d"));
    await cache.resolve("s.qr.example", "abc");
    await cache.resolve("s.qr.example", "def");

    failing = true;
    clock.advance(10 * 60_000);
    // Long expired, asked for again (every time: an error is never kept), and still served.
    for (let i = 0; i < 3; i++)
      expect(await cache.resolve("s.qr.example", "abc")).toEqual(target("l1", "https://example.com/a"));
    expect(resolve.calls).toBe(5);
    // A link never looked up has nothing to fall back on.
    await expect(cache.resolve("s.qr.example", "xyz")).rejects.toThrow("database down");
    // A change announced for a link drops its answer: no stale fallback for it.
    bus.publish({ linkIds: ["l2"] });
    await expect(cache.resolve("s.qr.example", "def")).rejects.toThrow("database down");
    // With the bus disconnected a change may have gone unheard: no stale answers at all.
    bus.connected = false;
    await expect(cache.resolve("s.qr.example", "abc")).rejects.toThrow("database down");
  });

  it("drops exactly the entries of the links and hostnames a change names", async () => {
    const bus = memoryInvalidationBus();
    const resolve = fromMap();
    cache = cachedResolver(resolve, bus);
    links.set("s.qr.example/abc", target("l1", "https://example.com/1"));
    links.set("go.brand.example/menu", target("l1", "https://example.com/1"));
    links.set("s.qr.example/def", target("l2", "https://example.com/2"));
    links.set("go.brand.example/wine", target("l3", "https://example.com/3"));
    const all = [
      ["s.qr.example", "abc"],
      ["go.brand.example", "menu"],
      ["s.qr.example", "def"],
      ["go.brand.example", "wine"],
      ["go.brand.example", "unknown"],
      ["go.brand.example:8443", "wine"],
    ] as const;
    const resolveAll = () => Promise.all(all.map(([host, slug]) => cache!.resolve(host, slug)));
    await resolveAll();
    expect([resolve.calls, cache.size]).toEqual([6, 6]);

    // Both of l1's addresses go, nothing else.
    await bus.publish({ linkIds: ["l1"] });
    expect(cache.size).toBe(4);
    await resolveAll();
    expect(resolve.calls).toBe(8);

    // Every entry on the domain goes, whatever the port, misses included.
    await bus.publish({ hostnames: ["GO.brand.example"] });
    expect(cache.size).toBe(2);
    await resolveAll();
    expect(resolve.calls).toBe(12);

    await bus.publish({ linkIds: ["unknown"], hostnames: ["other.example"] });
    expect(cache.size).toBe(6);
  });

  it("forgets everything when told changes may have been missed", async () => {
    let emit: (event: InvalidationEvent) => void = () => {};
    const bus: InvalidationBus = {
      publish: async () => {},
      subscribe: (listener) => {
        emit = listener;
        return () => {};
      },
      connected: true,
      close: async () => {},
    };
    const resolve = fromMap();
    cache = cachedResolver(resolve, bus);
    links.set("s.qr.example/abc", target("l1", "https://example.com/a"));
    await cache.resolve("s.qr.example", "abc");
    await cache.resolve("s.qr.example", "xyz");
    expect(cache.size).toBe(2);
    emit("everything");
    expect(cache.size).toBe(0);
    await cache.resolve("s.qr.example", "abc");
    expect(resolve.calls).toBe(3);
  });

  it("does not keep an answer looked up before a change heard while it was in flight", async () => {
    const bus = memoryInvalidationBus();
    const lookups: ReturnType<typeof deferred<RedirectTarget | undefined>>[] = [];
    const resolve = counting(() => {
      const lookup = deferred<RedirectTarget | undefined>();
      lookups.push(lookup);
      return lookup.promise;
    });
    cache = cachedResolver(resolve, bus);

    const before = cache.resolve("s.qr.example", "abc");
    // The link changes while the first lookup is in flight; that lookup read the old destination.
    await bus.publish({ linkIds: ["l1"] });
    // A request after the change does not join the stale lookup: it asks again.
    const after = cache.resolve("s.qr.example", "abc");
    expect(lookups).toHaveLength(2);
    lookups[0]!.resolve(target("l1", "https://example.com/old"));
    lookups[1]!.resolve(target("l1", "https://example.com/new"));
    expect((await before)?.location).toBe("https://example.com/old");
    expect((await after)?.location).toBe("https://example.com/new");

    // The new answer is the one kept.
    expect((await cache.resolve("s.qr.example", "abc"))?.location).toBe("https://example.com/new");
    expect(resolve.calls).toBe(2);

    // The other order: the stale lookup settles last, after the change, and still is not kept.
    const stale = cache.resolve("s.qr.other", "abc");
    await bus.publish({ hostnames: ["unrelated.example"] });
    lookups[2]!.resolve(target("l9", "https://example.com/stale"));
    await stale;
    const fresh = cache.resolve("s.qr.other", "abc");
    expect(lookups).toHaveLength(4);
    lookups[3]!.resolve(target("l9", "https://example.com/fresh"));
    expect((await fresh)?.location).toBe("https://example.com/fresh");
  });

  it("serves nothing older than a second while the bus is disconnected", async () => {
    const clock = manualClock();
    const bus = { ...memoryInvalidationBus(), connected: true };
    const resolve = fromMap();
    cache = cachedResolver(resolve, bus, { now: clock.now });
    links.set("s.qr.example/abc", target("l1", "https://example.com/a"));
    await cache.resolve("s.qr.example", "abc");
    clock.advance(5000);
    await cache.resolve("s.qr.example", "abc");
    expect(resolve.calls).toBe(1);

    bus.connected = false;
    await cache.resolve("s.qr.example", "abc");
    expect(resolve.calls).toBe(2);
    // A fresh answer still spares the database, for up to a second.
    clock.advance(999);
    await cache.resolve("s.qr.example", "abc");
    expect(resolve.calls).toBe(2);
    clock.advance(1);
    await cache.resolve("s.qr.example", "abc");
    expect(resolve.calls).toBe(3);
  });

  it("passes hosts that are not hosts straight through", async () => {
    const resolve = counting(async () => undefined);
    cache = cachedResolver(resolve, memoryInvalidationBus());
    await cache.resolve("evil@host", "abc");
    await cache.resolve("evil@host", "abc");
    expect([resolve.calls, cache.size]).toEqual([2, 0]);
  });
});

describe("the links service announces its changes", () => {
  let stack: LinksStack;
  let cache: CachedResolver;
  let resolve: ReturnType<typeof counting>;
  let server: HttpServer;
  const published: LinkChange[] = [];
  const accountId = randomUUID();

  beforeAll(async () => {
    const memory = memoryInvalidationBus(logger);
    const bus: InvalidationBus = {
      ...memory,
      publish: (change) => {
        published.push(change);
        return memory.publish(change);
      },
    };
    stack = await startLinks({ invalidations: bus });
    const transport = inProcessTransport({
      modules: [stack.module],
      credentials,
      logger,
      token: credentials.serviceToken,
    });
    resolve = counting(resolveVia(transport));
    cache = cachedResolver(resolve, bus);
    server = await listenHttp({
      handler: buildRedirector({ resolve: cache.resolve, logger }),
      host: "127.0.0.1",
      port: 0,
      logger,
      name: "redirector",
    });
  });
  afterAll(async () => {
    await server?.close();
    cache?.close();
    await stack?.close();
  });

  const createLink = async (fields: { vanityDomainId?: string; vanitySlug?: string } = {}): Promise<Link> =>
    (await stack.links.createLink({ accountId, destinationUrl: "https://example.com/first", ...fields })).link!;

  /** One GET through the redirector over a real socket: its status and Location. */
  const visit = (host: string, slug: string) =>
    new Promise<{ status: number; location: string | undefined }>((done, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: server.port, path: `/${slug}`, headers: { host }, agent: false },
        (res) => {
          res.resume();
          res.on("end", () => done({ status: res.statusCode!, location: res.headers.location }));
        },
      );
      req.on("error", reject);
      req.end();
    });

  it("answers a warm link from memory: 50 redirects, one lookup", async () => {
    const link = await createLink();
    const callsBefore = resolve.calls;
    for (let i = 0; i < 50; i++)
      expect(await visit(SHORT_HOST, link.slug)).toEqual({ status: 302, location: "https://example.com/first" });
    expect(resolve.calls - callsBefore).toBe(1);
  });

  it("redirects to the new destination on the very next request after UpdateLink", async () => {
    const link = await createLink();
    expect((await visit(SHORT_HOST, link.slug)).location).toBe("https://example.com/first");
    await stack.links.updateLink({ accountId, linkId: link.id, destinationUrl: "https://example.com/second" });
    expect(published.at(-1)).toEqual({ linkIds: [link.id] });
    expect(await visit(SHORT_HOST, link.slug)).toEqual({ status: 302, location: "https://example.com/second" });
  });

  it("pauses, resumes and deletes at once", async () => {
    const link = await createLink();
    expect((await visit(SHORT_HOST, link.slug)).status).toBe(302);
    await stack.links.updateLink({ accountId, linkId: link.id, status: LinkStatus.PAUSED });
    expect(await visit(SHORT_HOST, link.slug)).toEqual({ status: 404, location: undefined });
    await stack.links.updateLink({ accountId, linkId: link.id, status: LinkStatus.ACTIVE });
    expect((await visit(SHORT_HOST, link.slug)).status).toBe(302);
    await stack.links.deleteLink({ accountId, linkId: link.id });
    expect((await visit(SHORT_HOST, link.slug)).status).toBe(404);

    const purged = await createLink();
    expect((await visit(SHORT_HOST, purged.slug)).status).toBe(302);
    await stack.links.deleteLink({ accountId, linkId: purged.id, purge: true });
    expect(published.at(-1)).toEqual({ linkIds: [purged.id] });
    expect((await visit(SHORT_HOST, purged.slug)).status).toBe(404);
  });

  it("stops a custom domain's links when it loses verification, and forgets the domain when it is deleted", async () => {
    const domain = await stack.verifiedDomain(accountId);
    const link = await createLink({ vanityDomainId: domain.id, vanitySlug: "menu" });
    expect((await visit(domain.hostname, "menu")).status).toBe(302);

    const count = published.length;
    stack.dns.txt.delete(domain.challengeRecordName);
    await stack.domains.verifyDomain({ accountId, domainId: domain.id });
    expect(published.slice(count)).toEqual([{ hostnames: [domain.hostname] }]);
    expect((await visit(domain.hostname, "menu")).status).toBe(404);
    // The generated slug of the same link still answers on the short domain.
    expect((await visit(SHORT_HOST, link.slug)).status).toBe(302);
    // A check that changes nothing announces nothing.
    await stack.domains.verifyDomain({ accountId, domainId: domain.id });
    expect(published).toHaveLength(count + 1);

    await stack.links.deleteLink({ accountId, linkId: link.id });
    await visit(domain.hostname, "menu");
    const sizeBefore = cache.size;
    await stack.domains.deleteDomain({ accountId, domainId: domain.id });
    expect(published.at(-1)).toEqual({ hostnames: [domain.hostname] });
    expect(cache.size).toBe(sizeBefore - 1);
  });
});

describe.skipIf(!hasRedisServer())("across instances, through Redis", () => {
  let port: number;
  let redis: ChildProcess;
  let stack: LinksStack;
  let busA: InvalidationBus;
  let busB: InvalidationBus;
  const accountId = randomUUID();
  const clock = manualClock();
  const heardByB: InvalidationEvent[] = [];

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    const url = `redis://127.0.0.1:${port}`;
    [busA, busB] = await Promise.all([redisInvalidationBus(url, logger), redisInvalidationBus(url, logger)]);
    busB.subscribe((event) => heardByB.push(event));
    // Instance A runs the links service; B is another redirector instance on the same database.
    stack = await startLinks({ invalidations: busA });
  }, 60_000);
  afterAll(async () => {
    await busA?.close();
    await busB?.close();
    await stack?.close();
    if (redis) await killRedis(redis);
  });

  const transport = () =>
    inProcessTransport({ modules: [stack.module], credentials, logger, token: credentials.serviceToken });

  it("shows a change made on one instance on another within a second", async () => {
    const cacheA = cachedResolver(resolveVia(transport()), busA);
    const resolveB = counting(resolveVia(transport()));
    const cacheB = cachedResolver(resolveB, busB);
    try {
      expect([busA.connected, busB.connected]).toEqual([true, true]);
      const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/first" });
      for (const cache of [cacheA, cacheB])
        expect((await cache.resolve(SHORT_HOST, link!.slug))?.location).toBe("https://example.com/first");
      await cacheB.resolve(SHORT_HOST, link!.slug);
      expect(resolveB.calls).toBe(1);

      await stack.links.updateLink({ accountId, linkId: link!.id, destinationUrl: "https://example.com/second" });
      // A, where the change was made, knows at once; B within a second.
      expect((await cacheA.resolve(SHORT_HOST, link!.slug))?.location).toBe("https://example.com/second");
      const tookMs = await within(
        1000,
        async () => (await cacheB.resolve(SHORT_HOST, link!.slug))?.location === "https://example.com/second",
      );
      expect(tookMs).toBeLessThan(1000);

      await stack.links.deleteLink({ accountId, linkId: link!.id });
      await within(1000, async () => (await cacheB.resolve(SHORT_HOST, link!.slug)) === undefined);
    } finally {
      cacheA.close();
      cacheB.close();
    }
  });

  it("ignores junk on the channel and does not hear its own messages twice", async () => {
    const heardByA: InvalidationEvent[] = [];
    const stopA = busA.subscribe((event) => heardByA.push(event));
    const raw = await createClient({ url: `redis://127.0.0.1:${port}` }).connect();
    try {
      const count = heardByB.length;
      for (const junk of [
        "not json",
        "[]",
        "{}",
        JSON.stringify({ from: "x", linkIds: [1] }),
        JSON.stringify({ from: "x", hostnames: "a" }),
      ]) {
        await raw.publish(INVALIDATION_CHANNEL, junk);
      }
      await busA.publish({ linkIds: ["l1"] });
      await within(1000, () => heardByB.length > count);
      await new Promise((r) => setTimeout(r, 50));
      expect(heardByB.slice(count)).toEqual([{ linkIds: ["l1"] }]);
      expect(heardByA).toEqual([{ linkIds: ["l1"] }]);
      expect([busA.connected, busB.connected]).toEqual([true, true]);
    } finally {
      stopA();
      raw.destroy();
    }
  });

  it("keeps a quiet subscription: the heartbeat, not traffic, holds the connection open", async () => {
    expect(busB.connected).toBe(true);
    const count = heardByB.length;
    // Longer than the heartbeat's timeout: an idle connection that were dropped would be subscribed
    // again, and B would hear "everything".
    await new Promise((r) => setTimeout(r, 2000));
    expect(heardByB.slice(count)).toEqual([]);
    expect(busB.connected).toBe(true);
  });

  it("serves nothing older than a second while Redis is down, and forgets everything once it is back", async () => {
    const resolveB = counting(resolveVia(transport()));
    const cacheB = cachedResolver(resolveB, busB, { now: clock.now });
    try {
      const { link } = await stack.links.createLink({ accountId, destinationUrl: "https://example.com/kept" });
      await cacheB.resolve(SHORT_HOST, link!.slug);
      clock.advance(5000);
      await cacheB.resolve(SHORT_HOST, link!.slug);
      expect(resolveB.calls).toBe(1);

      await killRedis(redis);
      await within(1000, () => !busB.connected);
      // The five-second-old answer is not served: it is looked up again.
      expect((await cacheB.resolve(SHORT_HOST, link!.slug))?.location).toBe("https://example.com/kept");
      expect(resolveB.calls).toBe(2);
      clock.advance(999);
      await cacheB.resolve(SHORT_HOST, link!.slug);
      expect(resolveB.calls).toBe(2);
      clock.advance(1);
      await cacheB.resolve(SHORT_HOST, link!.slug);
      expect(resolveB.calls).toBe(3);

      // Updates still succeed, promptly, while nobody can be told.
      const started = performance.now();
      await stack.links.updateLink({ accountId, linkId: link!.id, destinationUrl: "https://example.com/while-down" });
      expect(performance.now() - started).toBeLessThan(1000);

      const count = heardByB.length;
      redis = await startRedis(port);
      await within(10_000, () => busB.connected && busA.connected);
      expect(heardByB.slice(count)).toContain("everything");
      expect(cacheB.size).toBe(0);
      expect((await cacheB.resolve(SHORT_HOST, link!.slug))?.location).toBe("https://example.com/while-down");

      // And changes travel again: this five-second-old answer goes because it is told to, not by age.
      clock.advance(5000);
      await stack.links.updateLink({ accountId, linkId: link!.id, destinationUrl: "https://example.com/after" });
      await within(
        1000,
        async () => (await cacheB.resolve(SHORT_HOST, link!.slug))?.location === "https://example.com/after",
      );
    } finally {
      cacheB.close();
    }
  }, 30_000);

  it("notices within a second a Redis that stops answering without closing the connection", async () => {
    expect(busB.connected).toBe(true);
    const count = heardByB.length;
    redis.kill("SIGSTOP");
    try {
      await within(1500, () => !busB.connected);
    } finally {
      redis.kill("SIGCONT");
    }
    await within(10_000, () => busB.connected);
    expect(heardByB.slice(count)).toContain("everything");
  }, 30_000);
});
