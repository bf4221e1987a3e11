// The objects, the one global resourceVersion counter, the window of past events that watches resume
// from, the fan-out to open watches, deletion with finalizers, and owner-reference garbage collection.
import {
  isPlainObject,
  objectKey,
  timestamp,
  type KubeObject,
  type OwnerReference,
  type StoredObject,
} from "./object.js";
import { resourceName, type ResourceRegistry, type ResourceType } from "./resources.js";
import type { Selector } from "./selectors.js";
import { KubeError } from "./status.js";

/** The event types of a watch stream (ERROR and BOOKMARK are the HTTP layer's). */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

interface StoredEvent {
  resourceVersion: number;
  resource: string;
  type: WatchEventType;
  object: StoredObject;
  /** The state before a MODIFIED, to tell when an object enters or leaves a selector. */
  previous?: StoredObject;
}

/** What a watch asks for: one resource type, optionally one namespace, a selector, and where to start. */
export interface WatchRequest {
  type: ResourceType;
  namespace?: string;
  selector: Selector;
  /** "" or "0": the current objects as ADDED first; a number: the events after it. */
  resourceVersion: string;
}

/** Receives the events of one watch. */
export type WatchSink = (type: WatchEventType, object: StoredObject) => void;

interface Watcher extends WatchRequest {
  sink: WatchSink;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * The fake's storage. Stored objects are frozen: every write replaces an object, so the objects held by
 * the event window and by watches never change under them.
 */
export class ObjectStore {
  private revision = 0;
  private readonly collections = new Map<string, Map<string, StoredObject>>();
  private events: StoredEvent[] = [];
  /** Watches may resume from this resourceVersion or later; earlier ones get 410 Gone. */
  private oldestResumable = 0;
  private readonly watchers = new Set<Watcher>();
  private gcScheduled = false;

  /**
   * @param registry the served types
   * @param history how many past events are kept for watches to resume from
   */
  constructor(
    readonly registry: ResourceRegistry,
    private readonly history: number,
  ) {}

  /** The current value of the global resourceVersion counter. */
  resourceVersion(): string {
    return String(this.revision);
  }

  private collection(type: ResourceType): Map<string, StoredObject> {
    const name = resourceName(type);
    let objects = this.collections.get(name);
    if (!objects) {
      objects = new Map();
      this.collections.set(name, objects);
    }
    return objects;
  }

  /** One object, or undefined. The result is frozen. */
  get(type: ResourceType, namespace: string | undefined, name: string): StoredObject | undefined {
    return this.collection(type).get(objectKey(type.namespaced ? namespace : undefined, name));
  }

  /** The objects of a type, in one namespace or all, ordered by namespace and name. The results are frozen. */
  list(type: ResourceType, namespace?: string): StoredObject[] {
    const all = [...this.collection(type).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return all.map(([, o]) => o).filter((o) => !namespace || o.metadata.namespace === namespace);
  }

  /**
   * Stores the new state of an object under a fresh resourceVersion and tells the watches. An object
   * that is being deleted and has no finalizers left is removed right after.
   */
  write(type: ResourceType, next: KubeObject): StoredObject {
    const meta = next.metadata;
    if (!meta.name || !meta.uid || !meta.creationTimestamp)
      throw new Error("write needs name, uid and creationTimestamp");
    const key = objectKey(type.namespaced ? meta.namespace : undefined, meta.name);
    const objects = this.collection(type);
    const previous = objects.get(key);
    const stored = deepFreeze({
      ...next,
      metadata: { ...meta, resourceVersion: String(++this.revision) },
    }) as StoredObject;
    objects.set(key, stored);
    this.publish({
      resourceVersion: this.revision,
      resource: resourceName(type),
      type: previous ? "MODIFIED" : "ADDED",
      object: stored,
      ...(previous ? { previous } : {}),
    });
    if (stored.metadata.ownerReferences?.length) this.scheduleGarbageCollection();
    if (stored.metadata.deletionTimestamp && !stored.metadata.finalizers?.length) return this.remove(type, stored);
    return stored;
  }

  /**
   * Deletes an object as the API server does: with finalizers it only gets a deletionTimestamp (and a
   * generation bump) and stays until they are gone; without, it is removed. Returns its resulting state.
   */
  delete(type: ResourceType, object: StoredObject): StoredObject {
    if (!object.metadata.finalizers?.length) return this.remove(type, object);
    if (object.metadata.deletionTimestamp) return object;
    return this.write(type, {
      ...object,
      metadata: {
        ...object.metadata,
        deletionTimestamp: timestamp(),
        deletionGracePeriodSeconds: 0,
        ...(object.metadata.generation !== undefined ? { generation: object.metadata.generation + 1 } : {}),
      },
    });
  }

  private remove(type: ResourceType, object: StoredObject): StoredObject {
    const meta = object.metadata;
    this.collection(type).delete(objectKey(type.namespaced ? meta.namespace : undefined, meta.name));
    // The DELETED event carries the deletion's own resourceVersion, so a watch resumes after it.
    const gone = deepFreeze({ ...object, metadata: { ...meta, resourceVersion: String(++this.revision) } });
    this.publish({ resourceVersion: this.revision, resource: resourceName(type), type: "DELETED", object: gone });
    this.scheduleGarbageCollection();
    return gone;
  }

  private publish(event: StoredEvent): void {
    this.events.push(event);
    while (this.events.length > this.history) {
      this.oldestResumable = this.events.shift()!.resourceVersion;
    }
    for (const watcher of this.watchers) {
      if (resourceName(watcher.type) === event.resource) deliver(watcher, event);
    }
  }

  /**
   * Opens a watch: replays what it missed (or the current objects as ADDED), then follows. Throws an
   * Expired error (410) when its resourceVersion is older than the kept window. Returns the unsubscribe.
   */
  watch(request: WatchRequest, sink: WatchSink): () => void {
    const watcher: Watcher = { ...request, sink };
    const from = request.resourceVersion;
    if (from === "" || from === "0") {
      for (const object of this.list(request.type, request.namespace)) {
        if (request.selector(object)) sink("ADDED", object);
      }
    } else {
      const after = Number(from);
      if (!Number.isSafeInteger(after) || after < 0) {
        throw new KubeError("BadRequest", `invalid resourceVersion ${JSON.stringify(from)}`);
      }
      if (after < this.oldestResumable) {
        throw new KubeError("Expired", `too old resource version: ${after} (${this.oldestResumable})`);
      }
      const name = resourceName(request.type);
      for (const event of this.events) {
        if (event.resourceVersion > after && event.resource === name) deliver(watcher, event);
      }
    }
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Forgets every past event, as an etcd compaction does: watches resuming from before now get 410 Gone. */
  compact(): void {
    this.events = [];
    this.oldestResumable = this.revision;
  }

  private scheduleGarbageCollection(): void {
    if (this.gcScheduled) return;
    this.gcScheduled = true;
    setImmediate(() => {
      this.gcScheduled = false;
      this.collectGarbage();
    });
  }

  /**
   * One pass of the garbage collector (background propagation): an object none of whose owners exists
   * any more is deleted; one that lost some owners has those references removed. An owner counts as
   * gone when no object of its kind has its name and uid. References to kinds the fake does not serve
   * are left alone, as the real collector cannot resolve them either. Deletions schedule the next pass,
   * so chains of owners cascade.
   */
  private collectGarbage(): void {
    for (const type of this.registry.all()) {
      for (const object of this.list(type)) {
        const refs = object.metadata.ownerReferences ?? [];
        if (refs.length === 0 || object.metadata.deletionTimestamp) continue;
        const gone = refs.filter((ref) => this.ownerGone(type, object, ref));
        if (gone.length === 0) continue;
        if (gone.length === refs.length) {
          this.delete(type, object);
        } else {
          const ownerReferences = refs.filter((ref) => !gone.includes(ref));
          this.write(type, { ...object, metadata: { ...object.metadata, ownerReferences } });
        }
      }
    }
  }

  private ownerGone(dependentType: ResourceType, dependent: StoredObject, ref: OwnerReference): boolean {
    if (!isPlainObject(ref) || typeof ref.apiVersion !== "string" || typeof ref.kind !== "string") return false;
    const ownerType = this.registry.forKind(ref.apiVersion, ref.kind);
    if (!ownerType || (ownerType.namespaced && !dependentType.namespaced)) return false;
    const owner = this.get(ownerType, dependent.metadata.namespace, ref.name);
    return owner?.metadata.uid !== ref.uid;
  }
}

/** Sends an event to a watch; a MODIFIED becomes ADDED or DELETED when the object enters or leaves its view. */
function deliver(watcher: Watcher, event: StoredEvent): void {
  const inView = (o: StoredObject | undefined): boolean =>
    o !== undefined && (!watcher.namespace || o.metadata.namespace === watcher.namespace) && watcher.selector(o);
  const now = inView(event.object);
  if (event.type !== "MODIFIED") {
    if (now) watcher.sink(event.type, event.object);
    return;
  }
  const before = inView(event.previous);
  if (before && now) watcher.sink("MODIFIED", event.object);
  else if (now) watcher.sink("ADDED", event.object);
  else if (before) watcher.sink("DELETED", event.object);
}
