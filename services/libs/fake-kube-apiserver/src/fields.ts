// Field ownership (metadata.managedFields): which manager set which field, so that server-side apply
// can report conflicts and remove the fields an applier stopped sending.
//
// Simplification, documented in the README: a field is a leaf of the JSON tree (a scalar, a list or an
// empty map). Lists are atomic, as `x-kubernetes-list-type: atomic` is: one manager owns a whole list.
import { isDeepStrictEqual } from "node:util";
import { isPlainObject, type KubeObject, type ManagedFieldsEntry, type ObjectMeta } from "./object.js";
import { KubeError } from "./status.js";

/** A field's path from the object root, e.g. ["spec", "rules"]. */
export type FieldPath = readonly string[];

/**
 * The part of an object a write touches: the main resource (without status when the type has a status
 * subresource), only status (the /status subresource), or all of it (a test's direct write).
 */
export type FieldScope = "main" | "status" | "all";

/** Who writes: the field manager, and how (Apply for server-side apply, Update for everything else). */
export interface Writer {
  manager: string;
  operation: "Apply" | "Update";
  /** "status" for writes through /status. */
  subresource?: string;
  /** The apiVersion the request used, recorded in the entry. */
  apiVersion: string;
}

/** A field another manager owns with a different value than the applier sends. */
export interface FieldConflict {
  manager: string;
  path: FieldPath;
}

/** Metadata the server owns; nobody manages these fields. */
const serverMetadata = new Set([
  "name",
  "namespace",
  "generateName",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
]);

/** The metadata a client may set and own: everything but the server's fields. */
export function userMetadata(metadata: ObjectMeta): ObjectMeta {
  return Object.fromEntries(Object.entries(metadata).filter(([field]) => !serverMetadata.has(field)));
}

/** Whether a top-level field belongs to the scope of a write. */
export function inScope(field: string, scope: FieldScope, statusSubresource: boolean): boolean {
  if (scope === "all") return true;
  if (field === "status" && statusSubresource) return scope === "status";
  return scope === "main";
}

function collectLeaves(value: unknown, path: string[], out: FieldPath[]): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) collectLeaves(v, [...path, k], out);
  } else {
    out.push(path);
  }
}

/** The managed fields of an object within a scope: its leaves, minus apiVersion, kind and server metadata. */
export function leafPaths(object: KubeObject | undefined, scope: FieldScope, statusSubresource: boolean): FieldPath[] {
  const out: FieldPath[] = [];
  if (!object) return out;
  for (const [field, value] of Object.entries(object)) {
    if (field === "apiVersion" || field === "kind" || !inScope(field, scope, statusSubresource)) continue;
    if (field === "metadata" && isPlainObject(value)) {
      for (const [m, v] of Object.entries(value)) {
        if (!serverMetadata.has(m)) collectLeaves(v, ["metadata", m], out);
      }
    } else {
      collectLeaves(value, [field], out);
    }
  }
  return out;
}

/** The value at a path, or undefined. */
export function valueAt(object: unknown, path: FieldPath): unknown {
  let current = object;
  for (const segment of path) {
    if (!isPlainObject(current)) return undefined;
    current = current[segment];
  }
  return current;
}

/** Removes the field at a path, and the maps it leaves empty below the top level. */
export function deletePath(object: Record<string, unknown>, path: FieldPath): void {
  const parents: Record<string, unknown>[] = [];
  let current: unknown = object;
  for (const segment of path.slice(0, -1)) {
    if (!isPlainObject(current)) return;
    parents.push(current);
    current = current[segment];
  }
  if (!isPlainObject(current)) return;
  delete current[path[path.length - 1]!];
  parents.push(current);
  for (let i = parents.length - 1; i >= 2; i--) {
    if (Object.keys(parents[i]!).length === 0) delete parents[i - 1]![path[i - 1]!];
  }
}

/** One path is the other or contains it: owning either means having a say over the other. */
function overlaps(a: FieldPath, b: FieldPath): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

const keyOf = (path: FieldPath): string => JSON.stringify(path);

/** fieldsV1 in the server's nested form: {"f:spec":{"f:rules":{}}}. */
export function toFieldsV1(paths: Iterable<FieldPath>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of paths) {
    let node = root;
    for (const segment of path) {
      const k = `f:${segment}`;
      node[k] ??= {};
      node = node[k] as Record<string, unknown>;
    }
  }
  return root;
}

/** The leaf paths of a nested fieldsV1 (keys other than `f:` ones, which the fake never writes, are skipped). */
export function fromFieldsV1(fields: unknown, prefix: string[] = []): FieldPath[] {
  if (!isPlainObject(fields)) return [];
  const out: FieldPath[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (!k.startsWith("f:")) continue;
    const path = [...prefix, k.slice(2)];
    if (isPlainObject(v) && Object.keys(v).some((c) => c.startsWith("f:"))) out.push(...fromFieldsV1(v, path));
    else out.push(path);
  }
  return out;
}

interface Ownership {
  writer: Omit<Writer, "apiVersion"> & { apiVersion: string };
  time: string;
  paths: Map<string, FieldPath>;
  changed: boolean;
}

function sameWriter(a: Omit<Writer, "apiVersion">, b: Omit<Writer, "apiVersion">): boolean {
  return a.manager === b.manager && a.operation === b.operation && (a.subresource ?? "") === (b.subresource ?? "");
}

function readOwnership(entries: ManagedFieldsEntry[] | undefined): Ownership[] {
  return (entries ?? []).map((e) => ({
    writer: {
      manager: e.manager,
      operation: e.operation,
      apiVersion: e.apiVersion,
      ...(e.subresource ? { subresource: e.subresource } : {}),
    },
    time: e.time,
    paths: new Map(fromFieldsV1(e.fieldsV1).map((p) => [keyOf(p), p])),
    changed: false,
  }));
}

function entryFor(owners: Ownership[], writer: Writer, now: string): Ownership {
  let own = owners.find((o) => sameWriter(o.writer, writer));
  if (!own) {
    own = { writer: { ...writer }, time: now, paths: new Map(), changed: true };
    owners.push(own);
  }
  own.writer.apiVersion = writer.apiVersion;
  return own;
}

function removeOverlapping(own: Ownership, paths: FieldPath[]): void {
  for (const [k, p] of own.paths) {
    if (paths.some((q) => overlaps(p, q))) {
      own.paths.delete(k);
      own.changed = true;
    }
  }
}

/**
 * The entries after a write: every owned path that is no longer a leaf of the object is dropped, entries
 * left empty disappear, and an entry's time moves only when its fields changed.
 */
function writeOwnership(owners: Ownership[], after: KubeObject, now: string): ManagedFieldsEntry[] {
  const present = new Set(leafPaths(after, "all", false).map(keyOf));
  const out: ManagedFieldsEntry[] = [];
  for (const own of owners) {
    for (const k of own.paths.keys()) {
      if (!present.has(k)) {
        own.paths.delete(k);
        own.changed = true;
      }
    }
    if (own.paths.size === 0) continue;
    out.push({
      manager: own.writer.manager,
      operation: own.writer.operation,
      apiVersion: own.writer.apiVersion,
      time: own.changed ? now : own.time,
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(own.paths.values()),
      ...(own.writer.subresource ? { subresource: own.writer.subresource } : {}),
    });
  }
  return out;
}

/**
 * Ownership after a create, update or non-apply patch: the writer takes over every field whose value it
 * changed (other managers lose them, as with the real server's Update operations); nothing conflicts.
 */
export function trackUpdate(
  before: KubeObject | undefined,
  after: KubeObject,
  writer: Writer,
  scope: FieldScope,
  statusSubresource: boolean,
  now: string,
): ManagedFieldsEntry[] {
  const owners = readOwnership(before?.metadata.managedFields);
  const changed = leafPaths(after, scope, statusSubresource).filter(
    (p) => !isDeepStrictEqual(valueAt(before, p), valueAt(after, p)),
  );
  if (changed.length > 0) {
    for (const own of owners) if (!sameWriter(own.writer, writer)) removeOverlapping(own, changed);
    const mine = entryFor(owners, writer, now);
    for (const p of changed) {
      if (!mine.paths.has(keyOf(p))) mine.changed = true;
      mine.paths.set(keyOf(p), p);
    }
  }
  return writeOwnership(owners, after, now);
}

/** What a server-side apply does to ownership, before the merged object is built. */
export interface ApplyPlan {
  /** Fields the applier owned before and no longer sends, that no other manager owns: to be removed. */
  remove: FieldPath[];
  /** Finishes the plan against the merged object and returns its managedFields. */
  entries(merged: KubeObject): ManagedFieldsEntry[];
}

/**
 * Plans a server-side apply of `config` onto `live` by `writer`. Without force, fields another manager
 * owns with a different value are a 409 Conflict listing them; with force the applier takes them over.
 * Fields set to the same value become shared.
 */
export function planApply(
  live: KubeObject,
  config: KubeObject,
  writer: Writer,
  force: boolean,
  scope: FieldScope,
  statusSubresource: boolean,
  now: string,
): ApplyPlan {
  const owners = readOwnership(live.metadata.managedFields);
  const sent = leafPaths(config, scope, statusSubresource);
  const others = owners.filter((o) => o.writer.manager !== writer.manager);

  const conflicts: FieldConflict[] = [];
  for (const own of others) {
    for (const q of sent) {
      if (isDeepStrictEqual(valueAt(live, q), valueAt(config, q))) continue;
      if ([...own.paths.values()].some((p) => overlaps(p, q))) conflicts.push({ manager: own.writer.manager, path: q });
    }
  }
  if (conflicts.length > 0 && !force) throw conflictError(conflicts, writer.apiVersion);
  for (const own of others) {
    removeOverlapping(
      own,
      conflicts.filter((c) => c.manager === own.writer.manager).map((c) => c.path),
    );
  }

  const mine = entryFor(owners, writer, now);
  const remove = [...mine.paths.values()].filter(
    (p) =>
      !sent.some((q) => overlaps(p, q)) &&
      !owners.some((o) => o !== mine && [...o.paths.values()].some((other) => overlaps(other, p))),
  );
  const before = new Set(mine.paths.keys());
  mine.paths = new Map(sent.map((p) => [keyOf(p), p]));
  if (before.size !== mine.paths.size || [...mine.paths.keys()].some((k) => !before.has(k))) mine.changed = true;

  return { remove, entries: (merged) => writeOwnership(owners, merged, now) };
}

function conflictError(conflicts: FieldConflict[], apiVersion: string): KubeError {
  const field = (p: FieldPath) => `.${p.join(".")}`;
  const lines = conflicts.map((c) => `conflict with "${c.manager}" using ${apiVersion}: ${field(c.path)}`);
  const message =
    conflicts.length === 1
      ? `Apply failed with 1 conflict: ${lines[0]}`
      : `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
  return new KubeError("Conflict", message, {
    causes: conflicts.map((c) => ({
      type: "FieldManagerConflict",
      message: `conflict with "${c.manager}" using ${apiVersion}`,
      field: field(c.path),
    })),
  });
}
