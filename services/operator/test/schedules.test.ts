import { afterEach, describe, expect, it } from "vitest";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DomainState } from "@qrplatform/api/links";
import { Code, createLogger, Metrics, serviceError } from "@qrplatform/platform";
import { DomainCache } from "../src/domains/domain-cache.js";
import { DomainSchedules, dueAction, type SchedulePeriods } from "../src/domains/schedules.js";
import { operatorMetrics } from "../src/metrics.js";
import { FakeDomainService } from "./support/fake-domain-service.js";
import { ACCOUNT, domain } from "./support/objects.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const periods: SchedulePeriods = {
  reverifyMs: DAY,
  pendingCheckMs: 5 * 60_000,
  unverifiedTtlMs: 7 * DAY,
  tickMs: 60_000,
};
const created = new Date("2026-03-01T00:00:00Z");
const at = (ms: number) => new Date(created.getTime() + ms);
const ts = (date: Date) => timestampFromDate(date);

describe("what is due for a domain", () => {
  it.each([
    [
      "a verified domain checked within the interval",
      { state: DomainState.VERIFIED, lastCheckTime: ts(at(HOUR)) },
      at(DAY),
      undefined,
    ],
    [
      "a verified domain checked an interval ago",
      { state: DomainState.VERIFIED, lastCheckTime: ts(at(HOUR)) },
      at(DAY + HOUR),
      "reverify",
    ],
    [
      "a verified domain never checked counts from its verification",
      { state: DomainState.VERIFIED, verifyTime: ts(at(2 * HOUR)) },
      at(DAY + HOUR),
      undefined,
    ],
    ["a new pending domain", { state: DomainState.PENDING }, at(60_000), undefined],
    ["a pending domain after the check period", { state: DomainState.PENDING }, at(5 * 60_000), "check"],
    [
      "a failed domain checked recently",
      { state: DomainState.FAILED, lastCheckTime: ts(at(DAY)) },
      at(DAY + 60_000),
      undefined,
    ],
    [
      "a failed domain past its check period",
      { state: DomainState.FAILED, lastCheckTime: ts(at(DAY)) },
      at(DAY + 10 * 60_000),
      "check",
    ],
    [
      "a pending domain past the TTL",
      { state: DomainState.PENDING, lastCheckTime: ts(at(7 * DAY - 1)) },
      at(7 * DAY),
      "expire",
    ],
    ["a failed domain past the TTL", { state: DomainState.FAILED }, at(8 * DAY), "expire"],
    [
      "a verified domain past the TTL is never expired",
      { state: DomainState.VERIFIED, lastCheckTime: ts(at(8 * DAY)) },
      at(8 * DAY + 1),
      undefined,
    ],
  ] as const)("%s", (_, fields, now, expected) => {
    expect(dueAction(domain({ createTime: ts(created), ...fields }), now, periods)).toBe(expected);
  });

  it("waits a check period after a failed attempt", () => {
    const pending = domain({ state: DomainState.PENDING, createTime: ts(created) });
    expect(dueAction(pending, at(HOUR), periods, at(HOUR - 60_000))).toBeUndefined();
    expect(dueAction(pending, at(HOUR), periods, at(HOUR - 5 * 60_000))).toBe("check");
  });
});

describe("the domain schedules", () => {
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });

  async function setUp(now: () => Date) {
    const service = new FakeDomainService();
    service.setClock(() => created);
    const metrics = new Metrics();
    const instruments = operatorMetrics(metrics);
    const logger = createLogger({ service: "test", level: "silent" });
    const cache = new DomainCache({
      client: service.client(),
      fullResyncMs: 60_000,
      backoff: { baseMs: 5, maxMs: 20 },
      logger,
      metrics: instruments,
      onChange: () => {},
    });
    const schedules = new DomainSchedules({
      client: service.client(),
      cache,
      periods,
      logger,
      metrics: instruments,
      now,
    });
    stops.push(
      () => cache.stop(),
      () => schedules.stop(),
    );
    return { service, cache, schedules, metrics };
  }

  it("re-verifies, checks and expires through DomainService, skipping a domain live links use", async () => {
    let now = at(0);
    const { service, cache, schedules, metrics } = await setUp(() => now);
    const verified = service.register(ACCOUNT, "verified.example.com", DomainState.VERIFIED);
    const pending = service.register(ACCOUNT, "pending.example.com");
    const stale = service.register(ACCOUNT, "stale.example.com");
    const inUse = service.register(ACCOUNT, "in-use.example.com");
    service.published.add("verified.example.com");
    service.published.add("pending.example.com");
    cache.start();
    await expect.poll(() => cache.listed).toBe(true);

    now = at(10 * 60_000);
    // Only the pending ones are due: both checked, and "pending" now verifies.
    await schedules.tick();
    expect(
      service
        .callsOf("verifyDomain")
        .map((call) => (call as { domainId: string }).domainId)
        .sort(),
    ).toEqual([pending.id, stale.id, inUse.id].sort());
    expect(cache.forHostname("pending.example.com")?.state).toBe(DomainState.VERIFIED);

    now = at(8 * DAY);
    service.failures.push({
      method: "deleteDomain",
      error: serviceError(Code.FailedPrecondition, "domain_in_use", "live links use it"),
    });
    // The first deletion fails as in use; which one depends on the order, so count outcomes.
    await schedules.tick();
    const deletions = service.callsOf("deleteDomain").map((call) => (call as { domainId: string }).domainId);
    expect(deletions.sort()).toEqual([stale.id, inUse.id].sort());
    expect([...service.domains.keys()]).toHaveLength(3);
    // Both verified domains (the pending one verified on its check) are re-verified a day later.
    const reverified = service
      .callsOf("verifyDomain")
      .slice(3)
      .map((call) => (call as { domainId: string }).domainId);
    expect(reverified.sort()).toEqual([verified.id, pending.id].sort());
    const text = await metrics.text();
    expect(text).toMatch(/^qrp_operator_scheduled_calls_total\{action="expire",result="skipped"\} 1$/m);
    expect(text).toMatch(/^qrp_operator_scheduled_calls_total\{action="expire",result="ok"\} 1$/m);
    expect(text).toMatch(/^qrp_operator_scheduled_calls_total\{action="reverify",result="ok"\} 2$/m);

    // The refused deletion waits a check period before it is tried again.
    const before = service.callsOf("deleteDomain").length;
    await schedules.tick();
    expect(service.callsOf("deleteDomain").length).toBe(before);
  });

  it("ticks only between start and stop", async () => {
    const { service, cache, schedules } = await setUp(() => at(10 * 60_000));
    service.register(ACCOUNT, "pending.example.com");
    cache.start();
    await expect.poll(() => cache.listed).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(service.callsOf("verifyDomain")).toHaveLength(0);
    schedules.start();
    await expect.poll(() => service.callsOf("verifyDomain").length).toBe(1);
    await schedules.stop();
  });
});
