import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  DomainSchema,
  DomainServingSchema,
  DomainState,
  DomainStateSchema,
  type Domain,
  type DomainServing,
} from "@qrplatform/api/links";
import { enumFromToken, enumToken } from "@qrplatform/platform";
import { challengeRecordName, challengeRecordValue } from "./challenge.js";
import type { DomainRow } from "./domains.table.js";

export const domainStateToken = (state: DomainState) => enumToken(DomainStateSchema, state);

export function domainToProto(row: DomainRow): Domain {
  return create(DomainSchema, {
    id: row.id,
    accountId: row.account_id,
    hostname: row.hostname,
    state: (enumFromToken(DomainStateSchema, row.state) ?? DomainState.UNSPECIFIED) as DomainState,
    challengeRecordName: challengeRecordName(row.hostname),
    challengeRecordValue: challengeRecordValue(row.challenge_token),
    failureReason: row.failure_reason ?? "",
    createTime: timestampFromDate(row.created_at),
    updateTime: timestampFromDate(row.updated_at),
    verifyTime: row.verified_at ? timestampFromDate(row.verified_at) : undefined,
    lastCheckTime: row.last_checked_at ? timestampFromDate(row.last_checked_at) : undefined,
    serving: servingToProto(row),
  });
}

/** What the domain operator last reported, or undefined when it never has. */
function servingToProto(row: DomainRow): DomainServing | undefined {
  if (row.serving_reported_at === null) return undefined;
  return create(DomainServingSchema, {
    serving: row.serving ?? false,
    routeAdmitted: row.route_admitted ?? false,
    certificateReady: row.certificate_ready ?? false,
    certificateExpireTime: row.certificate_expires_at ? timestampFromDate(row.certificate_expires_at) : undefined,
    reason: row.serving_reason ?? "",
    message: row.serving_message ?? "",
    reportTime: timestampFromDate(row.serving_reported_at),
  });
}
