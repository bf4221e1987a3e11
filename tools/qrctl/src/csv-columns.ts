// What `qr-codes import` accepts, apart from the import itself so that the command tree loads without it.

/** The columns a CSV may have; `name` and `destination_url` are required. */
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
/** The most rows one bulk create takes. */
export const MAX_BATCH_ROWS = 100;
/**
 * The most bytes one CSV row may have, its line ending included: far above any row the API can accept
 * (a destination URL has at most 2,048 characters), low enough that qrctl never holds a runaway row.
 * A longer row is reported in the failed-rows file and the import goes on.
 */
export const MAX_ROW_BYTES = 64 * 1024;
/** The most bytes of JSON one bulk create carries: half the API's default body limit (1 MiB), so no call is refused as too large. */
export const MAX_BATCH_BYTES = 512 * 1024;
