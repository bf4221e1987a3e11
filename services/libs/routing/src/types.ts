// The words of a dynamic QR code's routing, spelt as the public API spells them (snake_case): the rules
// that pick a destination per visitor, the lifecycle that bounds when and how often the code works,
// and the visitor facts the rules are decided on.

/** The kinds of device a rule can name. */
export const DEVICES = ["mobile", "tablet", "desktop"] as const;
/** A kind of device a rule can name. */
export type Device = (typeof DEVICES)[number];

/** The operating-system families a rule can name; `other` is every one not listed. */
export const OPERATING_SYSTEMS = ["ios", "android", "windows", "macos", "linux", "other"] as const;
/** An operating-system family a rule can name. */
export type Os = (typeof OPERATING_SYSTEMS)[number];

/** The days of the week, Monday first, as a schedule names them. */
export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
/** A day of the week as a schedule names it. */
export type Weekday = (typeof WEEKDAYS)[number];

/** The most rules one code holds. */
export const MAX_RULES = 50;
/** The longest rule name, in characters. */
export const MAX_RULE_NAME_LENGTH = 100;
/** The fewest and most variants of a split rule. */
export const MIN_VARIANTS = 2;
export const MAX_VARIANTS = 4;
/** What the weights of a split rule's variants add up to. */
export const TOTAL_WEIGHT = 100;
/** The shortest and longest password, in characters. */
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;
/** The highest scan limit: a billion scans, well inside a 32-bit counter. */
export const MAX_SCAN_LIMIT = 1_000_000_000;

/**
 * When, in local wall-clock time of one zone, a rule holds. `from` is inclusive and `to` exclusive;
 * a `from` later than `to` is a window past midnight, which belongs to the day it starts on. Without
 * `from` the window starts at 00:00, without `to` it runs to midnight, without `days` it is every day.
 */
export interface Schedule {
  /** An IANA time-zone name, such as "Europe/Berlin". */
  time_zone: string;
  days?: Weekday[];
  /** "HH:MM", 00:00 to 23:59. */
  from?: string;
  /** "HH:MM", 00:00 to 23:59. */
  to?: string;
}

/** What must hold for a rule to decide; every condition is optional and all given ones must hold. */
export interface Conditions {
  /** ISO 3166-1 alpha-2 codes in upper case. */
  countries?: string[];
  devices?: Device[];
  os?: Os[];
  /** Primary language subtags in lower case ("en", "ja"), matched against the visitor's first preference. */
  languages?: string[];
  schedule?: Schedule;
  /** An RFC 3339 instant: the rule holds from this instant on (inclusive). */
  after?: string;
  /** An RFC 3339 instant: the rule holds until this instant (exclusive). */
  before?: string;
}

/** One destination of a split rule and its share of the rule's visitors, in percent. */
export interface Variant {
  destination_url: string;
  /** An integer from 1 to 99; a rule's weights add up to 100. */
  weight: number;
}

/** A routing rule: conditions and exactly one action, a destination or 2–4 weighted variants. */
export interface Rule {
  /** A UUID, assigned by the server and kept while the rule is sent back with it. */
  id: string;
  name?: string;
  conditions: Conditions;
  destination_url?: string;
  variants?: Variant[];
}

/** A rule as a caller writes it: a new rule has no id yet, and no conditions means none. */
export type RuleInput = Omit<Rule, "id" | "conditions"> & { id?: string; conditions?: Conditions };

/** When and how often a code works, and where it sends visitors once it does not. */
export interface Lifecycle {
  /** An RFC 3339 instant before which the code is not live yet, or null. */
  starts_at: string | null;
  /** An RFC 3339 instant from which the code has ended, or null. */
  expires_at: string | null;
  /** How many counted scans reach a destination before the code has ended, or null for no limit. */
  max_scans: number | null;
  /** Where scans go while the code is not live, or null for a page saying so. */
  expired_url: string | null;
}

/** The lifecycle of a code that has none: always live, no limit. */
export const NO_LIFECYCLE: Lifecycle = Object.freeze({
  starts_at: null,
  expires_at: null,
  max_scans: null,
  expired_url: null,
});

/** A code's routing as stored and evaluated: its rules, its lifecycle and whether it asks for a password. */
export interface Routing {
  rules: Rule[];
  lifecycle: Lifecycle;
  password_protected: boolean;
}

/**
 * The routing fields of a create or update request, as the caller sent them: absent fields are left
 * alone (on update) or take their defaults (on create); `null` clears a lifecycle field or the password.
 */
export interface RoutingInput {
  rules?: RuleInput[];
  starts_at?: string | null;
  expires_at?: string | null;
  max_scans?: number | null;
  expired_url?: string | null;
  password?: string | null;
}

/** The facts of one visitor that rules are decided on, worked out once per request. */
export interface Visitor {
  /** ISO 3166-1 alpha-2 in upper case, or "" when unknown. */
  country: string;
  /** The kind of device, or "" when it is none of those a rule can name (a TV, a console, unknown). */
  device: Device | "";
  os: Os;
  /** The primary subtag of the first preferred language, in lower case, or "" when none was sent. */
  language: string;
  /** A stable, salted key of the visitor for this code: the same visitor always gets the same variant. */
  key: string;
}

/** How a scan was decided. */
export type Outcome = "rule" | "default" | "scheduled" | "expired" | "limit_reached" | "password";

/** Where a scan goes and why. */
export interface Decision {
  outcome: Outcome;
  /**
   * Where to send the visitor: the rule's or variant's destination, the code's own for `default`,
   * `expired_url` (or null for the not-live page) for `scheduled`, `expired` and `limit_reached`, and
   * null for `password`.
   */
  destination_url: string | null;
  /** The rule that decided, or null. */
  rule_id: string | null;
  /** The index of the variant picked in a split rule, or null. */
  variant: number | null;
}

/** The state of a code's lifecycle, as reads report it. */
export type LifecycleState = "scheduled" | "live" | "expired" | "limit_reached";
