// A 500-row `qrctl qr-codes import` through SIGKILLs of `npm start` at two points: running the same
// command again after each restart ends with exactly the file's 500 codes, none twice. Items that were
// still being made when the server died answer 409 (or 5xx) inside the bulk call's 200 at first; such an
// answer is never kept under the batch's key, so a later run makes those rows.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, startQrctl } from "@qrplatform/testing";
import { apiCaller, qrctl, startPlatformProcess, type PlatformProcess } from "@qrplatform/testing/platform-process";

/** Five bulk calls of 100: room for a kill inside a first run, one inside a resumed run, and a call after both. */
const ROWS = 500;
/** Where the import is when the server is killed: rows answered in the current run of the command. */
const KILL_POINTS = [150, 300];
/** How long after the point is reported the server dies: well inside the call that follows it. */
const KILL_DELAY_MS = 700;
/** Bounds the runs of the command it takes to finish, so a resume that never finishes fails the test. */
const MAX_RESUMES = 30;

const dataDir = mkdtempSync(join(tmpdir(), "qrp-import-kill-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** qrctl's import as a user starts it, against the running platform, with its progress lines on stderr. */
function startImport(apiUrl: string, key: string, csv: string, workspaceId: string) {
  const run = startQrctl(["qr-codes", "import", csv, "--workspace", workspaceId, "--json"], {
    cwd: REPO_ROOT,
    onlyEnv: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, QRCTL_API_URL: apiUrl, QRCTL_API_KEY: key },
  });
  /** The most rows this run reported as answered. */
  const imported = () => Math.max(0, ...[...run.stderr().matchAll(/imported (\d+)\/\d+/g)].map((m) => Number(m[1])));
  return { ...run, imported };
}

// Minutes long, so it runs once, in the embedded pass (npm start's own shape): what it proves is the
// edge's and the catalog's handling of keys, which is the same code on either database.
describe.skipIf(process.env.DATABASE_URL)("qrctl qr-codes import across SIGKILLs of npm start", () => {
  it(`imports ${ROWS} rows exactly once when the server is killed at ${KILL_POINTS.join(", ")} rows and the command is run again`, async () => {
    let platform: PlatformProcess = await startPlatformProcess(dataDir);
    try {
      const account = await qrctl(dataDir, ["accounts", "create", "--name", "Importer", "--plan", "scale", "--json"]);
      expect(account.code, account.stderr).toBe(0);
      const accountId = (JSON.parse(account.stdout) as { id: string }).id;
      const created = await qrctl(dataDir, ["keys", "create", "--account", accountId, "--json"]);
      const key = (JSON.parse(created.stdout) as { key: string }).key;
      const api = apiCaller(() => platform.apiUrl, key);
      const workspaceId = (await api("POST", "/workspaces", { name: "Import" })).id as string;
      const csv = join(dataDir, "rows.csv");
      const lines = Array.from({ length: ROWS }, (_, i) => `Row ${i + 1},https://example.com/${i + 1}`);
      writeFileSync(csv, `name,destination_url\n${lines.join("\n")}\n`);

      const runs: string[] = [];
      for (const point of KILL_POINTS) {
        // Runs the command (again, after a run that found a batch still held by the killed server) until
        // it has answered `point` rows in one run, then kills the server under it, and the command with it.
        for (let attempt = 0; ; attempt++) {
          expect(attempt).toBeLessThan(MAX_RESUMES);
          const run = startImport(platform.apiUrl, key, csv, workspaceId);
          let outcome: number | string | undefined;
          void run.exited.then((code) => (outcome = code));
          while (outcome === undefined && run.imported() < point)
            await new Promise((resolve) => setTimeout(resolve, 10));
          if (outcome === undefined) {
            // Progress is reported per answered call: the next call has just been sent. Kill inside it.
            await new Promise((resolve) => setTimeout(resolve, KILL_DELAY_MS));
            await platform.kill();
            run.child.kill("SIGKILL");
            await run.exited;
            runs.push(`killed at ${run.imported()}`);
            platform = await startPlatformProcess(dataDir);
            break;
          }
          runs.push(`run ended with ${outcome}: ${run.stdout().trim() || run.stderr().trim().split("\n").at(-1)}`);
          if (outcome === 0) throw new Error(`the import finished before ${point} rows: ${runs.join("; ")}`);
        }
      }

      // Resumes: the same command until it reports every row made.
      let summary: { rows: number; created: number; failed: number } | undefined;
      for (let attempt = 0; attempt < MAX_RESUMES; attempt++) {
        const run = startImport(platform.apiUrl, key, csv, workspaceId);
        const code = await run.exited;
        runs.push(`resume ended with ${code}: ${run.stdout().trim() || run.stderr().trim().split("\n").at(-1)}`);
        if (run.stdout()) summary = JSON.parse(run.stdout());
        if (code === 0 && summary?.failed === 0) break;
      }
      expect(summary, runs.join("\n")).toMatchObject({ rows: ROWS, created: ROWS, failed: 0 });

      const names: string[] = [];
      for (let cursor: string | null = null; ; ) {
        const page = await api(
          "GET",
          `/workspaces/${workspaceId}/qr-codes?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
        );
        names.push(...page.data.map((code: { name: string }) => code.name));
        cursor = page.next_cursor;
        if (!cursor) break;
      }
      expect(names).toHaveLength(ROWS);
      expect(new Set(names).size).toBe(ROWS);
    } finally {
      await platform.stop();
    }
  }, 900_000);
});
