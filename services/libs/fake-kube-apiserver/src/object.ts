// The plain-JSON view of a Kubernetes object that the fake stores, and the small helpers every layer uses.

/** metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** metav1.ManagedFieldsEntry, with fieldsV1 in the server's nested `f:` form. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/** metav1.ObjectMeta, as far as the fake gives it meaning; other fields are stored as sent. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: ManagedFieldsEntry[];
  [field: string]: unknown;
}

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** A stored object: the server has filled in identity and versioning. */
export interface StoredObject extends KubeObject {
  metadata: ObjectMeta & { name: string; uid: string; resourceVersion: string; creationTimestamp: string };
}

/** A deep copy; stored objects are never handed out or mutated in place. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Now, as the RFC 3339 seconds timestamp Kubernetes writes into metadata. */
export function timestamp(at: Date = new Date()): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A plain JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The key of an object within its collection: "namespace/name", or "/name" when cluster-scoped. */
export function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}
