// One decision per scan: the redirector, the resolve preview and the tests all call `decide` with a
// code's compiled routing, the visitor's facts, the time and the code's counted scans, and its answer
// depends on those alone. What it writes is a memo in the compiled routing of which schedules hold in
// the current UTC minute: a busy code is decided many times a minute, and a schedule's local clock
// costs a time-zone conversion, so it is worked out once a minute rather than once a scan. Compiling
// turns the stored routing into bit sets once per cache fill: for each visitor fact the rules name
// (country, device, OS, language), which rules hold for each value, so that deciding looks each fact
// up once and ANDs a word per 32 rules, whatever the number of rules. A redirector answers many codes
// between two scans of one, so the processor's caches seldom hold a code's routing when it is decided:
// a few small arrays to read cost far less than a set per condition of every rule (ADR 0018). A code
// without rules costs one branch.
import { parseClock, parseInstant } from "./instants.js";
import { isTimeZone, localClock } from "./time-zones.js";
import type { Decision, LifecycleState, Outcome, Routing, Visitor } from "./types.js";
import { WEEKDAYS } from "./types.js";
import { variantBucket } from "./variants.js";

/** What a rule does once its conditions hold. */
interface RuleAction {
  id: string;
  destination: string | null;
  /** Split rules: each variant's destination and the bucket below which it is chosen. */
  variants: { url: string; below: number }[] | null;
}

/** A set of a code's rules: bit b of word w stands for rule 32w + b. */
type RuleBits = Int32Array;

/** One visitor fact that rules name values of, turned around: for each value, the rules that hold for it. */
interface FactIndex {
  /** For each value some rule names: the rules naming it, and those without a condition on the fact. */
  byValue: Map<string, RuleBits>;
  /** For any other value: the rules without a condition on the fact. */
  others: RuleBits;
}

interface CompiledSchedule {
  rule: number;
  /** The schedule's zone, or null for one the runtime does not know, whose schedule never holds. */
  zone: string | null;
  /** Bit i set: the window may start on day i (0 Monday … 6 Sunday). */
  days: number;
  /** The window, minutes of the day, `from` inclusive and `to` exclusive; from > to runs past midnight. */
  from: number;
  to: number;
}

/**
 * A code's rules' conditions as bit sets and arrays, compiled once; all fixed but the memo of which
 * schedules hold, which `decide` rewrites once a minute.
 */
interface CompiledConditions {
  /** Words of each RuleBits: one per 32 rules. */
  readonly words: number;
  /** Every rule; the index of a fact no rule names. */
  readonly all: RuleBits;
  readonly country: FactIndex | null;
  readonly device: FactIndex | null;
  readonly os: FactIndex | null;
  readonly language: FactIndex | null;
  /** Rule i holds from `window[2i]` (inclusive) to `window[2i + 1]` (exclusive), Unix milliseconds. */
  readonly window: Float64Array;
  /** The rules with a schedule. */
  readonly scheduled: RuleBits;
  readonly schedules: readonly CompiledSchedule[];
  /**
   * A memo, written by `decide`: the scheduled rules whose schedule holds in the UTC minute
   * `scheduleMinute` (a schedule reads the local minute, and every zone's offset is a whole number of
   * minutes since 1972), worked out for the first scan of a minute that needs it and read by every
   * other one, since a busy code is decided many times a minute.
   */
  scheduleMinute: number;
  /** The memo's bits, rewritten in place when the minute changes. */
  readonly scheduleHolds: RuleBits;
}

/**
 * A code's routing made ready to decide on: parse it once, decide many times. Fixed once compiled,
 * but for the per-minute memo of which schedules hold in `conditions`, which `decide` keeps.
 */
export interface CompiledRouting {
  /** No rules, no lifecycle and no password: every scan goes to the code's destination. */
  readonly trivial: boolean;
  /** What each rule does, in order. */
  readonly rules: readonly RuleAction[];
  readonly conditions: CompiledConditions;
  readonly startsAt: number;
  readonly expiresAt: number;
  readonly maxScans: number | null;
  readonly expiredUrl: string | null;
  readonly passwordProtected: boolean;
}

const ALL_DAYS = 0b111_1111;
const RULES_PER_WORD = 32;

const NO_RULES = new Int32Array(0);

/** The routing of a code that has none. */
export const NO_ROUTING: CompiledRouting = Object.freeze({
  trivial: true,
  rules: Object.freeze([]),
  conditions: Object.freeze({
    words: 0,
    all: NO_RULES,
    country: null,
    device: null,
    os: null,
    language: null,
    window: new Float64Array(0),
    scheduled: NO_RULES,
    schedules: [],
    scheduleMinute: Number.NaN,
    scheduleHolds: NO_RULES,
  }),
  startsAt: Number.NEGATIVE_INFINITY,
  expiresAt: Number.POSITIVE_INFINITY,
  maxScans: null,
  expiredUrl: null,
  passwordProtected: false,
});

const setBit = (bits: RuleBits, rule: number) => {
  bits[rule >>> 5]! |= 1 << (rule & 31);
};

/** The index of one fact over every rule's list of values for it; null when no rule names any. */
function factIndex(lists: readonly (readonly string[] | undefined)[], words: number): FactIndex | null {
  const others = new Int32Array(words);
  const named: number[] = [];
  lists.forEach((values, rule) => {
    if (values === undefined || values.length === 0) setBit(others, rule);
    else named.push(rule);
  });
  if (named.length === 0) return null;
  const byValue = new Map<string, RuleBits>();
  for (const rule of named) {
    for (const value of lists[rule]!) {
      let bits = byValue.get(value);
      if (bits === undefined) {
        bits = others.slice();
        byValue.set(value, bits);
      }
      setBit(bits, rule);
    }
  }
  return { byValue, others };
}

/**
 * Compiles stored routing, which must have passed `routingProblems`; a value that does not parse
 * (which validation refuses) makes its condition never hold rather than throw on the redirect path.
 */
export function compileRouting(routing: Routing): CompiledRouting {
  const { rules, lifecycle, password_protected: passwordProtected } = routing;
  const startsAt =
    lifecycle.starts_at === null
      ? Number.NEGATIVE_INFINITY
      : (parseInstant(lifecycle.starts_at) ?? Number.POSITIVE_INFINITY);
  const expiresAt =
    lifecycle.expires_at === null
      ? Number.POSITIVE_INFINITY
      : (parseInstant(lifecycle.expires_at) ?? Number.NEGATIVE_INFINITY);
  const words = Math.ceil(rules.length / RULES_PER_WORD);
  const all = new Int32Array(words);
  const window = new Float64Array(2 * rules.length);
  const scheduled = new Int32Array(words);
  const schedules: CompiledSchedule[] = [];
  const actions = rules.map((rule, i): RuleAction => {
    const { conditions } = rule;
    setBit(all, i);
    window[2 * i] =
      conditions.after === undefined
        ? Number.NEGATIVE_INFINITY
        : (parseInstant(conditions.after) ?? Number.POSITIVE_INFINITY);
    window[2 * i + 1] =
      conditions.before === undefined
        ? Number.POSITIVE_INFINITY
        : (parseInstant(conditions.before) ?? Number.NEGATIVE_INFINITY);
    const schedule = conditions.schedule;
    if (schedule !== undefined) {
      setBit(scheduled, i);
      schedules.push({
        rule: i,
        zone: isTimeZone(schedule.time_zone) ? schedule.time_zone : null,
        days:
          schedule.days === undefined
            ? ALL_DAYS
            : schedule.days.reduce((bits, day) => bits | (1 << WEEKDAYS.indexOf(day)), 0),
        from: schedule.from === undefined ? 0 : (parseClock(schedule.from) ?? 0),
        to: schedule.to === undefined ? 1440 : (parseClock(schedule.to) ?? 0),
      });
    }
    let variants: RuleAction["variants"] = null;
    if (rule.variants !== undefined && rule.variants.length > 0) {
      let below = 0;
      variants = rule.variants.map((variant) => {
        below += variant.weight;
        return { url: variant.destination_url, below };
      });
    }
    return { id: rule.id, destination: rule.destination_url ?? null, variants };
  });
  return {
    trivial:
      rules.length === 0 &&
      lifecycle.starts_at === null &&
      lifecycle.expires_at === null &&
      lifecycle.max_scans === null &&
      !passwordProtected,
    rules: actions,
    conditions: {
      words,
      all,
      country: factIndex(
        rules.map((rule) => rule.conditions.countries),
        words,
      ),
      device: factIndex(
        rules.map((rule) => rule.conditions.devices),
        words,
      ),
      os: factIndex(
        rules.map((rule) => rule.conditions.os),
        words,
      ),
      language: factIndex(
        rules.map((rule) => rule.conditions.languages),
        words,
      ),
      window,
      scheduled,
      schedules,
      scheduleMinute: Number.NaN,
      scheduleHolds: new Int32Array(words),
    },
    startsAt,
    expiresAt,
    maxScans: lifecycle.max_scans,
    expiredUrl: lifecycle.expired_url,
    passwordProtected,
  };
}

/** What else a scan is decided on besides the visitor and the time. */
export interface DecideContext {
  /** The code's own destination, where a scan goes when no rule holds. */
  destinationUrl: string;
  /** Counted scans the code has redirected so far (only read when it has a scan limit). */
  scans: number;
  /** Whether the visitor proved the password for this code (a valid cookie); only read when it has one. */
  unlocked?: boolean;
}

/**
 * Where a scan goes: the lifecycle first (not live yet, ended by time, ended by its scan limit), then
 * the password, then the first rule whose conditions all hold, else the code's destination. The
 * visitor's `key` is read only when a split rule decides, so a caller may compute it lazily.
 */
export function decide(routing: CompiledRouting, visitor: Visitor, now: number, context: DecideContext): Decision {
  if (routing.trivial)
    return { outcome: "default", destination_url: context.destinationUrl, rule_id: null, variant: null };
  const state = lifecycleState(routing, now, context.scans);
  if (state !== "live") return endedDecision(routing, state);
  if (routing.passwordProtected && context.unlocked !== true)
    return { outcome: "password", destination_url: null, rule_id: null, variant: null };
  const conditions = routing.conditions;
  const { all, window, scheduled } = conditions;
  const country = rulesFor(conditions.country, visitor.country, all);
  const device = rulesFor(conditions.device, visitor.device, all);
  const os = rulesFor(conditions.os, visitor.os, all);
  const language = rulesFor(conditions.language, visitor.language, all);
  let scheduleHolds: RuleBits | undefined;
  for (let word = 0; word < conditions.words; word++) {
    // The rules of this word whose every fact condition holds, first rule in the lowest bit.
    let candidates = country[word]! & device[word]! & os[word]! & language[word]!;
    while (candidates !== 0) {
      const lowest = candidates & -candidates;
      candidates ^= lowest;
      const rule = word * RULES_PER_WORD + 31 - Math.clz32(lowest);
      if (now < window[2 * rule]! || now >= window[2 * rule + 1]!) continue;
      if ((scheduled[word]! & lowest) !== 0) {
        scheduleHolds ??= schedulesAt(conditions, now);
        if ((scheduleHolds[word]! & lowest) === 0) continue;
      }
      return ruleDecision(routing.rules[rule]!, visitor);
    }
  }
  return { outcome: "default", destination_url: context.destinationUrl, rule_id: null, variant: null };
}

/** The rules that hold for a visitor's value of one fact. */
function rulesFor(index: FactIndex | null, value: string, all: RuleBits): RuleBits {
  if (index === null) return all;
  return index.byValue.get(value) ?? index.others;
}

function ruleDecision(rule: RuleAction, visitor: Visitor): Decision {
  if (rule.variants === null)
    return { outcome: "rule", destination_url: rule.destination, rule_id: rule.id, variant: null };
  const bucket = variantBucket(visitor.key, rule.id);
  const variants = rule.variants;
  let chosen = variants.length - 1;
  for (let i = 0; i < variants.length; i++) {
    if (bucket < variants[i]!.below) {
      chosen = i;
      break;
    }
  }
  return { outcome: "rule", destination_url: variants[chosen]!.url, rule_id: rule.id, variant: chosen };
}

/** The scheduled rules whose schedule holds at `now`, kept for the rest of its UTC minute. */
function schedulesAt(conditions: CompiledConditions, now: number): RuleBits {
  const minute = Math.floor(now / 60_000);
  const holding = conditions.scheduleHolds;
  if (conditions.scheduleMinute === minute) return holding;
  holding.fill(0);
  for (const schedule of conditions.schedules) if (scheduleHolds(schedule, now)) setBit(holding, schedule.rule);
  conditions.scheduleMinute = minute;
  return holding;
}

function scheduleHolds({ zone, days, from, to }: CompiledSchedule, now: number): boolean {
  if (zone === null) return false;
  const { day, minute } = localClock(zone, now);
  const today = (days >> day) & 1;
  if (from < to) return today === 1 && minute >= from && minute < to;
  // Past midnight: the evening belongs to today's window, the small hours to yesterday's.
  const yesterday = (days >> ((day + 6) % 7)) & 1;
  return (today === 1 && minute >= from) || (yesterday === 1 && minute < to);
}

/** Where a scan goes while the code is not live: its `expired_url`, or null for the not-live page. */
export function endedDecision(routing: CompiledRouting, outcome: Exclude<LifecycleState, "live">): Decision {
  return { outcome: outcome satisfies Outcome, destination_url: routing.expiredUrl, rule_id: null, variant: null };
}

/**
 * The state of a code's lifecycle at `now` with `scans` counted scans: `starts_at` is inclusive,
 * `expires_at` exclusive (at that instant the code has ended), and the limit is reached once the
 * counted scans are `max_scans`.
 */
export function lifecycleState(routing: CompiledRouting, now: number, scans: number): LifecycleState {
  if (now < routing.startsAt) return "scheduled";
  if (now >= routing.expiresAt) return "expired";
  if (routing.maxScans !== null && scans >= routing.maxScans) return "limit_reached";
  return "live";
}
