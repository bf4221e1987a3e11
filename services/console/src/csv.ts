// The CSV import's reading: RFC 4180 records, the columns `qrctl qr-codes import` takes (name and
// destination_url required; tags separated by `;`; utm_source, utm_medium, utm_campaign), turned into
// bulk-create items. Rows the file itself gets wrong are reported without being sent.
import { BULK_CREATE_MAX_ITEMS, CSV_COLUMNS, type components } from "@qrplatform/api-client";

export type QrCodeCreate = components["schemas"]["QrCodeCreate"];

/** The most items one bulk create takes. */
export const BATCH_SIZE = BULK_CREATE_MAX_ITEMS;

/** A CSV row that was not imported, with why; `line` is the file's line number, the header being line 1. */
export interface FailedRow {
  line: number;
  name: string;
  reason: string;
}

/** A row ready to send, with the line it came from. */
export interface ImportRow {
  line: number;
  item: QrCodeCreate;
}

/** A record of the file: its fields, the line it starts on, and what was wrong with its quoting, if anything. */
export interface CsvRecord {
  line: number;
  fields: string[];
  problem?: string;
}

/**
 * Splits CSV text (RFC 4180: quotes, doubled quotes, CRLF or LF, a leading BOM) into records with their
 * first line. The parser is loaded on the first import, so it is not part of the console's first load.
 */
export async function parseCsv(text: string): Promise<CsvRecord[]> {
  const { default: Papa } = await import("papaparse");
  // Papa takes one newline sequence per file; files edited on two systems mix CRLF and LF.
  const body = (text.startsWith("\uFEFF") ? text.slice(1) : text).replaceAll("\r\n", "\n");
  const records: CsvRecord[] = [];
  let start = 0;
  let line = 1;
  Papa.parse<string[]>(body, {
    delimiter: ",",
    newline: "\n",
    skipEmptyLines: true,
    step: ({ data, errors, meta }) => {
      // Papa reports where each record ends; the lines before its start are counted once, as it goes.
      const [first] = errors;
      records.push({
        line: line + countLineBreaks(body, start, startOf(body, start)),
        fields: data,
        problem: first?.message,
      });
      line += countLineBreaks(body, start, meta.cursor);
      start = meta.cursor;
    },
  });
  return records;
}

/** Where the next record begins: past the line breaks of blank lines that are skipped. */
function startOf(text: string, from: number): number {
  let at = from;
  while (text[at] === "\n") at++;
  return at;
}

function countLineBreaks(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) if (text[i] === "\n") count++;
  return count;
}

/** The rows of a CSV file as bulk-create items, and the rows that cannot be sent as they are. */
export async function readImport(text: string): Promise<{ rows: ImportRow[]; failed: FailedRow[] }> {
  const [header, ...records] = await parseCsv(text);
  if (!header)
    throw new Error("The file is empty: its first line must name the columns, such as name,destination_url.");
  const columns = header.fields.map((column) => column.trim());
  const unknown = columns.filter((column) => !(CSV_COLUMNS as readonly string[]).includes(column));
  if (unknown.length > 0)
    throw new Error(`Unknown column ${unknown.join(", ")}; the columns are ${CSV_COLUMNS.join(", ")}.`);
  for (const required of ["name", "destination_url"]) {
    if (!columns.includes(required)) throw new Error(`The file has no ${required} column.`);
  }
  const rows: ImportRow[] = [];
  const failed: FailedRow[] = [];
  for (const record of records) {
    const cell = (column: string) => record.fields[columns.indexOf(column)]?.trim() || undefined;
    if (record.problem) {
      failed.push({ line: record.line, name: cell("name") ?? "", reason: `is not valid CSV: ${record.problem}` });
      continue;
    }
    if (record.fields.length !== columns.length) {
      failed.push({
        line: record.line,
        name: cell("name") ?? "",
        reason: `has ${record.fields.length} fields where the header names ${columns.length}`,
      });
      continue;
    }
    const tags = cell("tags")
      ?.split(";")
      .map((tag) => tag.trim())
      .filter(Boolean);
    const utm = Object.fromEntries(
      (["source", "medium", "campaign"] as const).flatMap((part) => {
        const value = cell(`utm_${part}`);
        return value ? [[part, value]] : [];
      }),
    );
    const item: QrCodeCreate = { name: cell("name") ?? "", destination_url: cell("destination_url") ?? "" };
    if (tags?.length) item.tags = tags;
    const domain = cell("vanity_domain_id");
    const slug = cell("vanity_slug");
    if (domain) item.vanity_domain_id = domain;
    if (slug) item.vanity_slug = slug;
    if (Object.keys(utm).length > 0) item.utm = utm;
    rows.push({ line: record.line, item });
  }
  return { rows, failed };
}
