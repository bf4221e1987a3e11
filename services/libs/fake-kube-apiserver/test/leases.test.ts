// Leader election's Lease round trip through client-node's CoordinationV1Api: read, create, and replace
// with the resourceVersion precondition that keeps two candidates from both taking the lease.
import { CoordinationV1Api, V1MicroTime, type V1Lease } from "@kubernetes/client-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeKubeApiServer, type FakeKubeApiServer } from "../src/index.js";
import { failure } from "./support.js";

const ns = "qr";
const name = "qr-platform-operator";

let fake: FakeKubeApiServer;
let a: CoordinationV1Api;
let b: CoordinationV1Api;

beforeEach(async () => {
  fake = await startFakeKubeApiServer({ namespace: ns });
  a = fake.kubeConfig().makeApiClient(CoordinationV1Api);
  b = fake.kubeConfig().makeApiClient(CoordinationV1Api);
});

afterEach(() => fake.close());

const lease = (holder: string): V1Lease => ({
  metadata: { name, namespace: ns },
  spec: {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: new V1MicroTime(),
    renewTime: new V1MicroTime(),
    leaseTransitions: 0,
  },
});

describe("leases", () => {
  it("is created by one candidate only: the second create is 409 AlreadyExists", async () => {
    expect((await failure(a.readNamespacedLease({ name, namespace: ns }))).code).toBe(404);
    const created = await a.createNamespacedLease({ namespace: ns, body: lease("pod-a") });
    expect(created.spec?.holderIdentity).toBe("pod-a");
    const second = await failure(b.createNamespacedLease({ namespace: ns, body: lease("pod-b") }));
    expect(second.status).toMatchObject({ reason: "AlreadyExists", code: 409 });
  });

  it("lets only one of two candidates that read the same version replace it: the other gets 409 Conflict", async () => {
    await a.createNamespacedLease({ namespace: ns, body: lease("pod-a") });
    const seenByA = await a.readNamespacedLease({ name, namespace: ns });
    const seenByB = await b.readNamespacedLease({ name, namespace: ns });
    expect(seenByB.metadata?.resourceVersion).toBe(seenByA.metadata?.resourceVersion);

    const renewed = await a.replaceNamespacedLease({
      name,
      namespace: ns,
      body: { ...seenByA, spec: { ...seenByA.spec, renewTime: new V1MicroTime() } },
    });
    expect(Number(renewed.metadata?.resourceVersion)).toBeGreaterThan(Number(seenByA.metadata?.resourceVersion));

    const takeover = { ...seenByB, spec: { ...seenByB.spec, holderIdentity: "pod-b", leaseTransitions: 1 } };
    const lost = await failure(b.replaceNamespacedLease({ name, namespace: ns, body: takeover }));
    expect(lost.status).toMatchObject({ reason: "Conflict", code: 409 });
    expect(fake.get("leases.coordination.k8s.io", ns, name)?.spec).toMatchObject({ holderIdentity: "pod-a" });

    // Once A has let go (holderIdentity cleared), B reads again and takes over.
    await a.replaceNamespacedLease({
      name,
      namespace: ns,
      body: { ...renewed, spec: { ...renewed.spec, holderIdentity: undefined } },
    });
    const current = await b.readNamespacedLease({ name, namespace: ns });
    expect(current.spec?.holderIdentity).toBeUndefined();
    const taken = await b.replaceNamespacedLease({
      name,
      namespace: ns,
      body: { ...current, spec: { ...current.spec, holderIdentity: "pod-b", leaseTransitions: 1 } },
    });
    expect(taken.spec).toMatchObject({ holderIdentity: "pod-b", leaseTransitions: 1 });
  });
});
