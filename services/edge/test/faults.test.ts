// Crashes during a burst of creates, in the processes shape on Postgres: catalog, links and tenancy
// are each SIGKILLed mid-burst and started again. Afterwards the codes, the live short links and the
// capacity used agree exactly, no short link redirects without a code, and every create that failed
// succeeds when retried. Needs DATABASE_URL: the assertions read both services' tables, and the
// processes shape is only production-like on Postgres (CI's second pass).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pLimit from "p-limit";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { adminQuery } from "@qrplatform/db/testing";
import { call, type ApiResponse } from "./support/http.js";
import { startStack, type ProcessName, type Stack } from "./support/stack.js";

const BURST = 200;
const CONCURRENCY = 20;

describe.skipIf(!process.env.DATABASE_URL)("crashes during a burst of creates", () => {
  let stack: Stack;
  let key: string;
  let accountId: string;
  let workspaceId: string;
  let domainId: string;

  beforeAll(async () => {
    // The reconciler takes an operation for abandoned after a second, so the test need not wait a minute.
    const reconcileFast = { RECONCILE_GRACE_SECONDS: "1", RECONCILE_INTERVAL_SECONDS: "1", LOG_LEVEL: "info" };
    stack = await startStack("processes", { env: { catalog: reconcileFast } });
    const { account } = await stack.admin.createAccount({ name: "Burst", subscriptionTier: SubscriptionTier.SCALE });
    accountId = account!.id;
    key = (await stack.admin.createApiKey({ accountId, scopes: [] })).secret;
    workspaceId = (await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Burst" } })).body.id;
    const { domain } = await stack.domains.createDomain({ accountId, hostname: "go.burst.example" });
    stack.dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
    await stack.domains.verifyDomain({ accountId, domainId: domain!.id });
    domainId = domain!.id;
  }, 120_000);
  afterAll(() => stack?.close());

  /** Every fourth code asks for a vanity slug, so a crash can strand a slug that a retry needs. */
  const body = (round: string, i: number) => ({
    name: `${round} ${i}`,
    destination_url: `https://example.com/${round}/${i}`,
    ...(i % 4 === 0 && { vanity_domain_id: domainId, vanity_slug: `${round}-${i}` }),
  });
  const createCode = (round: string, i: number) =>
    call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes`, { key, body: body(round, i) });

  async function sql<T>(text: string): Promise<T[]> {
    return (await adminQuery(stack.databaseUrl!, text)).rows as T[];
  }

  /** Codes of the account (as the API lists them), its live links, and the capacity the catalog counts. */
  async function tally() {
    const codes: { id: string; name: string }[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: ApiResponse = await call(
        stack.baseUrl,
        "GET",
        `/qr-codes?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
        { key },
      );
      expect(page.status).toBe(200);
      codes.push(...page.body.data);
      cursor = page.body.next_cursor;
      if (!cursor) break;
    }
    const links = await sql<{ id: string }>(
      `select id from links.links where account_id = '${accountId}' and deleted_at is null`,
    );
    const codeLinks = await sql<{ link_id: string }>(
      `select link_id from catalog.qr_codes where account_id = '${accountId}' and pending_operation is null`,
    );
    const pending = await sql<{ n: number }>(
      `select count(*)::int as n from catalog.qr_codes where pending_operation is not null`,
    );
    const { capacity } = await stack.catalog.getCapacity({ accountId });
    return {
      codes,
      links: links.map((l) => l.id).sort(),
      codeLinks: codeLinks.map((c) => c.link_id).sort(),
      pending: pending[0]!.n,
      used: Number(capacity!.qrCodesUsed),
    };
  }

  /** What the catalog's reconciler reported repairing so far, summed over its log lines. */
  function repairsLogged() {
    const sum = { createsUndone: 0, updatesSettled: 0, deletesFinished: 0, failed: 0 };
    for (const line of stack.processes!.catalog.output().split("\n")) {
      if (!line.includes("reconciled QR codes with their links")) continue;
      const entry = JSON.parse(line) as typeof sum;
      for (const key of Object.keys(sum) as (keyof typeof sum)[]) sum[key] += entry[key];
    }
    return sum;
  }

  const rounds: { victim: ProcessName; afterCreates: number }[] = [
    { victim: "catalog", afterCreates: 30 },
    { victim: "links", afterCreates: 100 },
    { victim: "tenancy", afterCreates: 60 },
    { victim: "catalog", afterCreates: 170 },
  ];

  it(`keeps codes, links and capacity equal when services die mid-burst (${rounds.length} rounds of ${BURST})`, async () => {
    const figures: Record<string, unknown>[] = [];
    let repairedBefore = repairsLogged();
    let expectedCodes = 0;
    for (const [index, { victim, afterCreates }] of rounds.entries()) {
      const round = `r${index}-${randomUUID().slice(0, 4)}`;
      const limit = pLimit(CONCURRENCY);
      let answered = 0;
      let crash: Promise<void> | undefined;
      const results = await Promise.all(
        Array.from({ length: BURST }, (_, i) =>
          limit(async () => {
            const res = await createCode(round, i);
            if (++answered === afterCreates) {
              crash = (async () => {
                await stack.processes![victim].kill("SIGKILL");
                await stack.processes![victim].start();
              })();
            }
            return res;
          }),
        ),
      );
      await crash;

      const failed = results.flatMap((res, i) => (res.status === 201 ? [] : [i]));
      // A crash is the platform's trouble, told as such: 503 with Retry-After (or 504), never a 409 or a 500.
      for (const i of failed) {
        expect([503, 504], JSON.stringify(results[i]!.body)).toContain(results[i]!.status);
        expect(results[i]!.headers.get("retry-after")).toMatch(/^\d+$/);
      }

      // The reconciler repairs what the crash left; then every failed create that did not happen
      // succeeds when retried. (A create can succeed in the catalog after the edge lost its answer:
      // without an idempotency key, a careful client looks before it retries.)
      await expect.poll(async () => (await tally()).pending, { timeout: 30_000, interval: 250 }).toBe(0);
      const names = new Set((await tally()).codes.map((code) => code.name));
      const missing = failed.filter((i) => !names.has(`${round} ${i}`));
      for (const i of missing) expect((await createCode(round, i)).status).toBe(201);

      expectedCodes += BURST;
      const after = await tally();
      expect(after.codes).toHaveLength(expectedCodes);
      expect(after.used).toBe(expectedCodes);
      expect(after.links).toEqual(after.codeLinks);
      expect(after.links).toHaveLength(expectedCodes);
      const repaired = repairsLogged();
      const repairs = Object.fromEntries(
        Object.entries(repaired).map(([k, v]) => [k, v - repairedBefore[k as keyof typeof repaired]]),
      );
      repairedBefore = repaired;
      figures.push({
        victim,
        afterCreates,
        failed: failed.length,
        madeDespiteFailure: failed.length - missing.length,
        repairs,
      });
    }
    // The kills reached clients: the failure answers and the retries above were exercised, not skipped.
    expect(
      figures.some((round) => (round.failed as number) > 0),
      JSON.stringify(figures),
    ).toBe(true);
    // No live link is without its code, so no short link redirects to a code that does not exist.
    const orphans = await sql<{ slug: string }>(
      `select l.slug from links.links l where l.account_id = '${accountId}' and l.deleted_at is null
         and not exists (select 1 from catalog.qr_codes c where c.link_id = l.id)`,
    );
    expect(orphans).toEqual([]);
    console.info(JSON.stringify({ rounds: figures }));
  }, 600_000);
});
