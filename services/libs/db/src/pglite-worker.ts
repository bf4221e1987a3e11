// The entry file of the embedded database's thread (see pglite-thread.ts): it owns the PGlite
// instance and answers each query its parent posts, in order.
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import type { ThreadReply, ThreadRequest } from "./pglite-thread.js";

const port = parentPort!;
const { dataDir } = workerData as { dataDir: string };

/** What crosses back to the parent of an error: its message and the fields Postgres gives it (code, detail, constraint...). */
function plainError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const fields: Record<string, unknown> = { message: error.message, name: error.name };
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === "function" || typeof value === "object") continue;
    fields[key] = value;
  }
  return fields;
}

const post = (reply: ThreadReply) => port.postMessage(reply);

try {
  // Counts (int8) come back as numbers, as on the Postgres driver.
  const pglite = await PGlite.create(dataDir, { parsers: { 20: (value: string) => Number(value) } });
  port.on("message", (request: ThreadRequest) => {
    if (request.kind === "close") {
      void pglite.close().then(
        () => post({ id: request.id, ok: true, result: { rows: [] } }),
        (error: unknown) => post({ id: request.id, ok: false, error: plainError(error) }),
      );
      return;
    }
    // PGlite runs one statement at a time; queries queue inside it in the order they arrive.
    pglite.query(request.sql, request.params).then(
      (result) => post({ id: request.id, ok: true, result: { rows: result.rows as Record<string, unknown>[], affectedRows: result.affectedRows } }),
      (error: unknown) => post({ id: request.id, ok: false, error: plainError(error) }),
    );
  });
  post({ id: 0, ok: true, result: { rows: [] } });
} catch (error) {
  post({ id: 0, ok: false, error: plainError(error) });
}
