// The objects the operator makes for a verified hostname: the route that sends it to the redirector and
// the cert-manager Certificate for its TLS key pair. Pure: settings and the CR in, desired objects out.
import { createHash } from "node:crypto";
import type { ICertificate } from "@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate";
import type { IHTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute";
import type { IIngress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import {
  API_VERSION,
  APPLIED_HASH_ANNOTATION,
  childLabels,
  KIND,
  type ChildNames,
  type CustomDomain,
} from "../custom-domain.js";
import type { KubeObject, OwnerReference } from "../kube/objects.js";

/** How the operator provisions a hostname: the configuration of routes and certificates. */
export interface ProvisioningSettings {
  /** OPERATOR_NAMESPACE: where routes and certificates are made, beside the redirector's Service. */
  namespace: string;
  route: IngressSettings | HTTPRouteSettings;
  /** The redirector's Service in `namespace` and its port. */
  redirector: { service: string; port: number };
  /**
   * "certificate": the operator makes a Certificate; "ingress-annotation": the Ingress asks cert-manager's
   * ingress-shim for one (named after the secret), which the operator only reads.
   */
  tls: { mode: "certificate" | "ingress-annotation"; clusterIssuer: string };
}

export interface IngressSettings {
  kind: "Ingress";
  ingressClassName?: string;
}

export interface HTTPRouteSettings {
  kind: "HTTPRoute";
  parentRef: { name: string; namespace?: string; sectionName?: string };
}

/** The annotation that makes cert-manager's ingress-shim issue a certificate for an Ingress. */
export const CLUSTER_ISSUER_ANNOTATION = "cert-manager.io/cluster-issuer";

/** The owner reference every child carries: the CR controls it, and Kubernetes collects it with the CR. */
export function ownerReferenceTo(cr: CustomDomain): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: cr.metadata.name,
    uid: cr.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The Ingress or HTTPRoute that sends the hostname to the redirector. */
export function desiredRoute(cr: CustomDomain, names: ChildNames, settings: ProvisioningSettings): KubeObject {
  const hostname = cr.metadata.name;
  const metadata = {
    name: names.route,
    namespace: settings.namespace,
    labels: childLabels(hostname),
    ownerReferences: [ownerReferenceTo(cr)],
  };
  const { service, port } = settings.redirector;
  if (settings.route.kind === "HTTPRoute") {
    const { name, namespace, sectionName } = settings.route.parentRef;
    const route = {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata,
      spec: {
        parentRefs: [{ name, ...(namespace && { namespace }), ...(sectionName && { sectionName }) }],
        hostnames: [hostname],
        rules: [{ backendRefs: [{ name: service, port }] }],
      },
    } satisfies IHTTPRoute;
    return withAppliedHash(route);
  }
  const ingressClassName = settings.route.ingressClassName;
  const route = {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: {
      ...metadata,
      ...(settings.tls.mode === "ingress-annotation" && {
        annotations: { [CLUSTER_ISSUER_ANNOTATION]: settings.tls.clusterIssuer },
      }),
    },
    spec: {
      ...(ingressClassName && { ingressClassName }),
      rules: [
        {
          host: hostname,
          http: {
            paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: service, port: { number: port } } } }],
          },
        },
      ],
      tls: [{ hosts: [hostname], secretName: names.secret }],
    },
  } satisfies IIngress;
  return withAppliedHash(route);
}

/** The cert-manager Certificate for the hostname (TLS_MODE=certificate). */
export function desiredCertificate(cr: CustomDomain, names: ChildNames, settings: ProvisioningSettings): KubeObject {
  const hostname = cr.metadata.name;
  const certificate = {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: {
      name: names.certificate,
      namespace: settings.namespace,
      labels: childLabels(hostname),
      ownerReferences: [ownerReferenceTo(cr)],
    },
    spec: {
      secretName: names.secret,
      dnsNames: [hostname],
      issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: settings.tls.clusterIssuer },
    },
  } satisfies ICertificate;
  return withAppliedHash(certificate);
}

/**
 * Marks a desired object with a hash of itself, so a child that still carries the hash of what would
 * be applied now (and still holds every field of it) is not applied again on every reconcile.
 */
function withAppliedHash<T extends KubeObject>(object: T): T {
  const hash = createHash("sha256").update(JSON.stringify(object)).digest("hex").slice(0, 32);
  return {
    ...object,
    metadata: { ...object.metadata, annotations: { ...object.metadata.annotations, [APPLIED_HASH_ANNOTATION]: hash } },
  };
}

/**
 * Whether `observed` already is what applying `desired` would make it: it carries the same applied
 * hash (so nothing we applied before is to be removed) and holds every field of `desired` (so nobody
 * edited one of ours by hand).
 */
export function isUpToDate(observed: KubeObject, desired: KubeObject): boolean {
  const hash = desired.metadata.annotations?.[APPLIED_HASH_ANNOTATION];
  return observed.metadata.annotations?.[APPLIED_HASH_ANNOTATION] === hash && contains(observed, desired);
}

/** Whether every field of `wanted` is in `value` with the same value (arrays compared element by element). */
function contains(value: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted)) {
    return (
      Array.isArray(value) &&
      value.length === wanted.length &&
      wanted.every((item, index) => contains(value[index], item))
    );
  }
  if (wanted !== null && typeof wanted === "object") {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
    const record = value as Record<string, unknown>;
    return Object.entries(wanted).every(([key, item]) => item === undefined || contains(record[key], item));
  }
  return value === wanted;
}
