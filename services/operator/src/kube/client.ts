// Every request the operator makes to the Kubernetes API, on @kubernetes/client-node: the resources it
// reads and writes, server-side apply under its one field manager, merge patches, deletes with a uid
// precondition, the Secret it reads, events and the lease. Objects travel as plain JSON.
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type V1Lease,
} from "@kubernetes/client-node";
import {
  FIELD_MANAGER,
  GROUP,
  KIND,
  PLURAL,
  VERSION,
  type CustomDomain,
  type CustomDomainStatus,
} from "../custom-domain.js";
import type { KubeObject, Secret } from "./objects.js";

/** A resource the operator lists and watches, reached through its group's REST paths. */
export interface Resource {
  group: string;
  version: string;
  plural: string;
  kind: string;
  /** Whether its objects live in the operator's namespace (else cluster-scoped). */
  namespaced: boolean;
}

export const CUSTOM_DOMAINS: Resource = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL,
  kind: KIND,
  namespaced: false,
};
export const INGRESSES: Resource = {
  group: "networking.k8s.io",
  version: "v1",
  plural: "ingresses",
  kind: "Ingress",
  namespaced: true,
};
export const HTTP_ROUTES: Resource = {
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "httproutes",
  kind: "HTTPRoute",
  namespaced: true,
};
export const CERTIFICATES: Resource = {
  group: "cert-manager.io",
  version: "v1",
  plural: "certificates",
  kind: "Certificate",
  namespaced: true,
};

/** A list as the API server answers it. */
export interface ObjectList<T extends KubeObject = KubeObject> {
  metadata?: { resourceVersion?: string };
  items: T[];
}

/** The HTTP status of a failed Kubernetes request, if it got that far. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/**
 * The kubeconfig the operator runs with: the file KUBECONFIG names (tests, running outside the
 * cluster), else the pod's service account.
 */
export function loadKubeConfig(kubeconfigPath: string | undefined): KubeConfig {
  const config = new KubeConfig();
  if (kubeconfigPath) config.loadFromFile(kubeconfigPath);
  else config.loadFromCluster();
  return config;
}

const mergePatch = () => setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const applyPatch = () => setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply);

export class KubeApi {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;

  /** @param namespace OPERATOR_NAMESPACE: where children, events and the lease live. */
  constructor(
    readonly config: KubeConfig,
    readonly namespace: string,
  ) {
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.core = config.makeApiClient(CoreV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
  }

  /** The collection's path, which informers watch. */
  path(resource: Resource): string {
    const base = `/apis/${resource.group}/${resource.version}`;
    return resource.namespaced
      ? `${base}/namespaces/${this.namespace}/${resource.plural}`
      : `${base}/${resource.plural}`;
  }

  async list<T extends KubeObject>(resource: Resource): Promise<ObjectList<T>> {
    const { group, version, plural } = resource;
    const list = (
      resource.namespaced
        ? await this.custom.listNamespacedCustomObject({ group, version, plural, namespace: this.namespace })
        : await this.custom.listClusterCustomObject({ group, version, plural })
    ) as ObjectList<T>;
    // Items of a list may leave out their kind; every object the operator holds carries it.
    const apiVersion = `${group}/${version}`;
    return { ...list, items: list.items.map((item) => ({ ...item, apiVersion, kind: resource.kind })) };
  }

  /** Creates a cluster-scoped object; 409 when it exists already. */
  async createClusterScoped<T extends KubeObject>(resource: Resource, object: T): Promise<T> {
    const { group, version, plural } = resource;
    return (await this.custom.createClusterCustomObject({
      group,
      version,
      plural,
      body: object,
      fieldManager: FIELD_MANAGER,
    })) as T;
  }

  /** Server-side apply as the operator's field manager, taking over fields others set (force). */
  async apply<T extends KubeObject>(resource: Resource, object: T): Promise<T> {
    const { group, version, plural } = resource;
    const common = {
      group,
      version,
      plural,
      name: object.metadata.name,
      body: object,
      fieldManager: FIELD_MANAGER,
      force: true,
    };
    return (
      resource.namespaced
        ? await this.custom.patchNamespacedCustomObject({ ...common, namespace: this.namespace }, applyPatch())
        : await this.custom.patchClusterCustomObject(common, applyPatch())
    ) as T;
  }

  /**
   * Deletes an object if it is still the one with this uid (so a foreign object that took its name is
   * never deleted). One already gone, or replaced, counts as deleted.
   */
  async delete(resource: Resource, name: string, uid: string | undefined): Promise<void> {
    const { group, version, plural } = resource;
    const common = {
      group,
      version,
      plural,
      name,
      body: { preconditions: uid ? { uid } : {}, propagationPolicy: "Background" },
    };
    try {
      if (resource.namespaced) await this.custom.deleteNamespacedCustomObject({ ...common, namespace: this.namespace });
      else await this.custom.deleteClusterCustomObject(common);
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 409) return;
      throw error;
    }
  }

  /** A merge patch of a CustomDomain; with metadata.resourceVersion in it, 409 when someone wrote first. */
  async patchCustomDomain(name: string, patch: unknown): Promise<CustomDomain> {
    return (await this.custom.patchClusterCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, name, body: patch, fieldManager: FIELD_MANAGER },
      mergePatch(),
    )) as CustomDomain;
  }

  /** A merge patch of a CustomDomain's status subresource. */
  async patchStatus(name: string, status: Record<string, unknown> | CustomDomainStatus): Promise<CustomDomain> {
    return (await this.custom.patchClusterCustomObjectStatus(
      { group: GROUP, version: VERSION, plural: PLURAL, name, body: { status }, fieldManager: FIELD_MANAGER },
      mergePatch(),
    )) as CustomDomain;
  }

  /** The Secret with this name in the operator's namespace, if it exists. */
  async readSecret(name: string): Promise<Secret | undefined> {
    try {
      const secret = await this.core.readNamespacedSecret({ name, namespace: this.namespace });
      // Only the metadata matters; the key pair never leaves this function.
      return {
        kind: "Secret",
        metadata: { name, annotations: secret.metadata?.annotations ?? {}, uid: secret.metadata?.uid },
      };
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  createEvent(event: CoreV1Event): Promise<CoreV1Event> {
    return this.core.createNamespacedEvent({ namespace: this.namespace, body: event, fieldManager: FIELD_MANAGER });
  }

  patchEvent(name: string, patch: unknown): Promise<CoreV1Event> {
    return this.core.patchNamespacedEvent(
      { name, namespace: this.namespace, body: patch, fieldManager: FIELD_MANAGER },
      mergePatch(),
    );
  }

  async readLease(name: string): Promise<V1Lease | undefined> {
    try {
      return await this.coordination.readNamespacedLease({ name, namespace: this.namespace });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  createLease(lease: V1Lease): Promise<V1Lease> {
    return this.coordination.createNamespacedLease({
      namespace: this.namespace,
      body: lease,
      fieldManager: FIELD_MANAGER,
    });
  }

  /** Replaces the lease; its metadata.resourceVersion makes a concurrent write a 409. */
  replaceLease(lease: V1Lease): Promise<V1Lease> {
    return this.coordination.replaceNamespacedLease({
      name: lease.metadata!.name!,
      namespace: this.namespace,
      body: lease,
      fieldManager: FIELD_MANAGER,
    });
  }
}
