// The parts of Kubernetes objects the operator reads, as they arrive in JSON (timestamps are strings),
// and the ownership rule: an object is ours only through a controller ownerReference to the CR's uid.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** A condition as cert-manager and Gateway API write them. */
export interface ObservedCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Ingress extends KubeObject {
  spec?: { rules?: { host?: string }[]; tls?: { hosts?: string[]; secretName?: string }[] };
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
}

export interface HTTPRoute extends KubeObject {
  spec?: { hostnames?: string[] };
  status?: { parents?: { parentRef?: { name?: string; namespace?: string }; conditions?: ObservedCondition[] }[] };
}

export type Route = Ingress | HTTPRoute;

export interface Certificate extends KubeObject {
  spec?: { secretName?: string; dnsNames?: string[] };
  status?: { conditions?: ObservedCondition[]; notAfter?: string };
}

export interface Secret extends KubeObject {
  type?: string;
}

/** The controller ownerReference of an object, if it has one. */
export function controllerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((reference) => reference.controller === true);
}

/** Whether `object` is controlled by the object with this uid. */
export function isControlledBy(object: KubeObject, ownerUid: string | undefined): boolean {
  return ownerUid !== undefined && controllerOf(object)?.uid === ownerUid;
}

/** The hostnames a route serves (its rules' hosts, an HTTPRoute's hostnames) or a Certificate is for. */
export function hostsOf(object: KubeObject): string[] {
  const spec = (object as { spec?: { rules?: { host?: string }[]; hostnames?: string[]; dnsNames?: string[] } }).spec;
  const hosts = [
    ...(spec?.rules ?? []).map((rule) => rule.host),
    ...(spec?.hostnames ?? []),
    ...(spec?.dnsNames ?? []),
  ];
  return [...new Set(hosts.filter((host): host is string => typeof host === "string" && host !== ""))];
}

/** The key of an object in a map of one resource: namespace/name, or the name of a cluster-scoped one. */
export function objectKey(object: KubeObject): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
}
