import type { ResolveHost } from "@qrplatform/platform";

/** How webhooks are delivered; the defaults are production's, tests shorten the times. */
export interface WebhookOptions {
  /** How often each worker looks for due deliveries and relays the links service's events. */
  pollIntervalMs: number;
  /** The waits before each retry after a failed attempt (each ±20 % jitter); past the last, the delivery fails. */
  retryScheduleMs: readonly number[];
  /** Scans of one QR code are sent as one `qr_code.scanned` event per period of this length. */
  scanPeriodMs: number;
  /** The budget of one attempt: lookup, connection, answer. */
  timeoutMs: number;
  /** Bytes of an answer read back at most. */
  maxResponseBytes: number;
  /** Attempts one worker makes at once, over every account. */
  concurrency: number;
  /**
   * Attempts one worker makes at once to one account's endpoints. Below `concurrency`, so an account
   * whose endpoints hang always leaves slots for the others.
   */
  accountConcurrency: number;
  /** Attempts one worker makes at once to one endpoint. */
  endpointConcurrency: number;
  /** Events and deliveries older than this are deleted. */
  retentionMs: number;
  /** Tests only: endpoints on loopback addresses (and plain http) are allowed, so receivers can run beside the test. */
  allowLoopback: boolean;
  /** How host names are resolved; the system resolver by default. */
  lookup?: ResolveHost;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Nine attempts over about 27.6 hours: at once, then after 5 s, 1 min, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. */
export const DEFAULT_RETRY_SCHEDULE_MS = [
  5 * SECOND,
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  pollIntervalMs: SECOND,
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
  scanPeriodMs: MINUTE,
  timeoutMs: 10 * SECOND,
  maxResponseBytes: 4096,
  concurrency: 16,
  accountConcurrency: 4,
  endpointConcurrency: 2,
  retentionMs: 30 * 24 * HOUR,
  allowLoopback: false,
};
