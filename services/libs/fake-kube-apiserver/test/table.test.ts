// Server-side Tables as kubectl asks for them: a CRD's printer columns (JSONPath filters, wide-only
// priorities, dates as ages), the events table, the includeObject choices; discovery's short names and
// categories, and the event field selectors `kubectl describe` sends.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "../src/index.js";
import { humanDuration } from "../src/table.js";
import { customDomain, customDomainCrd } from "./support.js";

const TABLE =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
const CUSTOM_DOMAINS = "/apis/qr-platform.io/v1alpha1/customdomains";
const ACCOUNT = "7b0e3c52-61b4-4f7c-9d3e-1a2b3c4d5e6f";

let fake: FakeKubeApiServer;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd], namespace: "qr" });
});

afterEach(() => fake.close());

async function get(path: string, accept = TABLE): Promise<{ status: number; body: any }> {
  const res = await fetch(`${fake.url}${path}`, { headers: { accept } });
  return { status: res.status, body: await res.json() };
}

function putReadyDomain(name: string) {
  return fake.put("customdomains.qr-platform.io", {
    ...customDomain(name, { domainId: "0b0e3c52-61b4-4f7c-9d3e-1a2b3c4d5e60" }),
    status: {
      certificate: { notAfter: "2030-01-01T00:00:00Z" },
      conditions: [
        {
          type: "Verified",
          status: "True",
          reason: "Verified",
          message: "ok",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
        {
          type: "Ready",
          status: "False",
          reason: "CertificatePending",
          message: "waiting",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    },
  });
}

describe("server-side Tables", () => {
  it("prints a custom resource with its CRD's printer columns, the wide ones at priority 1", async () => {
    putReadyDomain("go.example.com");
    fake.put("customdomains.qr-platform.io", customDomain("new.example.com"));

    const { status, body } = await get(CUSTOM_DOMAINS);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      kind: "Table",
      apiVersion: "meta.k8s.io/v1",
      metadata: { resourceVersion: fake.resourceVersion() },
    });
    expect(body.columnDefinitions.map((c: any) => [c.name, c.type, c.priority])).toEqual([
      ["Name", "string", 0],
      ["Account", "string", 0],
      ["Ready", "string", 0],
      ["Reason", "string", 0],
      ["Cert-Expires", "string", 1],
      ["Domain-ID", "string", 1],
      ["Age", "date", 0],
    ]);
    expect(body.columnDefinitions[0].format).toBe("name");
    const [ready, fresh] = body.rows;
    // The Ready condition is picked out of several by the filter; a column with nothing to read is null.
    expect(ready.cells.slice(0, 6)).toEqual([
      "go.example.com",
      ACCOUNT,
      "False",
      "CertificatePending",
      "2030-01-01T00:00:00Z",
      "0b0e3c52-61b4-4f7c-9d3e-1a2b3c4d5e60",
    ]);
    expect(ready.cells[6]).toMatch(/^\d+s$/);
    expect(fresh.cells.slice(0, 6)).toEqual(["new.example.com", ACCOUNT, null, null, null, null]);
    expect(ready.object).toMatchObject({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: { name: "go.example.com" },
    });
    expect(ready.object.spec).toBeUndefined();
  });

  it("answers a Table for one object, with the whole object or none on request", async () => {
    putReadyDomain("go.example.com");
    const one = await get(`${CUSTOM_DOMAINS}/go.example.com?includeObject=Object`);
    expect(one.body.rows).toHaveLength(1);
    expect(one.body.rows[0].object).toMatchObject({
      kind: "CustomDomain",
      apiVersion: "qr-platform.io/v1alpha1",
      spec: { accountId: ACCOUNT },
    });
    const bare = await get(`${CUSTOM_DOMAINS}?includeObject=None`);
    expect(bare.body.rows[0].object).toBeUndefined();
    const wrong = await get(`${CUSTOM_DOMAINS}?includeObject=All`);
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ kind: "Status", reason: "BadRequest" });
  });

  it("still answers plain JSON to a client that does not ask for a Table", async () => {
    putReadyDomain("go.example.com");
    const { body } = await get(CUSTOM_DOMAINS, "application/json");
    expect(body.kind).toBe("CustomDomainList");
    expect(body.items[0].spec.accountId).toBe(ACCOUNT);
  });

  it("prints events as kubectl get events shows them, and other built-ins with name and age", async () => {
    fake.put("events", {
      metadata: { name: "go.example.com.1", namespace: "qr" },
      involvedObject: { kind: "CustomDomain", name: "go.example.com", apiVersion: "qr-platform.io/v1alpha1" },
      type: "Warning",
      reason: "CertificatePending",
      message: "  The Certificate is not issued yet. ",
      count: 3,
      firstTimestamp: new Date(Date.now() - 3 * 3600_000).toISOString(),
      lastTimestamp: new Date(Date.now() - 20 * 60_000).toISOString(),
      source: { component: "qr-platform-operator" },
    });
    const { body } = await get("/api/v1/namespaces/qr/events");
    expect(body.columnDefinitions.map((c: any) => `${c.name}:${c.priority}`)).toEqual([
      "Last Seen:0",
      "Type:0",
      "Reason:0",
      "Object:0",
      "Subobject:1",
      "Source:1",
      "Message:0",
      "First Seen:1",
      "Count:1",
      "Name:1",
    ]);
    const [cells] = body.rows.map((r: any) => r.cells);
    expect(cells.slice(1, 10)).toEqual([
      "Warning",
      "CertificatePending",
      "customdomain/go.example.com",
      "",
      "qr-platform-operator",
      "The Certificate is not issued yet.",
      "3h",
      3,
      "go.example.com.1",
    ]);
    // Ages read to the minute above 10 minutes and to the hour above 3 hours, so they hold however slow the run.
    expect(cells[0]).toBe("20m");

    fake.put("secrets", { metadata: { name: "s", namespace: "qr" }, type: "Opaque" });
    const secrets = await get("/api/v1/namespaces/qr/secrets");
    expect(secrets.body.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Age"]);
    expect(secrets.body.rows[0].cells[0]).toBe("s");
  });

  it("turns durations into kubectl's ages", () => {
    const s = 1000;
    expect(
      [
        -5 * s,
        -500,
        0,
        119 * s,
        120 * s,
        201 * s,
        10 * 60 * s,
        3 * 3600 * s,
        7 * 3600 * s + 30 * 60 * s,
        47 * 3600 * s,
        50 * 3600 * s,
        30 * 86_400 * s,
        800 * 86_400 * s,
        3000 * 86_400 * s,
      ].map(humanDuration),
    ).toEqual([
      "<invalid>",
      "0s",
      "0s",
      "119s",
      "2m",
      "3m21s",
      "10m",
      "3h",
      "7h30m",
      "47h",
      "2d2h",
      "30d",
      "2y70d",
      "8y",
    ]);
  });
});

describe("what kubectl's discovery and describe read", () => {
  it("lists a CRD's short names and categories in discovery", async () => {
    const { body } = await get("/apis/qr-platform.io/v1alpha1", "application/json");
    expect(body.resources.find((r: any) => r.name === "customdomains")).toMatchObject({
      shortNames: expect.arrayContaining(["cdom"]),
      categories: expect.arrayContaining(["qrplatform"]),
    });
  });

  it("selects events by the object they are about, as kubectl describe does", async () => {
    for (const [name, about] of [
      ["a.1", "a.example.com"],
      ["b.1", "b.example.com"],
    ] as const) {
      fake.put("events", {
        metadata: { name, namespace: "qr" },
        involvedObject: { kind: "CustomDomain", name: about, uid: `uid-${about}` },
        reason: "Seen",
      });
    }
    const selector = encodeURIComponent(
      "involvedObject.name=a.example.com,involvedObject.namespace=,involvedObject.kind=CustomDomain,involvedObject.uid=uid-a.example.com",
    );
    const { status, body } = await get(`/api/v1/events?fieldSelector=${selector}`, "application/json");
    expect(status).toBe(200);
    expect(body.items.map((e: any) => e.metadata.name)).toEqual(["a.1"]);
    const secrets = await get(`/api/v1/secrets?fieldSelector=involvedObject.name%3Da`, "application/json");
    expect(secrets.status).toBe(400);
  });
});
