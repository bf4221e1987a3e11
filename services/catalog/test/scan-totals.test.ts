// The catalog keeps links' scan totals between announcements of stored scans: the cache alone, against
// a stand-in for the links service. Both shapes of the platform are in services/edge/test/scan-totals.test.ts.
import { describe, expect, it } from "vitest";
import { memoryScanChanges } from "@qrplatform/platform";
import { switchableBus } from "@qrplatform/testing";
import { cachedScanTotals } from "../src/qr-codes/scan-totals.js";

/** A stand-in for the links service's totals, recording which links each call asked about. */
function fakeLinks() {
  const totals = new Map<string, bigint>();
  const calls: string[][] = [];
  return {
    totals,
    calls,
    fail: false,
    async ask(accountId: string, linkIds: readonly string[]) {
      calls.push([...linkIds]);
      if (this.fail) throw new Error("links is away");
      return Object.fromEntries(
        linkIds.filter((id) => totals.has(`${accountId}/${id}`)).map((id) => [id, totals.get(`${accountId}/${id}`)!]),
      );
    },
  };
}

describe("the catalog's cache of scan totals", () => {
  it("asks once for the links it does not keep, and again for those whose scans were announced", async () => {
    const links = fakeLinks();
    links.totals.set("acct-1/l1", 3n);
    const bus = memoryScanChanges();
    const totals = cachedScanTotals((accountId, ids) => links.ask(accountId, ids), bus);

    expect(await totals("acct-1", ["l1", "l2"])).toEqual({ l1: 3n, l2: 0n });
    expect(await totals("acct-1", ["l2", "l1", "l3"])).toEqual({ l2: 0n, l1: 3n, l3: 0n });
    expect(links.calls).toEqual([["l1", "l2"], ["l3"]]);

    links.totals.set("acct-1/l1", 5n);
    await bus.publish({ linkIds: ["l1"] });
    expect(await totals("acct-1", ["l1", "l2", "l3"])).toEqual({ l1: 5n, l2: 0n, l3: 0n });
    expect(links.calls).toEqual([["l1", "l2"], ["l3"], ["l1"]]);
  });

  it("keeps each account's answer to itself", async () => {
    const links = fakeLinks();
    links.totals.set("acct-1/l1", 3n);
    const totals = cachedScanTotals((accountId, ids) => links.ask(accountId, ids), memoryScanChanges());
    expect(await totals("acct-1", ["l1"])).toEqual({ l1: 3n });
    expect(await totals("acct-2", ["l1"])).toEqual({ l1: 0n });
    expect(links.calls).toHaveLength(2);
  });

  it("shares one call between reads at once, and keeps out a total read before an announcement heard meanwhile", async () => {
    const links = fakeLinks();
    const bus = memoryScanChanges();
    const totals = cachedScanTotals((accountId, ids) => links.ask(accountId, ids), bus);
    const [first, second] = [totals("acct-1", ["l1"]), totals("acct-1", ["l1"])];
    await bus.publish({ linkIds: ["l9"] });
    expect(await Promise.all([first, second])).toEqual([{ l1: 0n }, { l1: 0n }]);
    expect(links.calls).toHaveLength(1);
    await totals("acct-1", ["l1"]);
    await totals("acct-1", ["l1"]);
    expect(links.calls).toHaveLength(2);
  });

  it("keeps no total older than a second while announcements cannot arrive, forgets everything after, and keeps no failure", async () => {
    const links = fakeLinks();
    let now = 0;
    const bus = switchableBus(memoryScanChanges());
    const totals = cachedScanTotals((accountId, ids) => links.ask(accountId, ids), bus, {
      now: () => now,
      unconfirmedTtlMs: 1000,
    });
    await totals("acct-1", ["l1"]);
    bus.up = false;
    now = 999;
    await totals("acct-1", ["l1"]);
    expect(links.calls).toHaveLength(1);
    now = 1000;
    await totals("acct-1", ["l1"]);
    expect(links.calls).toHaveLength(2);

    bus.up = true;
    await bus.publish("everything" as never);
    links.fail = true;
    await expect(totals("acct-1", ["l1"])).rejects.toThrow("links is away");
    links.fail = false;
    links.totals.set("acct-1/l1", 2n);
    expect(await totals("acct-1", ["l1"])).toEqual({ l1: 2n });
    expect(links.calls).toHaveLength(4);
  });
});
