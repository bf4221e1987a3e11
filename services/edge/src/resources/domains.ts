import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import { DomainStateSchema, type Domain, type DomainService } from "@qrplatform/api/links";
import { enumToken } from "@qrplatform/platform";
import { callerOf } from "../http/auth.js";
import { listEnvelope, pageRequestOf } from "../http/pagination.js";
import { dateTime } from "./json.js";

/** The public custom domain, with the DNS record that verifies it. */
export function domainJson(domain: Domain) {
  return {
    id: domain.id,
    hostname: domain.hostname,
    status: enumToken(DomainStateSchema, domain.state),
    verification: { type: "TXT", name: domain.challengeRecordName, value: domain.challengeRecordValue },
    failure_reason: domain.failureReason || null,
    verified_at: dateTime(domain.verifyTime),
    created_at: dateTime(domain.createTime),
  };
}

/** GET /domains: the account's custom domains, so users can find their `vanity_domain_id`. */
export function domainHandlers(domains: Client<typeof DomainService>) {
  const list: RequestHandler = async (req, res) => {
    const found = await domains.listDomains({ accountId: callerOf(res).accountId, ...pageRequestOf(req) });
    res.json(listEnvelope(found.domains.map(domainJson), found.nextPageToken));
  };
  return { list };
}
