// A code's dynamic behaviour on its page: the routing rules editor, the lifecycle fields and the
// password, and "Test a visitor", which asks the API where a visitor would go without counting a scan.
import { useState } from "preact/hooks";
import type { components, operations, QrCode } from "@qrplatform/api-client";
import { call } from "../api.ts";
import {
  DAYS,
  DEVICES,
  type Device,
  emptyRule,
  instantOf,
  localInputOf,
  moved,
  type Os,
  OSES,
  type RuleForm,
  ruleFormOf,
  ruleInputOf,
  ruleProblems,
} from "../rules.ts";
import { ErrorNotice, FieldError, fieldProblems, useSession } from "../ui.tsx";

const describedBy = (id: string, message: string | undefined) =>
  message ? { "aria-invalid": true, "aria-describedby": `${id}-error` } : {};

function toggled<T>(list: T[], value: T, on: boolean): T[] {
  return on ? [...list.filter((v) => v !== value), value] : list.filter((v) => v !== value);
}

export function RulesEditor({ code, onSaved }: { code: QrCode; onSaved: (code: QrCode) => void }) {
  const { api } = useSession();
  const [rules, setRules] = useState<RuleForm[]>(() => code.rules.map(ruleFormOf));
  const [error, setError] = useState<unknown>(undefined);
  const [sentKeys, setSentKeys] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);

  const update = (key: string, change: Partial<RuleForm>) => {
    setSaved(false);
    setRules((all) => all.map((rule) => (rule.key === key ? { ...rule, ...change } : rule)));
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const keys = rules.map((rule) => rule.key);
    try {
      const updated = await call(
        api.PATCH("/qr-codes/{id}", {
          params: { path: { id: code.id } },
          body: { rules: rules.map(ruleInputOf) },
        }),
      );
      setRules(updated.rules.map(ruleFormOf));
      setError(undefined);
      setSaved(true);
      onSaved(updated);
    } catch (cause) {
      setSentKeys(keys);
      setError(cause);
      setSaved(false);
    }
  };
  const problems = ruleProblems(error, sentKeys);
  const named = Object.keys(problems.byRule).length + problems.general.length > 0;
  return (
    <section aria-labelledby="rules-heading" class="panel">
      <h2 id="rules-heading">Routing rules</h2>
      <p>
        The first rule whose conditions all hold decides where a visitor goes; when none holds, the code's destination
        URL does.
      </p>
      <form onSubmit={save} aria-labelledby="rules-heading">
        {rules.length === 0 && <p>No rules yet.</p>}
        <ol class="rules">
          {rules.map((rule, index) => (
            <li key={rule.key}>
              <RuleFields
                rule={rule}
                number={index + 1}
                count={rules.length}
                problems={problems.byRule[rule.key] ?? {}}
                onChange={(change) => update(rule.key, change)}
                onMove={(by) => setRules((all) => moved(all, index, by))}
                onRemove={() => setRules((all) => all.filter((r) => r.key !== rule.key))}
              />
            </li>
          ))}
        </ol>
        <div class="buttons">
          <button type="button" onClick={() => setRules((all) => [...all, emptyRule()])}>
            Add rule
          </button>
          <button type="submit">Save rules</button>
        </div>
        {problems.general.map((message) => (
          <p key={message} class="field-error" role="alert">
            {message}
          </p>
        ))}
        {named && (
          <p role="alert" class="field-error">
            Some rules were not accepted; the reasons are shown beside their fields.
          </p>
        )}
        {!named && <ErrorNotice error={error} />}
        {saved && <p role="status">Rules saved.</p>}
      </form>
    </section>
  );
}

function RuleFields({
  rule,
  number,
  count,
  problems,
  onChange,
  onMove,
  onRemove,
}: {
  rule: RuleForm;
  number: number;
  count: number;
  problems: Record<string, string>;
  onChange: (change: Partial<RuleForm>) => void;
  onMove: (by: -1 | 1) => void;
  onRemove: () => void;
}) {
  const id = (control: string) => `${rule.key}-${control.replace(/\./g, "-")}`;
  const text = (control: string, label: string, value: string, set: (v: string) => void, hint?: string) => (
    <>
      <label for={id(control)}>{label}</label>
      <input
        id={id(control)}
        value={value}
        placeholder={hint}
        onInput={(e) => set(e.currentTarget.value)}
        {...describedBy(id(control), problems[control])}
      />
      <FieldError id={`${id(control)}-error`} message={problems[control]} />
    </>
  );
  const choices = <T extends string>(control: string, legend: string, all: T[], chosen: T[], set: (v: T[]) => void) => (
    <fieldset {...describedBy(id(control), problems[control])}>
      <legend>{legend}</legend>
      {all.map((value) => (
        <label key={value} class="choice">
          <input
            type="checkbox"
            checked={chosen.includes(value)}
            onChange={(e) => set(toggled(chosen, value, e.currentTarget.checked))}
          />{" "}
          {value}
        </label>
      ))}
      <FieldError id={`${id(control)}-error`} message={problems[control]} />
    </fieldset>
  );
  const legend = `Rule ${number}`;
  return (
    <fieldset class="rule">
      <legend>{legend}</legend>
      {problems.rule && <FieldError id={`${id("rule")}-error`} message={problems.rule} />}
      {text("name", "Rule name (optional)", rule.name, (name) => onChange({ name }))}
      <fieldset>
        <legend>Conditions (all given ones must hold)</legend>
        {text(
          "countries",
          "Countries (ISO codes, separated by commas)",
          rule.countries,
          (countries) => onChange({ countries }),
          "FR, BE",
        )}
        {choices("devices", "Devices", DEVICES, rule.devices, (devices) => onChange({ devices }))}
        {choices("os", "Operating systems", OSES, rule.os, (os) => onChange({ os }))}
        {text(
          "languages",
          "Languages (codes, separated by commas)",
          rule.languages,
          (languages) => onChange({ languages }),
          "en, ja",
        )}
        <label class="choice">
          <input
            type="checkbox"
            checked={rule.scheduled}
            onChange={(e) => onChange({ scheduled: e.currentTarget.checked })}
          />{" "}
          Weekly schedule
        </label>
        {rule.scheduled && (
          <fieldset>
            <legend>Schedule</legend>
            {text("time_zone", "Time zone", rule.timeZone, (timeZone) => onChange({ timeZone }), "Europe/Berlin")}
            {choices("days", "Days (none means every day)", DAYS, rule.days, (days) => onChange({ days }))}
            <label for={id("from")}>From (local time)</label>
            <input
              id={id("from")}
              type="time"
              value={rule.from}
              onInput={(e) => onChange({ from: e.currentTarget.value })}
              {...describedBy(id("from"), problems.from)}
            />
            <FieldError id={`${id("from")}-error`} message={problems.from} />
            <label for={id("to")}>To (local time)</label>
            <input
              id={id("to")}
              type="time"
              value={rule.to}
              onInput={(e) => onChange({ to: e.currentTarget.value })}
              {...describedBy(id("to"), problems.to)}
            />
            <FieldError id={`${id("to")}-error`} message={problems.to} />
          </fieldset>
        )}
        {(["after", "before"] as const).map((control) => (
          <div key={control}>
            <label for={id(control)}>
              {control === "after" ? "From this moment on" : "Until this moment"} (your time zone)
            </label>
            <input
              id={id(control)}
              type="datetime-local"
              value={rule[control]}
              onInput={(e) => onChange({ [control]: e.currentTarget.value })}
              {...describedBy(id(control), problems[control])}
            />
            <FieldError id={`${id(control)}-error`} message={problems[control]} />
          </div>
        ))}
      </fieldset>
      <fieldset {...describedBy(id("variants"), problems.variants)}>
        <legend>Action</legend>
        <label class="choice">
          <input type="radio" name={id("action")} checked={!rule.split} onChange={() => onChange({ split: false })} />{" "}
          One destination
        </label>
        <label class="choice">
          <input type="radio" name={id("action")} checked={rule.split} onChange={() => onChange({ split: true })} /> A/B
          split (2–4 variants, weights summing to 100)
        </label>
        {!rule.split &&
          text("destination_url", "Send to URL", rule.destination, (destination) => onChange({ destination }))}
        {rule.split && (
          <>
            {rule.variants.map((variant, v) => {
              const setVariant = (change: Partial<typeof variant>) =>
                onChange({ variants: rule.variants.map((old, i) => (i === v ? { ...old, ...change } : old)) });
              const url = `variants.${v}.destination_url`;
              const weight = `variants.${v}.weight`;
              return (
                <div key={v} class="inline">
                  <label for={id(url)}>Variant {v + 1} URL</label>
                  <input
                    id={id(url)}
                    value={variant.url}
                    onInput={(e) => setVariant({ url: e.currentTarget.value })}
                    {...describedBy(id(url), problems[url])}
                  />
                  <label for={id(weight)}>Variant {v + 1} weight (%)</label>
                  <input
                    id={id(weight)}
                    type="number"
                    min={1}
                    max={99}
                    value={variant.weight}
                    onInput={(e) => setVariant({ weight: e.currentTarget.value })}
                    {...describedBy(id(weight), problems[weight])}
                  />
                  {rule.variants.length > 2 && (
                    <button
                      type="button"
                      onClick={() => onChange({ variants: rule.variants.filter((_, i) => i !== v) })}
                    >
                      Remove variant {v + 1}
                    </button>
                  )}
                  <FieldError id={`${id(url)}-error`} message={problems[url]} />
                  <FieldError id={`${id(weight)}-error`} message={problems[weight]} />
                </div>
              );
            })}
            {rule.variants.length < 4 && (
              <button type="button" onClick={() => onChange({ variants: [...rule.variants, { url: "", weight: "" }] })}>
                Add variant to rule {number}
              </button>
            )}
          </>
        )}
        <FieldError id={`${id("variants")}-error`} message={problems.variants} />
      </fieldset>
      <div class="buttons">
        <button type="button" disabled={number === 1} onClick={() => onMove(-1)} aria-label={`Move up rule ${number}`}>
          Move up
        </button>
        <button
          type="button"
          disabled={number === count}
          onClick={() => onMove(1)}
          aria-label={`Move down rule ${number}`}
        >
          Move down
        </button>
        <button type="button" onClick={onRemove} aria-label={`Remove rule ${number}`}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}

const LIFECYCLE: Record<QrCode["lifecycle"], string> = {
  scheduled: "Scheduled: not live until its start",
  live: "Live",
  expired: "Ended: its end has passed",
  limit_reached: "Ended: its scan limit is reached",
};

export function LifecycleEditor({ code, onSaved }: { code: QrCode; onSaved: (code: QrCode) => void }) {
  const { api } = useSession();
  const [startsAt, setStartsAt] = useState(() => localInputOf(code.starts_at));
  const [expiresAt, setExpiresAt] = useState(() => localInputOf(code.expires_at));
  const [maxScans, setMaxScans] = useState(code.max_scans === null ? "" : String(code.max_scans));
  const [expiredUrl, setExpiredUrl] = useState(code.expired_url ?? "");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [status, setStatus] = useState<string | undefined>(undefined);

  const patch = async (body: Record<string, unknown>, done: string) => {
    try {
      const updated = await call(api.PATCH("/qr-codes/{id}", { params: { path: { id: code.id } }, body }));
      setError(undefined);
      setStatus(done);
      onSaved(updated);
      return true;
    } catch (cause) {
      setError(cause);
      setStatus(undefined);
      return false;
    }
  };
  const save = (event: Event) => {
    event.preventDefault();
    void patch(
      {
        starts_at: instantOf(startsAt) ?? null,
        expires_at: instantOf(expiresAt) ?? null,
        max_scans: maxScans.trim() ? Number(maxScans) : null,
        expired_url: expiredUrl.trim() || null,
      },
      "Lifecycle saved.",
    );
  };
  const setPasswordNow = async () => {
    if (await patch({ password }, "Password set.")) setPassword("");
  };
  const problems = fieldProblems(error);
  const field = (
    key: string,
    label: string,
    input: { type: "datetime-local" | "number" | "url"; value: string; set: (v: string) => void; min?: number },
  ) => (
    <>
      <label for={`life-${key}`}>{label}</label>
      <input
        id={`life-${key}`}
        // Preact types each input type apart; these three take the same attributes here.
        type={input.type as "url"}
        min={input.min}
        value={input.value}
        onInput={(e) => input.set(e.currentTarget.value)}
        {...describedBy(`life-${key}`, problems[key])}
      />
      <FieldError id={`life-${key}-error`} message={problems[key]} />
    </>
  );
  return (
    <section aria-labelledby="lifecycle-heading" class="panel">
      <h2 id="lifecycle-heading">Lifecycle and password</h2>
      <p>
        Now: <strong>{LIFECYCLE[code.lifecycle]}</strong> ·{" "}
        {code.password_protected ? "Visitors must enter a password" : "No password"}
      </p>
      <form onSubmit={save} aria-labelledby="lifecycle-heading">
        {field("starts_at", "Starts at (your time zone; empty for now)", {
          type: "datetime-local",
          value: startsAt,
          set: setStartsAt,
        })}
        {field("expires_at", "Expires at (your time zone; empty for never)", {
          type: "datetime-local",
          value: expiresAt,
          set: setExpiresAt,
        })}
        {field("max_scans", "Maximum scans (empty for unlimited)", {
          type: "number",
          min: 1,
          value: maxScans,
          set: setMaxScans,
        })}
        {field("expired_url", "URL while not live (empty for a short notice page)", {
          type: "url",
          value: expiredUrl,
          set: setExpiredUrl,
        })}
        <div class="buttons">
          <button type="submit">Save lifecycle</button>
        </div>
        <label for="life-password">New password (8–128 characters)</label>
        <input
          id="life-password"
          type="password"
          autocomplete="new-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          {...describedBy("life-password", problems.password)}
        />
        <FieldError id="life-password-error" message={problems.password} />
        <div class="buttons">
          <button type="button" onClick={setPasswordNow} disabled={!password}>
            Set password
          </button>
          {code.password_protected && (
            <button type="button" onClick={() => patch({ password: null }, "Password removed.")}>
              Remove password
            </button>
          )}
        </div>
        {status && <p role="status">{status}</p>}
        {Object.keys(problems).length === 0 && <ErrorNotice error={error} />}
      </form>
    </section>
  );
}

type Resolution = components["schemas"]["QrCodeResolution"];

const OUTCOMES: Record<Resolution["outcome"], string> = {
  rule: "A rule decided",
  default: "No rule matched: the code's destination URL",
  scheduled: "The code is not live yet",
  expired: "The code has ended",
  limit_reached: "The code's scan limit is reached",
  password: "The visitor would be asked for the password first",
};

export function TestVisitor({ code }: { code: QrCode }) {
  const { api } = useSession();
  const [country, setCountry] = useState("");
  const [device, setDevice] = useState("");
  const [os, setOs] = useState("");
  const [language, setLanguage] = useState("");
  const [at, setAt] = useState("");
  const [result, setResult] = useState<Resolution | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  const test = async (event: Event) => {
    event.preventDefault();
    const query: NonNullable<operations["resolveQrCode"]["parameters"]["query"]> = {};
    if (country.trim()) query.country = country.trim();
    if (device) query.device = device as Device;
    if (os) query.os = os as Os;
    if (language.trim()) query.language = language.trim();
    const instant = instantOf(at);
    if (instant) query.at = instant;
    try {
      setResult(
        await call(
          api.GET("/qr-codes/{id}/resolve", {
            params: { path: { id: code.id }, query },
          }),
        ),
      );
      setError(undefined);
    } catch (cause) {
      setError(cause);
      setResult(undefined);
    }
  };
  const problems = fieldProblems(error);
  const ruleIndex = result?.rule_id ? code.rules.findIndex((r) => r.id === result.rule_id) : -1;
  const rule = ruleIndex >= 0 ? code.rules[ruleIndex] : undefined;
  const select = (key: string, label: string, value: string, set: (v: string) => void, options: string[]) => (
    <>
      <label for={`visitor-${key}`}>{label}</label>
      <select
        id={`visitor-${key}`}
        value={value}
        onChange={(e) => set(e.currentTarget.value)}
        {...describedBy(`visitor-${key}`, problems[key])}
      >
        <option value="">Any</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
      <FieldError id={`visitor-${key}-error`} message={problems[key]} />
    </>
  );
  const text = (
    key: string,
    label: string,
    value: string,
    set: (v: string) => void,
    type: "text" | "datetime-local" = "text",
  ) => (
    <>
      <label for={`visitor-${key}`}>{label}</label>
      <input
        id={`visitor-${key}`}
        type={type as "text"}
        value={value}
        onInput={(e) => set(e.currentTarget.value)}
        {...describedBy(`visitor-${key}`, problems[key])}
      />
      <FieldError id={`visitor-${key}-error`} message={problems[key]} />
    </>
  );
  return (
    <section aria-labelledby="visitor-heading" class="panel">
      <h2 id="visitor-heading">Test a visitor</h2>
      <p>Where a visitor like this would go. Nothing is counted.</p>
      <form onSubmit={test} aria-labelledby="visitor-heading">
        {text("country", "Visitor's country (ISO code)", country, setCountry)}
        {select("device", "Visitor's device", device, setDevice, DEVICES)}
        {select("os", "Visitor's operating system", os, setOs, OSES)}
        {text("language", "Visitor's language (code)", language, setLanguage)}
        {text("at", "Time of the scan (your time zone; empty for now)", at, setAt, "datetime-local")}
        <div class="buttons">
          <button type="submit">Test</button>
        </div>
      </form>
      {Object.keys(problems).length === 0 && <ErrorNotice error={error} />}
      {result && (
        <dl class="resolution" aria-live="polite">
          <dt>Outcome</dt>
          <dd>{OUTCOMES[result.outcome]}</dd>
          <dt>Destination</dt>
          <dd class="text">{result.destination_url ?? "None: a notice page, or the password form"}</dd>
          <dt>Rule</dt>
          <dd class="text">
            {rule
              ? `Rule ${ruleIndex + 1}${rule.name ? `: ${rule.name}` : ""}`
              : result.rule_id
                ? result.rule_id
                : "None"}
          </dd>
          <dt>Variant</dt>
          <dd>{result.variant === null ? "None" : `Variant ${result.variant + 1}`}</dd>
        </dl>
      )}
    </section>
  );
}
