// The exact scan limit's reservation (ADR 0018): 200 scans at once on a link limited to 50 take exactly
// 50 places, on the database of this run, and, on Postgres, from two links instances at once, each
// with its own pool of connections, as two redirector processes would.
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@qrplatform/db";
import { createScratchDatabase } from "@qrplatform/db/testing";
import { PAGE_TOKEN_SECRET } from "@qrplatform/testing";
import { buildLinks, type LinksModule } from "../src/server.js";
import { reservedScans } from "../src/redirects/scan-reservations.repository.js";
import { SHORT_BASE, startLinks, type LinksStack } from "./support/links-stack.js";

const granted = (answers: boolean[]) => answers.filter(Boolean).length;

describe("scan reservations", () => {
  let stack: LinksStack;
  beforeAll(async () => {
    stack = await startLinks();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const newLink = async () => {
    const { link } = await stack.links.createLink({ accountId: randomUUID(), destinationUrl: "https://example.com/" });
    return link!.id;
  };

  it("let exactly max_scans of 200 concurrent scans through", async () => {
    const linkId = await newLink();
    const answers = await Promise.all(Array.from({ length: 200 }, () => stack.module.reserveScan(linkId, 50)));
    expect(granted(answers)).toBe(50);
    expect(await stack.module.reserveScan(linkId, 50)).toBe(false);
    // The reservation that took the last place announced it, once.
    const { rows } = await sql<{ type: string; link_ids: string[]; scan_counts: string[] }>`
      select type, link_ids, scan_counts from links.outbox_events where ${linkId} = any(link_ids)
    `.execute(stack.database.db);
    expect(rows.map((row) => [row.type, row.link_ids, row.scan_counts.map(Number)])).toEqual([
      ["link.scan_limit_reached", [linkId], [50]],
    ]);
  });

  it("count per link, from the first place", async () => {
    const [a, b] = [await newLink(), await newLink()];
    expect(await stack.module.reserveScan(a, 1)).toBe(true);
    expect(await stack.module.reserveScan(a, 1)).toBe(false);
    expect(await stack.module.reserveScan(b, 1)).toBe(true);
    const db = stack.database.db.withSchema("links") as never;
    expect(await reservedScans(db, [a, b, randomUUID()])).toEqual(
      new Map([
        [a, 1],
        [b, 1],
        [expect.any(String), 0],
      ]),
    );
  });

  it("take more places when the limit is raised, and none when it is lowered", async () => {
    const linkId = await newLink();
    expect(granted(await Promise.all([1, 2, 3].map(() => stack.module.reserveScan(linkId, 3))))).toBe(3);
    expect(await stack.module.reserveScan(linkId, 2)).toBe(false);
    expect(await stack.module.reserveScan(linkId, 4)).toBe(true);
    expect(await stack.module.reserveScan(linkId, 4)).toBe(false);
  });
});

describe.runIf(process.env.DATABASE_URL)("scan reservations from two links instances on one Postgres", () => {
  it("let exactly max_scans of 200 concurrent scans through", async () => {
    const scratch = (await createScratchDatabase())!;
    const databases = [
      await openDatabase({ databaseUrl: scratch.url, dataDir: "" }),
      await openDatabase({ databaseUrl: scratch.url, dataDir: "" }),
    ];
    try {
      const instances: LinksModule[] = [];
      for (const database of databases)
        instances.push(
          await buildLinks({ db: database.db, shortLinkBaseUrl: SHORT_BASE, pageTokenSecret: PAGE_TOKEN_SECRET }),
        );
      const linkId = randomUUID();
      await databases[0]!.db
        .withSchema("links")
        .insertInto("links" as never)
        .values({
          id: linkId,
          account_id: randomUUID(),
          slug: "limited",
          destination_url: "https://example.com/",
          query_parameters: "{}",
          status: "active",
        } as never)
        .execute();
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) => instances[i % 2]!.reserveScan(linkId, 50)),
      );
      expect(granted(answers)).toBe(50);
      expect(granted(answers.filter((_, i) => i % 2 === 0))).toBeGreaterThan(0);
      expect(granted(answers.filter((_, i) => i % 2 === 1))).toBeGreaterThan(0);
    } finally {
      for (const database of databases) await database.close();
      await scratch.drop();
    }
  });
});
