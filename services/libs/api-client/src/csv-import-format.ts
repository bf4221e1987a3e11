// The CSV file a bulk import of QR codes reads, as qrctl's `qr-codes import` and the console take it:
// one row per code, its columns named in a header line, each row sent as an item of a bulk create.

/** The columns a CSV may have; `name` and `destination_url` are required, `tags` are separated by `;`. */
export const CSV_COLUMNS = [
  "name",
  "destination_url",
  "tags",
  "vanity_domain_id",
  "vanity_slug",
  "utm_source",
  "utm_medium",
  "utm_campaign",
] as const;

/** The most items one bulk create takes (the OpenAPI document's maxItems of bulkCreateQrCodes). */
export const BULK_CREATE_MAX_ITEMS = 100;
