// The CSV import's reading: RFC 4180 records, the columns `qrctl qr-codes import` takes (name and
// destination_url required; tags separated by `;`; utm_source, utm_medium, utm_campaign), turned into
// bulk-create items. Rows the file itself gets wrong are reported without being sent.
import type { components } from "@qrplatform/api-client";

export type QrCodeCreate = components["schemas"]["QrCodeCreate"];

export const CSV_COLUMNS = [
  "name",
  "destination_url",
  "tags",
  "vanity_domain_id",
  "vanity_slug",
  "utm_source",
  "utm_medium",
  "utm_campaign",
] as const;

/** The most items one bulk create takes. */
export const BATCH_SIZE = 100;

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

/** Splits CSV text into records of fields (quotes, doubled quotes, CRLF or LF), each with its first line. */
export function parseCsv(text: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"') {
        if (body[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === "\n") line++;
        field += c;
      }
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      fields.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && body[i + 1] === "\n") i++;
      fields.push(field);
      if (fields.length > 1 || fields[0] !== "") records.push({ line: recordLine, fields });
      fields = [];
      field = "";
      line++;
      recordLine = line;
    } else field += c;
  }
  if (field !== "" || fields.length > 0) {
    fields.push(field);
    records.push({ line: recordLine, fields });
  }
  return records;
}

/** The rows of a CSV file as bulk-create items, and the rows that cannot be sent as they are. */
export function readImport(text: string): { rows: ImportRow[]; failed: FailedRow[] } {
  const [header, ...records] = parseCsv(text);
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
