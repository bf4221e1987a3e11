// DomainService.WatchDomains, the domain operator's feed: a resync first, then every creation,
// verification, loss of verification and removal, re-read from the database, in-process and over
// gRPC, across links instances sharing Redis, until the caller cancels.
import { randomUUID } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { DomainService, DomainState, type WatchDomainsResponse } from "@qrplatform/api/links";
import { inProcessTransport, remoteTransport, serveGrpc, type GrpcServer } from "@qrplatform/platform";
import { freePort, hasRedisServer, killRedis, PAGE_TOKEN_SECRET, startRedis } from "@qrplatform/testing";
import { buildLinks } from "../src/server.js";
import {
  memoryInvalidationBus,
  redisInvalidationBus,
  type InvalidationBus,
  type InvalidationEvent,
} from "../src/redirects/invalidations.js";
import { errorOf } from "./support/errors.js";
import { credentials, logger, SHORT_BASE, startLinks, type LinksStack } from "./support/links-stack.js";

/** A bus of this process that counts its subscribers and lets the test say "everything". */
function countingBus() {
  const memory = memoryInvalidationBus(logger);
  const listeners = new Set<(event: InvalidationEvent) => void>();
  const bus: InvalidationBus = {
    ...memory,
    subscribe(listener) {
      listeners.add(listener);
      const unsubscribe = memory.subscribe(listener);
      return () => {
        listeners.delete(listener);
        unsubscribe();
      };
    },
  };
  return {
    bus,
    subscribers: () => listeners.size,
    /** What a bus says after it reconnected: changes may have been missed. */
    everything: () => {
      for (const listener of listeners) listener("everything");
    },
  };
}

/** A WatchDomains stream read in the background: what arrived so far, and how it ended. */
function watch(client: Client<typeof DomainService>) {
  const controller = new AbortController();
  const messages: WatchDomainsResponse[] = [];
  let ending: { error?: ConnectError } | undefined;
  const done = (async () => {
    try {
      for await (const message of client.watchDomains({}, { signal: controller.signal })) messages.push(message);
      ending = {};
    } catch (error) {
      ending = { error: ConnectError.from(error) };
    }
  })();
  return {
    messages,
    ended: () => ending,
    /** Stops reading and waits for the stream to end. */
    async cancel() {
      controller.abort();
      await done;
    },
    /** The ids of changed domains, in order of arrival, with their state. */
    changed: () => messages.flatMap((m) => m.changed.map((d) => `${d.id} ${DomainState[d.state]}`)),
    removed: () => messages.flatMap((m) => m.removed.map((r) => `${r.domainId} ${r.hostname}`)),
  };
}

const isResyncOnly = (message: WatchDomainsResponse | undefined) =>
  message?.resync && message.changed.length === 0 && message.removed.length === 0;

let counter = 0;
const uniqueHost = (prefix = "watch") => `${prefix}-${++counter}-${randomUUID().slice(0, 6)}.watch.example`;

describe("WatchDomains", () => {
  let stack: LinksStack;
  let feed: ReturnType<typeof countingBus>;
  let server: GrpcServer;
  let overGrpc: Client<typeof DomainService>;

  beforeAll(async () => {
    feed = countingBus();
    stack = await startLinks({ invalidations: feed.bus });
    server = await serveGrpc({ modules: [stack.module], credentials, logger, host: "127.0.0.1", port: 0 });
    overGrpc = createClient(
      DomainService,
      remoteTransport({ baseUrl: `http://127.0.0.1:${server.port}`, token: credentials.adminToken }),
    );
  });
  afterAll(async () => {
    await server?.close();
    await stack?.close();
  });

  it("is for the admin credential only", async () => {
    const stream = stack.domains.watchDomains({})[Symbol.asyncIterator]();
    expect(await errorOf(stream.next())).toMatchObject({
      code: Code.PermissionDenied,
      reason: "admin_credential_required",
    });
    expect(feed.subscribers()).toBe(0);
  });

  it("starts with a resync, then sends each creation, verification and removal as it is now", async () => {
    const watcher = watch(stack.adminDomains);
    try {
      await expect.poll(() => watcher.messages.length).toBe(1);
      expect(isResyncOnly(watcher.messages[0])).toBe(true);

      const accountId = randomUUID();
      const hostname = uniqueHost();
      const { domain } = await stack.domains.createDomain({ accountId, hostname });
      const id = domain!.id;
      await expect.poll(watcher.changed).toEqual([`${id} PENDING`]);
      expect(watcher.messages[1]!.changed[0]).toEqual(domain);

      stack.dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
      const { domain: verified } = await stack.domains.verifyDomain({ accountId, domainId: id });
      await expect.poll(watcher.changed).toEqual([`${id} PENDING`, `${id} VERIFIED`]);
      expect(watcher.messages.at(-1)!.changed[0]).toEqual(verified);

      stack.dns.txt.delete(domain!.challengeRecordName);
      await stack.domains.verifyDomain({ accountId, domainId: id });
      await expect.poll(watcher.changed).toEqual([`${id} PENDING`, `${id} VERIFIED`, `${id} FAILED`]);

      // A serving report is not announced; the next creation shows that nothing came before it.
      await stack.adminDomains.reportDomainServing({
        domainId: id,
        serving: { serving: false, routeAdmitted: false, certificateReady: false, reason: "NotVerified" },
      });
      const marker = (await stack.domains.createDomain({ accountId, hostname: uniqueHost("marker") })).domain!;
      await expect
        .poll(watcher.changed)
        .toEqual([`${id} PENDING`, `${id} VERIFIED`, `${id} FAILED`, `${marker.id} PENDING`]);

      await stack.domains.deleteDomain({ accountId, domainId: id });
      await expect.poll(watcher.removed).toEqual([`${id} ${hostname}`]);

      // Registered again, by anyone: the hostname's domain is the new one, sent as changed.
      const again = (await stack.domains.createDomain({ accountId: randomUUID(), hostname })).domain!;
      await expect.poll(() => watcher.changed().at(-1)).toBe(`${again.id} PENDING`);
      expect(watcher.removed()).toEqual([`${id} ${hostname}`]);
      expect(watcher.messages.filter((m) => m.resync)).toHaveLength(1);
      expect(watcher.ended()).toBeUndefined();
    } finally {
      await watcher.cancel();
    }
  });

  it("sends announcements that arrive together as one message, at most 100 domains each", async () => {
    const accountId = randomUUID();
    const hostnames: string[] = [];
    for (let i = 0; i < 120; i++) {
      hostnames.push((await stack.domains.createDomain({ accountId, hostname: uniqueHost("burst") })).domain!.hostname);
    }
    const watcher = watch(stack.adminDomains);
    try {
      await expect.poll(() => watcher.messages.length).toBe(1);
      // A burst of single announcements, some twice, and one for a hostname no domain ever had.
      for (const hostname of [...hostnames.slice(0, 30), ...hostnames.slice(0, 10), "never-registered.watch.example"]) {
        void feed.bus.publish({ hostnames: [hostname] });
      }
      await expect.poll(() => watcher.messages.length).toBe(2);
      expect(watcher.messages[1]!.changed.map((d) => d.hostname).sort()).toEqual(hostnames.slice(0, 30).sort());

      void feed.bus.publish({ hostnames });
      await expect.poll(() => watcher.changed().length).toBe(150);
      expect(watcher.messages.slice(2).map((m) => m.changed.length)).toEqual([100, 20]);
    } finally {
      await watcher.cancel();
    }
  });

  it("asks for a resync when the bus may have missed changes", async () => {
    const watcher = watch(stack.adminDomains);
    try {
      await expect.poll(() => watcher.messages.length).toBe(1);
      void feed.bus.publish({ hostnames: [uniqueHost("lost")] });
      feed.everything();
      await expect.poll(() => watcher.messages.length).toBe(2);
      // The resync covers what was waiting: the receiver lists everything anyway.
      expect(isResyncOnly(watcher.messages[1])).toBe(true);
    } finally {
      await watcher.cancel();
    }
  });

  for (const shape of ["in-process", "over gRPC"] as const) {
    it(`ends when the caller cancels, and stops listening to the bus (${shape})`, async () => {
      const client = shape === "in-process" ? stack.adminDomains : overGrpc;
      const watchers = [watch(client), watch(client)];
      await expect.poll(() => watchers.map((w) => w.messages.length)).toEqual([1, 1]);
      expect(feed.subscribers()).toBe(2);

      await watchers[0]!.cancel();
      expect(watchers[0]!.ended()?.error?.code).toBe(Code.Canceled);
      await expect.poll(feed.subscribers).toBe(1);
      // The other stream goes on.
      const { domain } = await stack.domains.createDomain({
        accountId: randomUUID(),
        hostname: uniqueHost("after-cancel"),
      });
      await expect.poll(watchers[1]!.changed).toEqual([`${domain!.id} PENDING`]);
      await watchers[1]!.cancel();
      await expect.poll(feed.subscribers).toBe(0);
    });
  }

  it("ends open streams when the server shuts down", async () => {
    const own = await serveGrpc({ modules: [stack.module], credentials, logger, host: "127.0.0.1", port: 0 });
    const client = createClient(
      DomainService,
      remoteTransport({ baseUrl: `http://127.0.0.1:${own.port}`, token: credentials.adminToken }),
    );
    const watcher = watch(client);
    await expect.poll(() => watcher.messages.length).toBe(1);
    await own.close();
    await expect.poll(watcher.ended).toBeDefined();
    await expect.poll(feed.subscribers).toBe(0);
  });
});

/**
 * Two buses that reach each other: Redis at REDIS_URL, else a Redis of the test's own when one can be
 * started, else one bus of this process shared by both instances.
 */
async function sharedBuses(): Promise<{
  label: string;
  a: InvalidationBus;
  b: InvalidationBus;
  close(): Promise<void>;
}> {
  let redis: ChildProcess | undefined;
  let url = process.env.REDIS_URL;
  if (!url && hasRedisServer()) {
    const port = await freePort();
    redis = await startRedis(port);
    url = `redis://127.0.0.1:${port}`;
  }
  if (!url) {
    const bus = memoryInvalidationBus(logger);
    return { label: "one bus in memory", a: bus, b: bus, close: async () => {} };
  }
  const [a, b] = await Promise.all([redisInvalidationBus(url, logger), redisInvalidationBus(url, logger)]);
  return {
    label: process.env.REDIS_URL ? "Redis at REDIS_URL" : "a Redis of the test's own",
    a,
    b,
    async close() {
      await Promise.all([a.close(), b.close()]);
      if (redis) await killRedis(redis);
    },
  };
}

describe("WatchDomains across links instances", () => {
  let buses: Awaited<ReturnType<typeof sharedBuses>>;
  let stack: LinksStack;
  let other: Client<typeof DomainService>;

  beforeAll(async () => {
    buses = await sharedBuses();
    // Instance A makes the changes; instance B, on the same database, is the one watched.
    stack = await startLinks({ invalidations: buses.a });
    const moduleB = await buildLinks({
      db: stack.database.db,
      shortLinkBaseUrl: SHORT_BASE,
      pageTokenSecret: PAGE_TOKEN_SECRET,
      invalidations: buses.b,
    });
    other = createClient(
      DomainService,
      inProcessTransport({ modules: [moduleB], credentials, logger, token: credentials.adminToken }),
    );
  }, 60_000);
  afterAll(async () => {
    await buses?.close();
    await stack?.close();
  });

  it(`sends the changes made on another instance (${process.env.REDIS_URL ? "Redis at REDIS_URL" : hasRedisServer() ? "a Redis of the test's own" : "one bus in memory"})`, async () => {
    const watcher = watch(other);
    try {
      // Redis may add resyncs of its own (a reconnection); only the first message is certain.
      await expect.poll(() => watcher.messages.length).toBeGreaterThan(0);
      expect(isResyncOnly(watcher.messages[0])).toBe(true);
      const accountId = randomUUID();
      const domain = (await stack.domains.createDomain({ accountId, hostname: uniqueHost("elsewhere") })).domain!;
      await expect.poll(watcher.changed, { timeout: 5_000 }).toEqual([`${domain.id} PENDING`]);
      stack.dns.setTxt(domain.challengeRecordName, domain.challengeRecordValue);
      await stack.domains.verifyDomain({ accountId, domainId: domain.id });
      await expect.poll(watcher.changed, { timeout: 5_000 }).toEqual([`${domain.id} PENDING`, `${domain.id} VERIFIED`]);
      await stack.domains.deleteDomain({ accountId, domainId: domain.id });
      await expect.poll(watcher.removed, { timeout: 5_000 }).toEqual([`${domain.id} ${domain.hostname}`]);
    } finally {
      await watcher.cancel();
    }
  });
});
