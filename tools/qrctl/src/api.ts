import type { Command } from "commander";
import { createApiClient, type ApiClient, type ApiErrorBody, type components } from "@qrplatform/api-client";
import { CliError, usageError } from "./errors.js";

/** Where `npm start` serves the REST API unless told otherwise. */
export const DEFAULT_API_URL = "http://127.0.0.1:8080/api/v1";

/** The global options that locate the REST API and the key to call it with. */
export interface ApiFlags {
  apiUrl?: string | undefined;
  apiKey?: string | undefined;
}

/** The REST API as a command calls it: the typed client, its base URL and its key. */
export interface ApiSession {
  client: ApiClient;
  baseUrl: string;
  key: string;
}

/**
 * The public REST API with an account's API key, for the commands that act as that account (QR codes):
 * --api-url, else QRCTL_API_URL, else `npm start`'s address; --api-key, else QRCTL_API_KEY. Unlike the
 * admin commands, these go through the edge like any client: scopes, quotas and Idempotency-Keys apply.
 */
export function apiSession(command: Command, env: NodeJS.ProcessEnv = process.env): ApiSession {
  const flags = command.optsWithGlobals<ApiFlags>();
  const baseUrl = (flags.apiUrl || env.QRCTL_API_URL || DEFAULT_API_URL).replace(/\/+$/, "");
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw usageError(`--api-url must be an http:// or https:// URL such as ${DEFAULT_API_URL}, not "${baseUrl}"`);
  }
  const key = flags.apiKey || env.QRCTL_API_KEY;
  if (!key) throw usageError("no API key: give --api-key or set QRCTL_API_KEY (create one with `qrctl keys create`)");
  return { client: createApiClient({ baseUrl, key }), baseUrl, key };
}

/** The field problems an error object's details name, as `field: message` separated by `; `; empty when none. */
export function fieldProblemsOf(error: { details?: unknown }): string {
  const fields = (error.details as { fields?: components["schemas"]["FieldError"][] } | undefined)?.fields ?? [];
  return fields.map((f) => `${f.field}: ${f.message}`).join("; ");
}

/** An answer of the API that is an error, as one line: its message and code, and the details when they name fields. */
export function describeApiError(status: number, body: unknown): string {
  const error = (body as Partial<ApiErrorBody> | undefined)?.error;
  if (!error) return `the API answered ${status}`;
  return `${[error.message, fieldProblemsOf(error)].filter(Boolean).join(" ")} (${status} ${error.code})`;
}

/** A call that could not reach the API at all, said in one line. */
export function unreachable(baseUrl: string, error: unknown): CliError {
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return new CliError(
    cause === "ECONNREFUSED"
      ? `cannot reach the API at ${baseUrl} (connection refused); start it with \`npm start\` or check --api-url`
      : `cannot reach the API at ${baseUrl}: ${(error as Error).message}`,
  );
}
