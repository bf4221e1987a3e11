// The verbs (get, list, create, update, patch, apply, delete) with the API server's rules: names,
// preconditions, the status subresource, generation, finalizers and field ownership. The HTTP layer and
// a test's direct writes both come through here, so both emit the same watch events.
import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { deletePath, inScope, planApply, trackUpdate, userMetadata, type FieldScope, type Writer } from "./fields.js";
import {
  clone,
  isPlainObject,
  timestamp,
  type KubeObject,
  type ManagedFieldsEntry,
  type StoredObject,
} from "./object.js";
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  mergeApplyConfiguration,
  parseApplyConfiguration,
  patchTypes,
} from "./patch.js";
import { apiVersionOf, resourceName, type ResourceType } from "./resources.js";
import type { Selector } from "./selectors.js";
import { KubeError } from "./status.js";
import type { ObjectStore } from "./store.js";

/** Who asks for what: the resource type, the version in the URL, the namespace and the subresource. */
export interface Target {
  type: ResourceType;
  /** The version the request used; written into managedFields entries. */
  version: string;
  /** The namespace from the URL (namespaced types only). */
  namespace?: string;
  /**
   * "main" for the resource itself, "status" for /status, "all" for a test's direct write, which may set
   * every field at once.
   */
  scope: FieldScope;
  /** The field manager of writes; the real server defaults it from the User-Agent. */
  fieldManager: string;
  /** dryRun=All: everything is checked and computed, nothing is stored. */
  dryRun?: boolean;
}

/** One page of a list. */
export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** The result of a PATCH: server-side apply creates missing objects (HTTP 201). */
export interface PatchResult {
  object: StoredObject;
  created: boolean;
}

const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Name rules: namespaces are RFC 1123 labels, everything else RFC 1123 subdomains. */
function validateName(type: ResourceType, name: string): void {
  const isNamespace = type.group === "" && type.plural === "namespaces";
  const [pattern, max, what] = isNamespace
    ? [label, 63, "a lowercase RFC 1123 label"]
    : [subdomain, 253, "a lowercase RFC 1123 subdomain"];
  if (name.length > max || !pattern.test(name)) {
    throw new KubeError(
      "Invalid",
      `${type.kind}.${type.group || "core"} ${JSON.stringify(name)} is invalid: metadata.name: Invalid value: ${JSON.stringify(name)}: ${what} must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (at most ${max} characters)`,
      {
        name,
        group: type.group,
        kind: type.kind,
        causes: [{ type: "FieldValueInvalid", message: `must be ${what}`, field: "metadata.name" }],
      },
    );
  }
}

function generatedName(prefix: string): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  let suffix = "";
  for (let i = 0; i < 5; i++) suffix += alphabet[Math.floor(Math.random() * alphabet.length)];
  return prefix + suffix;
}

/** What tells whether the desired state changed: all but metadata (and status, when it is a subresource). */
function desiredState(type: ResourceType, object: KubeObject): Record<string, unknown> {
  const { metadata: _metadata, apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  if (type.statusSubresource) delete rest.status;
  return rest;
}

function notFound(type: ResourceType, name: string): KubeError {
  return new KubeError("NotFound", `${resourceName(type)} ${JSON.stringify(name)} not found`, {
    name,
    group: type.group,
    kind: type.plural,
  });
}

function conflict(type: ResourceType, name: string): KubeError {
  return new KubeError(
    "Conflict",
    `Operation cannot be fulfilled on ${resourceName(type)} ${JSON.stringify(name)}: the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: type.group, kind: type.plural },
  );
}

/** The verbs of the API server over one store. */
export class Operations {
  constructor(private readonly store: ObjectStore) {}

  private writer(target: Target, operation: Writer["operation"]): Writer {
    return {
      manager: target.fieldManager,
      operation,
      apiVersion: apiVersionOf(target.type.group, target.version),
      ...(target.scope === "status" ? { subresource: "status" } : {}),
    };
  }

  /** GET of one object. */
  get(target: Target, name: string): StoredObject {
    const object = this.store.get(target.type, target.namespace, name);
    if (!object) throw notFound(target.type, name);
    return object;
  }

  /** GET of a collection, with selectors and limit/continue paging (continue tokens are opaque to clients). */
  list(target: Target, selector: Selector, limit?: number, continueToken?: string): ListResult {
    const resourceVersion = this.store.resourceVersion();
    let items = this.store.list(target.type, target.namespace).filter(selector);
    if (continueToken) {
      let after: string;
      try {
        after = String(JSON.parse(Buffer.from(continueToken, "base64url").toString("utf8")).after);
      } catch {
        throw new KubeError("BadRequest", "invalid continue token");
      }
      items = items.filter((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}` > after);
    }
    if (!limit || limit <= 0 || items.length <= limit) return { items, resourceVersion };
    const page = items.slice(0, limit);
    const last = page[page.length - 1]!;
    const token = Buffer.from(
      JSON.stringify({ after: `${last.metadata.namespace ?? ""}/${last.metadata.name}` }),
    ).toString("base64url");
    return { items: page, resourceVersion, continue: token, remainingItemCount: items.length - limit };
  }

  /** Checks apiVersion, kind and namespace of a request body against the URL, and fills them in. */
  private conform(target: Target, body: unknown, what: string): KubeObject {
    if (!isPlainObject(body)) throw new KubeError("BadRequest", `the ${what} must be a JSON object`);
    const object = clone(body) as KubeObject;
    if (!isPlainObject(object.metadata)) object.metadata = {};
    const { type } = target;
    if (object.kind !== undefined && object.kind !== type.kind) {
      throw new KubeError(
        "BadRequest",
        `the kind of the object (${String(object.kind)}) does not match the resource ${resourceName(type)} (${type.kind})`,
      );
    }
    if (object.apiVersion !== undefined) {
      const served = type.versions.map((v) => apiVersionOf(type.group, v));
      if (!served.includes(String(object.apiVersion))) {
        throw new KubeError(
          "BadRequest",
          `the apiVersion of the object (${String(object.apiVersion)}) is not served for ${resourceName(type)}: ${served.join(", ")}`,
        );
      }
    }
    object.apiVersion = apiVersionOf(type.group, type.versions[0]!);
    object.kind = type.kind;
    if (type.namespaced) {
      if (!target.namespace)
        throw new KubeError("BadRequest", `${resourceName(type)} is namespaced: the request must name a namespace`);
      if (object.metadata.namespace && object.metadata.namespace !== target.namespace) {
        throw new KubeError(
          "BadRequest",
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      }
      object.metadata.namespace = target.namespace;
    } else {
      delete object.metadata.namespace;
    }
    return object;
  }

  private checkName(object: KubeObject, name: string): void {
    if (object.metadata.name === undefined || object.metadata.name === "") {
      object.metadata.name = name;
    } else if (object.metadata.name !== name) {
      throw new KubeError(
        "BadRequest",
        `the name of the object (${object.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
  }

  /** POST: a new object; 409 AlreadyExists when the name is taken. Status is dropped when it is a subresource. */
  create(target: Target, body: unknown, operation: Writer["operation"] = "Update"): StoredObject {
    const object = this.conform(target, body, "object to create");
    const meta = object.metadata;
    if (!meta.name && typeof meta.generateName === "string" && meta.generateName !== "") {
      meta.name = generatedName(meta.generateName);
    }
    if (typeof meta.name !== "string" || meta.name === "") {
      throw new KubeError("Invalid", "metadata.name: Required value: name or generateName is required", {
        causes: [{ type: "FieldValueRequired", message: "name or generateName is required", field: "metadata.name" }],
      });
    }
    validateName(target.type, meta.name);
    if (this.store.get(target.type, target.namespace, meta.name)) {
      throw new KubeError("AlreadyExists", `${resourceName(target.type)} ${JSON.stringify(meta.name)} already exists`, {
        name: meta.name,
        group: target.type.group,
        kind: target.type.plural,
      });
    }
    for (const field of [
      "uid",
      "resourceVersion",
      "deletionTimestamp",
      "deletionGracePeriodSeconds",
      "selfLink",
      "managedFields",
    ]) {
      delete meta[field];
    }
    const now = timestamp();
    meta.uid = randomUUID();
    meta.creationTimestamp = now;
    meta.generation = 1;
    if (target.scope !== "all" && target.type.statusSubresource) delete object.status;
    meta.managedFields = trackUpdate(
      undefined,
      object,
      this.writer(target, operation),
      target.scope === "all" ? "all" : "main",
      target.type.statusSubresource,
      now,
    );
    if (target.dryRun) return object as StoredObject;
    return this.store.write(target.type, object);
  }

  /** PUT: replaces an object; 409 Conflict on a stale metadata.resourceVersion. */
  replace(target: Target, name: string, body: unknown): StoredObject {
    const object = this.conform(target, body, "object to update");
    this.checkName(object, name);
    const before = this.get(target, name);
    if (!object.metadata.resourceVersion) {
      if (!target.type.builtIn && target.scope !== "all") {
        throw new KubeError(
          "Invalid",
          `${target.type.kind} ${JSON.stringify(name)} is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`,
          {
            name,
            group: target.type.group,
            kind: target.type.kind,
            causes: [
              {
                type: "FieldValueInvalid",
                message: "must be specified for an update",
                field: "metadata.resourceVersion",
              },
            ],
          },
        );
      }
    }
    checkPrecondition(target.type, object, before);
    if (object.metadata.uid && object.metadata.uid !== before.metadata.uid) {
      throw new KubeError(
        "Conflict",
        `Precondition failed: UID in precondition: ${before.metadata.uid}, UID in object meta: ${object.metadata.uid}`,
      );
    }
    return this.commit(target, before, object, (after, now) =>
      trackUpdate(before, after, this.writer(target, "Update"), target.scope, target.type.statusSubresource, now),
    );
  }

  /** PATCH in any of the four content types. Server-side apply creates the object when it is missing. */
  patch(target: Target, name: string, contentType: string, body: string, force: boolean): PatchResult {
    if (contentType === patchTypes.apply) return this.apply(target, name, body, force);
    if (force) throw new KubeError("Invalid", "force: Invalid value: true: may not be specified for non-apply patch");
    const before = this.get(target, name);
    const base = clone(before) as KubeObject;
    let patched: KubeObject;
    switch (contentType) {
      case patchTypes.json:
        patched = applyJsonPatch(base, body);
        break;
      case patchTypes.merge:
        patched = applyMergePatch(base, body);
        break;
      case patchTypes.strategic:
        if (!target.type.builtIn) throw unsupportedPatch(target.type);
        patched = applyStrategicMergePatch(base, body);
        break;
      default:
        throw unsupportedPatch(target.type);
    }
    const object = this.conform(target, patched, "patched object");
    this.checkName(object, name);
    checkPrecondition(target.type, object, before);
    const stored = this.commit(target, before, object, (after, now) =>
      trackUpdate(before, after, this.writer(target, "Update"), target.scope, target.type.statusSubresource, now),
    );
    return { object: stored, created: false };
  }

  /** Server-side apply (application/apply-patch+yaml): merge, own, and 409 on others' fields unless forced. */
  private apply(target: Target, name: string, body: string, force: boolean): PatchResult {
    const config = parseApplyConfiguration(body);
    const { type } = target;
    const slash = config.apiVersion!.lastIndexOf("/");
    const group = slash < 0 ? "" : config.apiVersion!.slice(0, slash);
    if (group !== type.group || config.kind !== type.kind) {
      throw new KubeError(
        "BadRequest",
        `the apply configuration is a ${config.kind} of ${config.apiVersion}, not one of ${resourceName(type)}`,
      );
    }
    const object = this.conform(target, config, "apply configuration");
    this.checkName(object, name);
    const before = this.store.get(type, target.namespace, name);
    if (!before) {
      if (target.scope === "status") throw notFound(type, name);
      return { object: this.create(target, object, "Apply"), created: true };
    }
    checkPrecondition(type, object, before);
    // Only what the applier may manage is merged: the fields of its scope and metadata the server does not own.
    const applied: KubeObject = { metadata: target.scope === "status" ? {} : userMetadata(object.metadata) };
    for (const [field, value] of Object.entries(object)) {
      if (
        field !== "apiVersion" &&
        field !== "kind" &&
        field !== "metadata" &&
        inScope(field, target.scope, type.statusSubresource)
      ) {
        applied[field] = value;
      }
    }
    const now = timestamp();
    const plan = planApply(
      before,
      applied,
      this.writer(target, "Apply"),
      force,
      target.scope,
      type.statusSubresource,
      now,
    );
    const merged = mergeApplyConfiguration(before, applied);
    for (const path of plan.remove) deletePath(merged, path);
    const stored = this.commit(target, before, merged, (after) => plan.entries(after));
    return { object: stored, created: false };
  }

  /**
   * The common end of every update: the server's metadata is kept, the write is restricted to its scope,
   * no finalizer may be added while deleting, generation moves only when the desired state changed,
   * ownership is recorded, and a write that changes nothing stores nothing (no new resourceVersion).
   */
  private commit(
    target: Target,
    before: StoredObject,
    next: KubeObject,
    ownership: (after: KubeObject, now: string) => ManagedFieldsEntry[],
  ): StoredObject {
    const { type } = target;
    let after: KubeObject;
    if (target.scope === "status") {
      after = { ...(clone(before) as KubeObject), status: next.status };
      if (next.status === undefined) delete after.status;
    } else {
      after = next;
      if (target.scope === "main" && type.statusSubresource) {
        if (before.status === undefined) delete after.status;
        else after.status = clone(before.status);
      }
    }
    const kept = before.metadata;
    after.apiVersion = before.apiVersion;
    after.kind = before.kind;
    after.metadata = {
      ...after.metadata,
      name: kept.name,
      uid: kept.uid,
      resourceVersion: kept.resourceVersion,
      creationTimestamp: kept.creationTimestamp,
      ...(kept.namespace !== undefined ? { namespace: kept.namespace } : {}),
      ...(kept.generation !== undefined ? { generation: kept.generation } : {}),
    };
    delete after.metadata.deletionTimestamp;
    delete after.metadata.deletionGracePeriodSeconds;
    if (kept.deletionTimestamp !== undefined) {
      after.metadata.deletionTimestamp = kept.deletionTimestamp;
      after.metadata.deletionGracePeriodSeconds = kept.deletionGracePeriodSeconds ?? 0;
    }
    if (kept.deletionTimestamp) {
      const added = (after.metadata.finalizers ?? []).filter((f) => !(kept.finalizers ?? []).includes(f));
      if (added.length > 0) {
        throw new KubeError(
          "Invalid",
          `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
          {
            name: kept.name,
            group: type.group,
            kind: type.kind,
          },
        );
      }
    }
    if (after.metadata.finalizers?.length === 0) delete after.metadata.finalizers;
    if (!isDeepStrictEqual(desiredState(type, before), desiredState(type, after))) {
      after.metadata.generation = (kept.generation ?? 0) + 1;
    }
    const now = timestamp();
    after.metadata.managedFields = ownership(after, now);
    if (after.metadata.managedFields.length === 0) delete after.metadata.managedFields;
    if (isDeepStrictEqual(after, before)) return before;
    if (target.dryRun) return after as StoredObject;
    return this.store.write(type, after);
  }

  /** DELETE of one object: with finalizers it is marked (deletionTimestamp) and stays until they are removed. */
  delete(target: Target, name: string, options?: unknown): StoredObject {
    const before = this.get(target, name);
    const preconditions = isPlainObject(options) && isPlainObject(options.preconditions) ? options.preconditions : {};
    if (typeof preconditions.uid === "string" && preconditions.uid !== before.metadata.uid) {
      throw new KubeError(
        "Conflict",
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${before.metadata.uid}`,
      );
    }
    if (
      typeof preconditions.resourceVersion === "string" &&
      preconditions.resourceVersion !== before.metadata.resourceVersion
    ) {
      throw new KubeError(
        "Conflict",
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${before.metadata.resourceVersion}`,
      );
    }
    if (target.dryRun) return before;
    return this.store.delete(target.type, before);
  }

  /** DELETE of a collection: every selected object, as one delete each. */
  deleteCollection(target: Target, selector: Selector): StoredObject[] {
    const selected = this.store.list(target.type, target.namespace).filter(selector);
    return target.dryRun ? selected : selected.map((o) => this.store.delete(target.type, o));
  }
}

/** A metadata.resourceVersion in a write is a precondition: it must be the stored one (409 Conflict otherwise). */
function checkPrecondition(type: ResourceType, object: KubeObject, before: StoredObject): void {
  const sent = object.metadata.resourceVersion;
  if (sent && sent !== before.metadata.resourceVersion) throw conflict(type, before.metadata.name);
}

function unsupportedPatch(type: ResourceType): KubeError {
  const accepted: string[] = [patchTypes.json, patchTypes.merge, patchTypes.apply];
  if (type.builtIn) accepted.splice(2, 0, patchTypes.strategic);
  return new KubeError(
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
  );
}
