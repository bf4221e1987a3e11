// Builders of the operator's inputs for its pure tests: domains as the platform answers them, CRs and
// children as the API server stores them.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DomainSchema, DomainState, type Domain } from "@qrplatform/api/links";
import { API_VERSION, FINALIZER, KIND, type CustomDomain } from "../../src/custom-domain.js";
import type { ProvisioningSettings } from "../../src/reconcile/children.js";
import type { ReconcileInputs } from "../../src/reconcile/policy.js";

export const ACCOUNT = "8c1b7f7e-3d5e-4c8e-9a43-0d1f5c2b7a10";
export const OTHER_ACCOUNT = "0b6f2a55-6f43-4a1e-8f6e-2d9b3a7c4e21";
export const DOMAIN_ID = "3f2d6c1a-9b8e-4d7c-a6f5-e4d3c2b1a098";
export const CR_UID = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d";
export const NAMESPACE = "qr-platform";
export const HOST = "go.example.com";
export const NOW = new Date("2026-03-01T12:00:00Z");

export const settings: ProvisioningSettings = {
  namespace: NAMESPACE,
  route: { kind: "Ingress", ingressClassName: "nginx" },
  redirector: { service: "qr-platform-links", port: 8081 },
  tls: { mode: "certificate", clusterIssuer: "letsencrypt" },
};

export function domain(fields: Partial<Omit<Domain, "$typeName" | "$unknown">> = {}): Domain {
  const created = timestampFromDate(new Date("2026-02-01T00:00:00Z"));
  const made = create(DomainSchema, {
    id: DOMAIN_ID,
    accountId: ACCOUNT,
    hostname: HOST,
    state: DomainState.VERIFIED,
    challengeRecordName: `_qr-platform-challenge.${HOST}`,
    challengeRecordValue: "qr-platform-verification=abc",
    createTime: created,
    updateTime: created,
  });
  return Object.assign(made, fields);
}

/** A bound CR as the operator projected it (finalizer on), with what is given on top. */
export function customDomain(
  overrides: {
    spec?: Partial<CustomDomain["spec"]>;
    metadata?: Partial<CustomDomain["metadata"]>;
    status?: CustomDomain["status"];
  } = {},
): CustomDomain {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: HOST,
      uid: CR_UID,
      generation: 1,
      resourceVersion: "10",
      labels: { "app.kubernetes.io/managed-by": "qr-platform-operator" },
      finalizers: [FINALIZER],
      ...overrides.metadata,
    },
    spec: { accountId: ACCOUNT, domainId: DOMAIN_ID, ...overrides.spec },
    ...(overrides.status && { status: overrides.status }),
  };
}

export function inputs(fields: Partial<ReconcileInputs> = {}): ReconcileInputs {
  return {
    hostname: HOST,
    domainsListed: true,
    otherRoutesForHost: [],
    otherCertificatesForSecret: [],
    ownedChildren: [],
    settings,
    now: NOW,
    ...fields,
  };
}

export const ours = {
  apiVersion: API_VERSION,
  kind: KIND,
  name: HOST,
  uid: CR_UID,
  controller: true,
  blockOwnerDeletion: true,
};
