import { useEffect, useRef, useState } from "preact/hooks";
import type { QrCode, Workspace } from "@qrplatform/api-client";
import { call, idempotencyKey } from "../api.ts";
import { BATCH_SIZE, type FailedRow, readImport } from "../csv.ts";
import { allWorkspaces } from "../workspaces.ts";
import { ErrorNotice, Link, useLoad, useSession } from "../ui.tsx";

const PAGE_SIZE = 50;

/** How long the search waits after the last keystroke before asking the API: one list per pause. */
const SEARCH_DEBOUNCE_MS = 300;

export function QrCodesPage() {
  const { api } = useSession();
  const [workspaceId, setWorkspaceId] = useState(() => new URLSearchParams(location.search).get("workspace") ?? "");
  const [status, setStatus] = useState<"" | "active" | "paused">("");
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  useEffect(() => {
    const timer = setTimeout(() => setQuery(search.trim()), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [search]);
  const workspaces = useLoad(() => allWorkspaces(api), [api]);
  // The API filters by workspace, name and status; pages are appended as "Load more" asks for them,
  // and a new filter starts over: a cursor is kept with its filter, as the API accepts it only there.
  const filter = JSON.stringify([workspaceId, query, status]);
  const [more, setMore] = useState<{ filter: string; cursor: string } | undefined>(undefined);
  const cursor = more?.filter === filter ? more.cursor : undefined;
  const loaded = useRef<QrCode[]>([]);
  const page = useLoad(async () => {
    const answer = await call(
      api.GET("/qr-codes", {
        params: {
          query: {
            limit: PAGE_SIZE,
            ...(workspaceId && { workspace_id: workspaceId }),
            ...(query && { q: query }),
            ...(status && { status }),
            ...(cursor && { cursor }),
          },
        },
      }),
    );
    return { codes: cursor ? [...loaded.current, ...answer.data] : answer.data, next_cursor: answer.next_cursor };
  }, [api, workspaceId, query, status, cursor]);
  const shown = page.data?.codes ?? [];
  loaded.current = shown;
  const [actionError, setActionError] = useState<unknown>(undefined);

  const workspaceName = (id: string | null) =>
    (id && workspaces.data?.find((workspace) => workspace.id === id)?.name) || "—";
  const startOver = () => {
    setMore(undefined);
    page.reload();
  };

  const setCodeStatus = async (code: QrCode, next: "active" | "paused") => {
    try {
      await call(api.PATCH("/qr-codes/{id}", { params: { path: { id: code.id } }, body: { status: next } }));
      setActionError(undefined);
      startOver();
    } catch (cause) {
      setActionError(cause);
    }
  };

  return (
    <section aria-labelledby="codes-heading">
      <h1 id="codes-heading">QR codes</h1>
      <p>
        <Link to="/qr-codes/new" class="button">
          New QR code
        </Link>
      </p>
      <search class="filters" aria-label="Filter QR codes">
        <label for="code-search">Search by name</label>
        <input id="code-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        <label for="code-workspace">Workspace</label>
        <select id="code-workspace" value={workspaceId} onChange={(e) => setWorkspaceId(e.currentTarget.value)}>
          <option value="">All workspaces</option>
          {workspaces.data?.map((workspace) => (
            <option key={workspace.id} value={workspace.id}>
              {workspace.name}
            </option>
          ))}
        </select>
        <label for="code-status">Status</label>
        <select id="code-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
          <option value="">Any status</option>
          <option value="active">Active</option>
          <option value="paused">Paused</option>
        </select>
      </search>
      <ErrorNotice error={page.error ?? workspaces.error ?? actionError} />
      <table>
        <caption class="visually-hidden">QR codes</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Tags</th>
            <th scope="col">Workspace</th>
            <th scope="col">Scans</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((code) => (
            <tr key={code.id}>
              <td class="text">
                <Link to={`/qr-codes/${code.id}`}>{code.name}</Link>
              </td>
              <td>{code.status === "active" ? "Active" : "Paused"}</td>
              <td class="text">{code.tags.join(", ")}</td>
              <td class="text">{workspaceName(code.workspace_id)}</td>
              <td>{code.total_scans}</td>
              <td>
                <button
                  type="button"
                  aria-label={`${code.status === "active" ? "Pause" : "Resume"} ${code.name}`}
                  onClick={() => setCodeStatus(code, code.status === "active" ? "paused" : "active")}
                >
                  {code.status === "active" ? "Pause" : "Resume"}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!page.loading && shown.length === 0 && <p>No QR codes match.</p>}
      <p>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() => page.data?.next_cursor && setMore({ filter, cursor: page.data.next_cursor })}
        >
          Load more
        </button>
      </p>
      <CsvImport workspaces={workspaces.data ?? []} onImported={startOver} />
    </section>
  );
}

function CsvImport({ workspaces, onImported }: { workspaces: Workspace[]; onImported: () => void }) {
  const { api, refreshAccount } = useSession();
  const [workspaceId, setWorkspaceId] = useState("");
  const [file, setFile] = useState<File | undefined>(undefined);
  const [progress, setProgress] = useState<{ done: number; total: number } | undefined>(undefined);
  const [failed, setFailed] = useState<FailedRow[]>([]);
  const [created, setCreated] = useState<number | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const target = workspaceId || workspaces[0]?.id || "";

  const run = async (event: Event) => {
    event.preventDefault();
    if (!file || !target) return;
    setError(undefined);
    setCreated(undefined);
    try {
      const { rows, failed: unreadable } = await readImport(await file.text());
      const failures = [...unreadable];
      let made = 0;
      setProgress({ done: 0, total: rows.length });
      for (let start = 0; start < rows.length; start += BATCH_SIZE) {
        const batch = rows.slice(start, start + BATCH_SIZE);
        const answer = await call(
          api.POST("/workspaces/{workspace_id}/qr-codes/bulk", {
            params: { path: { workspace_id: target }, header: { "Idempotency-Key": idempotencyKey() } },
            body: { items: batch.map((row) => row.item) },
          }),
        );
        made += answer.created;
        for (const result of answer.results) {
          if ("error" in result) {
            const row = batch[result.index]!;
            const fields = (result.error.details as { fields?: { field: string; message: string }[] } | undefined)
              ?.fields;
            failures.push({
              line: row.line,
              name: row.item.name,
              reason: fields?.length ? fields.map((f) => `${f.field} ${f.message}`).join("; ") : result.error.message,
            });
          }
        }
        setProgress({ done: Math.min(start + BATCH_SIZE, rows.length), total: rows.length });
      }
      setFailed(failures.sort((a, b) => a.line - b.line));
      setCreated(made);
      onImported();
      refreshAccount();
    } catch (cause) {
      setError(cause);
    }
  };

  return (
    <section aria-labelledby="import-heading" class="panel">
      <h2 id="import-heading">Import from a CSV file</h2>
      <p class="help">
        Columns: <code>name</code>, <code>destination_url</code> (both required), <code>tags</code> (separated by
        <code>;</code>), <code>utm_source</code>, <code>utm_medium</code>, <code>utm_campaign</code>,{" "}
        <code>vanity_domain_id</code>, <code>vanity_slug</code>.
      </p>
      <form onSubmit={run}>
        <label for="import-file">CSV file</label>
        <input
          id="import-file"
          type="file"
          accept=".csv,text/csv"
          required
          onChange={(e) => setFile(e.currentTarget.files?.[0])}
        />
        <label for="import-workspace">Import into workspace</label>
        <select id="import-workspace" value={target} onChange={(e) => setWorkspaceId(e.currentTarget.value)}>
          {workspaces.map((workspace) => (
            <option key={workspace.id} value={workspace.id}>
              {workspace.name}
            </option>
          ))}
        </select>
        <button type="submit" disabled={!target}>
          Import
        </button>
      </form>
      {progress && (
        <p>
          <label for="import-progress">Import progress</label>{" "}
          <progress id="import-progress" max={Math.max(progress.total, 1)} value={progress.done} />{" "}
          <span>
            {progress.done} of {progress.total} rows sent
          </span>
        </p>
      )}
      {created !== undefined && (
        <p role="status">
          {created} QR codes created, {failed.length} rows failed.
        </p>
      )}
      <ErrorNotice error={error} />
      {failed.length > 0 && (
        <table>
          <caption>Rows that failed</caption>
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Name</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {failed.map((row) => (
              <tr key={row.line}>
                <td>{row.line}</td>
                <td class="text">{row.name}</td>
                <td class="text">{row.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
