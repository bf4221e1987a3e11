// The checks of a code's routing fields that need no database, every problem reported at once with
// the field's path as the caller wrote it (`rules[3].conditions.schedule.time_zone`). The REST edge,
// the catalog and the links service all run these, so a request is refused alike at every door.
// Whether a destination is on one of our own hosts needs the database: `routingDestinations` lists
// every URL of the routing for that check, which the links service makes as for `destination_url`.
import { destinationUrlProblem, type FieldProblem, isUuid, textRuleProblem } from "@qrplatform/platform";
import { isCountryCode } from "./countries.js";
import { parseClock, parseInstant } from "./instants.js";
import { isTimeZone } from "./time-zones.js";
import {
  type Conditions,
  DEVICES,
  MAX_PASSWORD_LENGTH,
  MAX_RULE_NAME_LENGTH,
  MAX_RULES,
  MAX_SCAN_LIMIT,
  MAX_VARIANTS,
  MIN_PASSWORD_LENGTH,
  MIN_VARIANTS,
  OPERATING_SYSTEMS,
  type RoutingInput,
  type RuleInput,
  type Schedule,
  TOTAL_WEIGHT,
  WEEKDAYS,
} from "./types.js";

type Problems = FieldProblem[];

const problem = (field: string, reason: string, description: string): FieldProblem => ({ field, reason, description });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const LANGUAGE = /^[a-z]{2,3}$/;

/**
 * Every problem with the routing fields of a create or update request, or none. `path` prefixes the
 * field paths (for a bulk request's `items[4].`); fields the input leaves out are not checked.
 */
export function routingProblems(input: RoutingInput, path = ""): FieldProblem[] {
  const problems: Problems = [];
  if (input.rules !== undefined) rulesProblems(input.rules, `${path}rules`, problems);
  const starts = instantField(input.starts_at, `${path}starts_at`, problems);
  const expires = instantField(input.expires_at, `${path}expires_at`, problems);
  if (starts !== undefined && expires !== undefined && expires <= starts)
    problems.push(problem(`${path}expires_at`, "out_of_range", "must be later than starts_at"));
  const maxScans = input.max_scans;
  if (maxScans !== undefined && maxScans !== null) {
    if (typeof maxScans !== "number" || !Number.isInteger(maxScans) || maxScans < 1 || maxScans > MAX_SCAN_LIMIT)
      problems.push(
        problem(`${path}max_scans`, "out_of_range", `must be a whole number from 1 to ${MAX_SCAN_LIMIT}, or null`),
      );
  }
  if (input.expired_url !== undefined && input.expired_url !== null)
    urlField(input.expired_url, `${path}expired_url`, problems);
  if (input.password !== undefined && input.password !== null) {
    const found = passwordProblem(input.password, `${path}password`);
    if (found) problems.push(found);
  }
  return problems;
}

/** Why a password is refused, or undefined: 8 to 128 characters of storable text. */
export function passwordProblem(password: unknown, field = "password"): FieldProblem | undefined {
  if (typeof password !== "string") return problem(field, "invalid_type", "must be a string");
  const text = textRuleProblem(password);
  if (text) return problem(field, text.reason, text.description);
  if (password.length < MIN_PASSWORD_LENGTH)
    return problem(field, "too_short", `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH)
    return problem(field, "too_long", `must be at most ${MAX_PASSWORD_LENGTH} characters`);
  return undefined;
}

/**
 * Every destination URL the routing fields name, with its field path: the URLs that must not point at
 * one of this platform's own hosts, checked where the hosts are known (the links service).
 */
export function routingDestinations(input: RoutingInput, path = ""): { field: string; url: string }[] {
  const found: { field: string; url: string }[] = [];
  (input.rules ?? []).forEach((rule, i) => {
    if (typeof rule?.destination_url === "string")
      found.push({ field: `${path}rules[${i}].destination_url`, url: rule.destination_url });
    (Array.isArray(rule?.variants) ? rule.variants : []).forEach((variant, j) => {
      if (typeof variant?.destination_url === "string")
        found.push({ field: `${path}rules[${i}].variants[${j}].destination_url`, url: variant.destination_url });
    });
  });
  if (typeof input.expired_url === "string") found.push({ field: `${path}expired_url`, url: input.expired_url });
  return found;
}

function rulesProblems(rules: unknown, path: string, problems: Problems): void {
  if (!Array.isArray(rules)) {
    problems.push(problem(path, "invalid_type", "must be an array of rules"));
    return;
  }
  if (rules.length > MAX_RULES) {
    // Checking each of a hundred thousand rules would only echo the request back.
    problems.push(problem(path, "too_many", `must hold at most ${MAX_RULES} rules`));
    return;
  }
  const ids = new Map<string, number>();
  rules.forEach((rule, i) => {
    ruleProblems(rule, `${path}[${i}]`, problems);
    const id = isObject(rule) && typeof rule.id === "string" ? rule.id.toLowerCase() : undefined;
    if (id === undefined) return;
    const first = ids.get(id);
    if (first !== undefined)
      problems.push(problem(`${path}[${i}].id`, "duplicate", `is also the id of rules[${first}]`));
    else ids.set(id, i);
  });
}

function ruleProblems(rule: unknown, path: string, problems: Problems): void {
  if (!isObject(rule)) {
    problems.push(problem(path, "invalid_type", "must be an object"));
    return;
  }
  const { id, name, conditions, destination_url: destination, variants } = rule as RuleInput;
  if (id !== undefined && (typeof id !== "string" || !isUuid(id)))
    problems.push(problem(`${path}.id`, "invalid_format", "must be a UUID; leave it out for a new rule"));
  if (name !== undefined) {
    const found = nameProblem(name, `${path}.name`);
    if (found) problems.push(found);
  }
  if (conditions !== undefined) conditionsProblems(conditions, `${path}.conditions`, problems);
  if (destination !== undefined && variants !== undefined) {
    problems.push(problem(path, "conflict", "must have either destination_url or variants, not both"));
  } else if (destination !== undefined) {
    urlField(destination, `${path}.destination_url`, problems);
  } else if (variants !== undefined) {
    variantsProblems(variants, `${path}.variants`, problems);
  } else {
    problems.push(problem(`${path}.destination_url`, "required", "is required unless the rule has variants"));
  }
}

function nameProblem(name: unknown, field: string): FieldProblem | undefined {
  if (typeof name !== "string") return problem(field, "invalid_type", "must be a string");
  const text = textRuleProblem(name);
  if (text) return problem(field, text.reason, text.description);
  if (name.trim() === "") return problem(field, "too_short", "must not be empty; leave it out for no name");
  if (name.length > MAX_RULE_NAME_LENGTH)
    return problem(field, "too_long", `must be at most ${MAX_RULE_NAME_LENGTH} characters`);
  return undefined;
}

function conditionsProblems(conditions: unknown, path: string, problems: Problems): void {
  if (!isObject(conditions)) {
    problems.push(problem(path, "invalid_type", "must be an object"));
    return;
  }
  const { countries, devices, os, languages, schedule, after, before } = conditions as Conditions;
  listField(countries, `${path}.countries`, problems, "country", (code) =>
    isCountryCode(code) ? undefined : 'must be an ISO 3166-1 alpha-2 country code in upper case, such as "JP"',
  );
  listField(devices, `${path}.devices`, problems, "device", (device) =>
    (DEVICES as readonly string[]).includes(device) ? undefined : `must be one of ${DEVICES.join(", ")}`,
  );
  listField(os, `${path}.os`, problems, "operating system", (family) =>
    (OPERATING_SYSTEMS as readonly string[]).includes(family)
      ? undefined
      : `must be one of ${OPERATING_SYSTEMS.join(", ")}`,
  );
  listField(languages, `${path}.languages`, problems, "language", (language) =>
    LANGUAGE.test(language) ? undefined : 'must be a primary language subtag in lower case, such as "en" or "ja"',
  );
  if (schedule !== undefined) scheduleProblems(schedule, `${path}.schedule`, problems);
  const from = after === undefined ? undefined : instantField(after, `${path}.after`, problems);
  const until = before === undefined ? undefined : instantField(before, `${path}.before`, problems);
  if (from !== undefined && until !== undefined && until <= from)
    problems.push(problem(`${path}.before`, "out_of_range", "must be later than after"));
}

function scheduleProblems(schedule: unknown, path: string, problems: Problems): void {
  if (!isObject(schedule)) {
    problems.push(problem(path, "invalid_type", "must be an object"));
    return;
  }
  const { time_zone: zone, days, from, to } = schedule as Partial<Schedule>;
  if (zone === undefined) problems.push(problem(`${path}.time_zone`, "required", "is required"));
  else if (typeof zone !== "string" || !isTimeZone(zone))
    problems.push(problem(`${path}.time_zone`, "invalid_value", 'must be an IANA time zone, such as "Europe/Berlin"'));
  listField(days, `${path}.days`, problems, "day", (day) =>
    (WEEKDAYS as readonly string[]).includes(day) ? undefined : `must be one of ${WEEKDAYS.join(", ")}`,
  );
  const start = from === undefined ? undefined : clockField(from, `${path}.from`, problems);
  const end = to === undefined ? undefined : clockField(to, `${path}.to`, problems);
  if (end !== undefined && end === (start ?? 0))
    problems.push(
      problem(
        `${path}.to`,
        "invalid_value",
        "must differ from from (00:00 when left out); leave both out for the whole day",
      ),
    );
}

/** A list condition: an array of at least one distinct string, each passing `check`. */
function listField(
  value: unknown,
  path: string,
  problems: Problems,
  noun: string,
  check: (item: string) => string | undefined,
): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    problems.push(problem(path, "invalid_type", "must be an array"));
    return;
  }
  if (value.length === 0) {
    problems.push(problem(path, "too_short", `must name at least one ${noun}; leave it out to match any`));
    return;
  }
  const seen = new Set<string>();
  value.forEach((item, i) => {
    const field = `${path}[${i}]`;
    if (typeof item !== "string") {
      problems.push(problem(field, "invalid_type", "must be a string"));
      return;
    }
    const found = check(item);
    if (found !== undefined) problems.push(problem(field, "invalid_value", found));
    else if (seen.has(item)) problems.push(problem(field, "duplicate", `names the same ${noun} twice`));
    seen.add(item);
  });
}

function variantsProblems(variants: unknown, path: string, problems: Problems): void {
  if (!Array.isArray(variants)) {
    problems.push(problem(path, "invalid_type", "must be an array of variants"));
    return;
  }
  if (variants.length < MIN_VARIANTS || variants.length > MAX_VARIANTS) {
    problems.push(problem(path, "out_of_range", `must hold ${MIN_VARIANTS} to ${MAX_VARIANTS} variants`));
    if (variants.length > MAX_VARIANTS) return;
  }
  let total = 0;
  let weightsValid = true;
  variants.forEach((variant, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(variant)) {
      problems.push(problem(at, "invalid_type", "must be an object"));
      weightsValid = false;
      return;
    }
    if (variant.destination_url === undefined)
      problems.push(problem(`${at}.destination_url`, "required", "is required"));
    else urlField(variant.destination_url, `${at}.destination_url`, problems);
    const weight = variant.weight;
    if (typeof weight !== "number" || !Number.isInteger(weight) || weight < 1 || weight > TOTAL_WEIGHT - 1) {
      problems.push(problem(`${at}.weight`, "out_of_range", `must be a whole number from 1 to ${TOTAL_WEIGHT - 1}`));
      weightsValid = false;
    } else total += weight;
  });
  if (weightsValid && variants.length >= MIN_VARIANTS && total !== TOTAL_WEIGHT)
    problems.push(problem(path, "invalid_value", `weights must add up to ${TOTAL_WEIGHT}; they add up to ${total}`));
}

function urlField(value: unknown, field: string, problems: Problems): void {
  if (typeof value !== "string") {
    problems.push(problem(field, "invalid_type", "must be a string"));
    return;
  }
  const found = destinationUrlProblem(value, field);
  if (found) problems.push(found);
}

function instantField(value: unknown, field: string, problems: Problems): number | undefined {
  if (value === undefined || value === null) return undefined;
  const instant = typeof value === "string" ? parseInstant(value) : undefined;
  if (instant === undefined)
    problems.push(
      problem(field, "invalid_format", "must be an RFC 3339 date-time with an offset, such as 2026-12-01T09:00:00Z"),
    );
  return instant;
}

function clockField(value: unknown, field: string, problems: Problems): number | undefined {
  const minute = typeof value === "string" ? parseClock(value) : undefined;
  if (minute === undefined)
    problems.push(problem(field, "invalid_format", 'must be a time "HH:MM" from 00:00 to 23:59'));
  return minute;
}
