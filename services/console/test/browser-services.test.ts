// The console end to end in a real browser against the services shape: deploy/local/run-services.sh,
// every process on its own, the console served by the edge process; the journey itself is
// support/browser-journey.ts. The runner needs PostgreSQL, so this runs in CI's Postgres pass only,
// once (the embedded pass runs the journey against `npm start` in browser.test.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe } from "vitest";
import { createScratchDatabase } from "@qrplatform/db/testing";
import { freePortOffset, startLocalServices } from "@qrplatform/testing/local-services";
import { consoleJourney } from "./support/browser-journey.js";

describe.skipIf(!process.env.DATABASE_URL)(
  "the console in a browser, on the services shape (needs DATABASE_URL: CI's Postgres pass)",
  { timeout: 90_000 },
  () => {
    consoleJourney({
      name: "services",
      async start(env) {
        const dataDir = mkdtempSync(join(tmpdir(), "qrp-console-services-"));
        const database = (await createScratchDatabase())!;
        const services = startLocalServices({
          offset: await freePortOffset(),
          databaseUrl: database.url,
          dataDir,
          env,
        });
        try {
          await services.ready();
        } catch (error) {
          await services.stop();
          await database.drop();
          throw error;
        }
        return {
          origin: services.edgeUrl,
          apiKey: (name) => services.apiKey(name),
          async stop() {
            await services.stop();
            await database.drop();
            rmSync(dataDir, { recursive: true, force: true });
          },
        };
      },
    });
  },
);
