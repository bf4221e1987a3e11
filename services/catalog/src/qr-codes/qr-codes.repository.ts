import { sql, type Kysely } from "kysely";
import { afterKeyset } from "@qrplatform/db";
import { lockAccountCreates } from "../account-create-lock.js";
import type { CatalogTables } from "../tables.js";
import * as workspaces from "../workspaces/workspaces.repository.js";
import { qrCodeEventData, recordEvent } from "../webhooks/webhook-events.js";
import type { NewQrCodeRow, ProvisionedQrCodeRow, QrCodeChanges, QrCodeRow, QrCodesTable } from "./qr-codes.table.js";

// Every function takes the account id and every query filters on it, except the reconciler's claim,
// which works across accounts and hands each row's account id to the calls it makes.

/** What a create may use: undefined means unlimited. */
export interface CapacityLimits {
  qrCodes: number | undefined;
  customLinks: number | undefined;
}

/** Why a reservation was refused. */
export type CapacityRefusal = { limit: "qr_codes" | "custom_links"; used: number; max: number };

/** Every column of a code but its routing, which reads take as text (READ_ROUTING). */
const READ_COLUMNS = [
  "id",
  "account_id",
  "workspace_id",
  "name",
  "destination_url",
  "status",
  "tags",
  "link_id",
  "vanity_domain_id",
  "vanity_url",
  "canonical_url",
  "design",
  "utm",
  "created_at",
  "updated_at",
  "pending_operation",
  "pending_since",
  "idempotency_key",
  "idempotency_fingerprint",
] as const satisfies readonly Exclude<keyof QrCodesTable, "routing">[];
// A column added to the table and not to READ_COLUMNS fails to compile here, instead of reading as undefined.
type UnreadColumn = Exclude<keyof QrCodesTable, "routing" | (typeof READ_COLUMNS)[number]>;
const everyColumnRead: [UnreadColumn] extends [never] ? true : UnreadColumn = true;
void everyColumnRead;

/**
 * The routing as its text rather than parsed JSON: the catalog keeps each code's parsed routing while its
 * text is unchanged (stored-routings.ts), so a read parses only what changed.
 */
const READ_ROUTING = sql<string | null>`routing::text`.as("routing");

/** Codes a client can see: every one except those whose create has not finished. */
const provisioned = (db: Kysely<CatalogTables>, accountId: string) =>
  db
    .selectFrom("qr_codes")
    .select(READ_COLUMNS)
    .select(READ_ROUTING)
    .where("account_id", "=", accountId)
    .where("pending_operation", "is distinct from", "create");

async function countCodes(db: Kysely<CatalogTables>, accountId: string, customLinksOnly = false): Promise<number> {
  let query = db.selectFrom("qr_codes").select(sql<number>`count(*)::int`.as("n")).where("account_id", "=", accountId);
  if (customLinksOnly) query = query.where("vanity_domain_id", "is not", null);
  return (await query.executeTakeFirstOrThrow()).n;
}

/**
 * What a reservation came to: a place held, refused for capacity, refused because its workspace is
 * gone, or the code its idempotency key already made.
 */
export type ReserveOutcome =
  | { outcome: "reserved" }
  | { outcome: "refused"; refusal: CapacityRefusal }
  | { outcome: "no_workspace" }
  | { outcome: "exists"; code: QrCodeRow };

/**
 * Inserts a code whose create is pending (its link not made yet), if the account has room. The
 * account's lock row is held while counting and inserting, so concurrent creates are admitted one at
 * a time and never overshoot; pending creates count, so a place is held until the create finishes.
 * A row with an idempotency key is inserted only if no code of the account made since `keysKeptSince`
 * holds that key: otherwise that code is the outcome, before capacity is looked at, so a retried create
 * never takes a second place. An older holder gives the key up, as keys live only so long.
 * The workspace is locked against deletion until the code is in it: a workspace deleted meanwhile is
 * the outcome, never a code in a deleted workspace.
 */
export async function reserve(
  db: Kysely<CatalogTables>,
  row: NewQrCodeRow & { account_id: string; link_id: string; pending_operation: "create"; pending_since: Date },
  limits: CapacityLimits,
  keysKeptSince?: Date,
): Promise<ReserveOutcome> {
  return db.transaction().execute(async (tx): Promise<ReserveOutcome> => {
    await lockAccountCreates(tx, row.account_id);

    if (row.idempotency_key) {
      const holder = await tx
        .selectFrom("qr_codes")
        .selectAll()
        .where("account_id", "=", row.account_id)
        .where("idempotency_key", "=", row.idempotency_key)
        .executeTakeFirst();
      if (holder && keysKeptSince !== undefined && holder.created_at < keysKeptSince) {
        await tx
          .updateTable("qr_codes")
          .set({ idempotency_key: null, idempotency_fingerprint: null })
          .where("account_id", "=", row.account_id)
          .where("id", "=", holder.id)
          .execute();
      } else if (holder) {
        return { outcome: "exists", code: holder };
      }
    }
    if (row.workspace_id && !(await workspaces.lockWorkspace(tx, row.account_id, row.workspace_id, "key share")))
      return { outcome: "no_workspace" };
    if (limits.qrCodes !== undefined) {
      const used = await countCodes(tx, row.account_id);
      if (used >= limits.qrCodes)
        return { outcome: "refused", refusal: { limit: "qr_codes", used, max: limits.qrCodes } };
    }
    if (row.vanity_domain_id && limits.customLinks !== undefined) {
      const used = await countCodes(tx, row.account_id, true);
      if (used >= limits.customLinks)
        return { outcome: "refused", refusal: { limit: "custom_links", used, max: limits.customLinks } };
    }
    await tx.insertInto("qr_codes").values(row).execute();
    return { outcome: "reserved" };
  });
}

/**
 * Finishes a pending create with what its link turned out to be, with its `qr_code.created` event;
 * undefined when the create was undone or claimed by the reconciler meanwhile. `since` is the
 * reservation's pending_since: a reconciler's claim moves it, so a create that outlived the grace
 * period cannot complete a code whose link the reconciler is purging.
 */
export async function complete(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
  since: Date,
  link: { vanity_url: string; canonical_url: string; destination_url: string; routing: string | null },
): Promise<ProvisionedQrCodeRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("qr_codes")
      .set({ ...link, pending_operation: null, pending_since: null })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("pending_operation", "=", "create")
      .where("pending_since", "=", since)
      .returningAll()
      .executeTakeFirst();
    // The code becomes visible here, so this is where it is created for webhooks too.
    if (row)
      await recordEvent(trx, {
        accountId,
        type: "qr_code.created",
        data: qrCodeEventData(row),
        occurredAt: new Date(),
      });
    return row as ProvisionedQrCodeRow | undefined;
  });
}

/** Drops a pending create whose link is known not to exist, freeing its place. */
export async function discardReservation(db: Kysely<CatalogTables>, accountId: string, id: string): Promise<void> {
  await db
    .deleteFrom("qr_codes")
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("pending_operation", "=", "create")
    .execute();
}

/**
 * Records that an update or delete of a visible code is about to change its link. `since` is the
 * operation's token: only the operation that set it clears it. A delete takes over a pending update;
 * an update never takes over a pending delete. Returns the code, or undefined when there is none to mark.
 */
export async function markPending(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
  operation: "update" | "delete",
  since: Date,
): Promise<ProvisionedQrCodeRow | undefined> {
  let query = db
    .updateTable("qr_codes")
    .set({ pending_operation: operation, pending_since: since })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("pending_operation", "is distinct from", "create");
  if (operation === "update") query = query.where("pending_operation", "is distinct from", "delete");
  return (await query.returningAll().executeTakeFirst()) as ProvisionedQrCodeRow | undefined;
}

/** Clears a pending operation that the link service refused outright, if it is still this operation's. */
export async function clearPending(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
  since: Date,
): Promise<void> {
  await db
    .updateTable("qr_codes")
    .set({ pending_operation: null, pending_since: null })
    .where("account_id", "=", accountId)
    .where("id", "=", id)
    .where("pending_since", "=", since)
    .where("pending_operation", "in", ["update", "delete"])
    .execute();
}

/** A code with an operation pending since before the grace period, claimed by one reconciler. */
export type PendingQrCodeRow = QrCodeRow & {
  link_id: string | null;
  pending_operation: "create" | "update" | "delete";
  pending_since: Date;
};

/**
 * Claims up to `limit` codes whose pending operation started before `before`, across accounts. Each
 * claim moves pending_since to `now`, so another reconciler (or replica) leaves the row alone for a
 * whole grace period while this one repairs it.
 */
export async function claimStalePending(
  db: Kysely<CatalogTables>,
  before: Date,
  now: Date,
  limit: number,
): Promise<PendingQrCodeRow[]> {
  // One statement: rows another reconciler is claiming right now are skipped, not waited for. Its lock
  // is needed for that statement alone (the claim is the moved pending_since), so it takes the database.
  const rows = await db
    .updateTable("qr_codes")
    .set({ pending_since: now })
    .where("id", "in", (eb) =>
      eb
        .selectFrom("qr_codes")
        .select("id")
        .where("pending_operation", "is not", null)
        .where("pending_since", "<", before)
        .orderBy("pending_since")
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
  return rows as PendingQrCodeRow[];
}

export async function find(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
): Promise<ProvisionedQrCodeRow | undefined> {
  return (await provisioned(db, accountId).where("id", "=", id).executeTakeFirst()) as ProvisionedQrCodeRow | undefined;
}

export async function list(
  db: Kysely<CatalogTables>,
  accountId: string,
  filter: { workspaceId?: string | undefined; nameContains?: string | undefined; status?: string | undefined },
  page: { limit: number; after: { createdAt: Date; id: string } | undefined },
): Promise<ProvisionedQrCodeRow[]> {
  let query = provisioned(db, accountId);
  if (filter.workspaceId) query = query.where("workspace_id", "=", filter.workspaceId);
  if (filter.status) query = query.where("status", "=", filter.status);
  // strpos rather than ILIKE: the text is matched as it is, with no wildcard to escape.
  if (filter.nameContains) query = query.where(sql<boolean>`strpos(lower(name), lower(${filter.nameContains})) > 0`);
  if (page.after) query = query.where(afterKeyset("qr_codes", page.after));
  return (await query.orderBy("created_at").orderBy("id").limit(page.limit).execute()) as ProvisionedQrCodeRow[];
}

/**
 * Applies the changes and returns the code, with its `qr_code.updated` event; undefined when it is not
 * the account's, "no_workspace" when a move's workspace is gone (deleted since the caller looked), in
 * which case nothing changes. With `settles`, the pending operation of that token is cleared in the same
 * statement: the link already holds the change.
 */
export async function update(
  db: Kysely<CatalogTables>,
  accountId: string,
  id: string,
  changes: QrCodeChanges,
  settles?: Date,
): Promise<ProvisionedQrCodeRow | "no_workspace" | undefined> {
  const settled = settles !== undefined && sql<boolean>`pending_since = ${settles}`;
  return db.transaction().execute(async (trx) => {
    // Locked against deletion until the code is in it, as a create's reservation does.
    if (
      typeof changes.workspace_id === "string" &&
      !(await workspaces.lockWorkspace(trx, accountId, changes.workspace_id, "key share"))
    )
      return "no_workspace";
    const row = await trx
      .updateTable("qr_codes")
      .set({
        ...changes,
        updated_at: new Date(),
        ...(settled && {
          pending_operation: sql`case when ${settled} then null else pending_operation end`,
          pending_since: sql`case when ${settled} then null else pending_since end`,
        }),
      })
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .where("pending_operation", "is distinct from", "create")
      .returningAll()
      .executeTakeFirst();
    if (row)
      await recordEvent(trx, {
        accountId,
        type: "qr_code.updated",
        data: qrCodeEventData(row),
        occurredAt: row.updated_at,
      });
    return row as ProvisionedQrCodeRow | undefined;
  });
}

/** Deletes a code, with its `qr_code.deleted` event; true when it was the account's. */
export async function remove(db: Kysely<CatalogTables>, accountId: string, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .deleteFrom("qr_codes")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    // A create that never finished was never seen: its removal is no event.
    if (row.pending_operation !== "create") {
      await recordEvent(trx, {
        accountId,
        type: "qr_code.deleted",
        data: qrCodeEventData(row),
        occurredAt: new Date(),
      });
    }
    return true;
  });
}

/** How many codes the account holds, reservations included. */
export async function count(db: Kysely<CatalogTables>, accountId: string): Promise<number> {
  return countCodes(db, accountId);
}
