// The recording thread of a links process (ScanRecorderThread starts it): runs the same ScanRecorder
// as the answering thread would, on the redirects that thread captured, and stores its batches
// through a ScanSink of its own: connections of its own to PostgreSQL, or a session of its own of
// PGlite's thread.
import { parentPort, workerData } from "node:worker_threads";
import type { Kysely } from "kysely";
import { openDatabase } from "@qrplatform/db";
import { activeTraceContext, createLogger, shutdownTelemetry, startTelemetry } from "@qrplatform/platform";
import { SCHEMA } from "../../../migrations/index.js";
import type { LinksTables } from "../../tables.js";
import { ScanWriter } from "../analytics/scan-writer.js";
import { capturedRedirects } from "./capture.js";
import { openScanRecorder } from "./scan-recorder.js";
import type {
  FromRecorderThread,
  RecorderThreadAnswer,
  RecorderThreadRequest,
  RecorderThreadSettings,
  RecorderThreadStatus,
  ToRecorderThread,
} from "./scan-recorder-thread.js";

/** How often the thread tells the request thread where it stands, when that changed. */
const STATUS_INTERVAL_MS = 50;
/** Connections of its own to a PostgreSQL server: one statement at a time (ScanWriter), and one to spare for a retry's. */
const POOL_SIZE = 2;

const settings = workerData as RecorderThreadSettings;
const port = parentPort!;
const post = (message: FromRecorderThread) => port.postMessage(message);

startTelemetry({ service: "links" });
const logger = createLogger({ service: "links", level: settings.logLevel }).child({ thread: "scan-recorder" });

// What the request thread does for this one (announcing a batch's links, which is the links
// service's), answered by id. A batch waits for it, as RecordScans's answer does.
let nextRequest = 1;
const asked = new Map<number, (answer: RecorderThreadAnswer) => void>();
function ask(request: RecorderThreadRequest): Promise<RecorderThreadAnswer> {
  const id = nextRequest++;
  return new Promise((resolve) => {
    asked.set(id, resolve);
    post({ kind: "request", id, request, trace: activeTraceContext() });
  });
}

const database = await openDatabase({ ...settings.connection, dataDir: "", poolSize: POOL_SIZE });
const sink = new ScanWriter(database.db.withSchema(SCHEMA) as Kysely<LinksTables>);

const recorder = await openScanRecorder(settings, {
  async send(scans) {
    const stored = await sink.store(scans);
    await ask({ kind: "announce", linkIds: stored > 0 ? [...new Set(scans.linkId)] : [] });
  },
  logger,
});

let received = 0;
const status = (): RecorderThreadStatus => {
  const { dropped, ...rest } = recorder.status();
  // The writer's expired scans are this thread's to report, beside the recorder's own drops.
  return { received, ...rest, dropped: { ...dropped, expired: dropped.expired + sink.expired } };
};
let lastStatus: RecorderThreadStatus | undefined;
const postStatus = () => {
  const now = status();
  if (lastStatus === undefined || !sameStatus(now, lastStatus)) post({ kind: "status", status: now });
  lastStatus = now;
};

/**
 * Whether two statuses (made by `status`, so of one shape) hold the same figures, nested counts
 * included: compared key by key rather than as JSON, since the thread asks after every hand-over.
 */
function sameStatus(a: object, b: object): boolean {
  const these = a as Record<string, unknown>;
  const those = b as Record<string, unknown>;
  for (const key of Object.keys(these)) {
    const value = these[key];
    const other = those[key];
    const same =
      value !== null && typeof value === "object"
        ? other !== null && typeof other === "object" && sameStatus(value, other)
        : value === other;
    if (!same) return false;
  }
  return true;
}

// Unreferenced: the thread lives as long as the request thread keeps it.
setInterval(postStatus, STATUS_INTERVAL_MS).unref();

port.on("message", (message: ToRecorderThread) => {
  switch (message.kind) {
    case "redirects": {
      for (const redirect of capturedRedirects(message.redirects, settings.countryHeader)) recorder.take(redirect);
      received += message.redirects.linkId.length;
      postStatus();
      break;
    }
    case "answer":
      asked.get(message.id)?.(message);
      asked.delete(message.id);
      break;
    case "close":
      void (async () => {
        await recorder.close(message.timeoutMs);
        await database.close();
        await shutdownTelemetry();
        post({ kind: "closed", status: status() });
        // Nothing else keeps the thread: it ends once the message is out.
        port.close();
      })();
      break;
  }
});
