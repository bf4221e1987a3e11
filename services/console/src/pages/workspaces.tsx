import { useState } from "preact/hooks";
import type { Workspace } from "@qrplatform/api-client";
import { call, idempotencyKey } from "../api.ts";
import { ErrorNotice, FieldError, fieldProblems, Link, useLoad, useSession } from "../ui.tsx";

const PAGE_SIZE = 20;

export function WorkspacesPage() {
  const { api, refreshAccount } = useSession();
  // The cursors of the pages before this one, so "Previous page" goes back without the API walking backwards.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(
    () => call(api.GET("/workspaces", { params: { query: { limit: PAGE_SIZE, ...(cursor && { cursor }) } } })),
    [api, cursor],
  );
  const [actionError, setActionError] = useState<unknown>(undefined);
  const changed = () => {
    page.reload();
    refreshAccount();
  };

  return (
    <section aria-labelledby="workspaces-heading">
      <h1 id="workspaces-heading">Workspaces</h1>
      <CreateWorkspace onCreated={changed} />
      <ErrorNotice error={page.error ?? actionError} />
      {page.data && page.data.data.length === 0 && <p>No workspaces yet.</p>}
      {page.data && page.data.data.length > 0 && (
        <table>
          <caption class="visually-hidden">Workspaces of the account</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">QR codes</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {page.data.data.map((workspace) => (
              <WorkspaceRow key={workspace.id} workspace={workspace} onChanged={changed} onError={setActionError} />
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        <button type="button" disabled={cursors.length === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() => setCursors([...cursors, page.data!.next_cursor!])}
        >
          Next page
        </button>
      </div>
    </section>
  );
}

function CreateWorkspace({ onCreated }: { onCreated: () => void }) {
  const { api } = useSession();
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const submit = async (event: Event) => {
    event.preventDefault();
    try {
      await call(
        api.POST("/workspaces", { params: { header: { "Idempotency-Key": idempotencyKey() } }, body: { name } }),
      );
      setName("");
      setError(undefined);
      onCreated();
    } catch (cause) {
      setError(cause);
    }
  };
  const problems = fieldProblems(error);
  return (
    <form class="inline" onSubmit={submit} aria-label="New workspace">
      <label for="new-workspace-name">Workspace name</label>
      <input
        id="new-workspace-name"
        value={name}
        required
        maxLength={100}
        onInput={(e) => setName(e.currentTarget.value)}
        aria-invalid={problems.name ? true : undefined}
        aria-describedby={problems.name ? "new-workspace-name-error" : undefined}
      />
      <button type="submit">Create workspace</button>
      <FieldError id="new-workspace-name-error" message={problems.name} />
      {!problems.name && <ErrorNotice error={error} />}
    </form>
  );
}

function WorkspaceRow({
  workspace,
  onChanged,
  onError,
}: {
  workspace: Workspace;
  onChanged: () => void;
  onError: (error: unknown) => void;
}) {
  const { api } = useSession();
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(workspace.name);
  const [confirming, setConfirming] = useState(false);
  const path = { params: { path: { workspace_id: workspace.id } } };
  const rename = async (event: Event) => {
    event.preventDefault();
    try {
      await call(api.PATCH("/workspaces/{workspace_id}", { ...path, body: { name } }));
      setRenaming(false);
      onError(undefined);
      onChanged();
    } catch (cause) {
      onError(cause);
    }
  };
  const remove = async () => {
    try {
      await call(api.DELETE("/workspaces/{workspace_id}", path));
      onError(undefined);
      onChanged();
    } catch (cause) {
      onError(cause);
      setConfirming(false);
    }
  };
  return (
    <tr>
      <td>
        {renaming ? (
          <form class="inline" onSubmit={rename}>
            <label for={`rename-${workspace.id}`}>New name for {workspace.name}</label>
            <input
              id={`rename-${workspace.id}`}
              value={name}
              required
              maxLength={100}
              onInput={(e) => setName(e.currentTarget.value)}
            />
            <button type="submit">Save</button>
            <button type="button" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </form>
        ) : (
          <Link to={`/qr-codes?workspace=${workspace.id}`}>{workspace.name}</Link>
        )}
      </td>
      <td>{workspace.qr_code_count}</td>
      <td class="actions">
        {!renaming && (
          <button type="button" onClick={() => setRenaming(true)} aria-label={`Rename ${workspace.name}`}>
            Rename
          </button>
        )}
        {confirming ? (
          <>
            <button type="button" class="danger" onClick={remove} aria-label={`Confirm delete ${workspace.name}`}>
              Confirm delete
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <button type="button" onClick={() => setConfirming(true)} aria-label={`Delete ${workspace.name}`}>
            Delete
          </button>
        )}
      </td>
    </tr>
  );
}
