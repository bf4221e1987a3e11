// The console end to end in a real browser against `npm start` (the compiled embedded platform with
// the console it serves); the journey itself is support/browser-journey.ts.
// Runs once in CI, on the embedded pass: with DATABASE_URL set (the Postgres pass, which runs the same
// journey against the services shape in browser-services.test.ts) it skips itself, unless
// CONSOLE_BROWSER_TESTS=1 asks for it there too.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe } from "vitest";
import { qrctl, startPlatformProcess } from "@qrplatform/testing/platform-process";
import { consoleJourney } from "./support/browser-journey.js";

const skip = Boolean(process.env.DATABASE_URL) && process.env.CONSOLE_BROWSER_TESTS !== "1";

describe.skipIf(skip)("the console in a browser, on npm start", { timeout: 90_000 }, () => {
  consoleJourney({
    name: "embedded",
    async start(env) {
      const dataDir = mkdtempSync(join(tmpdir(), "qrp-console-e2e-"));
      const platform = await startPlatformProcess(dataDir, env);
      return {
        origin: platform.apiUrl.replace(/\/api\/v1$/, ""),
        async apiKey(name) {
          const account = await qrctl(dataDir, ["accounts", "create", "--name", name, "--plan", "scale", "--json"]);
          const accountId = JSON.parse(account.stdout).id as string;
          const created = await qrctl(dataDir, ["keys", "create", "--account", accountId, "--json"]);
          return JSON.parse(created.stdout).key as string;
        },
        async stop() {
          await platform.stop();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  });
});
