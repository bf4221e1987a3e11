// qrctl's qr-codes commands as a user runs them, against a running API: a CSV import of 1,000 rows that
// is killed half-way and run again yields exactly 1,000 codes; the rows the API refuses end up, exactly,
// in the failed-rows file; a workspace is exported to a ZIP file.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { QRCTL_BIN, QRCTL_FREE_ENV, readZip, startQrctl } from "@qrplatform/testing";
import { call, type Stack, startStack } from "@qrplatform/edge/testing";

// The child must not inherit a credential from the environment running the tests.

let stack: Stack;
let dir: string;
let key: string;

beforeAll(async () => {
  stack = await startStack("in-process");
  dir = await mkdtemp(join(tmpdir(), "qrctl-qr-codes-"));
  const { account } = await stack.admin.createAccount({ name: "Importer", subscriptionTier: SubscriptionTier.SCALE });
  key = (await stack.admin.createApiKey({ accountId: account!.id })).secret;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts qrctl with the API's address and key in its environment. */
function qrctl(args: string[]) {
  return startQrctl(args, { env: { QRCTL_API_URL: stack.baseUrl, QRCTL_API_KEY: key } });
}

async function run(args: string[]) {
  const process = qrctl(args);
  const code = await process.exited;
  return { code, stdout: process.stdout(), stderr: process.stderr() };
}

async function newWorkspace(name: string): Promise<string> {
  return (await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name } })).body.id;
}

async function codesIn(workspaceId: string): Promise<{ name: string; destination_url: string; tags: string[] }[]> {
  const codes = [];
  for (let cursor: string | null = null; ; ) {
    const page = await call(
      stack.baseUrl,
      "GET",
      `/workspaces/${workspaceId}/qr-codes?limit=100${cursor ? `&cursor=${cursor}` : ""}`,
      { key },
    );
    codes.push(...page.body.data);
    cursor = page.body.next_cursor;
    if (!cursor) return codes;
  }
}

describe("qrctl qr-codes import", () => {
  it("imports 1,000 rows exactly once when killed half-way and run again", async () => {
    const workspaceId = await newWorkspace("Import");
    const csv = join(dir, "thousand.csv");
    const rows = Array.from({ length: 1000 }, (_, i) => `Row ${i + 1},https://example.com/${i + 1},poster;spring`);
    await writeFile(csv, `name,destination_url,tags\n${rows.join("\n")}\n`);

    const first = qrctl(["qr-codes", "import", csv, "--workspace", workspaceId]);
    // Not a terminal: one plain progress line per call. Killed as soon as half the rows are in.
    while (!/imported ([5-9]\d\d)\/1000 \(\d+\/s, ETA \d+s\)/.test(first.stderr())) {
      expect(
        await Promise.race([first.exited, new Promise((resolve) => setTimeout(() => resolve(undefined), 20))]),
        first.stderr(),
      ).toBeUndefined();
    }
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    const before = (await codesIn(workspaceId)).length;
    expect(before).toBeGreaterThanOrEqual(500);
    expect(before).toBeLessThan(1000);

    const resumed = await run(["qr-codes", "import", csv, "--workspace", workspaceId, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout);
    expect(summary).toMatchObject({ rows: 1000, created: 1000, failed: 0, failed_rows_file: null });
    expect(summary.resumed_rows).toBeGreaterThanOrEqual(500);
    const codes = await codesIn(workspaceId);
    expect(codes).toHaveLength(1000);
    expect(new Set(codes.map((code) => code.name)).size).toBe(1000);
    // A bulk call creates a few items at once, so a batch's codes list in the order they were created, not the file's.
    expect(codes.find((code) => code.name === "Row 1000")).toMatchObject({
      destination_url: "https://example.com/1000",
      tags: ["poster", "spring"],
    });
  }, 240_000);

  it("imports the same file into a second workspace as a new import, and replays it in the first", async () => {
    const csv = join(dir, "twice.csv");
    await writeFile(csv, "name,destination_url\nFirst,https://example.com/1\nSecond,https://example.com/2\n");
    const [one, two] = [await newWorkspace("Twice A"), await newWorkspace("Twice B")];

    for (const workspaceId of [one, two]) {
      const imported = await run(["qr-codes", "import", csv, "--workspace", workspaceId, "--json"]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(JSON.parse(imported.stdout)).toMatchObject({ rows: 2, created: 2, failed: 0, resumed_rows: 0 });
    }
    const again = await run(["qr-codes", "import", csv, "--workspace", one, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 2, created: 2, resumed_rows: 2 });
    for (const workspaceId of [one, two]) {
      expect((await codesIn(workspaceId)).map((code) => code.name).sort()).toEqual(["First", "Second"]);
    }
  }, 60_000);

  it("writes exactly the rows the API refused to the failed-rows file, with the reason, and exports the rest as a ZIP", async () => {
    const workspaceId = await newWorkspace("Mixed");
    const csv = join(dir, "mixed.csv");
    const lines = [
      "name,destination_url,utm_source",
      "Menu,https://example.com/menu,poster",
      '"Bad, url",not a url,',
      "Card,https://example.com/card,",
      ",https://example.com/no-name,",
      "Flyer,https://example.com/flyer,flyer",
      "Script,javascript:alert(1),",
    ];
    await writeFile(csv, `${lines.join("\n")}\n`);
    const result = await run(["qr-codes", "import", csv, "--workspace", workspaceId, "--batch-size", "4"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain("6 rows into workspace");
    expect(result.stdout).toContain("3 created, 3 failed");
    const failedPath = join(dir, "mixed.failed.csv");
    expect(result.stdout).toContain(failedPath);
    const failed = parse(await readFile(failedPath), { columns: true }) as Record<string, string>[];
    expect(failed.map(({ error: _error, ...row }) => row)).toEqual([
      { name: "Bad, url", destination_url: "not a url", utm_source: "" },
      { name: "", destination_url: "https://example.com/no-name", utm_source: "" },
      { name: "Script", destination_url: "javascript:alert(1)", utm_source: "" },
    ]);
    // Each reason names the fields the API found wrong, as the API words them.
    expect(failed.map((row) => row.error)).toEqual([
      "validation_error: The request is not valid. destination_url: must be an absolute URL such as https://example.com/page",
      "validation_error: The request is not valid. name: must not be empty",
      "validation_error: The request is not valid. destination_url: must be an http or https URL",
    ]);
    // A bulk call creates its items concurrently, so their creation order is not the file's.
    expect((await codesIn(workspaceId)).map((code) => code.name).sort()).toEqual(["Card", "Flyer", "Menu"]);

    const zip = join(dir, "mixed.zip");
    const exported = await run([
      "qr-codes",
      "export-zip",
      "--workspace",
      workspaceId,
      "--format",
      "svg",
      "--size",
      "256",
      "--output",
      zip,
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    expect((await readZip(await readFile(zip))).map((entry) => entry.name).sort()).toEqual([
      "card.svg",
      "flyer.svg",
      "menu.svg",
    ]);
  }, 60_000);

  it("reports a row too long to read by its line and imports the rows around it, in calls the API's body limit takes", async () => {
    const workspaceId = await newWorkspace("Large rows");
    const csv = join(dir, "large.csv");
    // 40 rows the file may hold but the API refuses (a 40,000-character URL): 100 of them would be 4 MB,
    // and this stack's edge takes bodies of 64 KiB (the default is 1 MiB). Then a 5 MB row, and rows after it.
    const lines = [
      "name,destination_url",
      "Before,https://example.com/before",
      ...Array.from({ length: 40 }, (_, i) => `Long ${i},https://example.com/${"l".repeat(40_000)}`),
      `Huge,https://example.com/${"h".repeat(5 * 1024 * 1024)}`,
      ...Array.from({ length: 60 }, (_, i) => `After ${i},https://example.com/after/${i}`),
    ];
    await writeFile(csv, `${lines.join("\n")}\n`);
    const result = await run(["qr-codes", "import", csv, "--workspace", workspaceId, "--json"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain("41 of 102 rows were not imported");
    expect(JSON.parse(result.stdout)).toMatchObject({
      rows: 102,
      created: 61,
      failed: 41,
      failed_rows_file: join(dir, "large.failed.csv"),
    });

    const failed = parse(await readFile(join(dir, "large.failed.csv")), { columns: true }) as Record<string, string>[];
    expect(failed).toHaveLength(41);
    expect(
      failed
        .slice(0, 40)
        .every(
          (row) =>
            row.error ===
            "validation_error: The request is not valid. destination_url: must be at most 2048 characters",
        ),
    ).toBe(true);
    expect(failed[40]).toEqual({
      name: "",
      destination_url: "",
      error: `row_too_large: the row at line 43 has ${5 * 1024 * 1024 + 26} bytes; a row may have at most 65536`,
    });
    const names = (await codesIn(workspaceId)).map((code) => code.name);
    expect(names.sort()).toEqual(["Before", ...Array.from({ length: 60 }, (_, i) => `After ${i}`)].sort());
  }, 120_000);

  it("refuses a file it cannot import, an unknown workspace and a missing key before anything is created", async () => {
    const workspaceId = await newWorkspace("Refusals");
    const unknownColumn = join(dir, "unknown.csv");
    await writeFile(unknownColumn, "name,destination,colour\nMenu,https://example.com,red\n");
    const refused = await run(["qr-codes", "import", unknownColumn, "--workspace", workspaceId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("unknown CSV column destination, colour");

    const good = join(dir, "good.csv");
    await writeFile(good, "name,destination_url\nMenu,https://example.com\n");
    const nowhere = await run(["qr-codes", "import", good, "--workspace", "00000000-0000-4000-8000-000000000000"]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain("(404 not_found)");

    const noKey = spawn(
      process.execPath,
      [QRCTL_BIN.compiled, "qr-codes", "import", good, "--workspace", workspaceId],
      { env: QRCTL_FREE_ENV, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    noKey.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    expect(await new Promise((resolve) => noKey.once("exit", resolve))).toBe(2);
    expect(stderr).toContain("no API key");
    expect(await codesIn(workspaceId)).toEqual([]);

    const missing = await run([
      "qr-codes",
      "export-zip",
      "--workspace",
      workspaceId,
      "--format",
      "gif",
      "--output",
      join(dir, "x.zip"),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("400 validation_error");
  });
});
