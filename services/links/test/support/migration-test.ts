import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { migrateSchema } from "@qrplatform/db";
import { migrations, SCHEMA } from "../../migrations/index.js";
import { emptyScanColumns } from "../../src/scans/scan-columns.js";
import { timeOrderedScanId } from "../../src/scans/recording/scan-id.js";
import type { LinksTables } from "../../src/tables.js";
import { storeScansOfThen } from "./scans-of-then.js";

/** Migrates the links schema up to `migration`, not including it: where a test of that migration starts. */
export function migrateBefore(db: Kysely<any>, migration: string): Promise<string[]> {
  return migrateSchema(db, SCHEMA, Object.fromEntries(Object.entries(migrations).filter(([name]) => name < migration)));
}

/** A link of a new account, inserted as every version of links.links takes it. */
export async function insertLink(db: Kysely<any>, slug: string): Promise<{ linkId: string; accountId: string }> {
  const [linkId, accountId] = [randomUUID(), randomUUID()];
  await sql`insert into links.links (id, account_id, slug, destination_url, status, created_at, updated_at)
    values (${linkId}, ${accountId}, ${slug}, 'https://example.com/', 'active', now(), now())`.execute(db);
  return { linkId, accountId };
}

/**
 * Stores scans of a link one millisecond apart from `now` on (storeScansOfThen: as the schema's
 * version stores them), from seven visitors, every other one from a phone: `send(n, country)`.
 */
export function scanSender(
  db: Kysely<any>,
  linkId: string,
  now: number,
): (scans: number, country: string) => Promise<void> {
  const links = db.withSchema("links") as Kysely<LinksTables>;
  let sent = 0;
  return async (scans, country) => {
    const columns = emptyScanColumns();
    for (let i = 0; i < scans; i++, sent++) {
      columns.id.push(timeOrderedScanId(now + sent));
      columns.linkId.push(linkId);
      columns.scannedAtMs.push(now + sent);
      columns.country.push(country);
      columns.deviceType.push(sent % 2 === 0 ? "mobile" : "desktop");
      columns.os.push("iOS");
      columns.browser.push("Safari");
      columns.referrerHost.push("");
      columns.visitorKey.push(`visitor-${sent % 7}`);
    }
    await storeScansOfThen(db, links, columns);
  };
}
