// The CustomDomain resource (charts/qr-platform/crds/customdomains.qr-platform.io.yaml is its schema):
// its TypeScript shape, the names the operator writes under, and how its children are named.
import { createHash } from "node:crypto";
import type { ObjectMeta } from "./kube/objects.js";

export const GROUP = "qr-platform.io";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = "CustomDomain";
export const PLURAL = "customdomains";

/** Held by every CR whose route and certificate the operator may have made; removed once they are gone. */
export const FINALIZER = "qr-platform.io/provisioned-resources";
/** The one field manager of every write the operator makes. */
export const FIELD_MANAGER = "qr-platform-operator";
/** The component name in events and the value of the managed-by label. */
export const COMPONENT = "qr-platform-operator";
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
/** The hostname a child serves, or a hash of it when it does not fit a label value. */
export const HOSTNAME_LABEL = "qr-platform.io/hostname";
/** A hash of what the operator last applied to a child, so an unchanged child is not applied again. */
export const APPLIED_HASH_ANNOTATION = "qr-platform.io/applied-hash";

export interface CustomDomainSpec {
  accountId: string;
  domainId?: string;
}

/** metav1.Condition. */
export interface Condition {
  type: ConditionType;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionType = "Verified" | "RouteAdmitted" | "CertificateReady" | "Ready";
/** Every condition the operator sets, in the order `kubectl describe` lists them. */
export const CONDITION_TYPES: readonly ConditionType[] = ["Verified", "RouteAdmitted", "CertificateReady", "Ready"];

export type VerificationState = "pending" | "verified" | "failed";

export interface CustomDomainStatus {
  observedGeneration?: number;
  verification?: {
    state?: VerificationState;
    challengeRecordName?: string;
    challengeRecordValue?: string;
    lastCheckTime?: string;
  };
  route?: { kind: "Ingress" | "HTTPRoute"; name: string; namespace: string };
  certificate?: { name: string; secretName: string; notAfter?: string };
  conditions?: Condition[];
}

export interface CustomDomain {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: ObjectMeta;
  spec: CustomDomainSpec;
  status?: CustomDomainStatus;
}

/** The names of the objects the operator makes for one hostname in its namespace. */
export interface ChildNames {
  /** The Ingress or HTTPRoute. */
  route: string;
  /** The cert-manager Certificate the operator makes (TLS_MODE=certificate). */
  certificate: string;
  /** The Secret cert-manager writes the key pair to. */
  secret: string;
}

/** The longest name of an object (a DNS subdomain). */
const MAX_NAME = 253;
/** The longest label value. */
const MAX_LABEL_VALUE = 63;

function hashOf(hostname: string, length: number): string {
  return createHash("sha256").update(hostname).digest("hex").slice(0, length);
}

/**
 * Children are named after the hostname (a valid DNS subdomain, so a valid object name) so that
 * `kubectl get ingress` reads at a glance; a name that would exceed 253 characters falls back to a hash.
 */
export function childNames(hostname: string): ChildNames {
  const secret = `${hostname}-tls`;
  if (secret.length <= MAX_NAME) return { route: hostname, certificate: hostname, secret };
  const hashed = `custom-domain-${hashOf(hostname, 40)}`;
  return { route: hashed, certificate: hashed, secret: `${hashed}-tls` };
}

/** The hostname as a label value, or a hash of it when it is longer than a label value may be. */
export function hostnameLabelValue(hostname: string): string {
  return hostname.length <= MAX_LABEL_VALUE ? hostname : `sha256-${hashOf(hostname, MAX_LABEL_VALUE - 7)}`;
}

/** The labels of every object the operator makes for a hostname. */
export function childLabels(hostname: string): Record<string, string> {
  return { [MANAGED_BY_LABEL]: COMPONENT, [HOSTNAME_LABEL]: hostnameLabelValue(hostname) };
}

/** Whether the CR is bound to a domain of the platform (projected, or registered by the operator). */
export function isBound(cr: CustomDomain): cr is CustomDomain & { spec: { domainId: string } } {
  return typeof cr.spec?.domainId === "string" && cr.spec.domainId !== "";
}
