// @qrplatform/fake-kube-apiserver: an in-process fake of the Kubernetes API server's REST surface for
// tests. The real @kubernetes/client-node runs against it unchanged: informers, typed APIs, the patch
// content types and server-side apply. See README.md for what it covers and what it does not.
import { KubeConfig } from "@kubernetes/client-node";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { Faults, matchesFilter, type Fault, type RequestFilter, type RequestRecord } from "./faults.js";
import { clone, type KubeObject, type StoredObject } from "./object.js";
import { Operations, type Target } from "./operations.js";
import {
  defaultResourceTypes,
  ResourceRegistry,
  resourceName,
  resourceTypeFromCrd,
  type ResourceType,
} from "./resources.js";
import { ApiHttpServer, type DropMode, type WatchInfo } from "./server.js";
import { KubeError } from "./status.js";
import { ObjectStore } from "./store.js";

export type { Fault, RequestFilter, RequestRecord } from "./faults.js";
export type { KubeObject, ManagedFieldsEntry, ObjectMeta, OwnerReference, StoredObject } from "./object.js";
export { resourceName, resourceTypeFromCrd, type ResourceType } from "./resources.js";
export type { DropMode, WatchInfo } from "./server.js";
export { KubeError, type KubeStatus, type StatusDetails, type StatusReason } from "./status.js";

/** How to start a fake. */
export interface FakeKubeApiServerOptions {
  /** CustomResourceDefinitions to serve from the start: parsed objects or YAML text. */
  crds?: unknown[];
  /** How many past watch events are kept for watches to resume from (older ones get 410 Gone); default 10000. */
  watchHistory?: number;
  /** The namespace of the kubeconfig's context; default "default". */
  namespace?: string;
}

/** Options of a test's direct write. */
export interface DirectWriteOptions {
  /** The field manager recorded in managedFields; default "fake-kube-apiserver". */
  manager?: string;
}

/**
 * Starts a fake API server on 127.0.0.1 on a free port. It serves core v1 namespaces, secrets,
 * configmaps, services and events, events.k8s.io/v1 events, networking.k8s.io/v1 ingresses,
 * coordination.k8s.io/v1 leases, gateway.networking.k8s.io/v1 httproutes, cert-manager.io/v1
 * certificates, and the CRDs given. Close it with `close()`.
 */
export async function startFakeKubeApiServer(options: FakeKubeApiServerOptions = {}): Promise<FakeKubeApiServer> {
  const fake = new FakeKubeApiServer(options);
  await fake.start();
  return fake;
}

/** A running fake: the kubeconfig to reach it, direct reads and writes, and fault injection. */
export class FakeKubeApiServer {
  private readonly registry = new ResourceRegistry(defaultResourceTypes());
  private readonly store: ObjectStore;
  private readonly operations: Operations;
  private readonly faults = new Faults();
  private readonly http: ApiHttpServer;
  private readonly namespace: string;
  private baseUrl = "";

  /** Use startFakeKubeApiServer, which also starts listening. */
  constructor(options: FakeKubeApiServerOptions = {}) {
    this.store = new ObjectStore(this.registry, options.watchHistory ?? 10_000);
    this.operations = new Operations(this.store);
    this.http = new ApiHttpServer(this.registry, this.store, this.operations, this.faults);
    this.namespace = options.namespace ?? "default";
    for (const crd of options.crds ?? []) this.registerCrd(crd);
  }

  /** Starts listening; startFakeKubeApiServer calls it. */
  async start(): Promise<void> {
    this.baseUrl = await this.http.listen();
  }

  /** The server's base URL, e.g. http://127.0.0.1:40123. */
  get url(): string {
    return this.baseUrl;
  }

  /** A client-node KubeConfig for this server (plain HTTP, so skipTLSVerify is set, as client-node requires). */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "fake", server: this.baseUrl, skipTLSVerify: true }],
      users: [{ name: "fake", token: "fake-token" }],
      contexts: [{ name: "fake", cluster: "fake", user: "fake", namespace: this.namespace }],
      currentContext: "fake",
    });
    return kc;
  }

  /** The same kubeconfig as YAML, to write to a file for a process started with KUBECONFIG. */
  kubeConfigYaml(): string {
    return stringifyYaml({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "fake", cluster: { server: this.baseUrl, "insecure-skip-tls-verify": true } }],
      users: [{ name: "fake", user: { token: "fake-token" } }],
      contexts: [{ name: "fake", context: { cluster: "fake", user: "fake", namespace: this.namespace } }],
      "current-context": "fake",
    });
  }

  /**
   * Serves a custom resource from its CustomResourceDefinition (a parsed object or YAML text); returns its
   * name, e.g. "customdomains.qr-platform.io".
   */
  registerCrd(crd: unknown): string {
    const type = resourceTypeFromCrd(typeof crd === "string" ? parseYaml(crd) : crd);
    this.registry.register(type);
    return resourceName(type);
  }

  /** Serves a resource type described by hand. */
  registerResource(type: ResourceType): void {
    this.registry.register(type);
  }

  private target(resource: string, namespace: string | undefined, scope: Target["scope"], manager?: string): Target {
    const type = this.registry.named(resource);
    return {
      type,
      version: type.versions[0]!,
      ...(type.namespaced ? { namespace: namespace ?? this.namespace } : {}),
      scope,
      fieldManager: manager ?? "fake-kube-apiserver",
    };
  }

  /**
   * One object, or undefined. `resource` is the kubectl-style name: "secrets", "leases.coordination.k8s.io",
   * "customdomains.qr-platform.io"; `namespace` is ignored for cluster-scoped types.
   */
  get(resource: string, namespace: string | undefined, name: string): StoredObject | undefined {
    const target = this.target(resource, namespace, "main");
    const object = this.store.get(target.type, target.namespace, name);
    return object ? clone(object) : undefined;
  }

  /** The objects of a type, in one namespace or in all. */
  list(resource: string, namespace?: string): StoredObject[] {
    const type = this.registry.named(resource);
    return this.store.list(type, namespace).map((o) => clone(o));
  }

  /**
   * Creates or replaces an object exactly as given, status included (a stand-in for a controller, such as
   * cert-manager marking a Certificate ready, or an ingress controller admitting an Ingress). No
   * resourceVersion precondition applies. Watches see the change; generation follows the usual rules.
   */
  put(resource: string, object: KubeObject, options: DirectWriteOptions = {}): StoredObject {
    const target = this.target(resource, object.metadata?.namespace, "all", options.manager);
    const name = object.metadata?.name;
    const existing = name ? this.store.get(target.type, target.namespace, name) : undefined;
    const body = clone(object);
    if (existing && name) {
      body.metadata = { ...body.metadata, resourceVersion: existing.metadata.resourceVersion };
      return clone(this.operations.replace(target, name, body));
    }
    return clone(this.operations.create(target, body));
  }

  /** Replaces the status of an existing object, as a write to /status does. Throws a NotFound KubeError when absent. */
  setStatus(
    resource: string,
    namespace: string | undefined,
    name: string,
    status: unknown,
    options: DirectWriteOptions = {},
  ): StoredObject {
    const scope = this.registry.named(resource).statusSubresource ? "status" : "all";
    const target = this.target(resource, namespace, scope, options.manager);
    const existing = this.operations.get(target, name);
    return clone(this.operations.replace(target, name, { ...clone(existing), status }));
  }

  /**
   * Deletes as the API does (finalizers keep it, marked with deletionTimestamp). Returns its resulting
   * state, or undefined when absent.
   */
  delete(resource: string, namespace: string | undefined, name: string): StoredObject | undefined {
    const target = this.target(resource, namespace, "main");
    try {
      return clone(this.operations.delete(target, name));
    } catch (err) {
      if (err instanceof KubeError && err.reason === "NotFound") return undefined;
      throw err;
    }
  }

  /** The current global resourceVersion. */
  resourceVersion(): string {
    return this.store.resourceVersion();
  }

  /** Forgets the watch history, as an etcd compaction does: a watch resuming from before now gets 410 Gone. */
  compactWatchHistory(): void {
    this.store.compact();
  }

  /**
   * Ends every open watch stream and returns how many there were. "end" (the default) closes them
   * cleanly, and client-node's informer reconnects from its last resourceVersion by itself; "reset"
   * destroys the connections, and the informer emits "error" and stops until its owner restarts it.
   */
  dropWatches(mode: DropMode = "end"): number {
    return this.http.dropWatches(mode);
  }

  /** The watch streams open now. */
  openWatches(): WatchInfo[] {
    return this.http.openWatches();
  }

  /** Makes the next matching requests fail with 500 (default), 503, or 429 with Retry-After. */
  failNext(fault: Fault = {}): void {
    this.faults.failNext(fault);
  }

  /** Disarms the faults not yet consumed. */
  clearFaults(): void {
    this.faults.clear();
  }

  /** How many injected failures are still to come. */
  pendingFaults(): number {
    return this.faults.pending();
  }

  /** The requests received, oldest first; with a filter, only those it matches (as failNext matches them). */
  requests(filter: RequestFilter = {}): RequestRecord[] {
    return this.faults.requests().filter((r) => matchesFilter(filter, r));
  }

  /** Empties the request log. */
  clearRequests(): void {
    this.faults.clearRequests();
  }

  /** Ends every watch and connection and stops listening. */
  async close(): Promise<void> {
    await this.http.close();
  }
}
