// The CR's metav1.Condition set: lastTransitionTime moves only when a condition's status flips, and a
// transition (a new condition, a flip, or a new reason) is what an event tells.
import { isDeepStrictEqual } from "node:util";
import { CONDITION_TYPES, type Condition, type ConditionType } from "../custom-domain.js";

/** What the policy decides for one condition; the time and generation are filled in here. */
export interface ConditionState {
  status: "True" | "False";
  reason: string;
  message: string;
}

export type ConditionStates = Record<ConditionType, ConditionState>;

/** A change of one condition worth an event: Normal when it became True, Warning when False. */
export interface Transition {
  type: ConditionType;
  eventType: "Normal" | "Warning";
  reason: string;
  message: string;
}

/**
 * The conditions to store, in the fixed order of CONDITION_TYPES. A condition whose status did not
 * flip keeps its lastTransitionTime, even when its reason or message changed.
 */
export function nextConditions(
  previous: readonly Condition[] | undefined,
  states: ConditionStates,
  generation: number | undefined,
  now: Date,
): Condition[] {
  return CONDITION_TYPES.map((type) => {
    const state = states[type];
    const before = previous?.find((condition) => condition.type === type);
    return {
      type,
      status: state.status,
      reason: state.reason,
      message: state.message,
      lastTransitionTime: before && before.status === state.status ? before.lastTransitionTime : now.toISOString(),
      ...(generation !== undefined && { observedGeneration: generation }),
    };
  });
}

/** The conditions that are new, flipped or changed reason between two sets. */
export function transitions(previous: readonly Condition[] | undefined, next: readonly Condition[]): Transition[] {
  return next
    .filter((condition) => {
      const before = previous?.find((candidate) => candidate.type === condition.type);
      return !before || before.status !== condition.status || before.reason !== condition.reason;
    })
    .map((condition) => ({
      type: condition.type,
      eventType: condition.status === "True" ? "Normal" : "Warning",
      reason: condition.reason,
      message: `${condition.type}: ${condition.message}`,
    }));
}

/**
 * Whether two JSON values are equal as the API server would store them: a property set to undefined
 * is the same as an absent one, and key order does not matter.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(asStored(a), asStored(b));
}

function asStored(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
