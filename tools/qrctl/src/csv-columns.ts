// What `qr-codes import` accepts, apart from the import itself so that the command tree loads without it.

/** The columns a CSV may have; `name` and `destination_url` are required. */
export const CSV_COLUMNS = ["name", "destination_url", "tags", "vanity_domain_id", "vanity_slug", "utm_source", "utm_medium", "utm_campaign"] as const;
/** The most rows one bulk create takes. */
export const MAX_BATCH_ROWS = 100;
