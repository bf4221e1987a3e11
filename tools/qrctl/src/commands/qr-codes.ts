import { constants, createWriteStream } from "node:fs";
import { access, rename, rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { Option, type Command } from "commander";
import { CSV_COLUMNS, MAX_BATCH_ROWS, MAX_ROW_BYTES } from "../csv-columns.js";
import { CliError, usageError } from "../errors.js";
import { emit } from "../output.js";

interface ImportOptions {
  workspace: string;
  batchSize: number;
  failed?: string;
}

interface ExportOptions {
  workspace: string;
  format: string;
  size: string;
  output: string;
}

function batchSizeArg(value: string): number {
  const size = Number(value);
  if (!/^\d+$/.test(value) || size < 1 || size > MAX_BATCH_ROWS)
    throw usageError(`--batch-size must be an integer from 1 to ${MAX_BATCH_ROWS}`);
  return size;
}

/**
 * Progress on stderr (stdout keeps the summary): a bar with rate and ETA on a terminal, else a plain line
 * per batch such as `imported 300/1000 (150/s, ETA 5s)`.
 */
async function progressReporter(total: number) {
  const started = Date.now();
  if (process.stderr.isTTY) {
    const { SingleBar } = await import("cli-progress");
    const bar = new SingleBar({
      stream: process.stderr,
      format: "importing [{bar}] {value}/{total} rows | {speed} rows/s | ETA {eta_formatted}",
      etaBuffer: 5,
      hideCursor: true,
    });
    bar.start(total, 0, { speed: "0" });
    return {
      update: (done: number) =>
        bar.update(done, { speed: (done / Math.max((Date.now() - started) / 1000, 0.001)).toFixed(0) }),
      stop: () => bar.stop(),
    };
  }
  return {
    update: (done: number) => {
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      const rate = done / seconds;
      const eta = rate > 0 ? Math.ceil((total - done) / rate) : 0;
      process.stderr.write(`imported ${done}/${total} (${rate.toFixed(0)}/s, ETA ${eta}s)\n`);
    },
    stop: () => {},
  };
}

/** `qrctl qr-codes ...`: an account's QR codes, through the public REST API with one of its API keys. */
export function registerQrCodes(program: Command): void {
  const qrCodes = program
    .command("qr-codes")
    .description("import QR codes from CSV and export a workspace's images, through the REST API with an API key")
    .addHelpText(
      "after",
      "\nThese commands act as an account: they call the REST API with one of its API keys, from --api-key\n" +
        "or QRCTL_API_KEY, at --api-url or QRCTL_API_URL (default http://127.0.0.1:8080/api/v1, `npm start`).",
    );

  qrCodes
    .command("import")
    .description("create a QR code for each row of a CSV file, up to 100 rows a call, resumable")
    .argument(
      "<file.csv>",
      `a CSV file whose first line names its columns: ${CSV_COLUMNS.join(", ")} (name and destination_url required; tags separated by ;)`,
    )
    .requiredOption("--workspace <id>", "the workspace to create the codes in")
    .addOption(
      new Option("--batch-size <rows>", `rows per call, 1 to ${MAX_BATCH_ROWS}`)
        .argParser(batchSizeArg)
        .default(MAX_BATCH_ROWS),
    )
    .option("--failed <file>", "where to write the rows that failed, with an error column (default: <file>.failed.csv)")
    .addHelpText(
      "after",
      "\nEach call carries an Idempotency-Key made of the workspace, the file's content hash and its rows, so running the same\n" +
        "command again after an interruption resumes the import: calls already answered are replayed by the\n" +
        "API (nothing is created twice), the rest run. Resume within 24 hours, with the file unchanged.\n" +
        `A row may have at most ${MAX_ROW_BYTES} bytes; a longer one is not sent but written to the failed-rows file\n` +
        "with its line number, and the rows after it are imported.",
    )
    .action(async (path: string, options: ImportOptions, command: Command) => {
      // Loaded only here: every other command of qrctl starts without the REST client and the CSV libraries.
      const { apiSession, unreachable } = await import("../api.js");
      const { batchesOf, checkImportFile, FailedRows, sendBatch } = await import("../csv-import.js");
      const { client, baseUrl } = apiSession(command);
      await access(path, constants.R_OK).catch((error: NodeJS.ErrnoException) => {
        throw usageError(`cannot read ${path}: ${error.code === "ENOENT" ? "no such file" : error.message}`);
      });
      const file = await checkImportFile(path);
      const failed = new FailedRows(options.failed ?? `${path.replace(/\.csv$/i, "")}.failed.csv`, file.header);
      let done = 0;
      let replayedRows = 0;
      let created = 0;
      const progress = await progressReporter(file.rows);
      try {
        for await (const batch of batchesOf(file, options.workspace, options.batchSize)) {
          const outcome = await sendBatch(client, options.workspace, batch).catch((error: unknown) => {
            if (error instanceof CliError) throw error;
            throw unreachable(baseUrl, error);
          });
          for (const [i, row] of outcome.rows.entries()) {
            if (row.created) created++;
            else await failed.add(batch.rows[i]!, row.error);
          }
          done += outcome.rows.length;
          replayedRows += outcome.replayedRows;
          progress.update(done);
        }
      } finally {
        progress.stop();
        await failed.close();
      }
      const summary = {
        rows: file.rows,
        created,
        failed: failed.count,
        resumed_rows: replayedRows,
        failed_rows_file: failed.count > 0 ? failed.path : null,
      };
      emit(command, summary, () =>
        [
          `Imported ${file.rows} rows into workspace ${options.workspace}: ${created} created, ${failed.count} failed.`,
          replayedRows > 0
            ? `${replayedRows} rows had been imported by an earlier run and were not created again.`
            : "",
          failed.count > 0 ? `The rows that failed, with the reason, are in ${failed.path}.` : "",
        ]
          .filter(Boolean)
          .join("\n"),
      );
      if (failed.count > 0)
        throw new CliError(`${failed.count} of ${file.rows} rows were not imported; they are in ${failed.path}`);
    });

  qrCodes
    .command("export-zip")
    .description("download every QR code image of a workspace as one ZIP file")
    .requiredOption("--workspace <id>", "the workspace to export")
    .requiredOption("--output <file.zip>", "where to write the archive")
    .option("--format <format>", "png, jpg or svg", "png")
    .option("--size <pixels>", "width and height, 128 to 4096", "1024")
    .action(async (options: ExportOptions, command: Command) => {
      const { apiSession, describeApiError, unreachable } = await import("../api.js");
      const { client, baseUrl } = apiSession(command);
      const answer = await client
        .GET("/workspaces/{workspace_id}/qr-codes/export", {
          params: {
            path: { workspace_id: options.workspace },
            query: { format: options.format as "png", size: options.size as unknown as number },
          },
          parseAs: "stream",
        })
        .catch((error: unknown) => {
          throw unreachable(baseUrl, error);
        });
      if (!answer.response.ok) throw new CliError(describeApiError(answer.response.status, answer.error));
      // Written beside the target and renamed at the end: an export cut short never leaves a file that looks whole.
      const partial = `${options.output}.partial`;
      try {
        await pipeline(Readable.fromWeb(answer.data as unknown as WebReadableStream), createWriteStream(partial));
      } catch (error) {
        await rm(partial, { force: true });
        throw new CliError(
          `the export was cut short (${(error as Error).message}); nothing was written to ${options.output}; run it again`,
        );
      }
      await rename(partial, options.output);
      emit(command, { output: options.output }, () => `Wrote ${options.output}.`);
    });
}
