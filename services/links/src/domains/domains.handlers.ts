import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  CreateDomainResponseSchema,
  DeleteDomainResponseSchema,
  DomainState,
  GetDomainResponseSchema,
  ListDomainsResponseSchema,
  ReportDomainServingResponseSchema,
  VerifyDomainResponseSchema,
  WatchDomainsResponseSchema,
  type CreateDomainRequest,
  type CreateDomainResponse,
  type DeleteDomainRequest,
  type DeleteDomainResponse,
  type GetDomainRequest,
  type GetDomainResponse,
  type ListDomainsRequest,
  type ListDomainsResponse,
  type ReportDomainServingRequest,
  type ReportDomainServingResponse,
  type VerifyDomainRequest,
  type VerifyDomainResponse,
  type WatchDomainsRequest,
  type WatchDomainsResponse,
} from "@qrplatform/api/links";
import { z } from "zod";
import {
  callerKey,
  Code,
  invalidArgument,
  isUniqueViolation,
  isUuid,
  notFound,
  pageOf,
  parsedBy,
  readPageRequest,
  requireAdmin,
  requiredUuidSchema,
  serviceError,
  validate,
  type FieldProblem,
} from "@qrplatform/platform";
import type { LinksDeps } from "../deps.js";
import { countLiveLinksOnDomain } from "../links/links.repository.js";
import { recordDomainVerified } from "../outbox/outbox.repository.js";
import { challengeRecordName, challengeRecordValue, newChallengeToken, verificationOutcome } from "./challenge.js";
import { DomainChanges } from "./domain-changes.js";
import { domainStateToken, domainToProto } from "./domain-mapping.js";
import * as domains from "./domains.repository.js";
import type { AccountScope } from "./domains.repository.js";
import { parseHostname } from "./hostname.js";
import { reportDomainServingRequest } from "./serving-report.js";

/** Asked of a request without account_id by a caller other than the admin credential. */
const accountRequired: FieldProblem = { field: "account_id", reason: "required", description: "is required" };

/**
 * The accounts a request may act on. An empty account_id means every account, which only the admin
 * credential (qrctl, the operator) may ask for; services acting for a customer must always name one.
 * (A malformed id never gets here: the request checks refuse it.)
 */
function scopeOf(accountId: string, context: HandlerContext): AccountScope {
  if (accountId !== "") return { accountId };
  if (context.values.get(callerKey) === "admin") return { anyAccount: true };
  throw invalidArgument([accountRequired]);
}

/** The live domain the request names in its scope, or NOT_FOUND. */
async function domainIn(deps: LinksDeps, req: { accountId: string; domainId: string }, context: HandlerContext) {
  const scope = scopeOf(req.accountId, context);
  const row = isUuid(req.domainId) ? await domains.findDomain(deps.db, scope, req.domainId) : undefined;
  if (!row) throw notFound("domain");
  return row;
}

const createDomainRequest = z.object({
  accountId: requiredUuidSchema,
  /** The hostname as stored (see parseHostname). */
  hostname: z.string().transform(
    parsedBy((input: string) => {
      const parsed = parseHostname(input);
      return "hostname" in parsed ? { value: parsed.hostname } : parsed;
    }),
  ),
});

export async function createDomain(deps: LinksDeps, req: CreateDomainRequest): Promise<CreateDomainResponse> {
  const { accountId, hostname } = validate(createDomainRequest, req);
  if (hostname === deps.shortDomainHostname) {
    throw invalidArgument([
      { field: "hostname", reason: "reserved", description: "is the platform's own short domain" },
    ]);
  }

  const now = deps.now();
  try {
    const row = await domains.insertDomain(deps.db, {
      id: randomUUID(),
      account_id: accountId,
      hostname,
      state: domainStateToken(DomainState.PENDING),
      challenge_token: newChallengeToken(),
      failure_reason: null,
      created_at: now,
      updated_at: now,
      verified_at: null,
      last_checked_at: null,
      deleted_at: null,
    });
    // Watchers (the domain operator) hear of the new domain; redirectors drop the hostname's cached
    // misses, which is all they can hold for a hostname nobody had.
    await deps.invalidations.publish({ hostnames: [row.hostname] });
    return create(CreateDomainResponseSchema, { domain: domainToProto(row) });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw serviceError(Code.AlreadyExists, "domain_taken", `The hostname ${hostname} is already registered.`, {
      metadata: { hostname },
    });
  }
}

export async function getDomain(
  deps: LinksDeps,
  req: GetDomainRequest,
  context: HandlerContext,
): Promise<GetDomainResponse> {
  return create(GetDomainResponseSchema, { domain: domainToProto(await domainIn(deps, req, context)) });
}

export async function listDomains(
  deps: LinksDeps,
  req: ListDomainsRequest,
  context: HandlerContext,
): Promise<ListDomainsResponse> {
  const scope = scopeOf(req.accountId, context);
  // Page tokens are bound to the account listed; an admin's list of every account is bound to "".
  const page = readPageRequest(deps.pageTokens, req, req.accountId, "domains");
  const rows = await domains.listDomains(deps.db, scope, { limit: page.fetch, after: page.after });
  const { items, nextPageToken } = pageOf(deps.pageTokens, rows, page.limit, req.accountId, "domains");
  return create(ListDomainsResponseSchema, { domains: items.map(domainToProto), nextPageToken });
}

export async function verifyDomain(
  deps: LinksDeps,
  req: VerifyDomainRequest,
  context: HandlerContext,
): Promise<VerifyDomainResponse> {
  const domain = await domainIn(deps, req, context);
  // The lookup happens outside any transaction: it may take seconds, and no lock should wait on DNS.
  const name = challengeRecordName(domain.hostname);
  const outcome = verificationOutcome(
    domain.state,
    name,
    challengeRecordValue(domain.challenge_token),
    await deps.lookupTxt(name),
  );
  if ("unavailable" in outcome) throw serviceError(Code.Unavailable, "dns_unavailable", outcome.unavailable);

  const now = deps.now();
  const verified = outcome.state === "verified";
  let stateChanged = false;
  const row = await deps.db.transaction().execute(async (trx) => {
    // Removed while DNS was asked: nothing to record.
    const current = await domains.findDomainForUpdate(trx, { accountId: domain.account_id }, domain.id);
    if (!current) return undefined;
    stateChanged = current.state !== outcome.state;
    if (stateChanged && verified) await recordDomainVerified(trx, current);
    return domains.recordCheck(trx, domain.id, {
      state: outcome.state,
      failure_reason: verified ? null : outcome.reason,
      // A domain that stays verified keeps the time it was first verified.
      verified_at: verified ? (current.state === "verified" && current.verified_at ? current.verified_at : now) : null,
      checked_at: now,
    });
  });
  if (!row) throw notFound("domain");
  // Its links start or stop answering on this hostname.
  if (stateChanged) await deps.invalidations.publish({ hostnames: [row.hostname] });
  return create(VerifyDomainResponseSchema, { domain: domainToProto(row) });
}

export async function deleteDomain(
  deps: LinksDeps,
  req: DeleteDomainRequest,
  context: HandlerContext,
): Promise<DeleteDomainResponse> {
  const scope = scopeOf(req.accountId, context);
  const hostname = await deps.db.transaction().execute(async (trx) => {
    // The row lock waits for links being created on the domain, so the count below sees them.
    const domain = isUuid(req.domainId) ? await domains.findDomainForUpdate(trx, scope, req.domainId) : undefined;
    if (!domain) throw notFound("domain");
    const inUse = await countLiveLinksOnDomain(trx, domain.id);
    if (inUse > 0) {
      throw serviceError(
        Code.FailedPrecondition,
        "domain_in_use",
        `The domain ${domain.hostname} is used by ${inUse} live QR code${inUse === 1 ? "" : "s"}; delete them first.`,
        { metadata: { domain_id: domain.id, links: String(inUse) } },
      );
    }
    await domains.removeDomain(trx, domain.id, deps.now());
    return domain.hostname;
  });
  await deps.invalidations.publish({ hostnames: [hostname] });
  return create(DeleteDomainResponseSchema, { domainId: req.domainId });
}

/** Hostnames looked up, and at most twice as many domains sent, per WatchDomains message. */
const WATCH_BATCH_SIZE = 100;

/**
 * Streams domain changes as the invalidation bus announces them (creation, verification, loss of
 * verification, removal), re-read from the database, until the caller cancels or the server shuts
 * down. Serving reports are not announced: the operator that makes them would hear its own writes.
 */
export async function* watchDomains(
  deps: LinksDeps,
  _req: WatchDomainsRequest,
  context: HandlerContext,
): AsyncGenerator<WatchDomainsResponse> {
  requireAdmin(context, "WatchDomains");
  // Listening starts before the first message, so nothing that changes after the receiver's list is missed.
  const changes = new DomainChanges(deps.invalidations);
  try {
    yield create(WatchDomainsResponseSchema, { resync: true });
    for (;;) {
      const batch = await changes.next(context.signal);
      if (!batch) return;
      if ("resync" in batch) {
        yield create(WatchDomainsResponseSchema, { resync: true });
        continue;
      }
      for (let start = 0; start < batch.hostnames.length; start += WATCH_BATCH_SIZE) {
        const { live, removed } = await domains.domainsByHostname(
          deps.db,
          batch.hostnames.slice(start, start + WATCH_BATCH_SIZE),
        );
        if (live.length === 0 && removed.length === 0) continue;
        yield create(WatchDomainsResponseSchema, {
          changed: live.map(domainToProto),
          removed: removed.map((row) => ({ domainId: row.id, hostname: row.hostname })),
        });
      }
    }
  } finally {
    changes.close();
  }
}

export async function reportDomainServing(
  deps: LinksDeps,
  req: ReportDomainServingRequest,
  context: HandlerContext,
): Promise<ReportDomainServingResponse> {
  requireAdmin(context, "ReportDomainServing");
  const { domainId, report } = validate(reportDomainServingRequest, req);
  // Nothing is written when the state is the one stored; the domain is then read as it is.
  const row =
    (await domains.recordServing(deps.db, domainId, report, deps.now())) ??
    (await domains.findDomain(deps.db, { anyAccount: true }, domainId));
  if (!row) throw notFound("domain");
  return create(ReportDomainServingResponseSchema, { domain: domainToProto(row) });
}
