// A backing service killed outright, with the platform running as separate processes: the edge answers
// 503 service_unavailable with Retry-After and a message that gives nothing away, and stays up.
import { afterAll, beforeAll, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { RETRY_AFTER_SECONDS } from "../src/http/grpc-errors.js";
import { call, expectError, type ApiResponse } from "./support/http.js";
import { startStack, type Stack } from "./support/stack.js";

let stack: Stack;
let key: string;
let workspaceId: string;

const api = (method: string, path: string, body?: unknown) => call(stack.baseUrl, method, path, { key, body });

function expectUnavailable(res: ApiResponse): void {
  expectError(res, 503, "service_unavailable");
  expect(res.headers.get("retry-after")).toBe(String(RETRY_AFTER_SECONDS));
  expect(res.body.error.details).toBeUndefined();
  // Nothing of the failure itself: no addresses, socket errors, service or method names.
  expect(res.body.error.message).not.toMatch(/ECONN|127\.0\.0\.1|http\/2|stream|qrplatform|catalog|links|Service/);
}

beforeAll(async () => {
  stack = await startStack("processes");
  const { account } = await stack.admin.createAccount({ name: "Outage", subscriptionTier: SubscriptionTier.SCALE });
  key = (await stack.admin.createApiKey({ accountId: account!.id })).secret;
  const created = await api("POST", "/workspaces", { name: "Posters" });
  expect(created.status).toBe(201);
  workspaceId = created.body.id;
  // Open the connections that the kills below will break: edge -> catalog -> links.
  expect(
    (
      await api("POST", `/workspaces/${workspaceId}/qr-codes`, {
        name: "Before",
        destination_url: "https://example.com/",
      })
    ).status,
  ).toBe(201);
}, 120_000);
afterAll(() => stack?.close());

it("answers 503 when the links service behind the catalog is killed", async () => {
  await stack.processes!.links.kill("SIGKILL");
  expectUnavailable(
    await api("POST", `/workspaces/${workspaceId}/qr-codes`, {
      name: "During",
      destination_url: "https://example.com/",
    }),
  );
  // Again, now that the broken connection is gone and nothing listens at all.
  expectUnavailable(
    await api("POST", `/workspaces/${workspaceId}/qr-codes`, {
      name: "During",
      destination_url: "https://example.com/",
    }),
  );
  // What does not need links still works.
  expect((await api("GET", `/workspaces/${workspaceId}`)).status).toBe(200);
});

it("answers 503 when the catalog itself is killed, and the edge stays up", async () => {
  expect((await api("GET", "/workspaces")).status).toBe(200);
  await stack.processes!.catalog.kill("SIGKILL");
  expectUnavailable(await api("GET", "/workspaces"));
  expectUnavailable(await api("GET", `/workspaces/${workspaceId}`));

  expect(stack.processes!.edge.child.exitCode).toBeNull();
  expect((await fetch(new URL("/healthz", stack.baseUrl))).status).toBe(200);
  expect((await fetch(new URL("/readyz", stack.baseUrl))).status).toBe(503);
  // The account is tenancy's: it is still served, without the count only the catalog can give.
  const account = await api("GET", "/account");
  expect(account.status).toBe(200);
  expect(account.body.usage).toEqual({ qr_codes: null });
});
