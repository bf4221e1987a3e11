import { z } from "zod";
import { DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from "./webhook-options.js";

const seconds = z.coerce.number().positive();
const count = z.coerce.number().int().min(1).max(1000);

/** The variables that tune webhook delivery, read by the catalog process and `npm start` alike (see docs/configuration.md). */
export const webhookEnv = z.object({
  WEBHOOK_POLL_SECONDS: seconds.default(DEFAULT_WEBHOOK_OPTIONS.pollIntervalMs / 1000),
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .regex(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/, "must be seconds separated by commas, such as 5,60,300")
    .transform((list) => list.split(",").map((s) => Number(s) * 1000))
    .optional(),
  WEBHOOK_SCAN_PERIOD_SECONDS: seconds.default(DEFAULT_WEBHOOK_OPTIONS.scanPeriodMs / 1000),
  WEBHOOK_TIMEOUT_SECONDS: seconds.default(DEFAULT_WEBHOOK_OPTIONS.timeoutMs / 1000),
  WEBHOOK_ALLOW_LOOPBACK: z.enum(["true", "false"]).default("false"),
  WEBHOOK_CONCURRENCY: count.default(DEFAULT_WEBHOOK_OPTIONS.concurrency),
  WEBHOOK_ACCOUNT_CONCURRENCY: count.default(DEFAULT_WEBHOOK_OPTIONS.accountConcurrency),
  WEBHOOK_ENDPOINT_CONCURRENCY: count.default(DEFAULT_WEBHOOK_OPTIONS.endpointConcurrency),
});

/** What is wrong with the bounds of a worker's attempts together: one account must never take every slot. */
function concurrencyProblem(config: z.infer<typeof webhookEnv>): string | undefined {
  if (config.WEBHOOK_ACCOUNT_CONCURRENCY >= config.WEBHOOK_CONCURRENCY) {
    return "WEBHOOK_ACCOUNT_CONCURRENCY must be below WEBHOOK_CONCURRENCY, so one account's slow endpoints leave slots for the others";
  }
  if (config.WEBHOOK_ENDPOINT_CONCURRENCY > config.WEBHOOK_ACCOUNT_CONCURRENCY) {
    return "WEBHOOK_ENDPOINT_CONCURRENCY must be at most WEBHOOK_ACCOUNT_CONCURRENCY";
  }
  return undefined;
}

/** The webhook options those variables give; throws when the concurrency bounds contradict each other. */
export function webhookOptionsFromEnv(config: z.infer<typeof webhookEnv>): Partial<WebhookOptions> {
  const problem = concurrencyProblem(config);
  if (problem) throw new Error(`invalid configuration: ${problem}`);
  return {
    pollIntervalMs: config.WEBHOOK_POLL_SECONDS * 1000,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_SECONDS ?? DEFAULT_WEBHOOK_OPTIONS.retryScheduleMs,
    scanPeriodMs: config.WEBHOOK_SCAN_PERIOD_SECONDS * 1000,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK === "true",
    concurrency: config.WEBHOOK_CONCURRENCY,
    accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY,
    endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
  };
}
