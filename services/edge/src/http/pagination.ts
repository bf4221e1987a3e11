import type { Request } from "express";
import { z } from "zod";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, textSchema } from "@qrplatform/platform";
import { parseInput } from "./input.js";

/** Query strings carry text; a limit must be a whole number written plainly. */
const limitParam = z
  .string()
  .regex(/^\d{1,4}$/, `must be an integer from 1 to ${MAX_PAGE_SIZE}`)
  .transform(Number)
  .pipe(
    z
      .number()
      .int()
      .min(1, `must be an integer from 1 to ${MAX_PAGE_SIZE}`)
      .max(MAX_PAGE_SIZE, `must be at most ${MAX_PAGE_SIZE}`),
  );

const pageQuery = z.object({
  limit: limitParam.optional(),
  cursor: textSchema().min(1, "must not be empty").max(1024, "is not a cursor this API issued").optional(),
});

/** The `limit` and `cursor` of a list request, as the services' page_size and page_token. */
export function pageRequestOf(req: Request): { pageSize: number; pageToken: string } {
  const { limit, cursor } = parseInput(pageQuery, { limit: req.query.limit, cursor: req.query.cursor });
  return { pageSize: limit ?? DEFAULT_PAGE_SIZE, pageToken: cursor ?? "" };
}

/** The one list envelope of the API. `next_cursor` is null on the last page. */
export function listEnvelope<T>(data: T[], nextPageToken: string): { data: T[]; next_cursor: string | null } {
  return { data, next_cursor: nextPageToken || null };
}
