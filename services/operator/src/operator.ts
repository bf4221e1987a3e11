// The domain operator, built from its dependencies: nothing runs and nothing listens until start().
// Every replica keeps its caches warm (three informers and the platform's domains) so that it is
// ready to lead; only the replica holding the lease reconciles and runs the domain schedules.
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger, Metrics } from "@qrplatform/platform";
import type { BackoffSettings } from "./backoff.js";
import type { CustomDomain } from "./custom-domain.js";
import type { AccountClient, DomainClient } from "./domains/client.js";
import { DomainCache } from "./domains/domain-cache.js";
import { DomainSchedules } from "./domains/schedules.js";
import type { Readiness } from "./health.js";
import { CERTIFICATES, CUSTOM_DOMAINS, HTTP_ROUTES, INGRESSES, KubeApi } from "./kube/client.js";
import { EventRecorder } from "./kube/events.js";
import { ResourceInformer } from "./kube/informer.js";
import { LeaderElection, type LeaseSettings } from "./kube/leader-election.js";
import { controllerOf, hostsOf, objectKey, type Certificate, type KubeObject, type Route } from "./kube/objects.js";
import { WorkQueue } from "./kube/work-queue.js";
import { operatorMetrics } from "./metrics.js";
import type { ProvisioningSettings } from "./reconcile/children.js";
import { reconciler } from "./reconcile/reconciler.js";
import { OwnWrites } from "./reconcile/own-writes.js";
import { Registrations } from "./reconcile/registrations.js";

export type { ProvisioningSettings } from "./reconcile/children.js";
export type { LeaseSettings } from "./kube/leader-election.js";
export type { Readiness } from "./health.js";
export { serveHealth } from "./health.js";
export { loadKubeConfig } from "./kube/client.js";
export { accountClient, domainClient } from "./domains/client.js";

/** The operator's periods, in milliseconds. */
export interface OperatorPeriods {
  /** FULL_RESYNC_SECONDS: every domain listed and every hostname reconciled. */
  fullResyncMs: number;
  /** REVERIFY_INTERVAL_SECONDS. */
  reverifyMs: number;
  /** PENDING_CHECK_INTERVAL_SECONDS. */
  pendingCheckMs: number;
  /** UNVERIFIED_DOMAIN_TTL_SECONDS. */
  unverifiedTtlMs: number;
  /** How often the schedules look for what is due (default one minute, at most the pending-check period). */
  scheduleTickMs?: number;
  /** How soon what no watch reports (a foreign Secret, a refused registration) is looked at again (default one minute). */
  recheckMs?: number;
}

export interface OperatorDeps {
  kubeConfig: KubeConfig;
  provisioning: ProvisioningSettings;
  domains: DomainClient;
  /** TenancyService, to refuse registrations for accounts that do not exist; without it, links decides alone. */
  accounts?: AccountClient | undefined;
  /** This replica's identity in the lease (POD_NAME). */
  identity: string;
  lease: LeaseSettings;
  periods: OperatorPeriods;
  /** Retries of failed reconciles, informers and the domain stream (default 1 s doubling to 5 min). */
  backoff?: BackoffSettings;
  /** Reconciles at once (default 4). */
  workers?: number;
  logger: Logger;
  metrics: Metrics;
  now?: () => Date;
}

export interface Operator {
  /** Starts the caches and the election; returns at once. */
  start(): void;
  /** Stops acting, releases the lease if held, and stops every watch. */
  stop(): Promise<void>;
  readiness(): Readiness;
  readonly isLeader: boolean;
}

const MINUTE = 60_000;
/** How long a reconcile waits for the CR informer to deliver the operator's own last write. */
const OWN_WRITE_PATIENCE_MS = 5000;

export function buildOperator(deps: OperatorDeps): Operator {
  const { logger, provisioning } = deps;
  const now = deps.now ?? (() => new Date());
  const backoff = deps.backoff ?? { baseMs: 1000, maxMs: 5 * MINUTE };
  const metrics = operatorMetrics(deps.metrics);
  const recheckMs = deps.periods.recheckMs ?? MINUTE;
  const api = new KubeApi(deps.kubeConfig, provisioning.namespace);

  const queue: WorkQueue = new WorkQueue({
    process: (hostname) => reconcile(hostname),
    backoff,
    workers: deps.workers ?? 4,
    logger,
    metrics: deps.metrics,
    onProcessed: (result, seconds) => {
      metrics.reconciles.inc({ result });
      metrics.reconcileSeconds.observe(seconds);
    },
  });
  const enqueue = (hostnames: Iterable<string>) => {
    for (const hostname of hostnames) queue.add(hostname);
  };

  // A change to a route or certificate concerns the hostnames it serves now and served before (an
  // edited foreign Ingress may release a host), and the CR that controls it.
  const lastHosts = new Map<string, string[]>();
  const onChild = (object: KubeObject, change: "add" | "update" | "delete") => {
    const key = `${object.kind}/${objectKey(object)}`;
    const owner = controllerOf(object);
    const hosts = [...hostsOf(object), ...(owner?.kind === "CustomDomain" ? [owner.name] : [])];
    enqueue(new Set([...hosts, ...(lastHosts.get(key) ?? [])]));
    if (change === "delete") lastHosts.delete(key);
    else lastHosts.set(key, hosts);
  };
  const informerOptions = { api, backoff, logger, metrics };
  const ownWrites = new OwnWrites(OWN_WRITE_PATIENCE_MS);
  const customDomains = new ResourceInformer<CustomDomain>({
    ...informerOptions,
    resource: CUSTOM_DOMAINS,
    onChange: (cr, change) => {
      ownWrites.observed(cr.metadata.name, change === "delete" ? undefined : cr.metadata.resourceVersion);
      queue.add(cr.metadata.name);
    },
  });
  const routes = new ResourceInformer<Route>({
    ...informerOptions,
    resource: provisioning.route.kind === "HTTPRoute" ? HTTP_ROUTES : INGRESSES,
    onChange: onChild,
  });
  const certificates = new ResourceInformer<Certificate>({
    ...informerOptions,
    resource: CERTIFICATES,
    onChange: onChild,
  });
  const informers = [customDomains, routes, certificates];

  const domains: DomainCache = new DomainCache({
    client: deps.domains,
    fullResyncMs: deps.periods.fullResyncMs,
    backoff,
    logger,
    metrics,
    onChange: enqueue,
    // The periodic resync: every CR too, whether or not the platform has its hostname.
    onListed: () => enqueue(customDomains.list().map((cr) => cr.metadata.name)),
  });
  const schedules = new DomainSchedules({
    client: deps.domains,
    cache: domains,
    periods: {
      reverifyMs: deps.periods.reverifyMs,
      pendingCheckMs: deps.periods.pendingCheckMs,
      unverifiedTtlMs: deps.periods.unverifiedTtlMs,
      tickMs: deps.periods.scheduleTickMs ?? Math.min(MINUTE, deps.periods.pendingCheckMs),
    },
    logger,
    metrics,
    now,
  });

  const registrations = new Registrations(recheckMs);
  const events = new EventRecorder(api, deps.identity, logger);
  let leading = false;
  const election: LeaderElection = new LeaderElection({
    api,
    lease: deps.lease,
    identity: deps.identity,
    logger,
    metrics,
    onStartedLeading: () => {
      leading = true;
      // Only on full caches: an object not seen yet must never look absent to a reconcile.
      void Promise.all(informers.map((informer) => informer.whenSynced())).then(() => {
        if (!leading) return;
        enqueue(customDomains.list().map((cr) => cr.metadata.name));
        enqueue(domains.all().map((domain) => domain.hostname));
        queue.start();
        schedules.start();
      });
    },
    onStoppedLeading: () => {
      leading = false;
      void queue.stop();
      void schedules.stop();
    },
  });

  const reconcile = reconciler(
    { customDomains, routes, certificates, domains, registrations, api, settings: provisioning, now },
    {
      api,
      domains,
      domainClient: deps.domains,
      accounts: deps.accounts,
      registrations,
      events,
      ownWrites,
      isLeader: () => election.isLeader,
      recheckMs,
      logger,
      metrics,
    },
    logger,
  );

  return {
    start() {
      metrics.leader.set(0);
      for (const informer of informers) informer.start();
      domains.start();
      election.start();
    },
    async stop() {
      await election.stop();
      await queue.close();
      await schedules.stop();
      await Promise.all([...informers.map((informer) => informer.stop()), domains.stop()]);
    },
    readiness() {
      const waiting = {
        customdomains: customDomains.synced,
        routes: routes.synced,
        certificates: certificates.synced,
        domains: domains.listed,
      };
      const waitingFor = Object.entries(waiting).flatMap(([name, done]) => (done ? [] : [name]));
      return { ready: waitingFor.length === 0, waitingFor };
    },
    get isLeader() {
      return election.isLeader;
    },
  };
}
