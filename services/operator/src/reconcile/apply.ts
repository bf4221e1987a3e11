// Carries a plan out, in order: registration, the CR itself (created, deleted, or applied), its finalizer, its children (server-side
// apply as the operator's one field manager; the policy only plans objects that are absent or ours),
// its status (a merge patch, planned only when it changed) and the events of its transitions, the
// finalizer's removal, and the serving report. Every write first checks that this replica still
// leads; any failure goes back to the work queue.
import type { Logger } from "@qrplatform/platform";
import { FINALIZER, type CustomDomain } from "../custom-domain.js";
import type { AccountClient, DomainClient } from "../domains/client.js";
import type { DomainCache } from "../domains/domain-cache.js";
import { registerDomain } from "../domains/registration.js";
import { reportServing } from "../domains/serving.js";
import {
  CERTIFICATES,
  CUSTOM_DOMAINS,
  HTTP_ROUTES,
  INGRESSES,
  statusOf,
  type KubeApi,
  type Resource,
} from "../kube/client.js";
import type { EventRecorder } from "../kube/events.js";
import { mergePatch } from "../kube/merge-patch.js";
import type { KubeObject } from "../kube/objects.js";
import type { ProcessResult } from "../kube/work-queue.js";
import type { OperatorMetrics } from "../metrics.js";
import { projection, type Plan, type ReconcileInputs } from "./policy.js";
import type { OwnWrites } from "./own-writes.js";
import type { Registrations } from "./registrations.js";

export interface Effects {
  api: KubeApi;
  domains: DomainCache;
  domainClient: DomainClient;
  accounts?: AccountClient | undefined;
  registrations: Registrations;
  events: EventRecorder;
  /** The versions of the operator's own writes to CRs, until the informer has them. */
  ownWrites: OwnWrites;
  /** Whether this replica holds the lease right now. */
  isLeader: () => boolean;
  /** How long to wait before looking again at what no watch reports. */
  recheckMs: number;
  logger: Logger;
  metrics: OperatorMetrics;
}

/** Thrown when the lease was lost mid-reconcile: the new leader reconciles everything anyway. */
export class NotLeader extends Error {
  override name = "NotLeader";
}

/** Before every write: a replica that lost the lease stops at once. */
function ensureLeading(effects: Effects): void {
  if (!effects.isLeader()) throw new NotLeader("this replica no longer holds the lease");
}

const CHILD_RESOURCES: Record<string, Resource> = {
  Ingress: INGRESSES,
  HTTPRoute: HTTP_ROUTES,
  Certificate: CERTIFICATES,
};

function resourceOf(object: KubeObject): Resource {
  const resource = object.kind ? CHILD_RESOURCES[object.kind] : undefined;
  if (!resource) throw new Error(`The operator does not manage ${object.kind ?? "objects without a kind"}`);
  return resource;
}

export async function carryOut(plan: Plan, inputs: ReconcileInputs, effects: Effects): Promise<ProcessResult> {
  try {
    return await carryOutInOrder(plan, inputs, effects);
  } catch (error) {
    // The CR went while the cache still held it: its deletion is on its way to the informer.
    if (statusOf(error) === 404) {
      effects.logger.debug({ hostname: inputs.hostname }, "the CustomDomain is gone; nothing left to do");
      return {};
    }
    throw error;
  }
}

async function carryOutInOrder(plan: Plan, inputs: ReconcileInputs, effects: Effects): Promise<ProcessResult> {
  const { api, logger } = effects;
  const { hostname } = inputs;
  const leading = () => ensureLeading(effects);
  let cr = inputs.customDomain;

  if (plan.register && cr) {
    // A registration retried after a failure shows Registering meanwhile.
    if (plan.status) await storeStatus(cr, plan, effects);
    return register(plan.register, cr, inputs.now, effects);
  }

  if (plan.deleteCustomDomain && cr) {
    leading();
    await api.delete(CUSTOM_DOMAINS, hostname, cr.metadata.uid);
    logger.info(
      { hostname, domainId: cr.spec.domainId },
      "the domain is gone from the platform; deleted its CustomDomain",
    );
    return {};
  }

  if (plan.createCustomDomain) {
    leading();
    // A 409 (someone created it meanwhile) goes back to the queue: the next decision sees their CR.
    const created = await api.createClusterScoped(CUSTOM_DOMAINS, plan.createCustomDomain);
    effects.ownWrites.wrote(hostname, created.metadata.resourceVersion);
    logger.info({ hostname, domainId: created.spec.domainId }, "projected a domain into a CustomDomain");
    return {};
  }

  if (plan.applyCustomDomain) {
    leading();
    cr = await api.apply(CUSTOM_DOMAINS, plan.applyCustomDomain);
    effects.ownWrites.wrote(hostname, cr.metadata.resourceVersion);
    logger.info({ hostname, domainId: cr.spec.domainId }, "set the CustomDomain's spec as the platform has it");
  }
  if (!cr) return {};

  if (plan.addFinalizer) {
    leading();
    cr = await api.patchCustomDomain(hostname, {
      metadata: {
        finalizers: [...(cr.metadata.finalizers ?? []), FINALIZER],
        resourceVersion: cr.metadata.resourceVersion,
      },
    });
    effects.ownWrites.wrote(hostname, cr.metadata.resourceVersion);
  }

  for (const child of plan.applyChildren) {
    leading();
    await api.apply(resourceOf(child), child);
    logger.info({ hostname, kind: child.kind, name: child.metadata.name }, "applied");
  }
  for (const child of plan.deleteChildren) {
    leading();
    await api.delete(resourceOf(child), child.metadata.name, child.metadata.uid);
    logger.info({ hostname, kind: child.kind, name: child.metadata.name }, "deleted");
  }

  if (plan.status) cr = await storeStatus(cr, plan, effects);

  if (plan.removeFinalizer) {
    leading();
    const released = await api.patchCustomDomain(hostname, {
      metadata: {
        finalizers: (cr.metadata.finalizers ?? []).filter((name) => name !== FINALIZER),
        resourceVersion: cr.metadata.resourceVersion,
      },
    });
    effects.ownWrites.wrote(hostname, released.metadata?.resourceVersion);
    logger.info({ hostname }, "removed what the CustomDomain provisioned; it may go");
  }

  if (plan.reportServing) {
    leading();
    try {
      await reportServing(effects.domainClient, effects.domains, plan.reportServing);
      effects.metrics.servingReports.inc({ result: "ok" });
    } catch (error) {
      effects.metrics.servingReports.inc({ result: "error" });
      throw error;
    }
  }

  return plan.requeueAfter === "recheck" ? { requeueAfterMs: effects.recheckMs } : {};
}

/** Patches the status (only what changed) and records the events of its transitions. */
async function storeStatus(cr: CustomDomain, plan: Plan, effects: Effects): Promise<CustomDomain> {
  ensureLeading(effects);
  const stored = await effects.api.patchStatus(
    cr.metadata.name,
    mergePatch(cr.status ?? {}, plan.status) as Record<string, unknown>,
  );
  effects.ownWrites.wrote(cr.metadata.name, stored.metadata.resourceVersion);
  for (const transition of plan.events) await effects.events.record(stored, transition);
  return stored;
}

/**
 * Registers a kubectl-created CR's hostname and binds the CR to the new domain. A refusal is
 * remembered and shown by the next reconcile; a failure to reach the platform shows as Registering
 * and goes back to the queue.
 */
async function register(
  request: { accountId: string; hostname: string },
  cr: CustomDomain,
  now: Date,
  effects: Effects,
): Promise<ProcessResult> {
  const { logger, registrations } = effects;
  ensureLeading(effects);
  let outcome: Awaited<ReturnType<typeof registerDomain>>;
  try {
    outcome = await registerDomain({ domains: effects.domainClient, accounts: effects.accounts }, request);
  } catch (error) {
    registrations.set(
      cr,
      {
        reason: "Registering",
        message: "The platform could not be reached to register the hostname; retrying.",
        retry: true,
      },
      now,
    );
    throw error;
  }
  if ("refused" in outcome) {
    registrations.set(cr, outcome.refused, now);
    logger.info(
      { hostname: request.hostname, accountId: request.accountId, reason: outcome.refused.reason },
      "the platform refused to register a CustomDomain's hostname",
    );
    return { requeueAfterMs: 0 };
  }
  registrations.forget(request.hostname);
  effects.domains.remember(outcome.domain);
  ensureLeading(effects);
  const bound = await effects.api.apply(CUSTOM_DOMAINS, projection(request.hostname, outcome.domain));
  effects.ownWrites.wrote(request.hostname, bound.metadata.resourceVersion);
  logger.info(
    { hostname: request.hostname, accountId: request.accountId, domainId: outcome.domain.id },
    "registered a CustomDomain's hostname and bound the CR to it",
  );
  return {};
}
