// One vocabulary at every door: an id in any case names the same row through REST and gRPC, and a
// field problem found by any service reaches a REST client under the name the client sent (and a
// gRPC caller under the proto name).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { randomUUID } from "node:crypto";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { AnalyticsService, RedirectService } from "@qrplatform/api/links";
import { RenderingService } from "@qrplatform/api/rendering";
import { errorInfoOf } from "@qrplatform/platform";
import { call } from "./support/http.js";
import { startStack, type Stack } from "./support/stack.js";

describe("one validation vocabulary", () => {
  let stack: Stack;
  let key: string;
  let accountId: string;
  let workspaceId: string;
  let otherWorkspaceId: string;
  const codes: { id: string; linkId: string }[] = [];

  /** A client of a service in this process, with the admin credential (a caller that skips the edge). */
  function clientOf<S extends DescService>(service: S): Client<S> {
    const found = stack.grpcModules!.find(({ module }) =>
      module.services.some((s) => s.typeName === service.typeName),
    )!;
    return createClient(service, found.transport);
  }

  /** The field violations of a refused gRPC call, as `field reason`. */
  async function grpcProblems(call: Promise<unknown>): Promise<string[]> {
    const error = await call.then(
      () => undefined,
      (caught: unknown) => ConnectError.from(caught),
    );
    expect(error?.code).toBe(Code.InvalidArgument);
    return errorInfoOf(error!)!.fieldViolations.map((v) => `${v.field} ${v.reason}`);
  }

  /** The fields of a refused REST call, as `field reason`. */
  function restProblems(res: { status: number; body: any }): string[] {
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    return res.body.error.details.fields.map((f: { field: string; reason: string }) => `${f.field} ${f.reason}`);
  }

  beforeAll(async () => {
    stack = await startStack("in-process");
    const { account } = await stack.admin.createAccount({
      name: "Vocabulary",
      subscriptionTier: SubscriptionTier.ENTERPRISE,
    });
    accountId = account!.id;
    ({ secret: key } = await stack.admin.createApiKey({ accountId }));
    workspaceId = (await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Cases" } })).body.id;
    otherWorkspaceId = (await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Other" } })).body.id;
    for (const name of ["First", "Second"]) {
      const created = await call(stack.baseUrl, "POST", `/workspaces/${workspaceId.toUpperCase()}/qr-codes`, {
        key,
        body: { name, destination_url: "https://example.com/menu" },
      });
      expect(created.status).toBe(201);
      expect(created.body.workspace_id).toBe(workspaceId);
      const { qrCode } = await stack.catalog.getQrCode({ accountId, qrCodeId: created.body.id });
      codes.push({ id: created.body.id, linkId: qrCode!.linkId });
    }
  }, 120_000);
  afterAll(() => stack?.close());

  it("names the same rows with a mixed-case id through REST", async () => {
    const [first] = codes;
    const mixed = (id: string) => `${id.slice(0, 18).toUpperCase()}${id.slice(18)}`;
    const read = await call(stack.baseUrl, "GET", `/qr-codes/${mixed(first!.id)}`, { key });
    expect([read.status, read.body.id]).toEqual([200, first!.id]);

    // A list filtered by a mixed-case workspace id pages on with a lower-case one: both are the same list.
    const page = await call(stack.baseUrl, "GET", `/qr-codes?workspace_id=${workspaceId.toUpperCase()}&limit=1`, {
      key,
    });
    expect(page.status).toBe(200);
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const next = await call(
      stack.baseUrl,
      "GET",
      `/qr-codes?workspace_id=${workspaceId}&limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`,
      {
        key,
      },
    );
    expect(next.status).toBe(200);
    expect([...page.body.data, ...next.body.data].map((code: { id: string }) => code.id).sort()).toEqual(
      codes.map((c) => c.id).sort(),
    );

    const moved = await call(stack.baseUrl, "PATCH", `/qr-codes/${first!.id.toUpperCase()}`, {
      key,
      body: { workspace_id: otherWorkspaceId.toUpperCase() },
    });
    expect([moved.status, moved.body.id, moved.body.workspace_id]).toEqual([200, first!.id, otherWorkspaceId]);
    const inOther = await call(stack.baseUrl, "GET", `/workspaces/${mixed(otherWorkspaceId)}/qr-codes`, { key });
    expect(inOther.body.data.map((code: { id: string }) => code.id)).toEqual([first!.id]);
  });

  it("names the same rows with a mixed-case id through gRPC, and answers in canonical ids", async () => {
    const [, second] = codes;
    for (const code of codes)
      await stack.catalog.moveQrCode({
        accountId,
        qrCodeId: code.id.toUpperCase(),
        workspaceId: otherWorkspaceId.toUpperCase(),
      });
    const { qrCode } = await stack.catalog.getQrCode({
      accountId: accountId.toUpperCase(),
      qrCodeId: second!.id.toUpperCase(),
    });
    expect([qrCode!.id, qrCode!.accountId, qrCode!.linkId]).toEqual([second!.id, accountId, second!.linkId]);
    // A page token is bound to the list that issued it: the same list whatever the case of its filter.
    const page = await stack.catalog.listQrCodes({
      accountId,
      workspaceId: otherWorkspaceId.toUpperCase(),
      pageSize: 1,
    });
    const rest = await stack.catalog.listQrCodes({
      accountId: accountId.toUpperCase(),
      workspaceId: otherWorkspaceId,
      pageSize: 1,
      pageToken: page.nextPageToken,
    });
    expect(page.nextPageToken).not.toBe("");
    expect([...page.qrCodes, ...rest.qrCodes].map((code) => code.id).sort()).toEqual(codes.map((c) => c.id).sort());
    expect([...page.qrCodes, ...rest.qrCodes].map((code) => code.workspaceId)).toEqual([
      otherWorkspaceId,
      otherWorkspaceId,
    ]);

    // A scan recorded under the link's upper-case id counts for the link, however the link is asked for.
    const scan = {
      id: randomUUID().toUpperCase(),
      linkId: second!.linkId.toUpperCase(),
      scanTime: timestampNow(),
      deviceType: "mobile",
      visitorKey: "v1",
    };
    expect((await clientOf(RedirectService).recordScans({ scans: [scan] })).recordedCount).toBe(1);
    const analytics = clientOf(AnalyticsService);
    const { totals } = await analytics.getScanTotals({
      accountId: accountId.toUpperCase(),
      linkIds: codes.map((c) => c.linkId.toUpperCase()),
    });
    expect(totals).toEqual({ [second!.linkId]: 1n });
    const summary = await analytics.getLinkAnalytics({
      accountId: accountId.toUpperCase(),
      linkId: second!.linkId.toUpperCase(),
    });
    expect(summary.totalScans).toBe(1n);
    const overRest = await call(stack.baseUrl, "GET", `/qr-codes/${second!.id.toUpperCase()}/analytics`, { key });
    expect([overRest.status, overRest.body.qr_code_id, overRest.body.total_scans]).toEqual([200, second!.id, 1]);
  });

  it("reports a catalog problem as `cursor` over REST and `page_token` over gRPC", async () => {
    expect(restProblems(await call(stack.baseUrl, "GET", "/qr-codes?cursor=not-one-of-ours", { key }))).toEqual([
      "cursor invalid_page_token",
    ]);
    expect(
      await grpcProblems(stack.catalog.listQrCodes({ accountId, pageSize: 10, pageToken: "not-one-of-ours" })),
    ).toEqual(["page_token invalid_page_token"]);
  });

  it("reports a links problem as `from` over REST and `from_date` over gRPC", async () => {
    const [first] = codes;
    expect(
      restProblems(await call(stack.baseUrl, "GET", `/qr-codes/${first!.id}/analytics?from=2026-02-30`, { key })),
    ).toEqual(["from invalid_date"]);
    const analytics = clientOf(AnalyticsService);
    expect(
      await grpcProblems(analytics.getLinkAnalytics({ accountId, linkId: first!.linkId, fromDate: "2026-02-30" })),
    ).toEqual(["from_date invalid_date"]);
  });

  it("reports a rendering problem in the design's camelCase over REST and in proto spelling over gRPC", async () => {
    const label = "x".repeat(31);
    const res = await call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes`, {
      key,
      body: {
        name: "Label",
        destination_url: "https://example.com",
        design: { cornerSquareShape: "rounded", frame: { enabled: true, labelTop: label } },
      },
    });
    expect(restProblems(res)).toEqual(["design.frame.labelTop too_long"]);
    const rendering = clientOf(RenderingService);
    expect(
      await grpcProblems(rendering.validateDesign({ design: { frame: { enabled: true, labelTop: label } } })),
    ).toEqual(["design.frame.label_top too_long"]);
  });
});
