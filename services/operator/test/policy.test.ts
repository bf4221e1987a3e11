import { describe, expect, it } from "vitest";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import { DomainServingSchema, DomainState } from "@qrplatform/api/links";
import { childNames, type CustomDomain } from "../src/custom-domain.js";
import type { Certificate, HTTPRoute, Ingress, KubeObject } from "../src/kube/objects.js";
import { desiredCertificate, desiredRoute, type ProvisioningSettings } from "../src/reconcile/children.js";
import { decide, type Plan, type ReconcileInputs } from "../src/reconcile/policy.js";
import {
  ACCOUNT,
  CR_UID,
  customDomain,
  domain,
  DOMAIN_ID,
  HOST,
  inputs,
  NAMESPACE,
  NOW,
  OTHER_ACCOUNT,
  settings,
} from "./support/objects.js";

const names = childNames(HOST);

/** Our route as the API server would hold it after an apply, with a status. */
function ourRoute(cr: CustomDomain, status?: Ingress["status"], using: ProvisioningSettings = settings): Ingress {
  const applied = desiredRoute(cr, names, using);
  return { ...applied, metadata: { ...applied.metadata, uid: "route-uid" }, ...(status && { status }) };
}

function ourCertificate(cr: CustomDomain, status?: Certificate["status"]): Certificate {
  const applied = desiredCertificate(cr, names, settings);
  return { ...applied, metadata: { ...applied.metadata, uid: "certificate-uid" }, ...(status && { status }) };
}

const admitted: Ingress["status"] = { loadBalancer: { ingress: [{ ip: "203.0.113.7" }] } };
const issued: Certificate["status"] = {
  conditions: [{ type: "Ready", status: "True", message: "Certificate is up to date and has not expired" }],
  notAfter: "2026-06-01T00:00:00Z",
};

/** A verified, served CR with everything in place: the plan should do nothing. */
function serving(): { cr: CustomDomain; input: ReconcileInputs } {
  const first = decide(inputs({ customDomain: customDomain(), domain: domain() }));
  const cr = customDomain({ status: first.status });
  const route = ourRoute(cr, admitted);
  const certificate = ourCertificate(cr, issued);
  const settled = decide(
    inputs({ customDomain: cr, domain: domain(), route, certificate, ownedChildren: [route, certificate] }),
  );
  const stored = customDomain({ status: settled.status });
  return {
    cr: stored,
    input: inputs({
      customDomain: stored,
      domain: domain({ serving: create(DomainServingSchema, settled.reportServing!.serving) }),
      route,
      certificate,
      ownedChildren: [route, certificate],
    }),
  };
}

function conditionsOf(plan: Plan): Record<string, [string, string]> {
  return Object.fromEntries(
    (plan.status?.conditions ?? []).map((condition) => [condition.type, [condition.status, condition.reason]]),
  );
}

describe("the reconcile policy", () => {
  it("does nothing before the platform's domains are listed, even for a CR whose domain it does not know", () => {
    const plan = decide(inputs({ domainsListed: false, customDomain: customDomain() }));
    expect(plan).toMatchObject({ applyChildren: [], deleteChildren: [], events: [] });
    expect(plan.deleteCustomDomain).toBeUndefined();
    expect(plan.idle).toMatch(/not listed/);
  });

  it("projects a domain without a CR into one, labelled as the operator's", () => {
    const plan = decide(inputs({ domain: domain({ state: DomainState.PENDING }) }));
    expect(plan.createCustomDomain).toEqual({
      apiVersion: "qr-platform.io/v1alpha1",
      kind: "CustomDomain",
      metadata: { name: HOST, labels: { "app.kubernetes.io/managed-by": "qr-platform-operator" } },
      spec: { accountId: ACCOUNT, domainId: DOMAIN_ID },
    });
    expect(plan.status).toBeUndefined();
  });

  it("does nothing for a hostname with neither CR nor domain", () => {
    const plan = decide(inputs());
    expect(plan.createCustomDomain).toBeUndefined();
    expect(plan.register).toBeUndefined();
    expect(plan.idle).toBeDefined();
  });

  it("deletes a bound CR whose domain is gone", () => {
    expect(decide(inputs({ customDomain: customDomain() })).deleteCustomDomain).toBe(true);
  });

  it("undoes a hand edit of a bound CR's spec", () => {
    const plan = decide(
      inputs({ customDomain: customDomain({ spec: { accountId: OTHER_ACCOUNT } }), domain: domain() }),
    );
    expect(plan.applyCustomDomain?.spec).toEqual({ accountId: ACCOUNT, domainId: DOMAIN_ID });
  });

  it("puts the finalizer on a bound CR that lacks it", () => {
    const plan = decide(
      inputs({
        customDomain: customDomain({ metadata: { finalizers: [] } }),
        domain: domain({ state: DomainState.PENDING }),
      }),
    );
    expect(plan.addFinalizer).toBe(true);
  });

  it("tells a pending domain's challenge, provisions nothing and reports it as not serving", () => {
    const plan = decide(inputs({ customDomain: customDomain(), domain: domain({ state: DomainState.PENDING }) }));
    expect(plan.applyChildren).toEqual([]);
    expect(conditionsOf(plan)).toEqual({
      Verified: ["False", "PendingVerification"],
      RouteAdmitted: ["False", "NotVerified"],
      CertificateReady: ["False", "NotVerified"],
      Ready: ["False", "PendingVerification"],
    });
    expect(plan.status?.conditions?.[0]?.message).toContain("_qr-platform-challenge.go.example.com");
    expect(plan.status?.verification).toEqual({
      state: "pending",
      challengeRecordName: `_qr-platform-challenge.${HOST}`,
      challengeRecordValue: "qr-platform-verification=abc",
    });
    expect(plan.status?.observedGeneration).toBe(1);
    expect(
      plan.status?.conditions?.every(
        (condition) => condition.lastTransitionTime === NOW.toISOString() && condition.observedGeneration === 1,
      ),
    ).toBe(true);
    expect(plan.events.map((event) => [event.type, event.eventType, event.reason])).toEqual([
      ["Verified", "Warning", "PendingVerification"],
      ["RouteAdmitted", "Warning", "NotVerified"],
      ["CertificateReady", "Warning", "NotVerified"],
      ["Ready", "Warning", "PendingVerification"],
    ]);
    expect(plan.reportServing).toEqual({
      domainId: DOMAIN_ID,
      serving: expect.objectContaining({
        serving: false,
        routeAdmitted: false,
        certificateReady: false,
        reason: "PendingVerification",
      }),
    });
  });

  it("says what a failed verification saw", () => {
    const plan = decide(
      inputs({
        customDomain: customDomain(),
        domain: domain({ state: DomainState.FAILED, failureReason: "NXDOMAIN" }),
      }),
    );
    expect(conditionsOf(plan).Verified).toEqual(["False", "VerificationFailed"]);
    expect(plan.status?.conditions?.[0]?.message).toContain("NXDOMAIN");
    expect(plan.status?.verification?.state).toBe("failed");
  });

  it("makes the route and the certificate of a verified domain, with owner references and labels", () => {
    const cr = customDomain();
    const plan = decide(inputs({ customDomain: cr, domain: domain() }));
    expect(plan.applyChildren.map((child) => [child.kind, child.metadata.name])).toEqual([
      ["Ingress", HOST],
      ["Certificate", HOST],
    ]);
    const [route, certificate] = plan.applyChildren as [
      Ingress & { spec: Record<string, unknown> },
      Certificate & { spec: Record<string, unknown> },
    ];
    expect(route.metadata).toMatchObject({
      namespace: NAMESPACE,
      labels: { "app.kubernetes.io/managed-by": "qr-platform-operator", "qr-platform.io/hostname": HOST },
      ownerReferences: [
        {
          apiVersion: "qr-platform.io/v1alpha1",
          kind: "CustomDomain",
          name: HOST,
          uid: CR_UID,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    expect(route.spec).toEqual({
      ingressClassName: "nginx",
      rules: [
        {
          host: HOST,
          http: {
            paths: [
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "qr-platform-links", port: { number: 8081 } } },
              },
            ],
          },
        },
      ],
      tls: [{ hosts: [HOST], secretName: `${HOST}-tls` }],
    });
    expect(certificate.spec).toEqual({
      secretName: `${HOST}-tls`,
      dnsNames: [HOST],
      issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: "letsencrypt" },
    });
    expect(conditionsOf(plan)).toEqual({
      Verified: ["True", "Verified"],
      RouteAdmitted: ["False", "RoutePending"],
      CertificateReady: ["False", "Issuing"],
      Ready: ["False", "RoutePending"],
    });
    expect(plan.status?.route).toEqual({ kind: "Ingress", name: HOST, namespace: NAMESPACE });
    expect(plan.status?.certificate).toEqual({ name: HOST, secretName: `${HOST}-tls` });
    expect(plan.events.find((event) => event.type === "Verified")?.eventType).toBe("Normal");
  });

  it("is Ready and Serving once the route is admitted and the certificate issued, and reports the expiry", () => {
    const cr = customDomain();
    const route = ourRoute(cr, admitted);
    const certificate = ourCertificate(cr, issued);
    const plan = decide(
      inputs({ customDomain: cr, domain: domain(), route, certificate, ownedChildren: [route, certificate] }),
    );
    expect(plan.applyChildren).toEqual([]);
    expect(plan.deleteChildren).toEqual([]);
    expect(conditionsOf(plan).Ready).toEqual(["True", "Serving"]);
    expect(plan.status?.certificate?.notAfter).toBe("2026-06-01T00:00:00Z");
    const report = create(DomainServingSchema, plan.reportServing!.serving);
    expect(report).toMatchObject({ serving: true, routeAdmitted: true, certificateReady: true, reason: "Serving" });
    expect(timestampDate(report.certificateExpireTime!).toISOString()).toBe("2026-06-01T00:00:00.000Z");
  });

  it("changes nothing, stores nothing and reports nothing when all is as it should be", () => {
    const { input } = serving();
    const plan = decide(input);
    expect(plan.applyChildren).toEqual([]);
    expect(plan.status).toBeUndefined();
    expect(plan.events).toEqual([]);
    expect(plan.reportServing).toBeUndefined();
    expect(plan.applyCustomDomain).toBeUndefined();
    expect(plan.addFinalizer).toBeUndefined();
  });

  it("keeps lastTransitionTime when a condition's message changes but its status does not", () => {
    const pending = decide(inputs({ customDomain: customDomain(), domain: domain({ state: DomainState.PENDING }) }));
    const cr = customDomain({ status: pending.status });
    const later = new Date(NOW.getTime() + 60_000);
    const plan = decide(
      inputs({ customDomain: cr, domain: domain({ state: DomainState.FAILED, failureReason: "no TXT" }), now: later }),
    );
    const verified = plan.status?.conditions?.find((condition) => condition.type === "Verified");
    expect(verified).toMatchObject({
      status: "False",
      reason: "VerificationFailed",
      lastTransitionTime: NOW.toISOString(),
    });
    expect(plan.events.map((event) => event.reason)).toEqual(["VerificationFailed", "VerificationFailed"]);

    const flipped = decide(
      inputs({ customDomain: customDomain({ status: plan.status }), domain: domain(), now: later }),
    );
    expect(flipped.status?.conditions?.find((condition) => condition.type === "Verified")?.lastTransitionTime).toBe(
      later.toISOString(),
    );
  });

  it("reapplies a child edited by hand, and one whose desired form changed", () => {
    const { input } = serving();
    const route = input.route as Ingress;
    const edited = {
      ...route,
      spec: { ...route.spec, tls: [{ hosts: [HOST], secretName: "someone-elses" }] },
    } as Ingress;
    expect(
      decide({ ...input, route: edited, ownedChildren: [edited, input.certificate!] }).applyChildren.map(
        (child) => child.kind,
      ),
    ).toEqual(["Ingress"]);
    const moved = decide({
      ...input,
      settings: { ...settings, redirector: { service: "qr-platform-links", port: 9000 } },
    });
    expect(moved.applyChildren.map((child) => child.kind)).toEqual(["Ingress"]);
  });

  it("reports a route with the route's name that is not ours as RouteConflict and leaves it alone, still making the certificate", () => {
    const foreign: Ingress = {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: HOST, namespace: NAMESPACE, uid: "x" },
      spec: { rules: [{ host: HOST }] },
    };
    const plan = decide(inputs({ customDomain: customDomain(), domain: domain(), route: foreign }));
    expect(conditionsOf(plan).RouteAdmitted).toEqual(["False", "RouteConflict"]);
    expect(conditionsOf(plan).Ready).toEqual(["False", "RouteConflict"]);
    expect(plan.applyChildren.map((child) => child.kind)).toEqual(["Certificate"]);
    expect(plan.deleteChildren).toEqual([]);
    expect(plan.status?.route).toBeUndefined();
    expect(plan.requeueAfter).toBe("recheck");
    expect(create(DomainServingSchema, plan.reportServing!.serving).reason).toBe("RouteConflict");
  });

  it("reports another route for the host as RouteConflict and keeps its own route as it is", () => {
    const cr = customDomain();
    const route = ourRoute(cr);
    const other: Ingress = {
      kind: "Ingress",
      metadata: { name: "legacy", namespace: NAMESPACE, uid: "y" },
      spec: { rules: [{ host: HOST }] },
    };
    const plan = decide(
      inputs({ customDomain: cr, domain: domain(), route, otherRoutesForHost: [other], ownedChildren: [route] }),
    );
    expect(conditionsOf(plan).RouteAdmitted).toEqual(["False", "RouteConflict"]);
    expect(plan.status?.conditions?.find((condition) => condition.type === "RouteAdmitted")?.message).toContain(
      "qr-platform/legacy",
    );
    expect(plan.deleteChildren).toEqual([]);
    expect(plan.applyChildren.map((child) => child.kind)).toEqual(["Certificate"]);
  });

  it("reports a Certificate, another Certificate's secret or a Secret it did not make as CertificateConflict", () => {
    const cr = customDomain();
    const foreignCertificate: Certificate = {
      kind: "Certificate",
      metadata: { name: HOST, namespace: NAMESPACE, uid: "z" },
      spec: { secretName: "x" },
    };
    const rival: Certificate = {
      kind: "Certificate",
      metadata: { name: "other", namespace: NAMESPACE, uid: "w" },
      spec: { secretName: names.secret },
    };
    const secret = { kind: "Secret", metadata: { name: names.secret, namespace: NAMESPACE, uid: "s" } };
    for (const fields of [
      { certificate: foreignCertificate },
      { otherCertificatesForSecret: [rival] },
      { secret },
    ] as Partial<ReconcileInputs>[]) {
      const plan = decide(inputs({ customDomain: cr, domain: domain(), ...fields }));
      expect(conditionsOf(plan).CertificateReady).toEqual(["False", "CertificateConflict"]);
      expect(plan.applyChildren.map((child) => child.kind)).toEqual(["Ingress"]);
      expect(plan.status?.certificate).toBeUndefined();
      expect(plan.requeueAfter).toBe("recheck");
    }
    const issuedForUs = {
      ...secret,
      metadata: { ...secret.metadata, annotations: { "cert-manager.io/certificate-name": HOST } },
    };
    const plan = decide(inputs({ customDomain: cr, domain: domain(), secret: issuedForUs }));
    expect(conditionsOf(plan).CertificateReady).toEqual(["False", "Issuing"]);
  });

  it("withdraws the route and certificate of a domain that is no longer verified", () => {
    const { input } = serving();
    const plan = decide({ ...input, domain: domain({ state: DomainState.FAILED, failureReason: "TXT record gone" }) });
    expect(plan.deleteChildren.map((child) => child.kind).sort()).toEqual(["Certificate", "Ingress"]);
    expect(plan.applyChildren).toEqual([]);
    expect(conditionsOf(plan).Ready).toEqual(["False", "VerificationFailed"]);
    expect(plan.status?.route).toBeUndefined();
  });

  it("on deletion removes its children, then its finalizer, and says Deleting", () => {
    const { input, cr } = serving();
    const deleting = { ...cr, metadata: { ...cr.metadata, deletionTimestamp: NOW.toISOString() } };
    const plan = decide({ ...input, customDomain: deleting, domainsListed: false });
    expect(plan.deleteChildren.map((child) => child.kind).sort()).toEqual(["Certificate", "Ingress"]);
    expect(plan.removeFinalizer).toBe(true);
    expect(conditionsOf(plan).Ready).toEqual(["False", "Deleting"]);
    expect(conditionsOf(plan).Verified).toEqual(["True", "Verified"]);
    expect(plan.register).toBeUndefined();

    const withoutFinalizer = decide({
      ...input,
      customDomain: { ...deleting, metadata: { ...deleting.metadata, finalizers: ["someone/else"] } },
    });
    expect(withoutFinalizer.removeFinalizer).toBeUndefined();
    expect(withoutFinalizer.deleteChildren).toEqual([]);
  });

  describe("a CR created with kubectl (no domainId)", () => {
    const request = (fields: Partial<CustomDomain["metadata"]> = {}) =>
      customDomain({ spec: { domainId: undefined }, metadata: { labels: {}, finalizers: [], ...fields } });

    it("registers the hostname for its account", () => {
      const plan = decide(inputs({ customDomain: request() }));
      expect(plan.register).toEqual({ accountId: ACCOUNT, hostname: HOST });
      expect(plan.status).toBeUndefined();
      expect(plan.addFinalizer).toBeUndefined();
    });

    it("binds to the account's domain that already has the hostname", () => {
      const plan = decide(inputs({ customDomain: request(), domain: domain() }));
      expect(plan.register).toBeUndefined();
      expect(plan.applyCustomDomain?.spec).toEqual({ accountId: ACCOUNT, domainId: DOMAIN_ID });
    });

    it("is HostnameTaken when another account has the hostname, and nothing else happens", () => {
      const plan = decide(inputs({ customDomain: request(), domain: domain({ accountId: OTHER_ACCOUNT }) }));
      expect(plan.register).toBeUndefined();
      expect(plan.applyCustomDomain).toBeUndefined();
      expect(plan.deleteCustomDomain).toBeUndefined();
      expect(plan.addFinalizer).toBeUndefined();
      expect(plan.applyChildren).toEqual([]);
      expect(plan.reportServing).toBeUndefined();
      expect(conditionsOf(plan)).toEqual({
        Verified: ["False", "HostnameTaken"],
        RouteAdmitted: ["False", "NotVerified"],
        CertificateReady: ["False", "NotVerified"],
        Ready: ["False", "HostnameTaken"],
      });
    });

    it("shows a refusal and does not register again until it is forgotten", () => {
      for (const reason of ["InvalidHostname", "AccountNotFound", "HostnameTaken"] as const) {
        const plan = decide(inputs({ customDomain: request(), registration: { reason, message: "no", retry: false } }));
        expect(plan.register).toBeUndefined();
        expect(conditionsOf(plan).Verified).toEqual(["False", reason]);
        expect(conditionsOf(plan).Ready).toEqual(["False", reason]);
        expect(plan.requeueAfter).toBe("recheck");
      }
    });

    it("registers again after a failure that was not the platform's answer, showing Registering", () => {
      const plan = decide(
        inputs({
          customDomain: request(),
          registration: { reason: "Registering", message: "links unavailable", retry: true },
        }),
      );
      expect(plan.register).toEqual({ accountId: ACCOUNT, hostname: HOST });
      expect(conditionsOf(plan).Verified).toEqual(["False", "Registering"]);
    });
  });

  describe("with HTTPRoute", () => {
    const gateway: ProvisioningSettings = {
      ...settings,
      route: { kind: "HTTPRoute", parentRef: { name: "public", namespace: "gateways", sectionName: "https" } },
    };

    it("makes an HTTPRoute with the Gateway as parent", () => {
      const plan = decide(inputs({ customDomain: customDomain(), domain: domain(), settings: gateway }));
      const route = plan.applyChildren[0] as HTTPRoute & { spec: Record<string, unknown> };
      expect(route.apiVersion).toBe("gateway.networking.k8s.io/v1");
      expect(route.spec).toEqual({
        parentRefs: [{ name: "public", namespace: "gateways", sectionName: "https" }],
        hostnames: [HOST],
        rules: [{ backendRefs: [{ name: "qr-platform-links", port: 8081 }] }],
      });
      expect(plan.status?.route?.kind).toBe("HTTPRoute");
    });

    it("reads Accepted of its parents: True admitted, False rejected, none pending", () => {
      const cr = customDomain();
      const route = (conditions: { type: string; status: string; reason?: string; message?: string }[]): HTTPRoute => {
        const applied = desiredRoute(cr, names, gateway) as HTTPRoute;
        return {
          ...applied,
          metadata: { ...applied.metadata, uid: "r" },
          status: { parents: [{ parentRef: { name: "public" }, conditions }] },
        };
      };
      const outcome = (observed: HTTPRoute) =>
        conditionsOf(
          decide(
            inputs({
              customDomain: cr,
              domain: domain(),
              settings: gateway,
              route: observed,
              ownedChildren: [observed],
            }),
          ),
        ).RouteAdmitted;
      expect(outcome(route([{ type: "Accepted", status: "True" }]))).toEqual(["True", "Admitted"]);
      expect(outcome(route([{ type: "Accepted", status: "False", reason: "NotAllowedByListeners" }]))).toEqual([
        "False",
        "RouteRejected",
      ]);
      expect(outcome(route([]))).toEqual(["False", "RoutePending"]);
    });
  });

  describe("with TLS_MODE=ingress-annotation", () => {
    const annotated: ProvisioningSettings = {
      ...settings,
      tls: { mode: "ingress-annotation", clusterIssuer: "letsencrypt" },
    };

    it("annotates the Ingress, makes no Certificate, and reads the one ingress-shim made", () => {
      const cr = customDomain();
      const plan = decide(inputs({ customDomain: cr, domain: domain(), settings: annotated }));
      expect(plan.applyChildren.map((child) => child.kind)).toEqual(["Ingress"]);
      expect(plan.applyChildren[0]?.metadata.annotations?.["cert-manager.io/cluster-issuer"]).toBe("letsencrypt");
      expect(conditionsOf(plan).CertificateReady).toEqual(["False", "Issuing"]);

      const route = ourRoute(cr, admitted, annotated);
      const shim: Certificate = {
        kind: "Certificate",
        metadata: {
          name: names.secret,
          namespace: NAMESPACE,
          uid: "c",
          ownerReferences: [
            { apiVersion: "networking.k8s.io/v1", kind: "Ingress", name: HOST, uid: "route-uid", controller: true },
          ],
        },
        spec: { secretName: names.secret },
        status: issued,
      };
      const ready = decide(
        inputs({
          customDomain: cr,
          domain: domain(),
          settings: annotated,
          route,
          certificate: shim,
          ownedChildren: [route],
        }),
      );
      expect(conditionsOf(ready).Ready).toEqual(["True", "Serving"]);
      expect(ready.status?.certificate).toEqual({
        name: names.secret,
        secretName: names.secret,
        notAfter: "2026-06-01T00:00:00Z",
      });
      expect(ready.applyChildren).toEqual([]);
    });
  });

  it("removes a child of its own that the configuration no longer wants", () => {
    const { input } = serving();
    const annotated: ProvisioningSettings = {
      ...settings,
      tls: { mode: "ingress-annotation", clusterIssuer: "letsencrypt" },
    };
    const plan = decide({ ...input, settings: annotated, certificate: undefined });
    expect(plan.deleteChildren.map((child: KubeObject) => child.kind)).toEqual(["Certificate"]);
    expect(plan.applyChildren.map((child) => child.kind)).toEqual(["Ingress"]);
  });
});
