import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import { z } from "zod";
import type { QrCodeService } from "@qrplatform/api/catalog";
import type { AnalyticsService, BreakdownEntry, RuleScans } from "@qrplatform/api/links";
import { callerOf } from "../http/auth.js";
import { parseInput } from "../http/input.js";
import { uuidParam } from "./params.js";

// The links service owns the range rules (formats, defaults, bounds); the edge only passes them on.
const date = z.string().min(1, "must be a calendar date written YYYY-MM-DD").optional();
const analyticsQuery = z.object({ from: date, to: date });

const breakdownJson = (entries: BreakdownEntry[]) =>
  entries.map(({ value, scans }) => ({ value, scans: Number(scans) }));

const rulesJson = (rules: RuleScans[]) =>
  rules.map(({ ruleId, scans, variants }) => ({
    rule_id: ruleId === "" ? null : ruleId,
    scans: Number(scans),
    variants: variants.map(({ variant, scans }) => ({ variant, scans: Number(scans) })),
  }));

/** GET /qr-codes/{id}/analytics: the code's scans over a range of UTC days. */
export function analyticsHandler(
  qrCodes: Client<typeof QrCodeService>,
  analytics: Client<typeof AnalyticsService>,
): RequestHandler {
  return async (req, res) => {
    const id = uuidParam(req, "id");
    const { from, to } = parseInput(analyticsQuery, { from: req.query.from, to: req.query.to });
    const { accountId } = callerOf(res);
    const { qrCode } = await qrCodes.getQrCode({ accountId, qrCodeId: id, skipScanTotals: true });
    const summary = await analytics.getLinkAnalytics({
      accountId,
      linkId: qrCode!.linkId,
      fromDate: from ?? "",
      toDate: to ?? "",
    });
    res.setHeader("Cache-Control", "no-store");
    res.json({
      qr_code_id: qrCode!.id,
      from: summary.daily[0]!.date,
      to: summary.daily.at(-1)!.date,
      total_scans: Number(summary.totalScans),
      unique_scans: Number(summary.uniqueScans),
      daily: summary.daily.map((day) => ({
        date: day.date,
        scans: Number(day.scans),
        unique_scans: Number(day.uniqueScans),
      })),
      countries: breakdownJson(summary.countries),
      devices: breakdownJson(summary.devices),
      operating_systems: breakdownJson(summary.operatingSystems),
      browsers: breakdownJson(summary.browsers),
      referrers: breakdownJson(summary.referrers),
      rules: rulesJson(summary.rules),
    });
  };
}
