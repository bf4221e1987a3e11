import { describe, expect, it } from "vitest";
import type { Condition } from "../src/custom-domain.js";
import { nextConditions, sameJson, transitions, type ConditionStates } from "../src/reconcile/conditions.js";

const t0 = new Date("2026-01-01T00:00:00Z");
const t1 = new Date("2026-01-01T00:05:00Z");
const pending: ConditionStates = {
  Verified: { status: "False", reason: "PendingVerification", message: "waiting" },
  RouteAdmitted: { status: "False", reason: "NotVerified", message: "not verified" },
  CertificateReady: { status: "False", reason: "NotVerified", message: "not verified" },
  Ready: { status: "False", reason: "PendingVerification", message: "waiting" },
};

describe("conditions", () => {
  it("are set in a fixed order with the generation they were computed for", () => {
    const conditions = nextConditions(undefined, pending, 3, t0);
    expect(conditions.map((condition) => condition.type)).toEqual([
      "Verified",
      "RouteAdmitted",
      "CertificateReady",
      "Ready",
    ]);
    expect(conditions[0]).toEqual({
      type: "Verified",
      status: "False",
      reason: "PendingVerification",
      message: "waiting",
      lastTransitionTime: t0.toISOString(),
      observedGeneration: 3,
    });
  });

  it("move lastTransitionTime only when the status flips", () => {
    const first = nextConditions(undefined, pending, 1, t0);
    const reworded = nextConditions(
      first,
      { ...pending, Verified: { status: "False", reason: "VerificationFailed", message: "NXDOMAIN" } },
      1,
      t1,
    );
    expect(reworded[0]?.lastTransitionTime).toBe(t0.toISOString());
    const flipped = nextConditions(
      reworded,
      { ...pending, Verified: { status: "True", reason: "Verified", message: "found" } },
      1,
      t1,
    );
    expect(flipped[0]?.lastTransitionTime).toBe(t1.toISOString());
    expect(flipped[3]?.lastTransitionTime).toBe(t0.toISOString());
  });

  it("give one transition per new, flipped or re-reasoned condition: Normal to True, Warning to False", () => {
    const first = nextConditions(undefined, pending, 1, t0);
    expect(transitions(undefined, first)).toHaveLength(4);
    expect(transitions(first, nextConditions(first, pending, 1, t1))).toEqual([]);
    const reworded = nextConditions(
      first,
      { ...pending, Verified: { ...pending.Verified, message: "still waiting" } },
      1,
      t1,
    );
    expect(transitions(first, reworded)).toEqual([]);
    const verified = nextConditions(
      first,
      { ...pending, Verified: { status: "True", reason: "Verified", message: "found" } },
      1,
      t1,
    );
    expect(transitions(first, verified)).toEqual([
      { type: "Verified", eventType: "Normal", reason: "Verified", message: "Verified: found" },
    ]);
    const failed = nextConditions(
      first,
      { ...pending, Verified: { status: "False", reason: "VerificationFailed", message: "NXDOMAIN" } },
      1,
      t1,
    );
    expect(transitions(first, failed)).toEqual([
      { type: "Verified", eventType: "Warning", reason: "VerificationFailed", message: "Verified: NXDOMAIN" },
    ]);
  });

  it("compare as stored JSON: undefined properties and key order do not count", () => {
    const condition: Condition = {
      type: "Ready",
      status: "True",
      reason: "Serving",
      message: "",
      lastTransitionTime: t0.toISOString(),
    };
    expect(sameJson({ a: 1, b: undefined, c: [condition] }, { c: [{ ...condition }], a: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: 2 })).toBe(false);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
  });
});
