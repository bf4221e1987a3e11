// Small pieces every page uses: the error notice, a labelled field, and the session's context.
import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";
import type { ApiClient } from "@qrplatform/api-client";
import { ApiError } from "./api.ts";
import { plainWords } from "./errors.ts";
import { BASE, followLink } from "./router.ts";

/** What a signed-in page needs: the client, and a way to refresh the header's account figures. */
export interface Session {
  api: ApiClient;
  refreshAccount: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in page");
  return session;
}

/** An error in plain words, with the request id to quote to support. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const apiError = error instanceof ApiError ? error : undefined;
  return (
    <div class="error" role="alert">
      <p>{apiError ? plainWords(apiError) : String((error as Error).message ?? error)}</p>
      {apiError?.requestId && (
        <p class="request-id">
          Request id: <code>{apiError.requestId}</code>
        </p>
      )}
    </div>
  );
}

/** A link to a console route. */
export function Link({
  to,
  children,
  ...rest
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  "aria-current"?: "page";
}) {
  return (
    <a href={`${BASE}${to}`} onClick={followLink(to)} {...rest}>
      {children}
    </a>
  );
}

/** Loads something, again whenever `deps` change or `reload` is called. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (cause: unknown) => {
        if (!current) return;
        setError(cause);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, loading, reload, setData };
}

/** The problems the API named for fields, by field. */
export function fieldProblems(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError)) return {};
  return Object.fromEntries(error.fields.map((f) => [f.field, f.message]));
}

/** A field's refusal, tied to its control by id so screen readers announce it with the control. */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <p id={id} class="field-error">
      {message}
    </p>
  );
}
