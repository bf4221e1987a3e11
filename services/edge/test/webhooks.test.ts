// Signed webhooks, end to end in both shapes: a receiver beside the test verifies every delivery with
// the `standardwebhooks` package that receivers use, and sees each event exactly once after
// deduplicating by webhook-id while it fails, times out and recovers; a change that rolled back sends
// nothing; rotation signs with both secrets; an endpoint that keeps failing is disabled and says so;
// one account never sees another's endpoints or deliveries; bad input gets the documented envelope.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { WebhookDeliveryOrder, WebhookEndpointService } from "@qrplatform/api/catalog";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { errorInfoOf, remoteTransport } from "@qrplatform/platform";
import { EMBEDDED_IPV4_ADDRESSES } from "@qrplatform/testing";
import { run as runQrctl } from "@qrplatform/qrctl/main";
import { call, expectError, invalidFields } from "./support/http.js";
import { credentials, startStack, type Stack, type StackMode } from "./support/stack.js";
import { newAccount as newTestAccount } from "./support/accounts.js";

const MODES: StackMode[] = ["in-process", "processes"];

/**
 * Runs qrctl's command line in this process (spawning it costs seconds a call) with --json, as the
 * account's key against the API; its stdout parsed, its stderr kept.
 */
async function qrctl(
  apiUrl: string,
  key: string,
  ...args: string[]
): Promise<{ code: number; json: any; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [stdoutWrite, stderrWrite] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((chunk: string) => out.push(chunk) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => err.push(chunk) > 0) as typeof process.stderr.write;
  try {
    const code = await runQrctl(["--json", "webhooks", "--api-url", apiUrl, "--api-key", key, ...args]);
    return { code, json: out.length > 0 ? JSON.parse(out.join("")) : undefined, stderr: err.join("") };
  } finally {
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
  }
}

const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";

/** Short times, so retries, timeouts, scan periods and giving up all happen within seconds. */
const WEBHOOKS = {
  pollIntervalMs: 100,
  retryScheduleMs: [200, 200, 300, 300, 400, 400],
  scanPeriodMs: 1000,
  timeoutMs: 1000,
  allowLoopback: true,
};

type Behaviour = "ok" | "fail" | "hang";

interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
  signature: string;
  body: string;
  headers: Record<string, string>;
}

/** A webhook receiver on loopback: answers each request as `next` says, and keeps what it accepted. */
class Receiver {
  private server!: Server;
  url = "";
  /** What each coming request gets, in order; then `ok`. */
  script: Behaviour[] = [];
  requests = 0;
  accepted: Received[] = [];
  private readonly hanging: ServerResponse[] = [];

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.requests++;
    if (req.url === "/dead") return void res.writeHead(500).end("down for good");
    const behaviour = this.script.shift() ?? "ok";
    if (behaviour === "fail") return void res.writeHead(503).end("not now");
    if (behaviour === "hang") return void this.hanging.push(res);
    const headers = Object.fromEntries(
      ["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(req.headers[h])]),
    );
    const body = Buffer.concat(chunks).toString("utf8");
    const parsed = JSON.parse(body) as { type: string; data: Record<string, unknown> };
    this.accepted.push({
      id: headers["webhook-id"]!,
      type: parsed.type,
      data: parsed.data,
      signature: headers["webhook-signature"]!,
      body,
      headers,
    });
    res.writeHead(204).end();
  }

  /** Every accepted event once, by webhook-id. */
  unique(): Received[] {
    return [...new Map(this.accepted.map((event) => [event.id, event])).values()];
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.each(MODES)("signed webhooks [%s]", (mode) => {
  let stack: Stack;
  let receiver: Receiver;
  let key: string;
  let accountId: string;
  const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
    call(stack.baseUrl, method, path, { key, ...options });

  const newAccount = () => newTestAccount(stack.admin, { name: "Hooks", tier: SubscriptionTier.SCALE });

  beforeAll(async () => {
    receiver = await new Receiver().start();
    stack = await startStack(mode, { webhooks: WEBHOOKS });
    ({ key, accountId } = await newAccount());
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it("delivers every event signed, each exactly once after deduplication, while the receiver fails, times out and recovers; a rolled-back change sends none", async () => {
    const created = await api("POST", "/webhooks", {
      body: {
        url: `${receiver.url}/hooks`,
        description: "all of them",
        event_types: ["qr_code.created", "qr_code.updated", "qr_code.deleted", "qr_code.scanned", "domain.verified"],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.body).toMatchObject({ status: "enabled", disabled_reason: null, url: `${receiver.url}/hooks` });
    const verifier = new Webhook(created.body.secret);
    // Two failures and a timeout before the receiver recovers.
    receiver.script = ["fail", "fail", "hang"];

    const { body: workspace } = await api("POST", "/workspaces", { body: { name: "Hooked" } });
    const { body: code } = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
      body: { name: "Menu", destination_url: "https://example.com/menu" },
    });
    await api("PATCH", `/qr-codes/${code.id}`, {
      body: { destination_url: "https://example.com/menu2", status: "paused" },
    });
    await api("PATCH", `/qr-codes/${code.id}`, { body: { status: "active" } });
    // A create the links service refuses is undone: the code never existed, and no event tells of it.
    const refused = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
      body: {
        name: "x",
        destination_url: "https://example.com",
        vanity_domain_id: "00000000-0000-4000-8000-000000000000",
        vanity_slug: "nope",
      },
    });
    expect(refused.status).toBe(404);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(code.vanity_url, { redirect: "manual", headers: { "user-agent": IPHONE } });
      expect(res.status).toBe(302);
    }
    const hostname = `hooks-${randomBytes(4).toString("hex")}.example`;
    const { domain } = await stack.domains.createDomain({ accountId, hostname });
    stack.dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
    await stack.domains.verifyDomain({ accountId, domainId: domain!.id });

    const scanned = await waitFor("the scans' event", () =>
      receiver.unique().find((e) => e.type === "qr_code.scanned"),
    );
    expect(scanned.data).toMatchObject({ qr_code_id: code.id, scans: 3 });
    await api("DELETE", `/qr-codes/${code.id}`);
    await waitFor("every event", () => receiver.unique().length >= 6);
    // Late duplicates of attempts still running would show here.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const events = receiver.unique();
    expect(events.map((e) => e.type).sort()).toEqual([
      "domain.verified",
      "qr_code.created",
      "qr_code.deleted",
      "qr_code.scanned",
      "qr_code.updated",
      "qr_code.updated",
    ]);
    expect(
      events
        .filter((e) => e.type.startsWith("qr_code.") && e.type !== "qr_code.scanned")
        .every((e) => e.data.id === code.id),
    ).toBe(true);
    // Deliveries are not ordered: each body says what the code became.
    const updates = events.filter((e) => e.type === "qr_code.updated").map((e) => e.data);
    expect(updates.map((u) => u.status).sort()).toEqual(["active", "paused"]);
    expect(updates.every((u) => u.destination_url === "https://example.com/menu2")).toBe(true);
    expect(events.find((e) => e.type === "domain.verified")!.data).toMatchObject({ id: domain!.id, hostname });
    // Every accepted request verifies with the endpoint's secret, as receivers check it.
    for (const event of receiver.accepted)
      expect(verifier.verify(event.body, event.headers)).toMatchObject({ type: event.type });
    expect(receiver.requests).toBeGreaterThanOrEqual(events.length + 3);

    // The delivery log tells the same story, a page at a time.
    const first = await api("GET", `/webhooks/${created.body.id}/deliveries?limit=4`);
    expect(first.body.data).toHaveLength(4);
    const second = await api(
      "GET",
      `/webhooks/${created.body.id}/deliveries?limit=4&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    const log = [...first.body.data, ...second.body.data];
    expect(second.body.next_cursor).toBeNull();
    expect(log.map((d: { event_id: string }) => d.event_id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(log.every((d: { status: string }) => d.status === "succeeded")).toBe(true);
    expect(log.some((d: { attempts: number }) => d.attempts > 1)).toBe(true);
    // Each delivery's attempts: the failures the receiver scripted (two 503s, one timeout), then its 204 last.
    type Attempt = {
      attempt: number;
      response_status: number | null;
      error: string | null;
      duration_ms: number;
      attempted_at: string;
    };
    const attempts: Attempt[] = [];
    for (const delivery of log) {
      const detail = await api("GET", `/webhooks/${created.body.id}/deliveries/${delivery.id}`);
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({
        id: delivery.id,
        event_id: delivery.event_id,
        status: "succeeded",
        attempts: delivery.attempts,
      });
      const attemptLog: Attempt[] = detail.body.attempt_log;
      expect(attemptLog.map((a) => a.attempt)).toEqual(Array.from({ length: delivery.attempts }, (_, i) => i + 1));
      expect(attemptLog.at(-1)).toMatchObject({ response_status: 204, error: null });
      for (const failed of attemptLog.slice(0, -1)) expect(failed.error).toEqual(expect.any(String));
      expect(
        attemptLog.every((a) => Date.parse(a.attempted_at) >= Date.parse(delivery.created_at) && a.duration_ms >= 0),
      ).toBe(true);
      attempts.push(...attemptLog);
    }
    const failures = attempts.filter((a) => a.error !== null);
    expect(failures.filter((a) => a.response_status === 503)).toHaveLength(2);
    expect(failures.filter((a) => a.response_status === null).length).toBeGreaterThanOrEqual(1);
    await api("DELETE", `/webhooks/${created.body.id}`);
  }, 90_000);

  it("signs with the old and the new secret while a rotation's grace lasts, and with the new one alone after", async () => {
    const { body: endpoint } = await api("POST", "/webhooks", {
      body: { url: `${receiver.url}/rotation`, event_types: ["qr_code.created"] },
    });
    const rotated = await api("POST", `/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    const { body: workspace } = await api("POST", "/workspaces", { body: { name: "Rotation" } });
    const makeCode = async () =>
      (
        await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
          body: { name: "R", destination_url: "https://example.com/r" },
        })
      ).body;

    const during = await makeCode();
    const signedDuring = await waitFor("the delivery during the grace", () =>
      receiver.accepted.find((e) => e.data.id === during.id),
    );
    expect(signedDuring.signature.split(" ")).toHaveLength(2);
    expect(() => new Webhook(endpoint.secret).verify(signedDuring.body, signedDuring.headers)).not.toThrow();
    expect(() => new Webhook(rotated.body.secret).verify(signedDuring.body, signedDuring.headers)).not.toThrow();

    const again = await api("POST", `/webhooks/${endpoint.id}/rotate-secret`, {
      body: { previous_secret_expires_in: 0 },
    });
    expect(again.body.previous_secret_expires_at).toBeNull();
    const after = await makeCode();
    const signedAfter = await waitFor("the delivery after the grace", () =>
      receiver.accepted.find((e) => e.data.id === after.id),
    );
    expect(signedAfter.signature.split(" ")).toHaveLength(1);
    expect(() => new Webhook(again.body.secret).verify(signedAfter.body, signedAfter.headers)).not.toThrow();
    expect(() => new Webhook(rotated.body.secret).verify(signedAfter.body, signedAfter.headers)).toThrow();
    await api("DELETE", `/webhooks/${endpoint.id}`);
  }, 60_000);

  it("disables an endpoint whose deliveries keep failing, says why, and resumes once enabled", async () => {
    const { body: endpoint } = await api("POST", "/webhooks", {
      body: { url: `${receiver.url}/dead`, event_types: ["qr_code.created"] },
    });
    const { body: workspace } = await api("POST", "/workspaces", { body: { name: "Dead" } });
    await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
      body: { name: "D", destination_url: "https://example.com/d" },
    });
    const disabled = await waitFor("the endpoint disabled", async () => {
      const { body } = await api("GET", `/webhooks/${endpoint.id}`);
      return body.status === "disabled" ? body : undefined;
    });
    expect(disabled.disabled_reason).toBe("deliveries_failing");
    expect(disabled.disabled_message).toContain("HTTP 500");
    const { body: log } = await api("GET", `/webhooks/${endpoint.id}/deliveries`);
    expect(log.data).toEqual([
      expect.objectContaining({
        status: "failed",
        attempts: WEBHOOKS.retryScheduleMs.length + 1,
        last_response_status: 500,
        next_attempt_at: null,
      }),
    ]);
    expect(log.data[0].last_error).toContain("down for good");
    const { body: detail } = await api("GET", `/webhooks/${endpoint.id}/deliveries/${log.data[0].id}`);
    expect(detail.attempt_log.map((a: { attempt: number }) => a.attempt)).toEqual(
      Array.from({ length: WEBHOOKS.retryScheduleMs.length + 1 }, (_, i) => i + 1),
    );
    expect(
      detail.attempt_log.every(
        (a: { response_status: number; error: string }) =>
          a.response_status === 500 && a.error.includes("down for good"),
      ),
    ).toBe(true);

    const enabled = await api("PATCH", `/webhooks/${endpoint.id}`, {
      body: { status: "enabled", url: `${receiver.url}/revived` },
    });
    expect(enabled.body).toMatchObject({ status: "enabled", disabled_reason: null, disabled_message: null });
    const revived = await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
      body: { name: "E", destination_url: "https://example.com/e" },
    });
    await waitFor("a delivery to the enabled endpoint", () =>
      receiver.accepted.find((e) => e.data.id === revived.body.id),
    );
    await api("DELETE", `/webhooks/${endpoint.id}`);
  }, 60_000);

  it("holds the events of a disabled endpoint as paused in its log and delivers them once it is enabled again", async () => {
    // An account of its own: no other endpoint of it receives these events.
    const own = await newAccount();
    const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
      call(stack.baseUrl, method, path, { key: own.key, ...options });
    const { body: endpoint } = await api("POST", "/webhooks", {
      body: { url: `${receiver.url}/paused`, event_types: ["qr_code.created"] },
    });
    expect(endpoint.held_deliveries_dropped).toBe(0);
    await api("PATCH", `/webhooks/${endpoint.id}`, { body: { status: "disabled" } });
    const { body: workspace } = await api("POST", "/workspaces", { body: { name: "Paused" } });
    const made: string[] = [];
    for (const name of ["P1", "P2"])
      made.push(
        (
          await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
            body: { name, destination_url: "https://example.com/p" },
          })
        ).body.id,
      );

    const { body: held } = await api("GET", `/webhooks/${endpoint.id}/deliveries`);
    expect(held.data).toEqual([
      expect.objectContaining({ status: "paused", attempts: 0, next_attempt_at: null }),
      expect.objectContaining({ status: "paused", attempts: 0, next_attempt_at: null }),
    ]);
    expect((await api("GET", `/webhooks/${endpoint.id}/deliveries?status=paused`)).body.data).toHaveLength(2);
    expect((await api("GET", `/webhooks/${endpoint.id}/deliveries?status=pending`)).body.data).toEqual([]);
    const detail = await api("GET", `/webhooks/${endpoint.id}/deliveries/${held.data[0].id}`);
    expect(detail.body).toMatchObject({ status: "paused", attempt_log: [] });
    expect(receiver.accepted.filter((e) => made.includes(e.data.id as string))).toEqual([]);

    await api("PATCH", `/webhooks/${endpoint.id}`, { body: { status: "enabled" } });
    await waitFor(
      "the held events delivered",
      () =>
        new Set(receiver.accepted.filter((e) => made.includes(e.data.id as string)).map((e) => e.data.id)).size === 2,
    );
    const after = await waitFor("the log to show them delivered", async () => {
      const { body } = await api("GET", `/webhooks/${endpoint.id}/deliveries`);
      return body.data.every((d: { status: string }) => d.status === "succeeded") ? body.data : undefined;
    });
    expect(after).toHaveLength(2);
    await api("DELETE", `/webhooks/${endpoint.id}`);
  }, 60_000);

  it("filters the delivery log by status and lists it newest first, a page at a time, oldest first by default", async () => {
    const own = await newAccount();
    const api = (method: string, path: string, options: Parameters<typeof call>[3] = {}) =>
      call(stack.baseUrl, method, path, { key: own.key, ...options });
    const { body: endpoint } = await api("POST", "/webhooks", {
      body: { url: `${receiver.url}/log`, event_types: ["qr_code.created", "qr_code.deleted"] },
    });
    const { body: workspace } = await api("POST", "/workspaces", { body: { name: "Log" } });
    const codes: string[] = [];
    for (let i = 0; i < 5; i++)
      codes.push(
        (
          await api("POST", `/workspaces/${workspace.id}/qr-codes`, {
            body: { name: `L${i}`, destination_url: "https://example.com/l" },
          })
        ).body.id,
      );
    await waitFor("five deliveries made", async () => {
      const { body } = await api("GET", `/webhooks/${endpoint.id}/deliveries?status=succeeded`);
      return body.data.length === 5 || undefined;
    });
    // One delivery that fails for good: the endpoint now points where every answer is a 500.
    await api("PATCH", `/webhooks/${endpoint.id}`, { body: { url: `${receiver.url}/dead` } });
    await api("DELETE", `/qr-codes/${codes[0]}`);
    const failed = await waitFor("the failed delivery", async () => {
      const { body } = await api("GET", `/webhooks/${endpoint.id}/deliveries?status=failed`);
      return body.data.length === 1 ? body.data[0] : undefined;
    });
    expect(failed).toMatchObject({ status: "failed", event_type: "qr_code.deleted" });

    const walk = async (query: string) => {
      const seen: { id: string; created_at: string; status: string }[] = [];
      let cursor: string | null = null;
      do {
        const res = await api(
          "GET",
          `/webhooks/${endpoint.id}/deliveries?limit=2&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        );
        expect(res.status).toBe(200);
        seen.push(...res.body.data);
        cursor = res.body.next_cursor;
      } while (cursor);
      return seen;
    };
    const oldestFirst = await walk("");
    expect(oldestFirst).toHaveLength(6);
    expect(oldestFirst.at(-1)!.id).toBe(failed.id);
    const newestFirst = await walk("order=newest_first");
    expect(newestFirst.map((d) => d.id)).toEqual(oldestFirst.map((d) => d.id).reverse());
    expect(await walk("order=oldest_first")).toEqual(oldestFirst);
    const succeeded = await walk("status=succeeded&order=newest_first");
    expect(succeeded.map((d) => d.id)).toEqual(newestFirst.filter((d) => d.status === "succeeded").map((d) => d.id));
    expect(succeeded).toHaveLength(5);
    expect((await walk("status=failed")).map((d) => d.id)).toEqual([failed.id]);

    // A cursor belongs to the filter and order that issued it.
    const first = await api("GET", `/webhooks/${endpoint.id}/deliveries?limit=2&status=succeeded`);
    expectError(
      await api(
        "GET",
        `/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      ),
      400,
      "validation_error",
    );
    expectError(
      await api(
        "GET",
        `/webhooks/${endpoint.id}/deliveries?limit=2&status=succeeded&order=newest_first&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      ),
      400,
      "validation_error",
    );
    const badStatus = await api("GET", `/webhooks/${endpoint.id}/deliveries?status=exploded`);
    expectError(badStatus, 400, "validation_error");
    expect(invalidFields(badStatus)).toEqual(["status"]);
    expect(invalidFields(await api("GET", `/webhooks/${endpoint.id}/deliveries?status=`))).toEqual(["status"]);
    const badOrder = await api("GET", `/webhooks/${endpoint.id}/deliveries?order=sideways`);
    expectError(badOrder, 400, "validation_error");
    expect(invalidFields(badOrder)).toEqual(["order"]);

    // The same over gRPC, as internal callers make it: the request's own status and order fields.
    const transport =
      mode === "in-process"
        ? stack.grpcModules!.find(({ module }) => module.services.includes(WebhookEndpointService))!.transport
        : remoteTransport({ baseUrl: stack.grpcUrls!.catalog, token: credentials.serviceToken });
    const grpc = createClient(WebhookEndpointService, transport);
    const ask = { accountId: own.accountId, endpointId: endpoint.id };
    const newestSucceeded = await grpc.listWebhookDeliveries({
      ...ask,
      status: "succeeded",
      order: WebhookDeliveryOrder.NEWEST_FIRST,
      pageSize: 2,
    });
    expect(newestSucceeded.deliveries.map((d) => d.id)).toEqual(succeeded.slice(0, 2).map((d) => d.id));
    expect(
      (
        await grpc.listWebhookDeliveries({
          ...ask,
          pageSize: 2,
          pageToken: newestSucceeded.nextPageToken,
          status: "succeeded",
          order: WebhookDeliveryOrder.NEWEST_FIRST,
        })
      ).deliveries.map((d) => d.id),
    ).toEqual(succeeded.slice(2, 4).map((d) => d.id));
    expect((await grpc.listWebhookDeliveries(ask)).deliveries.map((d) => d.id)).toEqual(oldestFirst.map((d) => d.id));
    const refused = await grpc.listWebhookDeliveries({ ...ask, status: "exploded" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
    expect(errorInfoOf(refused as ConnectError)?.fieldViolations.map((v) => v.field)).toEqual(["status"]);
    await api("DELETE", `/webhooks/${endpoint.id}`);
  }, 90_000);

  it("keeps every account's endpoints and deliveries to itself", async () => {
    const { body: endpoint } = await api("POST", "/webhooks", {
      body: { url: `${receiver.url}/mine`, event_types: ["qr_code.created"] },
    });
    const stranger = await newAccount();
    const as = (method: string, path: string, body?: unknown) =>
      call(stack.baseUrl, method, path, { key: stranger.key, body });
    for (const [method, path, body] of [
      ["GET", `/webhooks/${endpoint.id}`],
      ["PATCH", `/webhooks/${endpoint.id}`, { url: `${receiver.url}/stolen` }],
      ["DELETE", `/webhooks/${endpoint.id}`],
      ["POST", `/webhooks/${endpoint.id}/rotate-secret`],
      ["GET", `/webhooks/${endpoint.id}/deliveries`],
      ["GET", `/webhooks/${endpoint.id}/deliveries/${randomUUID()}`],
    ] as const) {
      expectError(await as(method, path, body), 404, "not_found");
    }
    expect((await as("GET", "/webhooks")).body.data).toEqual([]);
    const page = await api("GET", "/webhooks?limit=1");
    expect((await api("GET", `/webhooks/${endpoint.id}`)).body).toMatchObject({
      url: `${receiver.url}/mine`,
      status: "enabled",
    });
    if (page.body.next_cursor)
      expectError(
        await as("GET", `/webhooks?cursor=${encodeURIComponent(page.body.next_cursor)}`),
        400,
        "validation_error",
      );
    await api("DELETE", `/webhooks/${endpoint.id}`);
  }, 60_000);

  it("refuses endpoints at IPv6 addresses that carry a private IPv4 address inside, in the documented envelope", async () => {
    for (const { address } of EMBEDDED_IPV4_ADDRESSES) {
      const res = await api("POST", "/webhooks", {
        body: { url: `https://[${address}]/hook`, event_types: ["qr_code.created"] },
      });
      expectError(res, 400, "validation_error");
      expect(res.body.error.details.fields, address).toEqual([
        expect.objectContaining({ field: "url", reason: "forbidden_address" }),
      ]);
    }
  });

  it("refuses bad endpoints and keys without the scope in the documented envelope", async () => {
    const bad = async (body: unknown) => {
      const res = await api("POST", "/webhooks", { body });
      expectError(res, 400, "validation_error");
      return res.body.error.details.fields as { field: string; reason: string }[];
    };
    expect(await bad({ url: "ftp://example.com/hook", event_types: ["qr_code.created"] })).toEqual([
      expect.objectContaining({ field: "url", reason: "invalid_url" }),
    ]);
    expect(await bad({ url: "https://10.1.2.3/hook", event_types: ["qr_code.created"] })).toEqual([
      expect.objectContaining({ field: "url", reason: "forbidden_address" }),
    ]);
    expect(await bad({ url: "https://user:pw@example.com/hook", event_types: ["qr_code.created"] })).toEqual([
      expect.objectContaining({ field: "url", reason: "invalid_url" }),
    ]);
    expect((await bad({ url: "https://example.com/hook", event_types: ["qr_code.exploded"] }))[0]).toMatchObject({
      field: "event_types.0",
    });
    expect((await bad({ url: "https://example.com/hook", event_types: [] }))[0]).toMatchObject({
      field: "event_types",
    });
    expect(
      (await bad({ url: "https://example.com/hook", event_types: ["qr_code.created"], secret: "mine" }))[0],
    ).toMatchObject({ field: "secret", reason: "read_only" });
    expectError(await api("GET", "/webhooks/not-a-uuid"), 400, "validation_error");
    const { body: endpoint } = await api("POST", "/webhooks", {
      body: { url: "https://example.com/hook", event_types: ["qr_code.created"] },
    });
    const badDelivery = await api("GET", `/webhooks/${endpoint.id}/deliveries/not-a-uuid`);
    expectError(badDelivery, 400, "validation_error");
    expect(invalidFields(badDelivery)).toEqual(["delivery_id"]);
    expectError(await api("GET", `/webhooks/${endpoint.id}/deliveries/${randomUUID()}`), 404, "not_found");
    await api("DELETE", `/webhooks/${endpoint.id}`);
    expectError(
      await api("POST", `/webhooks/${"0".repeat(8)}-0000-4000-8000-000000000000/rotate-secret`, {
        body: { previous_secret_expires_in: 999_999 },
      }),
      400,
      "validation_error",
    );

    const { account } = await stack.admin.createAccount({ name: "Viewer", subscriptionTier: SubscriptionTier.SCALE });
    const { secret: viewer } = await stack.admin.createApiKey({ accountId: account!.id, scopes: ["role:viewer"] });
    expect((await call(stack.baseUrl, "GET", "/webhooks", { key: viewer })).status).toBe(200);
    const denied = await call(stack.baseUrl, "POST", "/webhooks", {
      key: viewer,
      body: { url: "https://example.com/hook", event_types: ["qr_code.created"] },
    });
    expectError(denied, 403, "insufficient_scope");
    expect(denied.body.error.details).toEqual({ required_scope: "webhooks:write" });
  }, 60_000);

  it.runIf(mode === "in-process")(
    "is managed with qrctl through the typed client",
    async () => {
      const created = await qrctl(
        stack.baseUrl,
        key,
        "create",
        "--url",
        `${receiver.url}/cli`,
        "--events",
        "qr_code.created,qr_code.deleted",
      );
      expect(created.code).toBe(0);
      expect(created.json).toMatchObject({
        url: `${receiver.url}/cli`,
        event_types: ["qr_code.created", "qr_code.deleted"],
        secret: expect.stringMatching(/^whsec_/),
      });
      const id = created.json.id as string;
      const disabled = await qrctl(stack.baseUrl, key, "update", id, "--disable");
      expect(disabled.json).toMatchObject({ status: "disabled", disabled_reason: "disabled_by_account" });
      const rotated = await qrctl(stack.baseUrl, key, "rotate-secret", id, "--keep-old-for", "60");
      expect(rotated.json.secret).not.toBe(created.json.secret);
      expect((await qrctl(stack.baseUrl, key, "list")).json.data.map((e: { id: string }) => e.id)).toContain(id);
      expect((await qrctl(stack.baseUrl, key, "deliveries", id)).json).toEqual({ data: [], next_cursor: null });
      expect((await qrctl(stack.baseUrl, key, "deliveries", id, "--status", "paused", "--newest-first")).json).toEqual({
        data: [],
        next_cursor: null,
      });
      const missing = await qrctl(stack.baseUrl, key, "delivery", id, randomUUID());
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("not_found");
      const refused = await qrctl(
        stack.baseUrl,
        key,
        "create",
        "--url",
        "http://10.0.0.1/x",
        "--events",
        "qr_code.created",
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("validation_error");
      expect((await qrctl(stack.baseUrl, key, "delete", id)).json).toEqual({ id, deleted: true });
    },
    90_000,
  );
});
