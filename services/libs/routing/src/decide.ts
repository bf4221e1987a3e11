// One pure decision per scan: the redirector, the resolve preview and the tests all call `decide` with
// a code's compiled routing, the visitor's facts, the time and the code's counted scans. Compiling
// turns the stored routing into sets, minutes and milliseconds once per cache fill, so deciding
// twenty rules costs a few set lookups each, and a code without rules costs one branch.
import { parseClock, parseInstant } from "./instants.js";
import { localClock } from "./time-zones.js";
import type { Decision, LifecycleState, Outcome, Routing, Visitor } from "./types.js";
import { WEEKDAYS } from "./types.js";
import { variantBucket } from "./variants.js";

interface CompiledRule {
  id: string;
  countries: ReadonlySet<string> | null;
  devices: ReadonlySet<string> | null;
  os: ReadonlySet<string> | null;
  languages: ReadonlySet<string> | null;
  after: number;
  before: number;
  /** The schedule's zone, or null for no schedule. */
  zone: string | null;
  /** Bit i set: the window may start on day i (0 Monday … 6 Sunday). */
  days: number;
  /** The window, minutes of the day, `from` inclusive and `to` exclusive; from > to runs past midnight. */
  from: number;
  to: number;
  destination: string | null;
  /** Split rules: each variant's destination and the bucket below which it is chosen. */
  variants: { url: string; below: number }[] | null;
}

/** A code's routing made ready to decide on: parse it once, decide many times. */
export interface CompiledRouting {
  /** No rules, no lifecycle and no password: every scan goes to the code's destination. */
  readonly trivial: boolean;
  readonly rules: readonly CompiledRule[];
  readonly startsAt: number;
  readonly expiresAt: number;
  readonly maxScans: number | null;
  readonly expiredUrl: string | null;
  readonly passwordProtected: boolean;
}

const ALL_DAYS = 0b111_1111;

/** The routing of a code that has none. */
export const NO_ROUTING: CompiledRouting = Object.freeze({
  trivial: true,
  rules: Object.freeze([]),
  startsAt: Number.NEGATIVE_INFINITY,
  expiresAt: Number.POSITIVE_INFINITY,
  maxScans: null,
  expiredUrl: null,
  passwordProtected: false,
});

const setOf = (values: readonly string[] | undefined) =>
  values === undefined || values.length === 0 ? null : new Set(values);

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
  const compiled = rules.map((rule): CompiledRule => {
    const { conditions } = rule;
    const schedule = conditions.schedule;
    let variants: CompiledRule["variants"] = null;
    if (rule.variants !== undefined && rule.variants.length > 0) {
      let below = 0;
      variants = rule.variants.map((variant) => {
        below += variant.weight;
        return { url: variant.destination_url, below };
      });
    }
    return {
      id: rule.id,
      countries: setOf(conditions.countries),
      devices: setOf(conditions.devices),
      os: setOf(conditions.os),
      languages: setOf(conditions.languages),
      after:
        conditions.after === undefined
          ? Number.NEGATIVE_INFINITY
          : (parseInstant(conditions.after) ?? Number.POSITIVE_INFINITY),
      before:
        conditions.before === undefined
          ? Number.POSITIVE_INFINITY
          : (parseInstant(conditions.before) ?? Number.NEGATIVE_INFINITY),
      zone: schedule?.time_zone ?? null,
      days:
        schedule?.days === undefined
          ? ALL_DAYS
          : schedule.days.reduce((bits, day) => bits | (1 << WEEKDAYS.indexOf(day)), 0),
      from: schedule?.from === undefined ? 0 : (parseClock(schedule.from) ?? 0),
      to: schedule?.to === undefined ? 1440 : (parseClock(schedule.to) ?? 0),
      destination: rule.destination_url ?? null,
      variants,
    };
  });
  return {
    trivial:
      compiled.length === 0 &&
      lifecycle.starts_at === null &&
      lifecycle.expires_at === null &&
      lifecycle.max_scans === null &&
      !passwordProtected,
    rules: compiled,
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
  for (const rule of routing.rules) {
    if (!holds(rule, visitor, now)) continue;
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
  return { outcome: "default", destination_url: context.destinationUrl, rule_id: null, variant: null };
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

function holds(rule: CompiledRule, visitor: Visitor, now: number): boolean {
  if (now < rule.after || now >= rule.before) return false;
  if (rule.countries !== null && !rule.countries.has(visitor.country)) return false;
  if (rule.devices !== null && !rule.devices.has(visitor.device)) return false;
  if (rule.os !== null && !rule.os.has(visitor.os)) return false;
  if (rule.languages !== null && !rule.languages.has(visitor.language)) return false;
  if (rule.zone === null) return true;
  const { day, minute } = localClock(rule.zone, now);
  const { days, from, to } = rule;
  const today = (days >> day) & 1;
  if (from < to) return today === 1 && minute >= from && minute < to;
  // Past midnight: the evening belongs to today's window, the small hours to yesterday's.
  const yesterday = (days >> ((day + 6) % 7)) & 1;
  return (today === 1 && minute >= from) || (yesterday === 1 && minute < to);
}
