import type { Client } from "@connectrpc/connect";
import type { RequestHandler } from "express";
import { DomainStateSchema, type Domain, type DomainService, type DomainServing } from "@qrplatform/api/links";
import { enumToken } from "@qrplatform/platform";
import { callerOf } from "../http/auth.js";
import { listEnvelope, pageRequestOf } from "../http/pagination.js";
import { dateTime } from "./json.js";

/**
 * Whether the cluster serves the domain over HTTPS, as the platform's domain operator last reported;
 * null until it has (an installation without the operator never reports). `reason` is the stable token
 * to act on, `message` its explanation for people.
 */
function servingJson(serving: DomainServing | undefined) {
  if (!serving) return null;
  return {
    status: serving.serving ? "serving" : "not_serving",
    reason: serving.reason,
    message: serving.message || null,
    route_admitted: serving.routeAdmitted,
    certificate_ready: serving.certificateReady,
    certificate_expires_at: dateTime(serving.certificateExpireTime),
    reported_at: dateTime(serving.reportTime),
  };
}

/** The public custom domain, with the DNS record that verifies it and whether it is served. */
export function domainJson(domain: Domain) {
  return {
    id: domain.id,
    hostname: domain.hostname,
    status: enumToken(DomainStateSchema, domain.state),
    verification: { type: "TXT", name: domain.challengeRecordName, value: domain.challengeRecordValue },
    failure_reason: domain.failureReason || null,
    verified_at: dateTime(domain.verifyTime),
    serving: servingJson(domain.serving),
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
