// What `qr-codes import` accepts, apart from the import itself so that the command tree loads without it.

import { BULK_CREATE_MAX_ITEMS } from "@qrplatform/api-client";

export { CSV_COLUMNS } from "@qrplatform/api-client";
/** The most rows one bulk create takes. */
export const MAX_BATCH_ROWS = BULK_CREATE_MAX_ITEMS;
/**
 * The most bytes one CSV row may have, its line ending included: far above any row the API can accept
 * (a destination URL has at most 2,048 characters), low enough that qrctl never holds a runaway row.
 * A longer row is reported in the failed-rows file and the import goes on.
 */
export const MAX_ROW_BYTES = 64 * 1024;
/** The most bytes of JSON one bulk create carries: half the API's default body limit (1 MiB), so no call is refused as too large. */
export const MAX_BATCH_BYTES = 512 * 1024;
