import { sql, type Kysely } from "kysely";

// Frozen: this file describes the schema as it was on this date and imports no application code.
//
// links.scans is the durable record of every counted scan; its id is chosen by the redirector, so a
// batch sent twice is stored once. Analytics never reads it: each batch also adds to the rollups below,
// in the same transaction, and the analytics route reads only those.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("links.scans")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("link_id", "uuid", (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("scanned_at", sql`timestamptz(3)`, (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull())
    .addColumn("device_type", "text", (c) => c.notNull())
    .addColumn("os", "text", (c) => c.notNull())
    .addColumn("browser", "text", (c) => c.notNull())
    .addColumn("referrer_host", "text", (c) => c.notNull())
    .addColumn("visitor_key", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("scans_link_id_scanned_at")
    .on("links.scans")
    .columns(["link_id", "scanned_at"])
    .execute();

  // All-time scans per link: total_scans of a QR code.
  await db.schema
    .createTable("links.scan_totals")
    .addColumn("link_id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("scans", "bigint", (c) => c.notNull())
    .execute();

  // Scans and distinct visitors per link and UTC day.
  await db.schema
    .createTable("links.scan_days")
    .addColumn("link_id", "uuid", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("scans", "bigint", (c) => c.notNull())
    .addColumn("unique_scans", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("scan_days_pkey", ["link_id", "day"])
    .execute();

  // Scans per link, UTC day and value of one dimension (country, device, os, browser, referrer).
  await db.schema
    .createTable("links.scan_day_values")
    .addColumn("link_id", "uuid", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("dimension", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("scans", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("scan_day_values_pkey", ["link_id", "day", "dimension", "value"])
    .execute();

  // Which visitors scanned a link on a day: distinct visitors over any range of days, exactly.
  await db.schema
    .createTable("links.scan_day_visitors")
    .addColumn("link_id", "uuid", (c) => c.notNull())
    .addColumn("day", "date", (c) => c.notNull())
    .addColumn("visitor_key", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("scan_day_visitors_pkey", ["link_id", "day", "visitor_key"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["scan_day_visitors", "scan_day_values", "scan_days", "scan_totals", "scans"]) {
    await db.schema.dropTable(`links.${table}`).execute();
  }
}
