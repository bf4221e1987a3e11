import type { DescEnum } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Command } from "commander";
import { enumToken } from "@qrplatform/platform";

/** Whether --json was given, wherever it appeared on the command line. */
export function wantsJson(command: Command): boolean {
  return command.optsWithGlobals<{ json?: boolean }>().json === true;
}

/**
 * Prints a command's result: exactly one JSON object with --json, for scripts; else text for people.
 * `text` is only called when needed.
 */
export function emit(command: Command, json: object, text: () => string): void {
  process.stdout.write(wantsJson(command) ? `${JSON.stringify(json, null, 2)}\n` : `${text()}\n`);
}

/** Columns padded to their widest cell, separated by two spaces. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

/** "Label  value" lines with the values aligned. */
export function fields(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([label]) => label.length));
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n");
}

/** The public token of an enum value; a value newer than this qrctl still prints instead of failing. */
export function tokenOf(schema: DescEnum, value: number): string {
  try {
    return enumToken(schema, value);
  } catch {
    return `unknown_${value}`;
  }
}

/** An RFC 3339 time for JSON, or null when the field is unset. */
export function isoTime(timestamp: Timestamp | undefined): string | null {
  return timestamp ? timestampDate(timestamp).toISOString() : null;
}

/** A time for tables: to the second, in UTC. */
export function shortTime(timestamp: Timestamp | undefined, unset = "-"): string {
  return timestamp
    ? timestampDate(timestamp)
        .toISOString()
        .replace(/\.\d{3}Z$/, "Z")
    : unset;
}

/** An optional int64 as a JSON number (every such field here is far below 2^53), or null when unset. */
export function optionalNumber(value: bigint | undefined): number | null {
  return value === undefined ? null : Number(value);
}
