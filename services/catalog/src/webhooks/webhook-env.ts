import { z } from "zod";
import { DEFAULT_WEBHOOK_OPTIONS, type WebhookOptions } from "./webhook-options.js";

const seconds = z.coerce.number().positive();

/** The variables that tune webhook delivery, read by the catalog process and `npm start` alike (see the README). */
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
});

/** The webhook options those variables give. */
export function webhookOptionsFromEnv(config: z.infer<typeof webhookEnv>): Partial<WebhookOptions> {
  return {
    pollIntervalMs: config.WEBHOOK_POLL_SECONDS * 1000,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_SECONDS ?? DEFAULT_WEBHOOK_OPTIONS.retryScheduleMs,
    scanPeriodMs: config.WEBHOOK_SCAN_PERIOD_SECONDS * 1000,
    timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK === "true",
  };
}
