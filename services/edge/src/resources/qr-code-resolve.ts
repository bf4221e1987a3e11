import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import { z } from "zod";
import type { QrCodeService } from "@qrplatform/api/catalog";
import {
  DeviceType,
  DeviceTypeSchema,
  type LinkService,
  OperatingSystem,
  OperatingSystemSchema,
  VisitOutcomeSchema,
} from "@qrplatform/api/links";
import { enumFromToken, enumToken } from "@qrplatform/platform";
import { DEVICES, OPERATING_SYSTEMS, parseInstant } from "@qrplatform/routing";
import { callerOf } from "../http/auth.js";
import { parseInput } from "../http/input.js";
import { uuidParam } from "./params.js";

const resolveQuery = z.strictObject({
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$/, { message: 'must be an ISO 3166-1 alpha-2 country code, such as "JP"' })
    .transform((code) => code.toUpperCase())
    .optional(),
  device: z.enum(DEVICES).optional(),
  os: z.enum(OPERATING_SYSTEMS).optional(),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}$/, { message: 'must be a primary language subtag, such as "en" or "ja"' })
    .transform((tag) => tag.toLowerCase())
    .optional(),
  at: z
    .string()
    .refine((text) => parseInstant(text) !== undefined, {
      message: "must be an RFC 3339 instant, such as 2026-12-01T09:00:00Z",
      params: { reason: "invalid_format" },
    })
    .optional(),
});

/**
 * `GET /qr-codes/{id}/resolve`: where a visitor with the given country, device, OS and language would go
 * at `at` (default now), by the redirector's own decision in the links service, with no scan counted.
 * A property left out is unknown, as for a visitor whose request does not tell.
 */
export function resolveHandler(
  qrCodes: Client<typeof QrCodeService>,
  links: Client<typeof LinkService>,
): RequestHandler {
  return async (req, res) => {
    const id = uuidParam(req, "id");
    const query = parseInput(resolveQuery, req.query);
    const { accountId } = callerOf(res);
    const { qrCode } = await qrCodes.getQrCode({ accountId, qrCodeId: id, skipScanTotals: true });
    const answer = await links.resolveLinkForVisitor({
      accountId,
      linkId: qrCode!.linkId,
      visitor: {
        country: query.country ?? "",
        device: query.device ? (enumFromToken(DeviceTypeSchema, query.device) as DeviceType) : DeviceType.UNSPECIFIED,
        os: query.os
          ? (enumFromToken(OperatingSystemSchema, query.os) as OperatingSystem)
          : OperatingSystem.UNSPECIFIED,
        language: query.language ?? "",
      },
      at: query.at === undefined ? undefined : timestampFromDate(new Date(parseInstant(query.at)!)),
    });
    res.setHeader("Cache-Control", "no-store");
    res.json({
      qr_code_id: qrCode!.id,
      outcome: enumToken(VisitOutcomeSchema, answer.outcome),
      destination_url: answer.destinationUrl || null,
      rule_id: answer.ruleId ?? null,
      variant: answer.variant ?? null,
    });
  };
}
