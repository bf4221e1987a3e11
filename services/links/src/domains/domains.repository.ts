import type { Kysely, Transaction } from "kysely";
import { afterKeyset } from "@qrplatform/db";
import type { LinksTables } from "../tables.js";
import type { DomainRow, NewDomainRow, ServingReport } from "./domains.table.js";
import { canonicalHostname } from "./hostname.js";

/**
 * Whose domains a query may see: one account's, or, for the admin credential only, every account's.
 * Every function takes one, so a query can never forget to filter by account.
 */
export type AccountScope = { accountId: string } | { anyAccount: true };

type Db = Kysely<LinksTables>;
/** Row locks last until the transaction ends, so the functions that take them need one. */
type Trx = Transaction<LinksTables>;

function live(db: Db, scope: AccountScope) {
  let query = db.selectFrom("domains").selectAll().where("deleted_at", "is", null);
  if ("accountId" in scope) query = query.where("account_id", "=", scope.accountId);
  return query;
}

/** Inserts a domain; rejects with a unique violation when a live domain has the hostname. */
export async function insertDomain(db: Db, row: NewDomainRow): Promise<DomainRow> {
  return db.insertInto("domains").values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findDomain(db: Db, scope: AccountScope, id: string): Promise<DomainRow | undefined> {
  return live(db, scope).where("id", "=", id).executeTakeFirst();
}

/**
 * Reads the domain and holds a share lock on it for the rest of the transaction, so it cannot be
 * removed while a link is being put on it.
 */
export async function findDomainForShare(trx: Trx, scope: AccountScope, id: string): Promise<DomainRow | undefined> {
  return live(trx, scope).where("id", "=", id).forShare().executeTakeFirst();
}

/** Reads the domain and locks it for the rest of the transaction, before it is checked or removed. */
export async function findDomainForUpdate(trx: Trx, scope: AccountScope, id: string): Promise<DomainRow | undefined> {
  return live(trx, scope).where("id", "=", id).forUpdate().executeTakeFirst();
}

/** Live domains in (created_at, id) order, starting after the given position. */
export async function listDomains(
  db: Db,
  scope: AccountScope,
  page: { limit: number; after: { createdAt: Date; id: string } | undefined },
): Promise<DomainRow[]> {
  let query = live(db, scope);
  if (page.after) query = query.where(afterKeyset("domains", page.after));
  return query.orderBy("created_at").orderBy("id").limit(page.limit).execute();
}

/** Records the result of a verification. */
export async function recordCheck(
  db: Db,
  id: string,
  check: { state: string; failure_reason: string | null; verified_at: Date | null; checked_at: Date },
): Promise<DomainRow> {
  return db
    .updateTable("domains")
    .set({
      state: check.state,
      failure_reason: check.failure_reason,
      verified_at: check.verified_at,
      last_checked_at: check.checked_at,
      updated_at: check.checked_at,
    })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Records what the domain operator reports about a live domain, unless it is the state already
 * stored: then nothing is written, and `serving_reported_at` keeps the time the state was first
 * reported. The domain as written, or undefined when nothing was (the same state, or no live domain).
 * `updated_at` stays: it dates changes to the domain itself, not to how the cluster serves it.
 */
export async function recordServing(
  db: Db,
  id: string,
  report: ServingReport,
  at: Date,
): Promise<DomainRow | undefined> {
  return db
    .updateTable("domains")
    .set({ ...report, serving_reported_at: at })
    .where("id", "=", id)
    .where("deleted_at", "is", null)
    .where((eb) =>
      eb.or([
        eb("serving", "is distinct from", report.serving),
        eb("route_admitted", "is distinct from", report.route_admitted),
        eb("certificate_ready", "is distinct from", report.certificate_ready),
        eb("certificate_expires_at", "is distinct from", report.certificate_expires_at),
        eb("serving_reason", "is distinct from", report.serving_reason),
        eb("serving_message", "is distinct from", report.serving_message),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
}

/** A removed domain, as the domain watch names it. */
export interface RemovedDomainRow {
  id: string;
  hostname: string;
}

/**
 * What became of the domains with these hostnames, of every account: the live domain of each
 * hostname that has one, and for each other hostname its most recently removed domain. Hostnames no
 * domain ever had are left out.
 */
export async function domainsByHostname(
  db: Db,
  hostnames: readonly string[],
): Promise<{ live: DomainRow[]; removed: RemovedDomainRow[] }> {
  if (hostnames.length === 0) return { live: [], removed: [] };
  const liveRows = await live(db, { anyAccount: true })
    .where("hostname", "in", hostnames)
    .orderBy("hostname")
    .execute();
  const withLive = new Set(liveRows.map((row) => row.hostname));
  const others = hostnames.filter((hostname) => !withLive.has(hostname));
  const removed =
    others.length === 0
      ? []
      : await db
          .selectFrom("domains")
          .select(["id", "hostname"])
          .distinctOn("hostname")
          .where("hostname", "in", others)
          .where("deleted_at", "is not", null)
          .orderBy("hostname")
          .orderBy("deleted_at", "desc")
          .execute();
  return { live: liveRows, removed };
}

/** Marks the domain removed; its hostname is free again from then on. */
export async function removeDomain(db: Db, id: string, at: Date): Promise<void> {
  await db.updateTable("domains").set({ deleted_at: at, updated_at: at }).where("id", "=", id).execute();
}

/**
 * Whether any account has a live domain with this hostname: its links are answered by us. Domains are
 * stored canonical (parseHostname), so the name is compared in that form whatever its spelling.
 */
export async function isServedHostname(db: Db, hostname: string): Promise<boolean> {
  const row = await live(db, { anyAccount: true })
    .where("hostname", "=", canonicalHostname(hostname))
    .executeTakeFirst();
  return row !== undefined;
}
