import { describe, expect, it } from "vitest";
import { invalidatedCache, memoryChangeBus, type ChangeBus, type ChangeEvent, type Keeping } from "../src/index.js";

/** Changes of accounts and of users, as a cache keyed by user would hear them. */
interface Change {
  accountIds?: string[];
  userIds?: string[];
}

/** A bus whose connection the test decides. */
function testBus(): ChangeBus<Change> & { connected: boolean; emit(event: ChangeEvent<Change>): void } {
  const memory = memoryChangeBus<Change>();
  const listeners = new Set<(event: ChangeEvent<Change>) => void>();
  return {
    connected: true,
    publish: memory.publish,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit: (event) => {
      for (const listener of listeners) listener(event);
    },
    close: memory.close,
  };
}

function setUp(options: { maxEntries?: number } = {}) {
  const bus = testBus();
  let clock = 0;
  const cache = invalidatedCache<string | undefined, Change>({
    bus,
    dropped: (change) => ({ account: change.accountIds ?? [], user: change.userIds ?? [] }),
    maxEntries: options.maxEntries ?? 100,
    unconfirmedTtlMs: 1000,
    now: () => clock,
  });
  let loads = 0;
  /** Loads "<user>@<account>" for a user, kept 60 s under its user and account; "nobody" is not kept. */
  const read = (user: string, account = "a1") =>
    cache.get(
      user,
      async () => {
        loads++;
        return user === "nobody" ? undefined : `${user}@${account}`;
      },
      (value, fetchedAt): Keeping | undefined =>
        value === undefined ? undefined : { expiresAt: fetchedAt + 60_000, tags: { user: [user], account: [account] } },
    );
  return { bus, cache, read, loads: () => loads, advance: (ms: number) => (clock += ms) };
}

describe("invalidatedCache", () => {
  it("answers a kept value without loading it again, until it expires", async () => {
    const { read, loads, advance } = setUp();
    expect(await read("u1")).toBe("u1@a1");
    expect(await read("u1")).toBe("u1@a1");
    expect(loads()).toBe(1);
    advance(60_000);
    await read("u1");
    expect(loads()).toBe(2);
  });

  it("loads a value read after its refresh time again in the background, answering the kept one meanwhile", async () => {
    const bus = testBus();
    let clock = 0;
    const cache = invalidatedCache<string, Change>({ bus, dropped: () => ({}), maxEntries: 10, now: () => clock });
    let version = 0;
    let release: (() => void) | undefined;
    const read = () =>
      cache.get(
        "k",
        async () => {
          version++;
          const loaded = `v${version}`;
          if (version > 1) await new Promise<void>((resolve) => (release = resolve));
          return loaded;
        },
        (_value, fetchedAt) => ({ expiresAt: fetchedAt + 60_000, refreshAt: fetchedAt + 40_000, tags: {} }),
      );
    expect(await read()).toBe("v1");
    clock = 39_999;
    expect(await read()).toBe("v1");
    expect(version).toBe(1);
    clock = 40_000;
    // Answered from the entry while the refresh waits; one refresh however many read meanwhile.
    expect(await read()).toBe("v1");
    expect(await read()).toBe("v1");
    expect(version).toBe(2);
    release!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await read()).toBe("v2");
    // The refreshed entry lives from its own load: not due again before 40 s after it.
    clock = 79_999;
    expect(await read()).toBe("v2");
    expect(version).toBe(2);
  });

  it("keeps serving the entry when a refresh fails, and the next read tries again", async () => {
    const bus = testBus();
    let clock = 0;
    const cache = invalidatedCache<string, Change>({ bus, dropped: () => ({}), maxEntries: 10, now: () => clock });
    let loads = 0;
    const read = () =>
      cache.get(
        "k",
        async () => {
          loads++;
          if (loads === 2) throw new Error("database away");
          return `v${loads}`;
        },
        (_value, fetchedAt) => ({ expiresAt: fetchedAt + 60_000, refreshAt: fetchedAt + 40_000, tags: {} }),
      );
    await read();
    clock = 45_000;
    expect(await read()).toBe("v1");
    await new Promise((resolve) => setImmediate(resolve));
    expect(loads).toBe(2);
    expect(await read()).toBe("v1");
    expect(loads).toBe(3);
    await new Promise((resolve) => setImmediate(resolve));
    clock = 60_000;
    expect(await read()).toBe("v3");
  });

  it("keeps nothing that its keep function declines", async () => {
    const { read, loads, cache } = setUp();
    await read("nobody");
    await read("nobody");
    expect(loads()).toBe(2);
    expect(cache.size).toBe(0);
  });

  it("drops every entry filed under an announced id, and only those", async () => {
    const { bus, read, loads } = setUp();
    await Promise.all([read("u1", "a1"), read("u2", "a1"), read("u3", "a2")]);
    bus.emit({ accountIds: ["a1"] });
    await Promise.all([read("u1", "a1"), read("u2", "a1"), read("u3", "a2")]);
    expect(loads()).toBe(5);
    bus.emit({ userIds: ["u3"] });
    await read("u3", "a2");
    expect(loads()).toBe(6);
  });

  it("drops everything when changes may have been missed", async () => {
    const { bus, read, cache } = setUp();
    await Promise.all([read("u1"), read("u2")]);
    bus.emit("everything");
    expect(cache.size).toBe(0);
  });

  it("shares one load among concurrent callers", async () => {
    const { read, loads } = setUp();
    expect(await Promise.all([read("u1"), read("u1"), read("u1")])).toEqual(["u1@a1", "u1@a1", "u1@a1"]);
    expect(loads()).toBe(1);
  });

  it("keeps out a load that was in flight when a change was heard, and lets later callers load anew", async () => {
    const { bus, cache } = setUp();
    let release!: (value: string) => void;
    let loads = 0;
    const keep = (_value: string | undefined, fetchedAt: number) => ({
      expiresAt: fetchedAt + 60_000,
      tags: { user: ["u1"] },
    });
    const slow = () => {
      loads++;
      return new Promise<string | undefined>((resolve) => (release = resolve));
    };
    const first = cache.get("u1", slow, keep);
    bus.emit({ accountIds: ["elsewhere"] });
    const releaseFirst = release;
    const second = cache.get("u1", slow, keep);
    expect(loads).toBe(2);
    releaseFirst("before the change");
    release("after the change");
    expect(await first).toBe("before the change");
    expect(await second).toBe("after the change");
    expect(await cache.get("u1", slow, keep)).toBe("after the change");
  });

  it("serves nothing older than the unconfirmed bound while the bus is disconnected", async () => {
    const { bus, read, loads, advance } = setUp();
    await read("u1");
    bus.connected = false;
    advance(999);
    await read("u1");
    expect(loads()).toBe(1);
    advance(1);
    await read("u1");
    expect(loads()).toBe(2);
  });

  it("never keeps an error", async () => {
    const { cache } = setUp();
    const keep = (_value: string | undefined, fetchedAt: number) => ({ expiresAt: fetchedAt + 60_000, tags: {} });
    await expect(cache.get("u1", () => Promise.reject(new Error("away")), keep)).rejects.toThrow("away");
    expect(await cache.get("u1", async () => "back", keep)).toBe("back");
  });

  it("answers an expired entry instead of a failed load when the outage rule allows it and the bus is connected", async () => {
    const { bus, cache, advance } = setUp();
    const keep = (_value: string | undefined, fetchedAt: number) => ({
      expiresAt: fetchedAt + 10,
      tags: { user: ["u1"] },
    });
    const failing = () => Promise.reject(new Error("database away"));
    const found = (value: string | undefined) => value !== undefined;
    await cache.get("u1", async () => "kept", keep);
    advance(10);
    expect(await cache.get("u1", failing, keep, found)).toBe("kept");
    // Without the rule, or with the bus down (a change may have gone unheard), the failure is the answer.
    await expect(cache.get("u1", failing, keep)).rejects.toThrow("database away");
    bus.connected = false;
    await expect(cache.get("u1", failing, keep, found)).rejects.toThrow("database away");
    bus.connected = true;
    // Dropped by a change: nothing is left to serve.
    bus.emit({ userIds: ["u1"] });
    await expect(cache.get("u1", failing, keep, found)).rejects.toThrow("database away");
  });

  it("unfiles what the least recently used bound evicts, so a later change finds only what is kept", async () => {
    const { bus, read, cache, loads } = setUp({ maxEntries: 2 });
    await read("u1");
    await read("u2");
    await read("u3");
    expect(cache.size).toBe(2);
    bus.emit({ accountIds: ["a1"] });
    expect(cache.size).toBe(0);
    await read("u3");
    expect(loads()).toBe(4);
  });

  it("stops listening and forgets everything once closed", async () => {
    const { bus, read, cache } = setUp();
    await read("u1");
    cache.close();
    expect(cache.size).toBe(0);
    bus.emit("everything");
  });
});
