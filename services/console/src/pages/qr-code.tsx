import { useEffect, useMemo, useState } from "preact/hooks";
import type { QrCode } from "@qrplatform/api-client";
import { call } from "../api.ts";
import {
  buckets,
  hourlyRange,
  type Interval,
  isoDay,
  MAX_HOURLY_DAYS,
  ruleRows,
  seriesOf,
  shares,
} from "../chart-data.ts";
import { ScansChart } from "../chart.tsx";
import { exportImage } from "../preview.ts";
import { navigate } from "../router.ts";
import { allWorkspaces } from "../workspaces.ts";
import { ErrorNotice, FieldError, fieldProblems, useLoad, useSession } from "../ui.tsx";
import { LifecycleEditor, RulesEditor, TestVisitor } from "./qr-code-rules.tsx";

export function QrCodePage({ id }: { id: string }) {
  const { api } = useSession();
  const code = useLoad(() => call(api.GET("/qr-codes/{id}", { params: { path: { id } } })), [api, id]);
  if (code.error) return <ErrorNotice error={code.error} />;
  if (!code.data) return <p>Loading…</p>;
  return (
    <article aria-labelledby="code-heading">
      <h1 id="code-heading">{code.data.name}</h1>
      <div class="code-top">
        <CodeImage code={code.data} />
        <div>
          <ShortLinks code={code.data} />
          <Downloads code={code.data} />
        </div>
      </div>
      <EditCode code={code.data} onSaved={(saved) => code.setData(saved)} />
      <RulesEditor code={code.data} onSaved={(saved) => code.setData(saved)} />
      <LifecycleEditor code={code.data} onSaved={(saved) => code.setData(saved)} />
      <TestVisitor code={code.data} />
      <AnalyticsSection code={code.data} />
    </article>
  );
}

function CodeImage({ code }: { code: QrCode }) {
  const { api } = useSession();
  const [url, setUrl] = useState<string | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    let objectUrl: string | undefined;
    exportImage(api, code.id, "png", 512).then((blob) => {
      objectUrl = URL.createObjectURL(blob);
      setUrl(objectUrl);
    }, setError);
    return () => {
      if (objectUrl) URL.revokeObjectURL(objectUrl);
    };
  }, [api, code.id, code.updated_at]);
  return (
    <div class="code-image">
      {url ? <img src={url} alt="QR code" width={256} height={256} /> : <p>Drawing…</p>}
      <ErrorNotice error={error} />
    </div>
  );
}

function ShortLinks({ code }: { code: QrCode }) {
  const links = [...new Set([code.vanity_url, code.canonical_url])];
  const [copied, setCopied] = useState<string | undefined>(undefined);
  const copy = async (link: string) => {
    await navigator.clipboard.writeText(link);
    setCopied(link);
  };
  return (
    <section aria-labelledby="links-heading">
      <h2 id="links-heading">Short links</h2>
      <ul class="links">
        {links.map((link) => (
          <li key={link}>
            <code class="text">{link}</code>{" "}
            <button type="button" onClick={() => copy(link)} aria-label={`Copy ${link}`}>
              Copy
            </button>
            {copied === link && <span role="status"> Copied</span>}
          </li>
        ))}
      </ul>
      <p class="text">
        Goes to{" "}
        <a href={code.destination_url} rel="noreferrer noopener" target="_blank">
          {code.destination_url}
        </a>{" "}
        · {code.status === "active" ? "Active" : "Paused"} · {code.total_scans} scans
      </p>
    </section>
  );
}

function Downloads({ code }: { code: QrCode }) {
  const { api } = useSession();
  const [size, setSize] = useState("1024");
  const [error, setError] = useState<unknown>(undefined);
  const download = async (format: "png" | "svg" | "jpg") => {
    try {
      const blob = await exportImage(api, code.id, format, Number(size));
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = `${
        code.name
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, "-")
          .replace(/^-|-$/g, "") || "qr-code"
      }-${size}.${format}`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setError(undefined);
    } catch (cause) {
      setError(cause);
    }
  };
  return (
    <section aria-labelledby="downloads-heading">
      <h2 id="downloads-heading">Download</h2>
      <label for="download-size">Size in pixels</label>
      <select id="download-size" value={size} onChange={(e) => setSize(e.currentTarget.value)}>
        {["256", "512", "1024", "2048", "4096"].map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
      <div class="buttons">
        <button type="button" onClick={() => download("png")}>
          Download PNG
        </button>
        <button type="button" onClick={() => download("svg")}>
          Download SVG
        </button>
        <button type="button" onClick={() => download("jpg")}>
          Download JPG
        </button>
      </div>
      <ErrorNotice error={error} />
    </section>
  );
}

function EditCode({ code, onSaved }: { code: QrCode; onSaved: (code: QrCode) => void }) {
  const { api, refreshAccount } = useSession();
  const workspaces = useLoad(() => allWorkspaces(api), [api]);
  const [name, setName] = useState(code.name);
  const [destination, setDestination] = useState(code.destination_url);
  const [tags, setTags] = useState(code.tags.join(", "));
  const [workspaceId, setWorkspaceId] = useState(code.workspace_id ?? "");
  const [error, setError] = useState<unknown>(undefined);
  const [saved, setSaved] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const path = { params: { path: { id: code.id } } };

  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const updated = await call(
        api.PATCH("/qr-codes/{id}", {
          ...path,
          body: {
            name,
            destination_url: destination,
            tags: tags
              .split(",")
              .map((tag) => tag.trim())
              .filter(Boolean),
            workspace_id: workspaceId || null,
          },
        }),
      );
      setError(undefined);
      setSaved(true);
      onSaved(updated);
      refreshAccount();
    } catch (cause) {
      setError(cause);
      setSaved(false);
    }
  };
  const toggle = async () => {
    try {
      onSaved(
        await call(
          api.PATCH("/qr-codes/{id}", { ...path, body: { status: code.status === "active" ? "paused" : "active" } }),
        ),
      );
    } catch (cause) {
      setError(cause);
    }
  };
  const remove = async () => {
    try {
      await call(api.DELETE("/qr-codes/{id}", path));
      refreshAccount();
      navigate("/qr-codes");
    } catch (cause) {
      setError(cause);
    }
  };
  const problems = fieldProblems(error);
  const aria = (id: string, field: string) =>
    problems[field] ? { "aria-invalid": true, "aria-describedby": `${id}-error` } : {};
  return (
    <section aria-labelledby="edit-heading" class="panel">
      <h2 id="edit-heading">Edit</h2>
      <form onSubmit={save}>
        <label for="edit-name">Name</label>
        <input
          id="edit-name"
          required
          maxLength={200}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          {...aria("edit-name", "name")}
        />
        <FieldError id="edit-name-error" message={problems.name} />
        <label for="edit-destination">Destination URL</label>
        <input
          id="edit-destination"
          type="url"
          required
          value={destination}
          onInput={(e) => setDestination(e.currentTarget.value)}
          {...aria("edit-destination", "destination_url")}
        />
        <FieldError id="edit-destination-error" message={problems.destination_url} />
        <label for="edit-tags">Tags (separated by commas)</label>
        <input
          id="edit-tags"
          value={tags}
          onInput={(e) => setTags(e.currentTarget.value)}
          {...aria("edit-tags", "tags")}
        />
        <FieldError id="edit-tags-error" message={problems.tags} />
        <label for="edit-workspace">Workspace</label>
        <select id="edit-workspace" value={workspaceId} onChange={(e) => setWorkspaceId(e.currentTarget.value)}>
          <option value="">No workspace</option>
          {workspaces.data?.map((workspace) => (
            <option key={workspace.id} value={workspace.id}>
              {workspace.name}
            </option>
          ))}
        </select>
        <div class="buttons">
          <button type="submit">Save changes</button>
          <button type="button" onClick={toggle}>
            {code.status === "active" ? "Pause" : "Resume"}
          </button>
          {confirming ? (
            <>
              <button type="button" class="danger" onClick={remove}>
                Confirm delete
              </button>
              <button type="button" onClick={() => setConfirming(false)}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" onClick={() => setConfirming(true)}>
              Delete
            </button>
          )}
        </div>
        {saved && <p role="status">Saved.</p>}
        {Object.keys(problems).length === 0 && <ErrorNotice error={error} />}
      </form>
    </section>
  );
}

const BREAKDOWNS = [
  ["devices", "Scans by device"],
  ["operating_systems", "Scans by operating system"],
  ["browsers", "Scans by browser"],
  ["referrers", "Scans by referrer"],
] as const;

export function AnalyticsSection({ code }: { code: QrCode }) {
  const { api } = useSession();
  const [to, setTo] = useState(() => isoDay(new Date()));
  const [from, setFrom] = useState(() => isoDay(new Date(), 29));
  const [interval, setBucketInterval] = useState<Interval>("day");
  const analytics = useLoad(
    () =>
      call(api.GET("/qr-codes/{id}/analytics", { params: { path: { id: code.id }, query: { from, to, interval } } })),
    [api, code.id, from, to, interval],
  );
  // Every answer names the first day the API keeps hours for (the last answer stays while the next
  // loads); before the first, the calendar's start, and the API's refusal says the rest.
  const hourlyFrom = analytics.data?.hourly_available_from ?? "2000-01-01";
  const rows = useMemo(
    () => (analytics.data ? buckets(analytics.data, analytics.data.interval) : undefined),
    [analytics.data],
  );
  const series = useMemo(() => (rows ? seriesOf(rows) : undefined), [rows]);
  const byRule = useMemo(
    () => (analytics.data ? ruleRows(analytics.data.rules, code.rules) : undefined),
    [analytics.data, code.rules],
  );
  const problems = fieldProblems(analytics.error);
  const hourly = interval === "hour";
  const earliest = hourly ? hourlyRange({ from, to }, hourlyFrom).earliest : undefined;
  /** Sets the range, kept within what the API counts hours for while hours are shown; answers the range set. */
  const setRange = (range: { from: string; to: string }, bucket: Interval = interval) => {
    const kept = bucket === "hour" ? hourlyRange(range, hourlyFrom) : range;
    setFrom(kept.from);
    setTo(kept.to);
    return kept;
  };
  const choose = (bucket: Interval) => {
    setBucketInterval(bucket);
    setRange({ from, to }, bucket);
  };
  const shown = analytics.data?.interval ?? "day";
  return (
    <section aria-labelledby="analytics-heading">
      <h2 id="analytics-heading">Analytics</h2>
      <form class="inline" onSubmit={(e) => e.preventDefault()} aria-label="Date range">
        <fieldset class="inline">
          <legend>Buckets</legend>
          {(["day", "hour"] as const).map((bucket) => (
            <label key={bucket}>
              <input
                type="radio"
                name="interval"
                value={bucket}
                checked={interval === bucket}
                onChange={() => choose(bucket)}
              />{" "}
              {bucket === "day" ? "Day" : "Hour"}
            </label>
          ))}
        </fieldset>
        <label for="range-from">From</label>
        <input
          id="range-from"
          type="date"
          value={from}
          min={earliest}
          max={to}
          aria-describedby={hourly ? "range-hint" : undefined}
          onChange={(e) => {
            // A day moved into bounds is shown moved: the state may not change, so nothing would redraw it.
            e.currentTarget.value = setRange({ from: e.currentTarget.value, to }).from;
          }}
        />
        <label for="range-to">To</label>
        <input
          id="range-to"
          type="date"
          value={to}
          min={hourly ? hourlyFrom : undefined}
          aria-describedby={hourly ? "range-hint" : undefined}
          onChange={(e) => {
            e.currentTarget.value = setRange({ from, to: e.currentTarget.value }).to;
          }}
        />
        <button type="button" onClick={analytics.reload}>
          Refresh
        </button>
      </form>
      {hourly && (
        <p id="range-hint" class="hint">
          Hour buckets (UTC) cover at most {MAX_HOURLY_DAYS} days, from {hourlyFrom} on: they are counted from the raw
          scans, and older scans keep only their daily counts.
        </p>
      )}
      <FieldError id="range-error" message={problems.from ?? problems.to ?? problems.interval} />
      {Object.keys(problems).length === 0 && <ErrorNotice error={analytics.error} />}
      {analytics.data && series && rows && byRule && (
        <>
          <p>
            <strong>{analytics.data.total_scans}</strong> scans and <strong>{analytics.data.unique_scans}</strong>{" "}
            unique visitors from {analytics.data.from} to {analytics.data.to} (UTC days).
          </p>
          <ScansChart data={series} interval={shown} label="Scans over time" />
          {/* Keyed by the interval: a month of hours (744 rows) opens only when asked for. */}
          <details key={shown}>
            <summary>Scans per {shown} as a table</summary>
            <table>
              <caption>Scans per {shown}</caption>
              <thead>
                <tr>
                  <th scope="col">{shown === "hour" ? "Hour (UTC)" : "Day"}</th>
                  <th scope="col">Scans</th>
                  <th scope="col">Unique visitors</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.label}>
                    <td>{row.label}</td>
                    <td>{row.scans}</td>
                    <td>{row.unique}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
          <div class="breakdowns">
            <Breakdown title="Scans by country" heading="Country" rows={analytics.data.countries} />
            <Breakdown title="Scans by rule" heading="Rule" rows={byRule.rules} />
            {byRule.variants.length > 0 && (
              <Breakdown title="Scans by variant" heading="Variant" rows={byRule.variants} />
            )}
            {BREAKDOWNS.map(([key, title]) => (
              <Breakdown
                key={key}
                title={title}
                heading={title.replace("Scans by ", "").replace(/^./, (c) => c.toUpperCase())}
                rows={analytics.data![key]}
              />
            ))}
          </div>
        </>
      )}
    </section>
  );
}

function Breakdown({
  title,
  heading,
  rows,
}: {
  title: string;
  heading: string;
  rows: { value: string; scans: number }[];
}) {
  return (
    <table class="breakdown">
      <caption>{title}</caption>
      <thead>
        <tr>
          <th scope="col">{heading}</th>
          <th scope="col">Scans</th>
          <th scope="col">Share</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={3}>No scans in this range.</td>
          </tr>
        )}
        {shares(rows).map((row) => (
          <tr key={row.value}>
            <td class="text">{row.value}</td>
            <td>{row.scans}</td>
            <td>
              {/* The bar repeats the percentage printed beside it; it is never the only signal. */}
              <span class="bar-track" aria-hidden="true">
                <span class="bar-fill" style={{ width: `${row.percent}%` }} />
              </span>{" "}
              {row.percent}%
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
