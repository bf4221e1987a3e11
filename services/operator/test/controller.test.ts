// The controller end to end against the in-process fake API server: the real client-node informers,
// patches, server-side apply and leases, an in-memory DomainService, and stand-ins for cert-manager and
// an ingress controller.
import { afterEach, describe, expect, it } from "vitest";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { DomainState } from "@qrplatform/api/links";
import { TenancyService } from "@qrplatform/api/tenancy";
import { notFound, type Metrics } from "@qrplatform/platform";
import { FINALIZER } from "../src/custom-domain.js";
import {
  CERTIFICATES,
  Cluster,
  CUSTOM_DOMAINS,
  eventually,
  HTTP_ROUTES,
  INGRESSES,
  LEASE_MS,
  LEASES,
  NAMESPACE,
  provisioning,
  type Replica,
} from "./support/cluster.js";
import { ACCOUNT, OTHER_ACCOUNT } from "./support/objects.js";

const UNKNOWN_ACCOUNT = "00000000-0000-4000-8000-000000000000";
const accounts = createClient(
  TenancyService,
  createRouterTransport((router) =>
    router.service(TenancyService, {
      getAccount: (req) => {
        if (req.accountId !== ACCOUNT && req.accountId !== OTHER_ACCOUNT) throw notFound("account");
        return { account: { id: req.accountId, name: "Acme" } };
      },
    }),
  ),
);

let cluster: Cluster;

afterEach(async () => {
  await cluster?.close();
});

/** A cluster with one operator replica that leads and has filled its caches. */
async function leadingOperator(options: Parameters<Cluster["startOperator"]>[0] = {}): Promise<Replica> {
  cluster = await Cluster.start();
  const replica = await cluster.startOperator({ ...options, deps: { accounts, ...options.deps } });
  await eventually(() => replica.operator.isLeader && replica.operator.readiness().ready, true);
  return replica;
}

/** A counter's value in a replica's registry. */
async function counter(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((value) => Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}

describe("the domain operator", () => {
  it("projects a domain into a CR, says what verification waits for, reports it, and undoes hand edits of the spec", async () => {
    await leadingOperator();
    const domain = cluster.domains.register(ACCOUNT, "go.example.com");
    await eventually(() => cluster.reasonOf("go.example.com"), "False/PendingVerification");
    const cr = cluster.customDomain("go.example.com")!;
    expect(cr.spec).toEqual({ accountId: ACCOUNT, domainId: domain.id });
    expect(cr.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("qr-platform-operator");
    expect(cr.metadata.finalizers).toEqual([FINALIZER]);
    expect(cr.status?.observedGeneration).toBe(cr.metadata.generation);
    expect(cr.status?.verification).toEqual({
      state: "pending",
      challengeRecordName: "_qr-platform-challenge.go.example.com",
      challengeRecordValue: domain.challengeRecordValue,
    });
    expect(cr.status?.conditions?.map((condition) => [condition.type, condition.status, condition.reason])).toEqual([
      ["Verified", "False", "PendingVerification"],
      ["RouteAdmitted", "False", "NotVerified"],
      ["CertificateReady", "False", "NotVerified"],
      ["Ready", "False", "PendingVerification"],
    ]);
    expect(cluster.get(INGRESSES, "go.example.com")).toBeUndefined();
    await eventually(() => cluster.domains.domains.get(domain.id)?.serving?.reason, "PendingVerification");
    expect(cluster.eventsFor("go.example.com").map((event) => [event.type, event.reason])).toContainEqual([
      "Warning",
      "PendingVerification",
    ]);

    await cluster.kubectl().edit("go.example.com", { spec: { accountId: OTHER_ACCOUNT } });
    await eventually(() => cluster.customDomain("go.example.com")?.spec.accountId, ACCOUNT);
  });

  it("provisions a verified domain, is Ready once the route is admitted and the certificate issued, and reports serving with the expiry", async () => {
    await leadingOperator();
    const domain = cluster.domains.register(ACCOUNT, "shop.example.com", DomainState.VERIFIED);
    await eventually(() => cluster.reasonOf("shop.example.com"), "False/RoutePending");
    const cr = cluster.customDomain("shop.example.com")!;
    const ingress = cluster.get(INGRESSES, "shop.example.com")!;
    const certificate = cluster.get(CERTIFICATES, "shop.example.com")!;
    for (const child of [ingress, certificate]) {
      expect(child.metadata.ownerReferences).toEqual([
        {
          apiVersion: "qr-platform.io/v1alpha1",
          kind: "CustomDomain",
          name: "shop.example.com",
          uid: cr.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(child.metadata.labels).toMatchObject({
        "app.kubernetes.io/managed-by": "qr-platform-operator",
        "qr-platform.io/hostname": "shop.example.com",
      });
      expect(child.metadata.managedFields?.map((entry) => [entry.manager, entry.operation])).toContainEqual([
        "qr-platform-operator",
        "Apply",
      ]);
    }
    expect((ingress as { spec?: unknown }).spec).toMatchObject({
      ingressClassName: "nginx",
      rules: [
        {
          host: "shop.example.com",
          http: { paths: [{ backend: { service: { name: "qr-platform-links", port: { number: 8081 } } } }] },
        },
      ],
      tls: [{ hosts: ["shop.example.com"], secretName: "shop.example.com-tls" }],
    });
    expect((certificate as { spec?: unknown }).spec).toEqual({
      secretName: "shop.example.com-tls",
      dnsNames: ["shop.example.com"],
      issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: "letsencrypt" },
    });

    cluster.admitIngress("shop.example.com");
    await eventually(() => cluster.reasonOf("shop.example.com"), "False/Issuing");
    cluster.issueCertificate("shop.example.com", "2026-09-01T00:00:00Z");
    await eventually(() => cluster.reasonOf("shop.example.com"), "True/Serving");
    expect(cluster.customDomain("shop.example.com")?.status).toMatchObject({
      route: { kind: "Ingress", name: "shop.example.com", namespace: NAMESPACE },
      certificate: { name: "shop.example.com", secretName: "shop.example.com-tls", notAfter: "2026-09-01T00:00:00Z" },
    });
    await eventually(() => cluster.domains.domains.get(domain.id)?.serving?.serving, true);
    const serving = cluster.domains.domains.get(domain.id)!.serving!;
    expect(serving).toMatchObject({ routeAdmitted: true, certificateReady: true, reason: "Serving" });
    expect(timestampDate(serving.certificateExpireTime!).toISOString()).toBe("2026-09-01T00:00:00.000Z");
    expect(cluster.eventsFor("shop.example.com").map((event) => [event.type, event.reason])).toContainEqual([
      "Normal",
      "Serving",
    ]);
  });

  it("stores the status only when it changed, applies nothing unchanged, and keeps lastTransitionTime across reconciles that do not flip", async () => {
    const replica = await leadingOperator();
    const domain = cluster.domains.register(ACCOUNT, "calm.example.com", DomainState.VERIFIED);
    await cluster.serve("calm.example.com");
    await eventually(() => cluster.domains.domains.get(domain.id)?.serving?.reason, "Serving");
    const reports = cluster.domains.callsOf("reportDomainServing").length;
    const before = cluster.customDomain("calm.example.com")!.status!.conditions!;
    const reconciled = await counter(replica.metrics, "qrp_operator_reconciles_total", { result: "ok" });
    // The log holds the operator's writes until now, so an empty one below means it wrote nothing.
    expect(cluster.kube.requests({ method: "PATCH", path: /\/status(\?|$)/ }).length).toBeGreaterThan(0);
    expect(cluster.kube.requests({ method: "PATCH", path: /ingresses|certificates/ }).length).toBeGreaterThan(0);
    cluster.kube.clearRequests();

    // A full resync reconciles every hostname; an SRE's label reconciles the CR again.
    cluster.domains.requestResync();
    await cluster.kubectl().edit("calm.example.com", { metadata: { labels: { team: "growth" } } });
    await expect
      .poll(() => counter(replica.metrics, "qrp_operator_reconciles_total", { result: "ok" }), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(reconciled + 2);

    expect(cluster.kube.requests({ method: "PATCH", path: /\/status(\?|$)/ })).toEqual([]);
    expect(cluster.kube.requests({ method: "PATCH", path: /ingresses|certificates/ })).toEqual([]);
    expect(cluster.customDomain("calm.example.com")!.status!.conditions).toEqual(before);
    expect(cluster.domains.callsOf("reportDomainServing").length).toBe(reports);
  });

  it("deletes the CR of a removed domain, and its finalizer removes the route and certificate first", async () => {
    await leadingOperator();
    const domain = cluster.domains.register(ACCOUNT, "gone.example.com", DomainState.VERIFIED);
    await cluster.serve("gone.example.com");
    cluster.kube.clearRequests();
    cluster.domains.remove(domain.id);
    await eventually(() => cluster.customDomain("gone.example.com"), undefined);
    expect(cluster.get(INGRESSES, "gone.example.com")).toBeUndefined();
    expect(cluster.get(CERTIFICATES, "gone.example.com")).toBeUndefined();
    // The operator deleted them itself, before letting the CR go.
    expect(cluster.kube.requests({ method: "DELETE", path: /ingresses\/gone\.example\.com(\?|$)/ })).toHaveLength(1);
    expect(cluster.kube.requests({ method: "DELETE", path: /certificates\/gone\.example\.com(\?|$)/ })).toHaveLength(1);
  });

  it("on kubectl delete withdraws the route and certificate but keeps the tenant's domain, and projects the CR again", async () => {
    await leadingOperator();
    const domain = cluster.domains.register(ACCOUNT, "kept.example.com", DomainState.VERIFIED);
    await cluster.serve("kept.example.com");
    const first = cluster.customDomain("kept.example.com")!.metadata.uid;
    const firstIngress = cluster.get(INGRESSES, "kept.example.com")!.metadata.uid;
    await cluster.kubectl().delete("kept.example.com");
    await eventually(() => {
      const uid = cluster.customDomain("kept.example.com")?.metadata.uid;
      return uid !== undefined && uid !== first;
    }, true);
    expect(cluster.domains.domains.has(domain.id)).toBe(true);
    expect(cluster.domains.callsOf("deleteDomain")).toEqual([]);
    // The old route went with the old CR; the new CR has its own.
    await eventually(() => {
      const ingress = cluster.get(INGRESSES, "kept.example.com");
      return Boolean(
        ingress &&
          ingress.metadata.uid !== firstIngress &&
          ingress.metadata.ownerReferences?.[0]?.uid === cluster.customDomain("kept.example.com")?.metadata.uid,
      );
    }, true);
  });

  describe("a CR created with kubectl", () => {
    it("registers its hostname for its account and binds to the new domain", async () => {
      await leadingOperator();
      await cluster.kubectl().create("new.example.com", ACCOUNT);
      await eventually(() => Boolean(cluster.customDomain("new.example.com")?.spec.domainId), true);
      const cr = cluster.customDomain("new.example.com")!;
      const domain = cluster.domains.domains.get(cr.spec.domainId!)!;
      expect(domain).toMatchObject({ accountId: ACCOUNT, hostname: "new.example.com" });
      await eventually(() => cluster.reasonOf("new.example.com"), "False/PendingVerification");
      expect(cluster.customDomain("new.example.com")?.metadata.finalizers).toEqual([FINALIZER]);
    });

    it("binds to the domain its account already has", async () => {
      cluster = await Cluster.start();
      await cluster.kubectl().create("mine.example.com", ACCOUNT);
      const domain = cluster.domains.register(ACCOUNT, "mine.example.com");
      await cluster.startOperator({ deps: { accounts } });
      await eventually(() => cluster.customDomain("mine.example.com")?.spec.domainId, domain.id);
      await eventually(() => cluster.reasonOf("mine.example.com"), "False/PendingVerification");
      expect(cluster.domains.callsOf("createDomain")).toEqual([]);
    });

    it("ends in InvalidHostname or AccountNotFound, leaving the CR as it is, while other domains are served", async () => {
      const replica = await leadingOperator();
      const kubectl = cluster.kubectl();
      await kubectl.create("10.0.0.1", ACCOUNT);
      await kubectl.create("example.test", ACCOUNT);
      await kubectl.create("orphan.example.com", UNKNOWN_ACCOUNT);
      cluster.domains.register(ACCOUNT, "fine.example.com", DomainState.VERIFIED);

      await eventually(() => cluster.reasonOf("10.0.0.1", "Verified"), "False/InvalidHostname");
      await eventually(() => cluster.reasonOf("example.test", "Verified"), "False/InvalidHostname");
      await eventually(() => cluster.reasonOf("orphan.example.com", "Verified"), "False/AccountNotFound");
      expect(cluster.condition("10.0.0.1", "Verified")?.message).toMatch(/not an IP address/);
      expect(cluster.reasonOf("10.0.0.1")).toBe("False/InvalidHostname");
      for (const name of ["10.0.0.1", "example.test", "orphan.example.com"]) {
        const cr = cluster.customDomain(name)!;
        expect(cr.spec.domainId).toBeUndefined();
        expect(cr.metadata.finalizers ?? []).toEqual([]);
        expect(cluster.get(INGRESSES, name)).toBeUndefined();
      }
      expect(
        cluster.domains.callsOf("createDomain").map((call) => (call as { hostname: string }).hostname),
      ).not.toContain("orphan.example.com");
      await cluster.serve("fine.example.com");
      expect(replica.operator.isLeader).toBe(true);
    });

    it("is HostnameTaken when another account has the hostname: not deleted, not provisioned", async () => {
      cluster = await Cluster.start();
      // The SRE's CR exists before the operator starts; the platform has the hostname for another account.
      await cluster.kubectl().create("claimed.example.com", ACCOUNT);
      const theirs = cluster.domains.register(OTHER_ACCOUNT, "claimed.example.com", DomainState.VERIFIED);
      await cluster.startOperator({ deps: { accounts } });
      await eventually(() => cluster.reasonOf("claimed.example.com"), "False/HostnameTaken");
      expect(cluster.condition("claimed.example.com", "Verified")?.message).toContain("another account");
      const cr = cluster.customDomain("claimed.example.com")!;
      expect(cr.spec).toEqual({ accountId: ACCOUNT });
      expect(cr.metadata.finalizers ?? []).toEqual([]);
      expect(cluster.get(INGRESSES, "claimed.example.com")).toBeUndefined();
      expect(cluster.domains.callsOf("createDomain")).toEqual([]);
      expect(cluster.domains.domains.get(theirs.id)?.accountId).toBe(OTHER_ACCOUNT);
    });
  });

  it("reports a foreign Ingress for the host as RouteConflict and never touches it, while other domains are served", async () => {
    await leadingOperator();
    const foreign = cluster.kube.put(
      INGRESSES,
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name: "legacy", namespace: NAMESPACE },
        spec: {
          rules: [
            {
              host: "busy.example.com",
              http: {
                paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "old", port: { number: 80 } } } }],
              },
            },
          ],
        },
      },
      { manager: "someone-else" },
    );
    cluster.domains.register(ACCOUNT, "busy.example.com", DomainState.VERIFIED);
    cluster.domains.register(ACCOUNT, "free.example.com", DomainState.VERIFIED);
    await eventually(() => cluster.reasonOf("busy.example.com", "RouteAdmitted"), "False/RouteConflict");
    expect(cluster.condition("busy.example.com", "RouteAdmitted")?.message).toContain(`${NAMESPACE}/legacy`);
    expect(cluster.reasonOf("busy.example.com")).toBe("False/RouteConflict");
    await cluster.serve("free.example.com");
    const untouched = cluster.get(INGRESSES, "legacy")!;
    expect(untouched.metadata.resourceVersion).toBe(foreign.metadata.resourceVersion);
    expect(untouched.metadata.managedFields?.map((entry) => entry.manager)).not.toContain("qr-platform-operator");
    expect(cluster.get(INGRESSES, "busy.example.com")).toBeUndefined();

    // Once the foreign route is gone, the operator routes the host.
    cluster.kube.delete(INGRESSES, NAMESPACE, "legacy");
    await eventually(
      () => cluster.get(INGRESSES, "busy.example.com")?.metadata.ownerReferences?.[0]?.name,
      "busy.example.com",
    );
  });

  it("reports a foreign Secret with the certificate's secret name as CertificateConflict and never touches it", async () => {
    await leadingOperator();
    const secret = cluster.kube.put("secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "vault.example.com-tls", namespace: NAMESPACE },
      type: "kubernetes.io/tls",
      data: { "tls.crt": "Y2VydA==", "tls.key": "a2V5" },
    });
    cluster.domains.register(ACCOUNT, "vault.example.com", DomainState.VERIFIED);
    await eventually(() => cluster.reasonOf("vault.example.com", "CertificateReady"), "False/CertificateConflict");
    expect(cluster.get(CERTIFICATES, "vault.example.com")).toBeUndefined();
    expect(cluster.get("secrets", "vault.example.com-tls")?.metadata.resourceVersion).toBe(
      secret.metadata.resourceVersion,
    );
    // The route does not depend on the certificate.
    await eventually(() => Boolean(cluster.get(INGRESSES, "vault.example.com")), true);
  });

  it("records an event per transition and counts repeats on one event", async () => {
    await leadingOperator();
    const domain = cluster.domains.register(ACCOUNT, "flaky.example.com", DomainState.VERIFIED);
    await eventually(() => cluster.reasonOf("flaky.example.com", "Verified"), "True/Verified");
    cluster.domains.update(domain.id, { state: DomainState.FAILED, failureReason: "no TXT record found" });
    await eventually(() => cluster.reasonOf("flaky.example.com", "Verified"), "False/VerificationFailed");
    await eventually(() => cluster.get(INGRESSES, "flaky.example.com"), undefined);
    cluster.domains.update(domain.id, { state: DomainState.VERIFIED, failureReason: "" });
    await eventually(() => cluster.reasonOf("flaky.example.com", "Verified"), "True/Verified");
    // Events follow the status they tell of.
    const verifiedEvents = () =>
      cluster.eventsFor("flaky.example.com").filter((event) => (event as { reason?: string }).reason === "Verified");
    await eventually(() => verifiedEvents().map((event) => (event as { count?: number }).count), [2]);
    const verified = verifiedEvents();
    expect(verified[0]).toMatchObject({
      type: "Normal",
      count: 2,
      involvedObject: { kind: "CustomDomain", apiVersion: "qr-platform.io/v1alpha1", name: "flaky.example.com" },
      source: { component: "qr-platform-operator" },
    });
    expect(cluster.eventsFor("flaky.example.com").map((event) => [event.type, event.reason])).toContainEqual([
      "Warning",
      "VerificationFailed",
    ]);
  });

  it("recovers from dropped watches, 500s, 429s and a compacted watch history", async () => {
    const replica = await leadingOperator();
    cluster.domains.register(ACCOUNT, "one.example.com", DomainState.VERIFIED);
    await eventually(() => Boolean(cluster.get(INGRESSES, "one.example.com")), true);

    // Connections reset: every informer stops, and is restarted; the certificates' restarts fail twice first.
    cluster.kube.failNext({ method: "GET", path: /certificates.*watch=true/, status: 500, count: 2 });
    expect(cluster.kube.dropWatches("reset")).toBeGreaterThanOrEqual(3);
    // A write refused with 429 is retried by the work queue.
    cluster.kube.failNext({ method: "PATCH", path: /ingresses\/two\.example\.com/, status: 429, retryAfterSeconds: 1 });
    cluster.kube.failNext({ method: "PATCH", path: /\/customdomains\/two\.example\.com\/status/, status: 500 });
    cluster.domains.register(ACCOUNT, "two.example.com", DomainState.VERIFIED);
    await cluster.serve("one.example.com");
    await cluster.serve("two.example.com");
    expect(cluster.kube.pendingFaults()).toBe(0);
    expect(
      await counter(replica.metrics, "qrp_operator_watch_restarts_total", { source: "certificates" }),
    ).toBeGreaterThanOrEqual(3);
    expect(await counter(replica.metrics, "qrp_operator_reconciles_total", { result: "error" })).toBeGreaterThanOrEqual(
      2,
    );

    // History compacted while the watches are down: they resume with 410 Gone and list again.
    cluster.kube.compactWatchHistory();
    cluster.kube.dropWatches("end");
    cluster.domains.register(ACCOUNT, "three.example.com", DomainState.VERIFIED);
    await cluster.serve("three.example.com");
  });

  it("routes with an HTTPRoute to the configured Gateway when so configured", async () => {
    await leadingOperator({
      provisioning: {
        ...provisioning,
        route: { kind: "HTTPRoute", parentRef: { name: "public", namespace: "gateways" } },
      },
    });
    cluster.domains.register(ACCOUNT, "gw.example.com", DomainState.VERIFIED);
    await eventually(() => Boolean(cluster.get(HTTP_ROUTES, "gw.example.com")), true);
    expect((cluster.get(HTTP_ROUTES, "gw.example.com") as { spec?: unknown }).spec).toEqual({
      parentRefs: [{ name: "public", namespace: "gateways" }],
      hostnames: ["gw.example.com"],
      rules: [{ backendRefs: [{ name: "qr-platform-links", port: 8081 }] }],
    });
    expect(cluster.get(INGRESSES, "gw.example.com")).toBeUndefined();
    cluster.kube.setStatus(HTTP_ROUTES, NAMESPACE, "gw.example.com", {
      parents: [
        {
          parentRef: { name: "public", namespace: "gateways" },
          controllerName: "example.net/gateway",
          conditions: [{ type: "Accepted", status: "False", reason: "NotAllowedByListeners", message: "no listener" }],
        },
      ],
    });
    await eventually(() => cluster.reasonOf("gw.example.com", "RouteAdmitted"), "False/RouteRejected");
    cluster.kube.setStatus(HTTP_ROUTES, NAMESPACE, "gw.example.com", {
      parents: [
        {
          parentRef: { name: "public", namespace: "gateways" },
          controllerName: "example.net/gateway",
          conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message: "" }],
        },
      ],
    });
    await eventually(() => cluster.reasonOf("gw.example.com", "RouteAdmitted"), "True/Admitted");
  });

  it("with TLS_MODE=ingress-annotation asks cert-manager through the Ingress and reads the Certificate its ingress-shim makes", async () => {
    await leadingOperator({
      provisioning: { ...provisioning, tls: { mode: "ingress-annotation", clusterIssuer: "letsencrypt" } },
    });
    cluster.domains.register(ACCOUNT, "shim.example.com", DomainState.VERIFIED);
    await eventually(
      () => cluster.get(INGRESSES, "shim.example.com")?.metadata.annotations?.["cert-manager.io/cluster-issuer"],
      "letsencrypt",
    );
    await eventually(() => cluster.reasonOf("shim.example.com", "CertificateReady"), "False/Issuing");
    expect(cluster.kube.list(CERTIFICATES, NAMESPACE)).toEqual([]);
    // ingress-shim's part: a Certificate named after the secret, controlled by the Ingress.
    const ingress = cluster.get(INGRESSES, "shim.example.com")!;
    cluster.kube.put(
      CERTIFICATES,
      {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: {
          name: "shim.example.com-tls",
          namespace: NAMESPACE,
          ownerReferences: [
            {
              apiVersion: "networking.k8s.io/v1",
              kind: "Ingress",
              name: "shim.example.com",
              uid: ingress.metadata.uid!,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          secretName: "shim.example.com-tls",
          dnsNames: ["shim.example.com"],
          issuerRef: { kind: "ClusterIssuer", name: "letsencrypt" },
        },
      },
      { manager: "cert-manager-ingress-shim" },
    );
    cluster.admitIngress("shim.example.com");
    cluster.issueCertificate("shim.example.com-tls");
    await eventually(() => cluster.reasonOf("shim.example.com"), "True/Serving");
    expect(cluster.customDomain("shim.example.com")?.status?.certificate).toMatchObject({
      name: "shim.example.com-tls",
      secretName: "shim.example.com-tls",
    });
    expect(
      cluster.get(CERTIFICATES, "shim.example.com-tls")?.metadata.managedFields?.map((entry) => entry.manager),
    ).not.toContain("qr-platform-operator");
  });

  describe("with two replicas", () => {
    async function twoReplicas(): Promise<[Replica, Replica]> {
      cluster = await Cluster.start();
      const a = await cluster.startOperator({ identity: "operator-a", cuttable: true });
      const b = await cluster.startOperator({ identity: "operator-b", cuttable: true });
      await eventually(() => [a, b].filter((replica) => replica.operator.isLeader).length, 1);
      await eventually(() => a.operator.readiness().ready && b.operator.readiness().ready, true);
      return [a, b];
    }

    const holder = () =>
      (cluster.kube.get(LEASES, NAMESPACE, "qr-platform-operator")?.spec as { holderIdentity?: string } | undefined)
        ?.holderIdentity;

    it("has one leader, which reconciles; a stopped leader releases the lease and the other takes over at once", async () => {
      const [a, b] = await twoReplicas();
      const [leader, standby] = a.operator.isLeader ? [a, b] : [b, a];
      expect(holder()).toBe(leader.identity);
      expect(await counter(leader.metrics, "qrp_operator_leader")).toBe(1);
      expect(await counter(standby.metrics, "qrp_operator_leader")).toBe(0);
      cluster.domains.register(ACCOUNT, "first.example.com");
      await eventually(() => cluster.reasonOf("first.example.com"), "False/PendingVerification");
      expect(await counter(standby.metrics, "qrp_operator_reconciles_total")).toBe(0);

      await leader.operator.stop();
      expect(holder()).not.toBe(leader.identity);
      // Well before the lease would have expired.
      await eventually(() => standby.operator.isLeader, true, LEASE_MS / 2);
      expect(holder()).toBe(standby.identity);
      cluster.domains.register(ACCOUNT, "second.example.com");
      await eventually(() => cluster.reasonOf("second.example.com"), "False/PendingVerification");
    });

    it("lets the other replica take over within the lease duration when the leader is killed, and the killed one stops acting", async () => {
      const [a, b] = await twoReplicas();
      const [leader, standby] = a.operator.isLeader ? [a, b] : [b, a];
      await leader.kill();
      await eventually(() => standby.operator.isLeader, true, LEASE_MS + 1000);
      expect(holder()).toBe(standby.identity);
      expect(leader.operator.isLeader).toBe(false);
      cluster.domains.register(ACCOUNT, "after.example.com", DomainState.VERIFIED);
      await cluster.serve("after.example.com");
    });
  });

  it("keeps CustomDomains cluster-scoped and named after the hostname", async () => {
    await leadingOperator();
    cluster.domains.register(ACCOUNT, "scope.example.com");
    await eventually(() => Boolean(cluster.customDomain("scope.example.com")), true);
    expect(cluster.kube.list(CUSTOM_DOMAINS).map((cr) => [cr.metadata.name, cr.metadata.namespace])).toEqual([
      ["scope.example.com", undefined],
    ]);
  });
});
