import { afterEach, describe, expect, it } from "vitest";
import { DomainState } from "@qrplatform/api/links";
import { createLogger, Metrics, serviceError, Code } from "@qrplatform/platform";
import { DomainCache } from "../src/domains/domain-cache.js";
import { operatorMetrics } from "../src/metrics.js";
import { FakeDomainService } from "./support/fake-domain-service.js";
import { ACCOUNT } from "./support/objects.js";

const logger = createLogger({ service: "test", level: "silent" });
const caches: DomainCache[] = [];

function start(service: FakeDomainService, options: { fullResyncMs?: number; pageSize?: number } = {}) {
  const changed: string[] = [];
  const metrics = new Metrics();
  const cache = new DomainCache({
    client: service.client(),
    fullResyncMs: options.fullResyncMs ?? 60_000,
    backoff: { baseMs: 5, maxMs: 20 },
    logger,
    metrics: operatorMetrics(metrics),
    onChange: (hostnames) => changed.push(...hostnames),
    pageSize: options.pageSize ?? 2,
  });
  caches.push(cache);
  cache.start();
  return { cache, changed, metrics };
}

afterEach(async () => {
  await Promise.all(caches.splice(0).map((cache) => cache.stop()));
});

describe("the domain cache", () => {
  it("lists every account's domains page by page and tells every hostname", async () => {
    const service = new FakeDomainService();
    const hostnames = ["a.example.com", "b.example.com", "c.example.com", "d.example.com", "e.example.com"];
    for (const hostname of hostnames) service.register(ACCOUNT, hostname);
    const { cache, changed, metrics } = start(service);
    await expect.poll(() => cache.listed).toBe(true);
    expect(
      cache
        .all()
        .map((domain) => domain.hostname)
        .sort(),
    ).toEqual(hostnames);
    expect(new Set(changed)).toEqual(new Set(hostnames));
    expect(service.callsOf("listDomains")[0]).toMatchObject({ accountId: "", pageSize: 2, pageToken: "" });
    expect(await metrics.text()).toMatch(/^qrp_operator_last_full_resync_timestamp_seconds \d+/m);
  });

  it("follows the stream: new, changed and removed domains", async () => {
    const service = new FakeDomainService();
    const { cache, changed } = start(service);
    await expect.poll(() => cache.listed && service.openStreams === 1).toBe(true);
    const domain = service.register(ACCOUNT, "go.example.com");
    await expect.poll(() => cache.forHostname("go.example.com")?.id).toBe(domain.id);
    service.update(domain.id, { state: DomainState.VERIFIED });
    await expect.poll(() => cache.forHostname("go.example.com")?.state).toBe(DomainState.VERIFIED);
    changed.length = 0;
    service.remove(domain.id);
    await expect.poll(() => cache.forHostname("go.example.com")).toBeUndefined();
    expect(changed).toContain("go.example.com");
  });

  it("reopens a stream that ended, and lists again when the stream asks", async () => {
    const service = new FakeDomainService();
    const { cache, metrics } = start(service);
    await expect.poll(() => service.openStreams).toBe(1);
    const watchCalls = service.callsOf("watchDomains").length;
    service.endStreams();
    await expect.poll(() => service.callsOf("watchDomains").length).toBe(watchCalls + 1);
    await expect.poll(() => service.openStreams).toBe(1);
    expect(await metrics.text()).toMatch(/^qrp_operator_watch_restarts_total\{source="domains"\} 1$/m);

    const domain = service.register(ACCOUNT, "go.example.com");
    await expect.poll(() => cache.forHostname("go.example.com")?.id).toBe(domain.id);
    service.updateSilently(domain.id, { state: DomainState.FAILED });
    service.requestResync();
    await expect.poll(() => cache.forHostname("go.example.com")?.state).toBe(DomainState.FAILED);
  });

  it("repairs what the stream missed with the periodic full list, even without a stream", async () => {
    const service = new FakeDomainService();
    service.watchUnimplemented = true;
    const domain = service.register(ACCOUNT, "go.example.com");
    const { cache } = start(service, { fullResyncMs: 20 });
    await expect.poll(() => cache.forHostname("go.example.com")?.id).toBe(domain.id);
    service.updateSilently(domain.id, { state: DomainState.VERIFIED });
    await expect.poll(() => cache.forHostname("go.example.com")?.state).toBe(DomainState.VERIFIED);
    service.domains.delete(domain.id);
    await expect.poll(() => cache.forHostname("go.example.com")).toBeUndefined();
    expect(service.callsOf("watchDomains").length).toBeGreaterThan(1);
  });

  it("is not listed until a list succeeds, and retries a failed one", async () => {
    const service = new FakeDomainService();
    service.register(ACCOUNT, "go.example.com");
    service.watchUnimplemented = true;
    for (let i = 0; i < 3; i += 1)
      service.failures.push({
        method: "listDomains",
        error: serviceError(Code.Unavailable, "unavailable", "links is down"),
      });
    const { cache } = start(service);
    expect(cache.listed).toBe(false);
    await expect.poll(() => cache.listed).toBe(true);
    expect(cache.forHostname("go.example.com")).toBeDefined();
    expect(service.callsOf("listDomains").length).toBeGreaterThanOrEqual(4);
  });

  it("keeps the newer of a listed domain and one it was just told of", async () => {
    const service = new FakeDomainService();
    const domain = service.register(ACCOUNT, "go.example.com");
    const { cache } = start(service);
    await expect.poll(() => cache.listed).toBe(true);
    const older = {
      ...domain,
      state: DomainState.FAILED,
      updateTime: { ...domain.updateTime!, seconds: domain.updateTime!.seconds - 100n },
    };
    cache.remember(older);
    expect(cache.forHostname("go.example.com")?.state).toBe(DomainState.PENDING);
  });
});
