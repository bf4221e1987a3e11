// A cluster for the operator's controller tests: the in-process fake API server with the CustomDomain
// CRD, an in-memory DomainService, stand-ins for cert-manager and an ingress controller, and operator
// replicas with short periods. Each replica may reach the API server through a proxy of its own, so a
// test can cut one replica off as a crash or a partition would.
import { readFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { startFakeKubeApiServer, type FakeKubeApiServer, type StoredObject } from "@qrplatform/fake-kube-apiserver";
import { createLogger, Metrics } from "@qrplatform/platform";
import type { Condition, CustomDomain } from "../../src/custom-domain.js";
import { buildOperator, type Operator, type OperatorDeps, type ProvisioningSettings } from "../../src/operator.js";
import { FakeDomainService } from "./fake-domain-service.js";

const CRD = readFileSync(
  fileURLToPath(new URL("../../../../charts/qr-platform/crds/customdomains.qr-platform.io.yaml", import.meta.url)),
  "utf8",
);

export const NAMESPACE = "qr-platform";
export const CUSTOM_DOMAINS = "customdomains.qr-platform.io";
export const INGRESSES = "ingresses.networking.k8s.io";
export const HTTP_ROUTES = "httproutes.gateway.networking.k8s.io";
export const CERTIFICATES = "certificates.cert-manager.io";
export const LEASES = "leases.coordination.k8s.io";
/** How long the tests' leases last. */
export const LEASE_MS = 2000;

export const provisioning: ProvisioningSettings = {
  namespace: NAMESPACE,
  route: { kind: "Ingress", ingressClassName: "nginx" },
  redirector: { service: "qr-platform-links", port: 8081 },
  tls: { mode: "certificate", clusterIssuer: "letsencrypt" },
};

/** One operator replica. */
export interface Replica {
  readonly operator: Operator;
  readonly identity: string;
  readonly metrics: Metrics;
  /** Cuts the replica off the API server, as a crash would: it can neither renew nor release the lease. */
  kill(): Promise<void>;
}

export class Cluster {
  readonly domains = new FakeDomainService();
  private readonly replicas: { operator: Operator; proxy?: CuttableProxy }[] = [];

  private constructor(readonly kube: FakeKubeApiServer) {}

  static async start(): Promise<Cluster> {
    const kube = await startFakeKubeApiServer({ crds: [CRD], namespace: NAMESPACE });
    return new Cluster(kube);
  }

  /** Starts an operator replica; `cuttable` puts a proxy between it and the API server. */
  async startOperator(
    options: {
      identity?: string;
      cuttable?: boolean;
      provisioning?: ProvisioningSettings;
      deps?: Partial<OperatorDeps>;
    } = {},
  ): Promise<Replica> {
    const identity = options.identity ?? `operator-${this.replicas.length}`;
    const proxy = options.cuttable ? await new CuttableProxy(Number(new URL(this.kube.url).port)).listen() : undefined;
    const kubeConfig = proxy ? configFor(`http://127.0.0.1:${proxy.port}`) : this.kube.kubeConfig();
    const metrics = new Metrics();
    const operator = buildOperator({
      kubeConfig,
      provisioning: options.provisioning ?? provisioning,
      domains: this.domains.client(),
      identity,
      lease: { name: "qr-platform-operator", durationMs: LEASE_MS, renewIntervalMs: 200, retryIntervalMs: 100 },
      periods: {
        fullResyncMs: 60_000,
        reverifyMs: 86_400_000,
        pendingCheckMs: 3_600_000,
        unverifiedTtlMs: 7 * 86_400_000,
        recheckMs: 300,
      },
      backoff: { baseMs: 20, maxMs: 300 },
      logger: createLogger({ service: identity, level: process.env.OPERATOR_TEST_LOG ?? "silent" }),
      metrics,
      ...options.deps,
    });
    this.replicas.push({ operator, ...(proxy && { proxy }) });
    operator.start();
    return {
      operator,
      identity,
      metrics,
      kill: async () => proxy?.cut(),
    };
  }

  async close(): Promise<void> {
    for (const { operator, proxy } of this.replicas.splice(0)) {
      await proxy?.cut();
      await operator.stop();
      await proxy?.close();
    }
    await this.kube.close();
  }

  customDomain(hostname: string): CustomDomain | undefined {
    return this.kube.get(CUSTOM_DOMAINS, undefined, hostname) as unknown as CustomDomain | undefined;
  }

  condition(hostname: string, type: Condition["type"]): Condition | undefined {
    return this.customDomain(hostname)?.status?.conditions?.find((condition) => condition.type === type);
  }

  /** "status/reason" of a condition, for polling. */
  reasonOf(hostname: string, type: Condition["type"] = "Ready"): string | undefined {
    const condition = this.condition(hostname, type);
    return condition && `${condition.status}/${condition.reason}`;
  }

  get(resource: string, name: string): StoredObject | undefined {
    return this.kube.get(resource, NAMESPACE, name);
  }

  /** The ingress controller's part: gives the Ingress a load balancer address. */
  admitIngress(name: string): void {
    this.kube.setStatus(
      INGRESSES,
      NAMESPACE,
      name,
      { loadBalancer: { ingress: [{ ip: "203.0.113.10" }] } },
      { manager: "ingress-nginx" },
    );
  }

  /** cert-manager's part: marks the Certificate issued. */
  issueCertificate(name: string, notAfter = "2026-09-01T00:00:00Z"): void {
    this.kube.setStatus(
      CERTIFICATES,
      NAMESPACE,
      name,
      {
        conditions: [
          { type: "Ready", status: "True", reason: "Ready", message: "Certificate is up to date and has not expired" },
        ],
        notAfter,
      },
      { manager: "cert-manager" },
    );
  }

  /** Waits for the route and Certificate of a verified host, plays the ingress controller and cert-manager, and waits for Ready. */
  async serve(hostname: string): Promise<void> {
    await eventually(() => Boolean(this.get(INGRESSES, hostname) && this.get(CERTIFICATES, hostname)), true);
    this.admitIngress(hostname);
    this.issueCertificate(hostname);
    await eventually(() => this.reasonOf(hostname), "True/Serving");
  }

  /** The events about a CR. */
  eventsFor(hostname: string): StoredObject[] {
    return this.kube
      .list("events", NAMESPACE)
      .filter((event) => (event as { involvedObject?: { name?: string } }).involvedObject?.name === hostname);
  }

  /** A client as an SRE's kubectl, writing as its own field manager. */
  kubectl(): Kubectl {
    return new Kubectl(this.kube.kubeConfig());
  }
}

/** What an SRE does with kubectl to CustomDomains. */
export class Kubectl {
  private readonly api: CustomObjectsApi;

  constructor(config: KubeConfig) {
    this.api = config.makeApiClient(CustomObjectsApi);
  }

  create(hostname: string, accountId: string): Promise<unknown> {
    return this.api.createClusterCustomObject({
      group: "qr-platform.io",
      version: "v1alpha1",
      plural: "customdomains",
      body: {
        apiVersion: "qr-platform.io/v1alpha1",
        kind: "CustomDomain",
        metadata: { name: hostname },
        spec: { accountId },
      },
      fieldManager: "kubectl-client-side-apply",
    });
  }

  edit(hostname: string, patch: unknown): Promise<unknown> {
    return this.api.patchClusterCustomObject(
      {
        group: "qr-platform.io",
        version: "v1alpha1",
        plural: "customdomains",
        name: hostname,
        body: patch,
        fieldManager: "kubectl-edit",
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  }

  delete(hostname: string): Promise<unknown> {
    return this.api.deleteClusterCustomObject({
      group: "qr-platform.io",
      version: "v1alpha1",
      plural: "customdomains",
      name: hostname,
    });
  }
}

/** Waits until `read` returns what `expected` says, failing with what it last saw. */
export async function eventually<T>(read: () => T | Promise<T>, expected: T, timeout = 10_000): Promise<void> {
  await expect.poll(read, { timeout, interval: 20 }).toEqual(expected);
}

function configFor(server: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "fake", server, skipTLSVerify: true }],
    users: [{ name: "fake", token: "fake-token" }],
    contexts: [{ name: "fake", cluster: "fake", user: "fake", namespace: NAMESPACE }],
    currentContext: "fake",
  });
  return config;
}

/** A TCP proxy to the API server that can be cut: open connections dropped, new ones refused. */
class CuttableProxy {
  private readonly sockets = new Set<Socket>();
  private isCut = false;
  private readonly server: Server;
  port = 0;

  constructor(private readonly upstreamPort: number) {
    this.server = createServer((socket) => {
      if (this.isCut) {
        socket.destroy();
        return;
      }
      const upstream = connect(this.upstreamPort, "127.0.0.1");
      for (const end of [socket, upstream]) {
        this.sockets.add(end);
        end.on("close", () => this.sockets.delete(end));
        end.on("error", () => end.destroy());
      }
      socket.pipe(upstream).pipe(socket);
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  cut(): void {
    this.isCut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
