import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import { z } from "zod";
import type { QrCodeService } from "@qrplatform/api/catalog";
import { AnalyticsInterval, type AnalyticsService, type BreakdownEntry, type RuleScans } from "@qrplatform/api/links";
import { callerOf } from "../http/auth.js";
import { parseInput } from "../http/input.js";
import { uuidParam } from "./params.js";

// The links service owns the range rules (formats, defaults, bounds); the edge only passes them on.
const date = z.string().min(1, "must be a calendar date written YYYY-MM-DD").optional();
const INTERVALS = { day: AnalyticsInterval.DAY, hour: AnalyticsInterval.HOUR } as const;
const analyticsQuery = z.object({
  from: date,
  to: date,
  interval: z.enum(["day", "hour"], { message: "must be day or hour" }).default("day"),
});

const breakdownJson = (entries: BreakdownEntry[]) =>
  entries.map(({ value, scans }) => ({ value, scans: Number(scans) }));

const rulesJson = (rules: RuleScans[]) =>
  rules.map(({ ruleId, scans, variants }) => ({
    rule_id: ruleId === "" ? null : ruleId,
    scans: Number(scans),
    variants: variants.map(({ variant, scans }) => ({ variant, scans: Number(scans) })),
  }));

/** GET /qr-codes/{id}/analytics: the code's scans over a range of UTC days, in day or hour buckets. */
export function analyticsHandler(
  qrCodes: Client<typeof QrCodeService>,
  analytics: Client<typeof AnalyticsService>,
): RequestHandler {
  return async (req, res) => {
    const id = uuidParam(req, "id");
    const { from, to, interval } = parseInput(analyticsQuery, {
      from: req.query.from,
      to: req.query.to,
      interval: req.query.interval,
    });
    const { accountId } = callerOf(res);
    const { qrCode } = await qrCodes.getQrCode({ accountId, qrCodeId: id, skipScanTotals: true });
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId: qrCode!.linkId,
      fromDate: from ?? "",
      toDate: to ?? "",
      interval: INTERVALS[interval],
    });
    res.setHeader("Cache-Control", "no-store");
    res.json({
      qr_code_id: qrCode!.id,
      from: summary.daily[0]!.date,
      to: summary.daily.at(-1)!.date,
      interval,
      total_scans: Number(summary.totalScans),
      unique_scans: Number(summary.uniqueScans),
      daily: summary.daily.map((day) => ({
        date: day.date,
        scans: Number(day.scans),
        unique_scans: Number(day.uniqueScans),
      })),
      ...(interval === "hour"
        ? {
            hourly: summary.hourly.map((hour) => ({
              hour: hour.hour,
              scans: Number(hour.scans),
              unique_scans: Number(hour.uniqueScans),
            })),
          }
        : {}),
      hourly_available_from: summary.hourlyAvailableFrom,
      countries: breakdownJson(summary.countries),
      devices: breakdownJson(summary.devices),
      operating_systems: breakdownJson(summary.operatingSystems),
      browsers: breakdownJson(summary.browsers),
      referrers: breakdownJson(summary.referrers),
      rules: rulesJson(summary.rules),
    });
  };
}
