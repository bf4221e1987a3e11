// The reconcile decision for one hostname, pure: what was gathered (the CR, the platform's domain,
// the route, certificate and secret seen in the cluster) in, the plan out: the CR's spec, the children,
// the status and its events, the registration, the finalizer and the serving report. It reads no
// clock and calls nothing; apply.ts carries the plan out.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DomainServingSchema, DomainState, type Domain, type DomainServing } from "@qrplatform/api/links";
import { canonicalId } from "@qrplatform/platform";
import {
  API_VERSION,
  childNames,
  COMPONENT,
  FINALIZER,
  isBound,
  KIND,
  MANAGED_BY_LABEL,
  type CustomDomain,
  type CustomDomainStatus,
  type VerificationState,
} from "../custom-domain.js";
import {
  isControlledBy,
  type Certificate,
  type HTTPRoute,
  type Ingress,
  type KubeObject,
  type Route,
  type Secret,
} from "../kube/objects.js";
import { desiredCertificate, desiredRoute, isUpToDate, type ProvisioningSettings } from "./children.js";
import {
  nextConditions,
  sameJson,
  transitions,
  type ConditionState,
  type ConditionStates,
  type Transition,
} from "./conditions.js";

/** The annotation cert-manager puts on a Secret it wrote for a Certificate. */
export const CERTIFICATE_NAME_ANNOTATION = "cert-manager.io/certificate-name";

/**
 * Why a registration request (a CR created with kubectl) was refused, remembered for that CR's uid and
 * generation so the refusal shows in its conditions; `retry` for a failure that is not the answer
 * (the service could not be reached): the registration is attempted again.
 */
export interface RegistrationOutcome {
  reason: "InvalidHostname" | "HostnameTaken" | "AccountNotFound" | "Registering";
  message: string;
  retry: boolean;
}

/** Everything the decision for one hostname reads. */
export interface ReconcileInputs {
  hostname: string;
  /** The CR named after the hostname, if there is one. */
  customDomain?: CustomDomain;
  /** Whether the operator has listed the platform's domains at least once: until then it knows nothing. */
  domainsListed: boolean;
  /** The platform's live domain with this hostname, if there is one. */
  domain?: Domain;
  /** What the last registration of this CR (uid and generation) ended in, while it is remembered. */
  registration?: RegistrationOutcome;
  /** The route with the route's name, whoever owns it. */
  route?: Route;
  /** Other routes in the namespace with a rule for the hostname. */
  otherRoutesForHost: readonly Route[];
  /** The certificate with the certificate's name (in ingress-annotation mode: the secret's name), whoever owns it. */
  certificate?: Certificate;
  /** Other certificates in the namespace that write the same secret. */
  otherCertificatesForSecret: readonly Certificate[];
  /** The secret with the secret's name, read only while the certificate is not ready yet. */
  secret?: Secret;
  /** Every route and certificate the CR controls (to remove those no longer wanted). */
  ownedChildren: readonly KubeObject[];
  settings: ProvisioningSettings;
  now: Date;
}

/** What to do for one hostname, in the order apply.ts does it. */
export interface Plan {
  /** Ask the platform to register the hostname for the account (a CR created with kubectl). */
  register?: { accountId: string; hostname: string };
  /** Create the CR of a domain that has none (a create, not an apply: a CR someone made meanwhile is theirs). */
  createCustomDomain?: CustomDomain;
  /** Server-side apply of an existing CR's metadata and spec: binding, or undoing a hand edit. */
  applyCustomDomain?: CustomDomain;
  /** Delete the CR: its domain is gone from the platform. */
  deleteCustomDomain?: boolean;
  addFinalizer?: boolean;
  /** Children to server-side apply (absent, changed, or edited by hand). */
  applyChildren: KubeObject[];
  /** Children of ours that are no longer wanted. */
  deleteChildren: KubeObject[];
  /** The new status, only when it differs from the stored one. */
  status?: CustomDomainStatus;
  /** One event per condition transition, sent once the status is stored. */
  events: Transition[];
  /** Last: every child is gone. */
  removeFinalizer?: boolean;
  /** The serving state to report to the platform, only when it differs from the one it holds. */
  reportServing?: { domainId: string; serving: MessageInitShape<typeof DomainServingSchema> };
  /** Look again after this long: for what no watch tells (a foreign Secret, a refused registration). */
  requeueAfter?: "recheck";
  /** Why nothing was done, for the debug log. */
  idle?: string;
}

/** A plan of these steps only. */
const act = (steps: Partial<Plan>): Plan => ({ applyChildren: [], deleteChildren: [], events: [], ...steps });
/** A plan that does nothing, and why. */
const nothing = (idle: string): Plan => act({ idle });

/** The decision for one hostname. */
export function decide(inputs: ReconcileInputs): Plan {
  const cr = inputs.customDomain;
  if (cr?.metadata.deletionTimestamp) return finalize(inputs, cr);
  // Before the first full list, an absent domain means nothing: never delete or register on it.
  if (!inputs.domainsListed) return nothing("the platform's domains are not listed yet");
  const domain = inputs.domain;
  if (!cr)
    return domain
      ? act({ createCustomDomain: projection(inputs.hostname, domain) })
      : nothing("no CustomDomain and no domain");
  if (!isBound(cr)) return registrationRequest(inputs, cr);
  if (!domain) return act({ deleteCustomDomain: true });
  return provision(inputs, cr, domain);
}

/** The CR as the platform's domain says it is: what projection creates and hand edits return to. */
export function projection(hostname: string, domain: Domain): CustomDomain {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: hostname, labels: { [MANAGED_BY_LABEL]: COMPONENT } },
    spec: { accountId: domain.accountId, domainId: domain.id },
  };
}

/** `kubectl delete` (or the operator, for a removed domain): withdraw what was made, then let the CR go. */
function finalize(inputs: ReconcileInputs, cr: CustomDomain): Plan {
  if (!cr.metadata.finalizers?.includes(FINALIZER)) return nothing("deleting, nothing of ours to clean up");
  const deleting: ConditionState = {
    status: "False",
    reason: "Deleting",
    message: "The route and certificate are being removed.",
  };
  // The other conditions stay as they were; Ready says what is going on.
  const kept = (type: "Verified" | "RouteAdmitted" | "CertificateReady"): ConditionState => {
    const before = cr.status?.conditions?.find((condition) => condition.type === type);
    return before
      ? { status: before.status === "True" ? "True" : "False", reason: before.reason, message: before.message }
      : deleting;
  };
  const states: ConditionStates = {
    Verified: kept("Verified"),
    RouteAdmitted: kept("RouteAdmitted"),
    CertificateReady: kept("CertificateReady"),
    Ready: deleting,
  };
  const status = { ...cr.status, ...statusUpdate(cr, states, {}, inputs.now) };
  return act({ ...withStatus(cr, status), deleteChildren: [...inputs.ownedChildren], removeFinalizer: true });
}

/** A CR created with kubectl, without a domainId: register the hostname, bind to it, or say why not. */
function registrationRequest(inputs: ReconcileInputs, cr: CustomDomain): Plan {
  const { domain, hostname } = inputs;
  const accountId = cr.spec.accountId;
  if (domain) {
    // The CR's account id is as the SRE wrote it: any case names the same account.
    if (canonicalId(domain.accountId) === canonicalId(accountId)) {
      return act({ applyCustomDomain: projection(hostname, domain) });
    }
    // The CR stays the SRE's: not deleted, not provisioned, just told why.
    return refused(inputs, cr, "HostnameTaken", `The hostname ${hostname} is registered to another account.`);
  }
  const outcome = inputs.registration;
  if (outcome && !outcome.retry)
    return { ...refused(inputs, cr, outcome.reason, outcome.message), requeueAfter: "recheck" };
  const plan = act({ register: { accountId, hostname } });
  if (!outcome) return plan;
  return {
    ...plan,
    ...withStatus(
      cr,
      statusUpdate(
        cr,
        notVerified({ status: "False", reason: outcome.reason, message: outcome.message }),
        {},
        inputs.now,
      ),
    ),
  };
}

function refused(
  inputs: ReconcileInputs,
  cr: CustomDomain,
  reason: RegistrationOutcome["reason"],
  message: string,
): Plan {
  const status = statusUpdate(cr, notVerified({ status: "False", reason, message }), {}, inputs.now);
  return act(withStatus(cr, status));
}

/** The conditions of a hostname that is not verified: nothing is provisioned, Ready says why. */
function notVerified(verified: ConditionState): ConditionStates {
  const waiting: ConditionState = {
    status: "False",
    reason: "NotVerified",
    message: "The hostname is not verified yet.",
  };
  return {
    Verified: verified,
    RouteAdmitted: waiting,
    CertificateReady: waiting,
    Ready: readyOf(verified, waiting, waiting),
  };
}

/** A bound CR: keep its spec as the platform says, provision what a verified hostname needs, report. */
function provision(inputs: ReconcileInputs, cr: CustomDomain, domain: Domain): Plan {
  const { hostname, settings } = inputs;
  const plan = act({});
  const desired = projection(hostname, domain);
  if (!sameJson(cr.spec, desired.spec) || cr.metadata.labels?.[MANAGED_BY_LABEL] !== COMPONENT)
    plan.applyCustomDomain = desired;
  if (!cr.metadata.finalizers?.includes(FINALIZER)) plan.addFinalizer = true;

  const verified = verificationCondition(domain);
  const extra: Pick<CustomDomainStatus, "route" | "certificate"> = {};
  let states: ConditionStates;
  const wanted: KubeObject[] = [];
  const kept: KubeObject[] = [];
  if (verified.status === "True") {
    const names = childNames(hostname);
    const route = routeOutcome(inputs, cr);
    if (route.desired) {
      wanted.push(route.desired);
      extra.route = { kind: settings.route.kind, name: names.route, namespace: settings.namespace };
    }
    const certificate = certificateOutcome(inputs, cr, route.owned);
    if (certificate.desired) wanted.push(certificate.desired);
    kept.push(...[route.kept, certificate.kept].filter((object) => object !== undefined));
    if (certificate.tracked) {
      extra.certificate = {
        name: certificate.tracked,
        secretName: names.secret,
        ...(certificate.notAfter && { notAfter: certificate.notAfter }),
      };
    }
    states = {
      Verified: verified,
      RouteAdmitted: route.condition,
      CertificateReady: certificate.condition,
      Ready: readyOf(verified, route.condition, certificate.condition),
    };
    if (route.condition.reason === "RouteConflict" || certificate.condition.reason === "CertificateConflict")
      plan.requeueAfter = "recheck";
  } else {
    states = notVerified(verified);
  }

  for (const object of wanted) {
    const observed = inputs.ownedChildren.find((child) => sameObject(child, object));
    if (!observed || !isUpToDate(observed, object)) plan.applyChildren.push(object);
  }
  plan.deleteChildren = inputs.ownedChildren.filter(
    (child) => ![...wanted, ...kept].some((object) => sameObject(child, object)),
  );

  const status = statusUpdate(cr, states, { verification: verificationOf(domain), ...extra }, inputs.now);
  Object.assign(plan, withStatus(cr, status));
  const serving = servingOf(states, extra.certificate?.notAfter);
  if (!sameServing(domain.serving, serving)) plan.reportServing = { domainId: domain.id, serving };
  return plan;
}

function verificationCondition(domain: Domain): ConditionState {
  switch (domain.state) {
    case DomainState.VERIFIED:
      return { status: "True", reason: "Verified", message: "The DNS TXT challenge was found." };
    case DomainState.FAILED:
      return {
        status: "False",
        reason: "VerificationFailed",
        message: `The last check did not find the challenge${domain.failureReason ? `: ${domain.failureReason}` : "."} Publish the TXT record ${domain.challengeRecordName} and verify again.`,
      };
    default:
      return {
        status: "False",
        reason: "PendingVerification",
        message: `Waiting for the TXT record ${domain.challengeRecordName} with the value ${domain.challengeRecordValue}.`,
      };
  }
}

function verificationOf(domain: Domain): CustomDomainStatus["verification"] {
  const state: VerificationState =
    domain.state === DomainState.VERIFIED ? "verified" : domain.state === DomainState.FAILED ? "failed" : "pending";
  return {
    state,
    challengeRecordName: domain.challengeRecordName,
    challengeRecordValue: domain.challengeRecordValue,
    ...(domain.lastCheckTime && { lastCheckTime: timestampDate(domain.lastCheckTime).toISOString() }),
  };
}

interface RouteOutcome {
  condition: ConditionState;
  /** The route to apply, unless another one holds the host or the name. */
  desired?: KubeObject;
  /** Our route as observed, if it exists. */
  owned?: Route;
  /** Ours, left as it is while something else claims the host. */
  kept?: KubeObject;
}

function routeOutcome(inputs: ReconcileInputs, cr: CustomDomain): RouteOutcome {
  const { settings, hostname } = inputs;
  const kind = settings.route.kind;
  const uid = cr.metadata.uid;
  if (inputs.route && !isControlledBy(inputs.route, uid)) {
    return conflict(
      "RouteConflict",
      `${kind} ${settings.namespace}/${inputs.route.metadata.name} exists and is not managed by this CustomDomain; the operator leaves it alone.`,
    );
  }
  const owned = inputs.route;
  const foreign = inputs.otherRoutesForHost.find((route) => !isControlledBy(route, uid));
  if (foreign) {
    // Ours, if it exists, stays as it is: withdrawing it would hand the host to whoever claims it.
    return {
      ...conflict(
        "RouteConflict",
        `${kind} ${settings.namespace}/${foreign.metadata.name} already routes ${hostname}; remove it or its rule for the host.`,
      ),
      kept: owned,
    };
  }
  const desired = desiredRoute(cr, childNames(hostname), settings);
  if (!owned)
    return {
      desired,
      condition: {
        status: "False",
        reason: "RoutePending",
        message: `The ${kind} was created; waiting for a controller to admit it.`,
      },
    };
  return { desired, owned, condition: admission(owned, kind) };
}

function admission(route: Route, kind: "Ingress" | "HTTPRoute"): ConditionState {
  if (kind === "Ingress") {
    const addresses = (route as Ingress).status?.loadBalancer?.ingress ?? [];
    return addresses.length > 0
      ? {
          status: "True",
          reason: "Admitted",
          message: `The Ingress is served at ${addresses.map((address) => address.hostname ?? address.ip).join(", ")}.`,
        }
      : {
          status: "False",
          reason: "RoutePending",
          message: "The Ingress has no load balancer address yet; waiting for an ingress controller.",
        };
  }
  const accepted = ((route as HTTPRoute).status?.parents ?? []).flatMap(
    (parent) => parent.conditions?.filter((condition) => condition.type === "Accepted") ?? [],
  );
  if (accepted.some((condition) => condition.status === "True"))
    return { status: "True", reason: "Admitted", message: "The HTTPRoute is accepted by its Gateway." };
  const rejected = accepted.find((condition) => condition.status === "False");
  if (rejected) {
    return {
      status: "False",
      reason: "RouteRejected",
      message: `The Gateway did not accept the HTTPRoute: ${rejected.reason ?? ""} ${rejected.message ?? ""}`.trim(),
    };
  }
  return { status: "False", reason: "RoutePending", message: "No Gateway has accepted the HTTPRoute yet." };
}

interface CertificateOutcome {
  condition: ConditionState;
  /** The Certificate to apply (TLS_MODE=certificate), unless something else holds its name or secret. */
  desired?: KubeObject;
  /** The name of the Certificate the status points at. */
  tracked?: string;
  notAfter?: string;
  /** Ours, left as it is while something else claims its secret. */
  kept?: KubeObject;
}

function certificateOutcome(inputs: ReconcileInputs, cr: CustomDomain, route: Route | undefined): CertificateOutcome {
  const { settings, hostname } = inputs;
  const names = childNames(hostname);
  const annotationMode = settings.tls.mode === "ingress-annotation";
  // In ingress-annotation mode cert-manager's ingress-shim makes the Certificate, named after the
  // secret and controlled by our Ingress.
  const name = annotationMode ? names.secret : names.certificate;
  const ownerUid = annotationMode ? route?.metadata.uid : cr.metadata.uid;
  if (annotationMode && !route) {
    return {
      condition: {
        status: "False",
        reason: "Issuing",
        message: "Waiting for the Ingress, whose annotation asks cert-manager for the certificate.",
      },
    };
  }
  const observed = inputs.certificate;
  if (observed && !isControlledBy(observed, ownerUid)) {
    return conflict(
      "CertificateConflict",
      `Certificate ${settings.namespace}/${observed.metadata.name} exists and was not made for this CustomDomain; the operator leaves it alone.`,
    );
  }
  const rival = inputs.otherCertificatesForSecret.find((certificate) => !isControlledBy(certificate, ownerUid));
  if (rival) {
    return {
      ...conflict(
        "CertificateConflict",
        `Certificate ${settings.namespace}/${rival.metadata.name} also writes the Secret ${names.secret}.`,
      ),
      kept: observed,
    };
  }
  const secret = inputs.secret;
  if (secret && secret.metadata.annotations?.[CERTIFICATE_NAME_ANNOTATION] !== name) {
    return {
      ...conflict(
        "CertificateConflict",
        `Secret ${settings.namespace}/${names.secret} exists and was not issued for Certificate ${name}; the operator leaves it alone.`,
      ),
      kept: observed,
    };
  }
  const desired = annotationMode ? undefined : desiredCertificate(cr, names, settings);
  if (!observed) {
    const message = annotationMode
      ? `Waiting for cert-manager to create Certificate ${name} for the Ingress.`
      : "The Certificate was created; waiting for cert-manager.";
    return { desired, tracked: name, condition: { status: "False", reason: "Issuing", message } };
  }
  const ready = observed.status?.conditions?.find((condition) => condition.type === "Ready");
  const notAfter = observed.status?.notAfter;
  if (ready?.status === "True") {
    return {
      desired,
      tracked: name,
      notAfter,
      condition: {
        status: "True",
        reason: "Ready",
        message: ready.message || "The certificate is issued and current.",
      },
    };
  }
  const why = ready?.message ? `cert-manager: ${ready.message}` : "Waiting for cert-manager to issue the certificate.";
  return { desired, tracked: name, notAfter, condition: { status: "False", reason: "Issuing", message: why } };
}

function conflict(reason: "RouteConflict" | "CertificateConflict", message: string): { condition: ConditionState } {
  return { condition: { status: "False", reason, message } };
}

/** Ready: Serving when the other three are True, else the reason of the first that is not. */
function readyOf(verified: ConditionState, route: ConditionState, certificate: ConditionState): ConditionState {
  const blocking = [verified, route, certificate].find((condition) => condition.status !== "True");
  if (blocking) return { status: "False", reason: blocking.reason, message: blocking.message };
  return {
    status: "True",
    reason: "Serving",
    message: "The hostname is routed to the redirector with a ready certificate.",
  };
}

/** The status the CR should have: its conditions (times kept unless they flip) and the rest. */
function statusUpdate(
  cr: CustomDomain,
  states: ConditionStates,
  rest: Pick<CustomDomainStatus, "verification" | "route" | "certificate">,
  now: Date,
): CustomDomainStatus {
  const generation = cr.metadata.generation;
  return {
    ...(generation !== undefined && { observedGeneration: generation }),
    ...rest,
    conditions: nextConditions(cr.status?.conditions, states, generation, now),
  };
}

/** The status and its events, when the status changed. */
function withStatus(cr: CustomDomain, status: CustomDomainStatus): Pick<Plan, "status" | "events"> {
  if (sameJson(cr.status ?? {}, status)) return { events: [] };
  return { status, events: transitions(cr.status?.conditions, status.conditions ?? []) };
}

function servingOf(
  states: ConditionStates,
  notAfter: string | undefined,
): MessageInitShape<typeof DomainServingSchema> {
  return {
    serving: states.Ready.status === "True",
    routeAdmitted: states.RouteAdmitted.status === "True",
    certificateReady: states.CertificateReady.status === "True",
    ...(notAfter && { certificateExpireTime: timestampFromDate(new Date(notAfter)) }),
    reason: states.Ready.reason,
    message: states.Ready.message,
  };
}

/** Whether the platform already holds this serving state (its report time aside). */
function sameServing(stored: DomainServing | undefined, next: MessageInitShape<typeof DomainServingSchema>): boolean {
  if (!stored) return false;
  const wanted = create(DomainServingSchema, next);
  const expiry = (serving: DomainServing) =>
    serving.certificateExpireTime ? timestampDate(serving.certificateExpireTime).getTime() : undefined;
  return (
    stored.serving === wanted.serving &&
    stored.routeAdmitted === wanted.routeAdmitted &&
    stored.certificateReady === wanted.certificateReady &&
    expiry(stored) === expiry(wanted) &&
    stored.reason === wanted.reason &&
    stored.message === wanted.message
  );
}

function sameObject(a: KubeObject, b: KubeObject): boolean {
  return (
    a.kind === b.kind &&
    a.metadata.name === b.metadata.name &&
    (a.metadata.namespace ?? "") === (b.metadata.namespace ?? "")
  );
}
