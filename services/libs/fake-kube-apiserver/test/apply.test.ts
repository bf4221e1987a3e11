// Server-side apply (PATCH application/apply-patch+yaml) as client-node sends it: create on apply,
// field ownership per manager, conflicts without force, and the status subresource.
import {
  CustomObjectsApi,
  KubernetesObjectApi,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
  type V1Ingress,
} from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer, type KubeObject } from "../src/index.js";
import { customDomain, customDomainCrd, customDomains, failure } from "./support.js";

const ns = "qr";
const operator = "qr-platform-operator";
const apply = setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply);
const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

let fake: FakeKubeApiServer;
let objects: KubernetesObjectApi;
let networking: NetworkingV1Api;
let custom: CustomObjectsApi;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd], namespace: ns });
  const kc = fake.kubeConfig();
  objects = KubernetesObjectApi.makeApiClient(kc);
  networking = kc.makeApiClient(NetworkingV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
});

afterEach(() => fake.close());

function ingress(
  host: string,
  extra: { labels?: Record<string, string>; rules?: string[]; tls?: boolean } = {},
): V1Ingress & KubernetesObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: host, namespace: ns, ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: {
      rules: (extra.rules ?? [host]).map((h) => ({ host: h })),
      ...(extra.tls ? { tls: [{ hosts: [host], secretName: `${host}-tls` }] } : {}),
    },
  };
}

const applyAs = (manager: string, body: KubernetesObject, force = true) =>
  objects.patch(body, undefined, undefined, manager, force, PatchStrategy.ServerSideApply);

const managers = (o: KubeObject | undefined) =>
  (o?.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}`).sort();

describe("server-side apply", () => {
  it("creates a missing object and records the applier as the manager of what it sent", async () => {
    const created = await applyAs(
      operator,
      ingress("a.example.com", { labels: { "app.kubernetes.io/managed-by": operator } }),
    );
    expect(created.metadata?.uid).toBeDefined();
    const stored = fake.get("ingresses.networking.k8s.io", ns, "a.example.com");
    expect(managers(stored)).toEqual([`${operator}/Apply`]);
    expect(stored?.metadata.managedFields?.[0]?.fieldsV1).toEqual({
      "f:metadata": { "f:labels": { "f:app.kubernetes.io/managed-by": {} } },
      "f:spec": { "f:rules": {} },
    });

    const patches = fake.requests({ method: "PATCH" });
    expect(patches).toEqual([
      expect.objectContaining({
        path: `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/a.example.com`,
        contentType: "application/apply-patch+yaml",
        query: expect.objectContaining({ fieldManager: operator, force: "true" }),
        status: 201,
      }),
    ]);
  });

  it("updates what the applier sends, removes what it stopped sending, and keeps other managers' fields", async () => {
    await applyAs(operator, ingress("b.example.com", { labels: { a: "1", b: "2" }, tls: true }));
    await networking.patchNamespacedIngress(
      {
        namespace: ns,
        name: "b.example.com",
        fieldManager: "kubectl-edit",
        body: { metadata: { annotations: { note: "hand" } } },
      },
      merge,
    );
    const before = fake.get("ingresses.networking.k8s.io", ns, "b.example.com")!;

    await applyAs(operator, ingress("b.example.com", { labels: { a: "1" } }));
    const after = fake.get("ingresses.networking.k8s.io", ns, "b.example.com")!;
    expect(after.metadata.labels).toEqual({ a: "1" });
    expect((after.spec as V1Ingress["spec"])?.tls).toBeUndefined();
    expect(after.metadata.annotations).toEqual({ note: "hand" });
    expect(managers(after)).toEqual(["kubectl-edit/Update", `${operator}/Apply`]);
    expect(after.metadata.generation).toBe(before.metadata.generation! + 1);

    // Applying the same configuration again stores nothing.
    await applyAs(operator, ingress("b.example.com", { labels: { a: "1" } }));
    expect(fake.get("ingresses.networking.k8s.io", ns, "b.example.com")?.metadata.resourceVersion).toBe(
      after.metadata.resourceVersion,
    );
  });

  it("reports a 409 conflict for a field another manager set, unless forced; equal values are shared", async () => {
    await applyAs(operator, ingress("c.example.com"));
    await networking.patchNamespacedIngress(
      {
        namespace: ns,
        name: "c.example.com",
        fieldManager: "kubectl-edit",
        body: { spec: { rules: [{ host: "hijacked.example.com" }] } },
      },
      merge,
    );

    const refused = await failure(applyAs(operator, ingress("c.example.com"), false));
    expect(refused.code).toBe(409);
    expect(refused.status).toMatchObject({
      kind: "Status",
      reason: "Conflict",
      code: 409,
      message: 'Apply failed with 1 conflict: conflict with "kubectl-edit" using networking.k8s.io/v1: .spec.rules',
      details: {
        causes: [
          {
            type: "FieldManagerConflict",
            field: ".spec.rules",
            message: 'conflict with "kubectl-edit" using networking.k8s.io/v1',
          },
        ],
      },
    });
    expect(fake.get("ingresses.networking.k8s.io", ns, "c.example.com")?.spec).toEqual({
      rules: [{ host: "hijacked.example.com" }],
    });

    // A second applier sending the value already there shares the field: no conflict, no force needed.
    await applyAs("another-applier", ingress("c.example.com", { rules: ["hijacked.example.com"] }), false);

    await applyAs(operator, ingress("c.example.com"), true);
    const forced = fake.get("ingresses.networking.k8s.io", ns, "c.example.com")!;
    expect(forced.spec).toEqual({ rules: [{ host: "c.example.com" }] });
    expect(managers(forced)).toEqual([`${operator}/Apply`]);
  });

  it("applies status only through /status, without touching generation", async () => {
    const body = { ...customDomain("d.example.com"), status: { observedGeneration: 5 } };
    const created = (await custom.patchClusterCustomObject(
      { ...customDomains, name: "d.example.com", body, fieldManager: operator, force: true },
      apply,
    )) as KubeObject;
    expect(created.status).toBeUndefined();

    const withStatus = (await custom.patchClusterCustomObjectStatus(
      {
        ...customDomains,
        name: "d.example.com",
        body: {
          apiVersion: "qr-platform.io/v1alpha1",
          kind: "CustomDomain",
          metadata: { name: "d.example.com" },
          status: { observedGeneration: 1 },
        },
        fieldManager: operator,
        force: true,
      },
      apply,
    )) as KubeObject;
    expect(withStatus.status).toEqual({ observedGeneration: 1 });
    expect(withStatus.metadata.generation).toBe(1);
    const entries = withStatus.metadata.managedFields ?? [];
    expect(entries.map((e) => [e.manager, e.operation, e.subresource ?? ""])).toEqual([
      [operator, "Apply", ""],
      [operator, "Apply", "status"],
    ]);
  });

  it("refuses an apply without fieldManager, and one that is not an object with apiVersion and kind (400)", async () => {
    await applyAs(operator, ingress("e.example.com"));
    const url = `${fake.url}/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/e.example.com`;
    const send = (query: string, body: string) =>
      fetch(`${url}${query}`, { method: "PATCH", headers: { "Content-Type": "application/apply-patch+yaml" }, body });

    const noManager = await send("", "apiVersion: networking.k8s.io/v1\nkind: Ingress\n");
    expect(noManager.status).toBe(400);
    expect(await noManager.json()).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
    const noKind = await send(
      `?fieldManager=${operator}`,
      "apiVersion: networking.k8s.io/v1\nmetadata:\n  name: e.example.com\n",
    );
    expect(noKind.status).toBe(400);
    const broken = await send(`?fieldManager=${operator}`, "apiVersion: [unclosed");
    expect(broken.status).toBe(400);

    // YAML, as kubectl sends it, works as well as client-node's JSON.
    const yaml = await send(
      `?fieldManager=kubectl&force=true`,
      "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: e.example.com\n  labels:\n    from: yaml\n",
    );
    expect(yaml.status).toBe(200);
    expect(fake.get("ingresses.networking.k8s.io", ns, "e.example.com")?.metadata.labels).toEqual({ from: "yaml" });
  });
});
