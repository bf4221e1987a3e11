// Writes through client-node's typed APIs: create/get/update with their 404s and 409s, the patch content
// types, the status subresource and generation, finalizers, and owner-reference garbage collection.
import {
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Ingress,
} from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer, type KubeObject } from "../src/index.js";
import { customDomain, customDomainCrd, customDomains, failure } from "./support.js";

const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const strategic = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);
const domains = "customdomains.qr-platform.io";
const ns = "qr";

let fake: FakeKubeApiServer;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let networking: NetworkingV1Api;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ crds: [customDomainCrd], namespace: ns });
  const kc = fake.kubeConfig();
  custom = kc.makeApiClient(CustomObjectsApi);
  core = kc.makeApiClient(CoreV1Api);
  networking = kc.makeApiClient(NetworkingV1Api);
});

afterEach(() => fake.close());

type Domain = KubeObject & { spec: Record<string, unknown>; status?: Record<string, unknown> };
const getDomain = (name: string) => custom.getClusterCustomObject({ ...customDomains, name }) as Promise<Domain>;

function ingress(name: string): V1Ingress {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns },
    spec: { rules: [{ host: name }] },
  };
}

describe("create, get and update", () => {
  it("creates with identity and generation 1, drops status on create, and refuses a second create with 409 AlreadyExists", async () => {
    const created = (await custom.createClusterCustomObject({
      ...customDomains,
      body: { ...customDomain("a.example.com"), status: { observedGeneration: 7 } },
    })) as Domain;
    expect(created.metadata).toMatchObject({
      name: "a.example.com",
      generation: 1,
      resourceVersion: fake.resourceVersion(),
    });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(created.status).toBeUndefined();
    expect(created.metadata.namespace).toBeUndefined();

    const again = await failure(
      custom.createClusterCustomObject({ ...customDomains, body: customDomain("a.example.com") }),
    );
    expect(again.code).toBe(409);
    expect(again.status).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "AlreadyExists",
      code: 409,
      message: 'customdomains.qr-platform.io "a.example.com" already exists',
    });
  });

  it("answers 404 NotFound for a missing object and 422 Invalid for a name that is not a DNS subdomain", async () => {
    const missing = await failure(getDomain("missing.example.com"));
    expect(missing.status).toMatchObject({ reason: "NotFound", code: 404, details: { name: "missing.example.com" } });

    const invalid = await failure(
      custom.createClusterCustomObject({ ...customDomains, body: customDomain("Bad_Host.example.com") }),
    );
    expect(invalid.status).toMatchObject({ reason: "Invalid", code: 422 });
    expect(invalid.status.message).toContain("RFC 1123 subdomain");
    expect(fake.list(domains)).toEqual([]);
  });

  it("updates with a resourceVersion precondition: stale is 409 Conflict, missing is 422 for a custom resource", async () => {
    const created = (await custom.createClusterCustomObject({
      ...customDomains,
      body: customDomain("b.example.com"),
    })) as Domain;
    const updated = (await custom.replaceClusterCustomObject({
      ...customDomains,
      name: "b.example.com",
      body: { ...created, spec: { ...created.spec, domainId: "0b6f7a1e-2c3d-4e5f-8a9b-0c1d2e3f4a5b" } },
    })) as Domain;
    expect(Number(updated.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect(updated.metadata.generation).toBe(2);

    const stale = await failure(
      custom.replaceClusterCustomObject({ ...customDomains, name: "b.example.com", body: created }),
    );
    expect(stale.status).toMatchObject({ reason: "Conflict", code: 409 });
    expect(stale.status.message).toContain("the object has been modified");

    const { resourceVersion: _rv, ...withoutVersion } = updated.metadata;
    const unconditional = await failure(
      custom.replaceClusterCustomObject({
        ...customDomains,
        name: "b.example.com",
        body: { ...updated, metadata: withoutVersion },
      }),
    );
    expect(unconditional.status).toMatchObject({ reason: "Invalid", code: 422 });
  });

  it("lets built-in types update without a resourceVersion, and keeps the namespace of the URL", async () => {
    await networking.createNamespacedIngress({ namespace: ns, body: ingress("c.example.com") });
    const replaced = await networking.replaceNamespacedIngress({
      namespace: ns,
      name: "c.example.com",
      body: { ...ingress("c.example.com"), spec: { ingressClassName: "nginx", rules: [{ host: "c.example.com" }] } },
    });
    expect(replaced.spec?.ingressClassName).toBe("nginx");
    expect(replaced.metadata?.namespace).toBe(ns);

    const elsewhere = await failure(
      networking.createNamespacedIngress({
        namespace: ns,
        body: { ...ingress("d.example.com"), metadata: { name: "d.example.com", namespace: "other" } },
      }),
    );
    expect(elsewhere.status).toMatchObject({ reason: "BadRequest", code: 400 });
  });
});

describe("patch", () => {
  it("applies merge patches and JSON patches; a JSON patch whose test fails is 422 and changes nothing", async () => {
    await custom.createClusterCustomObject({ ...customDomains, body: customDomain("p.example.com") });
    const merged = (await custom.patchClusterCustomObject(
      {
        ...customDomains,
        name: "p.example.com",
        body: { metadata: { labels: { tier: "gold" } }, spec: { domainId: "1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d" } },
      },
      merge,
    )) as Domain;
    expect(merged.metadata.labels).toEqual({ tier: "gold" });
    expect(merged.spec).toMatchObject({ domainId: "1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d" });
    expect(fake.requests({ method: "PATCH" })[0]?.contentType).toBe("application/merge-patch+json");

    // client-node's default PATCH content type is JSON patch.
    const patched = (await custom.patchClusterCustomObject({
      ...customDomains,
      name: "p.example.com",
      body: [
        { op: "test", path: "/metadata/labels/tier", value: "gold" },
        { op: "replace", path: "/metadata/labels/tier", value: "platinum" },
      ],
    })) as Domain;
    expect(patched.metadata.labels).toEqual({ tier: "platinum" });
    expect(fake.requests({ method: "PATCH" })[1]?.contentType).toBe("application/json-patch+json");

    const failed = await failure(
      custom.patchClusterCustomObject({
        ...customDomains,
        name: "p.example.com",
        body: [
          { op: "test", path: "/metadata/labels/tier", value: "gold" },
          { op: "replace", path: "/metadata/labels/tier", value: "silver" },
        ],
      }),
    );
    expect(failed.status).toMatchObject({ reason: "Invalid", code: 422 });
    expect(fake.get(domains, undefined, "p.example.com")?.metadata.labels).toEqual({ tier: "platinum" });
  });

  it("refuses strategic merge patch on custom resources (415), and on built-ins merges finalizers and ownerReferences by key", async () => {
    await custom.createClusterCustomObject({ ...customDomains, body: customDomain("s.example.com") });
    const refused = await failure(
      custom.patchClusterCustomObject({ ...customDomains, name: "s.example.com", body: { spec: {} } }, strategic),
    );
    expect(refused.status).toMatchObject({ reason: "UnsupportedMediaType", code: 415 });

    // Owners of a kind the fake does not serve, so the garbage collector leaves the Ingress alone.
    const owner = (uid: string) => ({ apiVersion: "apps/v1", kind: "Deployment", name: uid, uid });
    await networking.createNamespacedIngress({
      namespace: ns,
      body: {
        ...ingress("s.example.com"),
        metadata: { name: "s.example.com", finalizers: ["a"], ownerReferences: [owner("u1")] },
      },
    });
    const patched = await networking.patchNamespacedIngress(
      {
        namespace: ns,
        name: "s.example.com",
        body: {
          metadata: { finalizers: ["b", "a"], ownerReferences: [{ ...owner("u2") }] },
          spec: { rules: [{ host: "t.example.com" }] },
        },
      },
      strategic,
    );
    expect(patched.metadata?.finalizers).toEqual(["a", "b"]);
    expect(patched.metadata?.ownerReferences?.map((r) => r.uid)).toEqual(["u1", "u2"]);
    expect(patched.spec?.rules?.map((r) => r.host)).toEqual(["t.example.com"]);
  });

  it("treats metadata.resourceVersion in a patch as a precondition", async () => {
    const created = (await custom.createClusterCustomObject({
      ...customDomains,
      body: customDomain("v.example.com"),
    })) as Domain;
    fake.put(domains, {
      ...customDomain("v.example.com"),
      metadata: { name: "v.example.com", labels: { moved: "on" } },
    });
    const stale = await failure(
      custom.patchClusterCustomObject(
        {
          ...customDomains,
          name: "v.example.com",
          body: { metadata: { resourceVersion: created.metadata.resourceVersion, labels: { x: "y" } } },
        },
        merge,
      ),
    );
    expect(stale.status).toMatchObject({ reason: "Conflict", code: 409 });
  });
});

describe("status subresource and generation", () => {
  it("moves generation only for spec changes; status goes only through /status", async () => {
    await custom.createClusterCustomObject({ ...customDomains, body: customDomain("g.example.com") });
    const patchMain = (body: unknown) =>
      custom.patchClusterCustomObject({ ...customDomains, name: "g.example.com", body }, merge) as Promise<Domain>;
    const patchStatus = (body: unknown) =>
      custom.patchClusterCustomObjectStatus(
        { ...customDomains, name: "g.example.com", body },
        merge,
      ) as Promise<Domain>;

    const labelled = await patchMain({ metadata: { labels: { a: "b" } } });
    expect(labelled.metadata.generation).toBe(1);

    const ignored = await patchMain({ status: { observedGeneration: 1 } });
    expect(ignored.status).toBeUndefined();
    expect(ignored.metadata.resourceVersion).toBe(labelled.metadata.resourceVersion);

    const withStatus = await patchStatus({ status: { observedGeneration: 1 }, spec: { accountId: "ignored" } });
    expect(withStatus.status).toEqual({ observedGeneration: 1 });
    expect(withStatus.spec.accountId).toBe(customDomain("x").spec.accountId);
    expect(withStatus.metadata.generation).toBe(1);

    const specChanged = await patchMain({ spec: { domainId: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d" } });
    expect(specChanged.metadata.generation).toBe(2);
    expect(specChanged.status).toEqual({ observedGeneration: 1 });

    const replaced = (await custom.replaceClusterCustomObjectStatus({
      ...customDomains,
      name: "g.example.com",
      body: { ...specChanged, status: { observedGeneration: 2 } },
    })) as Domain;
    expect(replaced.status).toEqual({ observedGeneration: 2 });
    expect(replaced.metadata.generation).toBe(2);
  });

  it("stores nothing for a write that changes nothing: no new resourceVersion, no watch event", async () => {
    const created = (await custom.createClusterCustomObject({
      ...customDomains,
      body: customDomain("n.example.com"),
    })) as Domain;
    const same = (await custom.patchClusterCustomObject(
      { ...customDomains, name: "n.example.com", body: { spec: created.spec } },
      merge,
    )) as Domain;
    expect(same.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(fake.resourceVersion()).toBe(created.metadata.resourceVersion);
  });

  it("has no /status for types without the subresource", async () => {
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: "s" }, stringData: { a: "b" } } });
    const response = await fetch(`${fake.url}/api/v1/namespaces/${ns}/secrets/s/status`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 });
  });
});

describe("direct writes and dry runs", () => {
  it("lets a test play another controller: put writes status too, setStatus only status, both seen by the API", async () => {
    const certificates = "certificates.cert-manager.io";
    const created = fake.put(certificates, {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: "r.example.com", namespace: ns },
      spec: { secretName: "r.example.com-tls" },
      status: { conditions: [{ type: "Ready", status: "False", reason: "Issuing" }] },
    });
    expect(created.metadata.generation).toBe(1);
    const ready = fake.setStatus(certificates, ns, "r.example.com", {
      conditions: [{ type: "Ready", status: "True", reason: "Ready" }],
      notAfter: "2027-01-01T00:00:00Z",
    });
    expect(ready.metadata.generation).toBe(1);
    expect(ready.metadata.managedFields?.map((e) => [e.manager, e.subresource ?? ""])).toEqual([
      ["fake-kube-apiserver", ""],
      ["fake-kube-apiserver", "status"],
    ]);
    const seen = (await custom.getNamespacedCustomObject({
      group: "cert-manager.io",
      version: "v1",
      namespace: ns,
      plural: "certificates",
      name: "r.example.com",
    })) as Domain;
    expect(seen.status).toMatchObject({
      conditions: [{ type: "Ready", status: "True" }],
      notAfter: "2027-01-01T00:00:00Z",
    });
  });

  it("checks a dryRun=All write without storing it", async () => {
    const dry = (await custom.createClusterCustomObject({
      ...customDomains,
      body: customDomain("dry.example.com"),
      dryRun: "All",
    })) as Domain;
    expect(dry.metadata.uid).toBeDefined();
    expect(fake.get(domains, undefined, "dry.example.com")).toBeUndefined();
    expect(
      (await failure(custom.createClusterCustomObject({ ...customDomains, body: customDomain("Dry!"), dryRun: "All" })))
        .code,
    ).toBe(422);
  });
});

describe("finalizers", () => {
  it("marks an object with finalizers as deleting, refuses new finalizers, and removes it once they are gone", async () => {
    await custom.createClusterCustomObject({
      ...customDomains,
      body: {
        ...customDomain("f.example.com"),
        metadata: { name: "f.example.com", finalizers: ["qr-platform.io/provisioned-resources"] },
      },
    });
    const deleting = (await custom.deleteClusterCustomObject({ ...customDomains, name: "f.example.com" })) as Domain;
    expect(deleting.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(deleting.metadata.generation).toBe(2);
    expect((await getDomain("f.example.com")).metadata.deletionTimestamp).toBe(deleting.metadata.deletionTimestamp);

    // A second delete changes nothing.
    const again = (await custom.deleteClusterCustomObject({ ...customDomains, name: "f.example.com" })) as Domain;
    expect(again.metadata.resourceVersion).toBe(deleting.metadata.resourceVersion);

    const added = await failure(
      custom.patchClusterCustomObject(
        {
          ...customDomains,
          name: "f.example.com",
          body: { metadata: { finalizers: ["qr-platform.io/provisioned-resources", "other"] } },
        },
        merge,
      ),
    );
    expect(added.status).toMatchObject({ reason: "Invalid", code: 422 });

    await custom.patchClusterCustomObject(
      { ...customDomains, name: "f.example.com", body: { metadata: { finalizers: null } } },
      merge,
    );
    expect((await failure(getDomain("f.example.com"))).code).toBe(404);
  });

  it("deletes an object without finalizers at once", async () => {
    await custom.createClusterCustomObject({ ...customDomains, body: customDomain("d.example.com") });
    await custom.deleteClusterCustomObject({ ...customDomains, name: "d.example.com" });
    expect(fake.get(domains, undefined, "d.example.com")).toBeUndefined();
  });
});

describe("owner-reference garbage collection", () => {
  it("deletes the dependents of a deleted owner, and only removes the reference where another owner remains", async () => {
    const owner = (await custom.createClusterCustomObject({
      ...customDomains,
      body: {
        ...customDomain("o.example.com"),
        metadata: { name: "o.example.com", finalizers: ["qr-platform.io/provisioned-resources"] },
      },
    })) as Domain;
    const ref = {
      apiVersion: "qr-platform.io/v1alpha1",
      kind: "CustomDomain",
      name: "o.example.com",
      uid: owner.metadata.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
    const keeper = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: "keeper" } } });
    const keeperRef = { apiVersion: "v1", kind: "ConfigMap", name: "keeper", uid: keeper.metadata!.uid! };
    await networking.createNamespacedIngress({
      namespace: ns,
      body: { ...ingress("o.example.com"), metadata: { name: "o.example.com", ownerReferences: [ref] } },
    });
    fake.put("certificates.cert-manager.io", {
      apiVersion: "cert-manager.io/v1",
      kind: "Certificate",
      metadata: { name: "o.example.com", namespace: ns, ownerReferences: [ref] },
      spec: { secretName: "o.example.com-tls" },
    });
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: "o.example.com-tls", ownerReferences: [ref, keeperRef] }, type: "kubernetes.io/tls" },
    });

    // Background propagation: while the owner only has a deletionTimestamp, its dependents stay.
    await custom.deleteClusterCustomObject({ ...customDomains, name: "o.example.com" });
    fake.put("configmaps", { metadata: { name: "tick", namespace: ns } });
    await vi.waitFor(() => expect(fake.get("configmaps", ns, "tick")).toBeDefined());
    expect(fake.get("ingresses.networking.k8s.io", ns, "o.example.com")).toBeDefined();

    await custom.patchClusterCustomObject(
      { ...customDomains, name: "o.example.com", body: { metadata: { finalizers: [] } } },
      merge,
    );
    await vi.waitFor(() => {
      expect(fake.get("ingresses.networking.k8s.io", ns, "o.example.com")).toBeUndefined();
      expect(fake.get("certificates.cert-manager.io", ns, "o.example.com")).toBeUndefined();
      expect(fake.get("secrets", ns, "o.example.com-tls")?.metadata.ownerReferences).toEqual([keeperRef]);
    });
  });

  it("collects an object whose owner never existed, and leaves references to kinds it does not serve alone", async () => {
    await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: {
          name: "orphan",
          ownerReferences: [
            {
              apiVersion: "qr-platform.io/v1alpha1",
              kind: "CustomDomain",
              name: "never.example.com",
              uid: "00000000-0000-4000-8000-000000000000",
            },
          ],
        },
      },
    });
    await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: {
          name: "foreign",
          ownerReferences: [
            { apiVersion: "apps/v1", kind: "Deployment", name: "x", uid: "11111111-1111-4111-8111-111111111111" },
          ],
        },
      },
    });
    await vi.waitFor(() => expect(fake.get("secrets", ns, "orphan")).toBeUndefined());
    expect(fake.get("secrets", ns, "foreign")).toBeDefined();
  });
});
