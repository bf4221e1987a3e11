import type { Logger, Metrics } from "@qrplatform/platform";
import { openScanRecorder, type RecorderSettings, type RedirectRecorder, type SendScans } from "./scan-recorder.js";
import { ScanRecorderThread, type RecorderThreadStorage } from "./scan-recorder-thread.js";

/**
 * Where a process runs its ScanRecorder, given the same settings either way: on the thread that
 * answers redirects, or on a thread of its own behind ScanRecorderThread (SCAN_RECORDING_THREAD).
 * Classifying, batching, spooling and storing are the recorder's in both; a placement only decides
 * which thread does them and how captured redirects reach it.
 */
export type RecorderPlacement = (
  settings: RecorderSettings,
  context: { logger: Logger; metrics?: Metrics | undefined },
) => Promise<RedirectRecorder>;

/**
 * The recorder on the answering thread, sending its batches with `send` (the links service of this
 * process, or RecordScans): for a process held to one core, where a second busy thread would only take
 * turns with the first.
 */
export function onAnsweringThread(send: SendScans): RecorderPlacement {
  return (settings, context) => openScanRecorder(settings, { send, ...context });
}

/**
 * The recorder on a thread of its own that stores into `storage` itself; the answering thread only
 * captures a few fields of each redirect.
 */
export function onRecordingThread(storage: RecorderThreadStorage): RecorderPlacement {
  return async (settings, context) => new ScanRecorderThread({ ...settings, storage, ...context });
}
