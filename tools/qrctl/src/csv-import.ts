// The bulk import of QR codes from a CSV file: rows become bulk creates of up to 100 items, each call
// under an Idempotency-Key derived from the workspace, the file's content and the rows it carries. A
// run that was interrupted is resumed by running it again: the calls that were answered are replayed
// by the API (nothing is created twice, no capacity is used twice), the call that was cut off is
// finished or replayed, and the rest run. Keys live 24 hours: resume within a day.
import { createHash } from "node:crypto";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import type { ApiClient, components } from "@qrplatform/api-client";
import { describeApiError } from "./api.js";
import { CSV_COLUMNS } from "./csv-columns.js";
import { CliError, usageError } from "./errors.js";

type CreateItem = components["schemas"]["QrCodeCreate"];

/** Calls answered "not now" (a batch still running, rate limited, a service restarting) are retried this often. */
const MAX_ATTEMPTS = 8;

/** A CSV file read for import: its header, its rows by their own columns, and the hash that names it. */
export interface ImportFile {
  header: string[];
  rows: Record<string, string>[];
  /** SHA-256 of the file's bytes, hex: with the workspace, the root of every Idempotency-Key of its import. */
  contentHash: string;
}

/** Reads a CSV whose first line names its columns; unknown columns and malformed CSV are refused before anything is sent. */
export function readImportFile(content: Buffer): ImportFile {
  let records: string[][];
  try {
    records = parse(content, { bom: true, skip_empty_lines: true, relax_column_count: false });
  } catch (error) {
    throw usageError(`the CSV cannot be read: ${(error as Error).message}`);
  }
  const [header, ...lines] = records;
  if (!header) throw usageError("the CSV is empty: its first line must name the columns, such as name,destination_url");
  const unknown = header.filter((column) => !(CSV_COLUMNS as readonly string[]).includes(column));
  if (unknown.length > 0) throw usageError(`unknown CSV column ${unknown.join(", ")}; the columns are ${CSV_COLUMNS.join(", ")}`);
  for (const required of ["name", "destination_url"]) {
    if (!header.includes(required)) throw usageError(`the CSV has no ${required} column`);
  }
  const rows = lines.map((line) => Object.fromEntries(header.map((column, i) => [column, line[i] ?? ""])));
  return { header, rows, contentHash: createHash("sha256").update(content).digest("hex") };
}

/** The create body of a row: empty cells are left out; tags are separated by `;`. */
export function itemOf(row: Record<string, string>): CreateItem {
  const present = (column: string) => (row[column] ? row[column] : undefined);
  const utm = { source: present("utm_source"), medium: present("utm_medium"), campaign: present("utm_campaign") };
  const tags = present("tags")?.split(";").map((tag) => tag.trim()).filter(Boolean);
  return {
    name: row.name ?? "",
    destination_url: row.destination_url ?? "",
    ...(tags && { tags }),
    ...(present("vanity_domain_id") && { vanity_domain_id: present("vanity_domain_id") }),
    ...(present("vanity_slug") && { vanity_slug: present("vanity_slug") }),
    ...(Object.values(utm).some(Boolean) && { utm: Object.fromEntries(Object.entries(utm).filter(([, v]) => v)) }),
  };
}

/** One bulk call: rows `first` to `last` (0-based, inclusive) of the file. */
export interface Batch {
  first: number;
  last: number;
  /** The same for the same file and rows, whichever run sends it. */
  idempotencyKey: string;
}

/**
 * The file's rows in calls of `size`, each with its key: `qrctl-import-<hash>-<first row>-<last row>`,
 * the hash of the workspace and the file's content. The workspace is in it because the API refuses a
 * key sent again to another path: the same file imported into a second workspace is a new import.
 */
export function batchesOf(file: ImportFile, workspaceId: string, size: number): Batch[] {
  const importHash = createHash("sha256").update(`${workspaceId}\0${file.contentHash}`).digest("hex").slice(0, 32);
  const batches: Batch[] = [];
  for (let first = 0; first < file.rows.length; first += size) {
    const last = Math.min(first + size, file.rows.length) - 1;
    batches.push({ first, last, idempotencyKey: `qrctl-import-${importHash}-${first + 1}-${last + 1}` });
  }
  return batches;
}

/** What became of one row. */
export type RowOutcome = { created: true; id: string } | { created: false; error: string };

/** What one batch came to, and whether its answer was one an earlier run had already received. */
export interface BatchOutcome {
  rows: RowOutcome[];
  replayed: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends one batch, retrying with the same key what the API answers "not now" (409 in progress, 429, 503,
 * 504, no answer at all): the key makes each retry safe. A refusal of the call as a whole is an error.
 */
export async function sendBatch(client: ApiClient, workspaceId: string, file: ImportFile, batch: Batch): Promise<BatchOutcome> {
  const items = file.rows.slice(batch.first, batch.last + 1).map(itemOf);
  for (let attempt = 1; ; attempt++) {
    let answer: Awaited<ReturnType<typeof post>> | undefined;
    let failure: unknown;
    try {
      answer = await post();
    } catch (error) {
      failure = error;
    }
    const status = answer?.response.status;
    if (answer?.data) {
      return {
        replayed: answer.response.headers.get("idempotent-replayed") === "true",
        rows: answer.data.results.map((result): RowOutcome =>
          "qr_code" in result
            ? { created: true, id: result.qr_code.id }
            : { created: false, error: `${result.error.code}: ${result.error.message}` },
        ),
      };
    }
    const transient = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    if (!transient || attempt >= MAX_ATTEMPTS) {
      const why = status === undefined ? (failure as Error).message : describeApiError(status, answer?.error);
      throw new CliError(`rows ${batch.first + 1}-${batch.last + 1} were not imported: ${why}; run the same command again to resume`);
    }
    const retryAfter = Number(answer?.response.headers.get("retry-after"));
    await sleep(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : Math.min(250 * 2 ** attempt, 5000));
  }

  function post() {
    return client.POST("/workspaces/{workspace_id}/qr-codes/bulk", {
      params: { path: { workspace_id: workspaceId }, header: { "Idempotency-Key": batch.idempotencyKey } },
      body: { items },
    });
  }
}

/** The failed rows as CSV: the file's own columns, then `error`. */
export function failedRowsCsv(file: ImportFile, failed: { row: Record<string, string>; error: string }[]): string {
  return stringify(
    failed.map(({ row, error }) => [...file.header.map((column) => row[column] ?? ""), error]),
    { header: true, columns: [...file.header, "error"] },
  );
}
