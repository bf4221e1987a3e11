// Kubernetes Events on CustomDomains, so `kubectl describe customdomain` tells the story. The CR is
// cluster-scoped, so its events live in the operator's namespace (involvedObject names the CR). A
// repeat of the same event (same CR, type, reason and message) bumps the earlier one's count and
// lastTimestamp instead of making another object, as client-go's recorder does.
import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { CoreV1Event } from "@kubernetes/client-node";
import type { Logger } from "@qrplatform/platform";
import { COMPONENT, type CustomDomain } from "../custom-domain.js";
import { statusOf, type KubeApi } from "./client.js";

export interface EventToRecord {
  eventType: "Normal" | "Warning";
  reason: string;
  message: string;
}

/** The longest message the API server keeps in an event. */
const MAX_MESSAGE = 1024;

export class EventRecorder {
  /** Recent events by what they say: their name and count, to aggregate repeats. */
  private readonly recent = new LRUCache<string, { name: string; count: number }>({ max: 4096 });

  constructor(
    private readonly api: KubeApi,
    /** This replica (POD_NAME), as reportingInstance. */
    private readonly instance: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Records an event. Events are the story, not the state: one that cannot be written is logged and
   * the reconcile goes on (the conditions hold the state).
   */
  async record(cr: CustomDomain, event: EventToRecord): Promise<void> {
    const message = event.message.length > MAX_MESSAGE ? `${event.message.slice(0, MAX_MESSAGE - 1)}…` : event.message;
    const key = [cr.metadata.uid, event.eventType, event.reason, message].join("\u0000");
    const now = new Date();
    try {
      const seen = this.recent.get(key);
      if (seen) {
        try {
          await this.api.patchEvent(seen.name, { count: seen.count + 1, lastTimestamp: now.toISOString() });
          seen.count += 1;
          return;
        } catch (error) {
          // Expired (events live an hour) or removed: write a new one.
          if (statusOf(error) !== 404) throw error;
        }
      }
      const name = eventName(cr.metadata.name);
      await this.api.createEvent(this.eventFor(cr, name, event.eventType, event.reason, message, now));
      this.recent.set(key, { name, count: 1 });
    } catch (error) {
      this.logger.warn(
        { err: error, customDomain: cr.metadata.name, reason: event.reason },
        "could not record an event",
      );
    }
  }

  private eventFor(
    cr: CustomDomain,
    name: string,
    type: string,
    reason: string,
    message: string,
    now: Date,
  ): CoreV1Event {
    return {
      metadata: { name, namespace: this.api.namespace },
      involvedObject: {
        apiVersion: cr.apiVersion,
        kind: cr.kind,
        name: cr.metadata.name,
        uid: cr.metadata.uid,
        resourceVersion: cr.metadata.resourceVersion,
      },
      type,
      reason,
      message,
      source: { component: COMPONENT },
      reportingComponent: COMPONENT,
      reportingInstance: this.instance,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }
}

/** `<cr name>.<random>`, as kubectl's events are named; a name too long for that gets a fixed prefix. */
function eventName(crName: string): string {
  const suffix = randomBytes(8).toString("hex");
  return crName.length + 1 + suffix.length <= 253 ? `${crName}.${suffix}` : `customdomain.${suffix}`;
}
