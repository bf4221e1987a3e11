// The lifecycle's outbox events: an expiry that passed is announced once, whichever instance looks and
// however often, and a new expires_at that passes is announced again.
import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordExpiredLinks } from "../src/outbox/outbox.repository.js";
import { startLinks, type LinksStack } from "./support/links-stack.js";

let stack: LinksStack;
beforeAll(async () => {
  stack = await startLinks();
});
afterAll(() => stack?.close());

const eventsOf = async (linkId: string) =>
  (
    await sql<{ type: string }>`select type from links.outbox_events where ${linkId} = any(link_ids)`.execute(
      stack.database.db,
    )
  ).rows.map((row) => row.type);

describe("expired links", () => {
  it("are announced once per expires_at that passed", async () => {
    const accountId = randomUUID();
    const expiresAt = new Date(Date.now() + 60_000);
    const { link } = await stack.links.createLink({
      accountId,
      destinationUrl: "https://example.com/",
      routing: { expiresAt: timestampFromDate(expiresAt) },
    });
    const linkId = link!.id;
    const db = stack.database.db.withSchema("links") as never;
    await recordExpiredLinks(db, new Date(expiresAt.getTime() - 1));
    expect(await eventsOf(linkId)).toEqual([]);
    const after = new Date(expiresAt.getTime() + 1000);
    await Promise.all([recordExpiredLinks(db, after), recordExpiredLinks(db, after)]);
    await recordExpiredLinks(db, after);
    expect(await eventsOf(linkId)).toEqual(["link.expired"]);

    const later = new Date(expiresAt.getTime() + 3_600_000);
    await stack.links.updateLink({
      accountId,
      linkId,
      routing: { expiresAt: timestampFromDate(later) },
      routingMask: { paths: ["expires_at"] },
    });
    await recordExpiredLinks(db, new Date(later.getTime() + 1000));
    expect(await eventsOf(linkId)).toEqual(["link.expired", "link.expired"]);
  });
});
