// The bulk import of QR codes from a CSV file: rows become bulk creates of up to 100 items and at most
// MAX_BATCH_BYTES of JSON, each call under an Idempotency-Key derived from the workspace, the file's
// content and the rows it carries. A run that was interrupted is resumed by running it again: the calls
// that were answered are replayed by the API (nothing is created twice, no capacity is used twice), the
// call that was cut off is finished or replayed, and the rest run. Keys live 24 hours: resume within a day.
//
// The file is streamed twice, never held: once to hash it, check its CSV and count its rows, once to
// send them. A row longer than MAX_ROW_BYTES is not kept either: only its line and size are, and it is
// reported as a failed row while the rows after it are imported.
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import type { ApiClient, components } from "@qrplatform/api-client";
import { describeApiError, fieldProblemsOf } from "./api.js";
import { CSV_COLUMNS, MAX_BATCH_BYTES, MAX_ROW_BYTES } from "./csv-columns.js";
import { CliError, usageError } from "./errors.js";

type CreateItem = components["schemas"]["QrCodeCreate"];

/** Calls answered "not now" (a batch still running, rate limited, a service restarting) are retried this often. */
const MAX_ATTEMPTS = 8;

/** A CSV file checked for import: its header, how many rows follow it, and the hash that names it. */
export interface ImportFile {
  path: string;
  header: string[];
  /** Data rows, the oversized ones included. */
  rows: number;
  /** SHA-256 of the file's bytes, hex: with the workspace, the root of every Idempotency-Key of its import. */
  contentHash: string;
}

/** One record of the file as split from the byte stream: its bytes, or only its size when it is too long to be a row. */
type RawRecord = { line: number; bytes: Buffer } | { line: number; size: number };

const QUOTE = 0x22;
const NEWLINE = 0x0a;

/**
 * Splits a CSV byte stream into records (a newline outside quotes ends one; `""` inside quotes toggles
 * twice, so it needs no case of its own), holding at most `maxBytes` of any record: a longer one is
 * skipped to its end and yields only its size. csv-parse's own `max_record_size` cannot do this: it
 * stops the parse, and with `skip_records_with_error` it drops the rest of the chunk, rows after the
 * long one included. Records that are only a line ending are skipped, as blank lines.
 */
export async function* csvRecords(source: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<RawRecord> {
  let parts: Buffer[] = [];
  let size = 0;
  let oversized = false;
  let quoting = false;
  let line = 1;
  let startLine = 1;
  const finish = (): RawRecord | undefined => {
    const record: RawRecord | undefined = oversized
      ? { line: startLine, size }
      : isBlank(parts)
        ? undefined
        : { line: startLine, bytes: Buffer.concat(parts, size) };
    parts = [];
    size = 0;
    oversized = false;
    return record;
  };
  const keep = (piece: Buffer) => {
    size += piece.length;
    if (size > maxBytes) {
      oversized = true;
      parts = [];
    } else if (!oversized && piece.length > 0) parts.push(piece);
  };
  for await (const chunk of source) {
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === QUOTE) quoting = !quoting;
      else if (byte === NEWLINE) {
        line++;
        if (quoting) continue;
        keep(chunk.subarray(from, i + 1));
        from = i + 1;
        const record = finish();
        if (record) yield record;
        startLine = line;
      }
    }
    keep(chunk.subarray(from));
  }
  const last = finish();
  if (last) yield last;
}

function isBlank(parts: Buffer[]): boolean {
  return parts.every((part) => part.every((byte) => byte === 0x0d || byte === NEWLINE));
}

/** The cells of one record, refusing one that is not one line of CSV. */
function cellsOf(record: { line: number; bytes: Buffer }, first: boolean): string[] {
  // Without quotes a record's cells are its text between commas: most rows skip the parser's setup.
  if (!first && !record.bytes.includes(QUOTE))
    return record.bytes
      .toString("utf8")
      .replace(/\r?\n$/, "")
      .split(",");
  let records: string[][];
  try {
    records = parse(record.bytes, { bom: first, relax_column_count: false });
  } catch (error) {
    throw usageError(`the CSV cannot be read at line ${record.line}: ${(error as Error).message}`);
  }
  return records[0] ?? [];
}

/** One data row of the file: its cells by column, or only its size when it is longer than a row may be. */
export type ImportRow =
  | { index: number; line: number; row: Record<string, string> }
  | { index: number; line: number; size: number };

async function* rowsOf(path: string, onChunk?: (chunk: Buffer) => void): AsyncGenerator<string[] | ImportRow> {
  const source = createReadStream(path);
  const chunks = async function* () {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      onChunk?.(chunk);
      yield chunk;
    }
  };
  let header: string[] | undefined;
  let index = 0;
  for await (const record of csvRecords(chunks(), MAX_ROW_BYTES)) {
    if (!header) {
      if (!("bytes" in record))
        throw usageError(
          `the CSV's first line is longer than ${MAX_ROW_BYTES} bytes; it must name the columns, such as name,destination_url`,
        );
      header = cellsOf(record, true);
      yield header;
      continue;
    }
    if (!("bytes" in record)) {
      yield { index: index++, line: record.line, size: record.size };
      continue;
    }
    const cells = cellsOf(record, false);
    if (cells.length !== header.length) {
      throw usageError(
        `the CSV cannot be read at line ${record.line}: it has ${cells.length} fields where the header names ${header.length}`,
      );
    }
    yield {
      index: index++,
      line: record.line,
      row: Object.fromEntries(header.map((column, i) => [column, cells[i] ?? ""])),
    };
  }
}

/**
 * Reads the file once without keeping it: refuses unknown columns and malformed CSV before anything is
 * sent, and counts the rows and hashes the bytes for the import's keys.
 */
export async function checkImportFile(path: string): Promise<ImportFile> {
  const hash = createHash("sha256");
  let header: string[] | undefined;
  let rows = 0;
  for await (const entry of rowsOf(path, (chunk) => hash.update(chunk))) {
    if (Array.isArray(entry)) {
      header = entry;
      const unknown = header.filter((column) => !(CSV_COLUMNS as readonly string[]).includes(column));
      if (unknown.length > 0)
        throw usageError(`unknown CSV column ${unknown.join(", ")}; the columns are ${CSV_COLUMNS.join(", ")}`);
      for (const required of ["name", "destination_url"]) {
        if (!header.includes(required)) throw usageError(`the CSV has no ${required} column`);
      }
    } else rows++;
  }
  if (!header) throw usageError("the CSV is empty: its first line must name the columns, such as name,destination_url");
  return { path, header, rows, contentHash: hash.digest("hex") };
}

/** The create body of a row: empty cells are left out; tags are separated by `;`. */
export function itemOf(row: Record<string, string>): CreateItem {
  const present = (column: string) => (row[column] ? row[column] : undefined);
  const utm = { source: present("utm_source"), medium: present("utm_medium"), campaign: present("utm_campaign") };
  const tags = present("tags")
    ?.split(";")
    .map((tag) => tag.trim())
    .filter(Boolean);
  return {
    name: row.name ?? "",
    destination_url: row.destination_url ?? "",
    ...(tags && { tags }),
    ...(present("vanity_domain_id") && { vanity_domain_id: present("vanity_domain_id") }),
    ...(present("vanity_slug") && { vanity_slug: present("vanity_slug") }),
    ...(Object.values(utm).some(Boolean) && { utm: Object.fromEntries(Object.entries(utm).filter(([, v]) => v)) }),
  };
}

/** One bulk call: rows `first` to `last` (0-based, inclusive) of the file, the oversized ones among them not sent. */
export interface Batch {
  first: number;
  last: number;
  rows: ImportRow[];
  /** The same for the same file and rows, whichever run sends it. */
  idempotencyKey: string;
}

/** `{"items":[]}`: what a bulk body holds besides its items. */
const BODY_OVERHEAD = 12;

/**
 * The file's rows in calls of at most `size` rows and `maxBytes` of body, each with its key:
 * `qrctl-import-<hash>-<first row>-<last row>`, the hash of the workspace and the file's content. Both
 * limits depend on the file alone, so every run cuts the same calls. The workspace is in the key because
 * the API refuses a key sent again to another path: the same file imported into a second workspace is a
 * new import. A row alone is always under `maxBytes` (MAX_ROW_BYTES is far below it).
 */
export async function* batchesOf(
  file: ImportFile,
  workspaceId: string,
  size: number,
  maxBytes = MAX_BATCH_BYTES,
): AsyncGenerator<Batch> {
  const importHash = createHash("sha256").update(`${workspaceId}\0${file.contentHash}`).digest("hex").slice(0, 32);
  let rows: ImportRow[] = [];
  let items = 0;
  let bytes = BODY_OVERHEAD;
  const cut = (): Batch => {
    const batch = { first: rows[0]!.index, last: rows.at(-1)!.index, rows };
    rows = [];
    items = 0;
    bytes = BODY_OVERHEAD;
    return { ...batch, idempotencyKey: `qrctl-import-${importHash}-${batch.first + 1}-${batch.last + 1}` };
  };
  for await (const entry of rowsOf(file.path)) {
    if (Array.isArray(entry)) continue;
    if ("row" in entry) {
      const itemBytes = Buffer.byteLength(JSON.stringify(itemOf(entry.row))) + 1;
      if (items > 0 && (items === size || bytes + itemBytes > maxBytes)) yield cut();
      items++;
      bytes += itemBytes;
    }
    rows.push(entry);
  }
  if (rows.length > 0) yield cut();
}

/** What became of one row. */
export type RowOutcome = { created: true; id: string } | { created: false; error: string };

/** What one batch came to, row by row, and how many of its rows an earlier run had already imported. */
export interface BatchOutcome {
  rows: RowOutcome[];
  replayedRows: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Why a row longer than MAX_ROW_BYTES was not sent. */
function tooLarge(row: { line: number; size: number }): RowOutcome {
  return {
    created: false,
    error: `row_too_large: the row at line ${row.line} has ${row.size} bytes; a row may have at most ${MAX_ROW_BYTES}`,
  };
}

/** The rows of `batch` from `from` to before `to` as a call of their own, keyed by their own rows. */
function partOf(batch: Batch, from: number, to: number): Batch {
  const rows = batch.rows.slice(from, to);
  const first = rows[0]!.index;
  const last = rows.at(-1)!.index;
  return { first, last, rows, idempotencyKey: batch.idempotencyKey.replace(/-\d+-\d+$/, `-${first + 1}-${last + 1}`) };
}

/**
 * Sends one batch, retrying with the same key what the API answers "not now" (409 in progress, 429, 503,
 * 504, no answer at all): the key makes each retry safe. An API whose body limit is below MAX_BATCH_BYTES
 * answers 413 before the key is touched: the batch is then sent in halves, each under the key of its own
 * rows (the same halves on every run against that API), down to one row, which alone fails. Any other
 * refusal of the call as a whole is an error.
 */
export async function sendBatch(client: ApiClient, workspaceId: string, batch: Batch): Promise<BatchOutcome> {
  const sent = batch.rows.filter((row) => "row" in row);
  const items = sent.map((row) => itemOf(row.row));
  if (items.length === 0)
    return { replayedRows: 0, rows: batch.rows.map((row) => tooLarge(row as { line: number; size: number })) };
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
      const outcomes = answer.data.results.map((result): RowOutcome => {
        if ("qr_code" in result) return { created: true, id: result.qr_code.id };
        const problems = fieldProblemsOf(result.error);
        return {
          created: false,
          error: `${result.error.code}: ${result.error.message}${problems ? ` ${problems}` : ""}`,
        };
      });
      let next = 0;
      return {
        replayedRows: answer.response.headers.get("idempotent-replayed") === "true" ? batch.rows.length : 0,
        rows: batch.rows.map((row) => ("row" in row ? outcomes[next++]! : tooLarge(row))),
      };
    }
    if (status === 413 && answer?.error) {
      if (items.length === 1) {
        const error = `${answer.error.error.code}: ${answer.error.error.message}`;
        return {
          replayedRows: 0,
          rows: batch.rows.map((row) => ("row" in row ? { created: false, error } : tooLarge(row))),
        };
      }
      const middle = batch.rows.indexOf(sent[Math.floor(sent.length / 2)]!);
      const [head, tail] = [
        await sendBatch(client, workspaceId, partOf(batch, 0, middle)),
        await sendBatch(client, workspaceId, partOf(batch, middle, batch.rows.length)),
      ];
      return { replayedRows: head.replayedRows + tail.replayedRows, rows: [...head.rows, ...tail.rows] };
    }
    const transient = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    const rows = `rows ${batch.first + 1}-${batch.last + 1} were not imported`;
    if (!transient) throw new CliError(`${rows}: ${describeApiError(status!, answer?.error)}`);
    if (attempt >= MAX_ATTEMPTS) {
      const why = status === undefined ? (failure as Error).message : describeApiError(status, answer?.error);
      throw new CliError(`${rows}: ${why}; run the same command again to resume`);
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

/**
 * The failed rows as CSV, written as they come: the file's own columns, then `error`. A row too long to
 * keep has empty cells; its error names its line. Nothing is written, and any earlier file is removed,
 * when no row fails.
 */
export class FailedRows {
  private out: WriteStream | undefined;
  count = 0;

  constructor(
    readonly path: string,
    private readonly header: string[],
  ) {}

  async add(row: ImportRow, error: string): Promise<void> {
    const cells = "row" in row ? this.header.map((column) => row.row[column] ?? "") : this.header.map(() => "");
    if (!this.out) {
      this.out = createWriteStream(this.path);
      this.out.write(stringify([[...this.header, "error"]]));
    }
    this.count++;
    if (!this.out.write(stringify([[...cells, error]]))) await once(this.out, "drain");
  }

  async close(): Promise<void> {
    if (this.out) {
      this.out.end();
      await once(this.out, "finish");
    } else {
      await rm(this.path, { force: true });
    }
  }
}
