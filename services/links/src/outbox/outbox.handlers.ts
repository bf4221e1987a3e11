import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { z } from "zod";
import {
  AcknowledgeOutboxEventsResponseSchema,
  LinkScanCountSchema,
  ListOutboxEventsResponseSchema,
  OutboxEventSchema,
  type AcknowledgeOutboxEventsRequest,
  type AcknowledgeOutboxEventsResponse,
  type ListOutboxEventsRequest,
  type ListOutboxEventsResponse,
} from "@qrplatform/api/links";
import { requiredUuidSchema, validate } from "@qrplatform/platform";
import type { LinksDeps } from "../deps.js";
import * as outbox from "./outbox.repository.js";

const MAX_EVENTS = 1000;

export async function listOutboxEvents(
  deps: LinksDeps,
  req: ListOutboxEventsRequest,
): Promise<ListOutboxEventsResponse> {
  const { pageSize } = validate(z.object({ pageSize: z.number().int().min(0).max(MAX_EVENTS) }), req);
  const rows = await outbox.listOutboxEvents(deps.db, pageSize || 500);
  return create(ListOutboxEventsResponseSchema, {
    events: rows.map((row) =>
      create(OutboxEventSchema, {
        id: row.id,
        accountId: row.account_id,
        type: row.type,
        linkScans: (row.link_ids ?? []).map((linkId, i) =>
          create(LinkScanCountSchema, { linkId, scanCount: BigInt(row.scan_counts![i]!) }),
        ),
        domainId: row.domain_id ?? "",
        hostname: row.hostname ?? "",
        occurTime: timestampFromDate(row.occurred_at),
      }),
    ),
  });
}

export async function acknowledgeOutboxEvents(
  deps: LinksDeps,
  req: AcknowledgeOutboxEventsRequest,
): Promise<AcknowledgeOutboxEventsResponse> {
  const { eventIds } = validate(z.object({ eventIds: z.array(requiredUuidSchema).max(MAX_EVENTS) }), req);
  return create(AcknowledgeOutboxEventsResponseSchema, {
    removed: await outbox.acknowledgeOutboxEvents(deps.db, eventIds),
  });
}
