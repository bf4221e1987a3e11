// Bulk work. Bulk create: up to 100 QR codes in one call, each created or refused exactly as the single
// create would, capacity counted per item, and safe to retry with an Idempotency-Key. Workspace export:
// every code of a workspace as one streamed ZIP of images that decode to the codes' links, errors known
// before the first byte as the envelope and later ones as a cut transfer, 500 codes streamed by an edge
// process whose memory stays within a stated bound. Both shapes.
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionTier } from "@qrplatform/api/tenancy";
import { adminQuery } from "@qrplatform/db/testing";
import { readZip, scrapeMetrics } from "@qrplatform/testing";
import { rsvgToPng, zbarDecode } from "@qrplatform/testing/decoders";
import { call, expectError, invalidFields, typedClient } from "./support/http.js";
import { startStack, type Stack, type StackMode } from "./support/stack.js";

const MODES: StackMode[] = ["in-process", "processes"];

describe.each(MODES)("bulk create [%s]", (mode) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack(mode);
  }, 180_000);
  afterAll(() => stack?.close());

  async function accountWithWorkspace(tier = SubscriptionTier.ORIGIN) {
    const { account } = await stack.admin.createAccount({
      name: `Bulk ${randomBytes(3).toString("hex")}`,
      subscriptionTier: tier,
    });
    const { secret: key } = await stack.admin.createApiKey({ accountId: account!.id });
    const workspace = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Bulk" } });
    return { accountId: account!.id, key, workspaceId: workspace.body.id as string };
  }

  const bulk = (key: string, workspaceId: string, body: unknown, headers: Record<string, string> = {}) =>
    call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes/bulk`, { key, body, headers });

  async function codesIn(key: string, workspaceId: string): Promise<{ id: string; name: string }[]> {
    const res = await call(stack.baseUrl, "GET", `/workspaces/${workspaceId}/qr-codes?limit=100`, { key });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  /** What the single create answers for an item, without what differs per request (ids, times, request ids). */
  function comparable(status: number, error: { code: string; message: string; details?: unknown } | undefined) {
    return { status, code: error?.code, message: error?.message, details: error?.details };
  }

  it("creates 100 codes in one call, answering each in order", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const items = Array.from({ length: 100 }, (_, i) => ({
      name: `Table ${i}`,
      destination_url: `https://example.com/t/${i}`,
      tags: ["bulk"],
    }));
    const res = await bulk(key, workspaceId, { items });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 100, failed: 0 });
    expect(res.body.results.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual(
      items.map((_, i) => [i, 201]),
    );
    expect(res.body.results.map((r: { qr_code: { name: string } }) => r.qr_code.name)).toEqual(
      items.map((item) => item.name),
    );
    const listed = await codesIn(key, workspaceId);
    expect(listed.map((c) => c.id).sort()).toEqual(
      res.body.results.map((r: { qr_code: { id: string } }) => r.qr_code.id).sort(),
    );
  });

  it("answers each failing item with the status and error object the single create gives, and creates the others", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const items = [
      { name: "Fine", destination_url: "https://example.com/fine" },
      { name: "Bad URL", destination_url: "not a url" },
      { name: "Unknown field", destination_url: "https://example.com/x", colour: "red" },
      {
        name: "Circle",
        destination_url: "https://example.com/circle",
        design: { frame: { enabled: true, type: "circle" } },
      },
      {
        name: "Unknown domain",
        destination_url: "https://example.com/d",
        vanity_domain_id: randomUUID(),
        vanity_slug: "menu",
      },
      { name: "", destination_url: "https://example.com/empty" },
      { name: "Also fine", destination_url: "https://example.com/also" },
    ];
    const res = await bulk(key, workspaceId, { items });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 2, failed: 5 });
    for (const [index, item] of items.entries()) {
      const result = res.body.results[index];
      expect(result.index).toBe(index);
      if (result.status === 201) continue;
      expect(result.error.request_id).toBe(res.headers.get("x-request-id"));
      const single = await call(stack.baseUrl, "POST", `/workspaces/${workspaceId}/qr-codes`, {
        key,
        body: JSON.stringify(item),
        headers: { "content-type": "application/json" },
      });
      expect(comparable(result.status, result.error), JSON.stringify(item)).toEqual(
        comparable(single.status, single.body.error),
      );
    }
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 400, 400, 403, 404, 400, 201]);
    expect((await codesIn(key, workspaceId)).map((c) => c.name).sort()).toEqual(["Also fine", "Fine"]);
  });

  it("refuses a call that is not 1 to 100 items, or names no workspace of the account, as a whole", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const item = { name: "x", destination_url: "https://example.com/" };
    expect(invalidFields(await bulk(key, workspaceId, { items: [] }))).toEqual(["items"]);
    expect(invalidFields(await bulk(key, workspaceId, { items: Array(101).fill(item) }))).toEqual(["items"]);
    expect(invalidFields(await bulk(key, workspaceId, [item]))).toEqual(["(body)"]);
    expect(invalidFields(await bulk(key, workspaceId, { items: [item], extra: 1 }))).toEqual(["extra"]);
    expectError(await bulk(key, randomUUID(), { items: [item] }), 404, "not_found");
    expect(await codesIn(key, workspaceId)).toEqual([]);
  });

  it("counts capacity per item: the items that fit are created, the rest fail with qr_code_limit_reached", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    // Filled through the API: in the in-process shape a long pause without HTTP lets the server close an idle
    // keep-alive socket in the same turn as the client reuses it (ECONNRESET), as the two share one event loop.
    const fillers = await bulk(key, workspaceId, {
      items: Array.from({ length: 95 }, (_, i) => ({ name: `Filler ${i}`, destination_url: "https://example.com/" })),
    });
    expect(fillers.body).toMatchObject({ created: 95, failed: 0 });
    const res = await bulk(key, workspaceId, {
      items: Array.from({ length: 10 }, (_, i) => ({ name: `Over ${i}`, destination_url: "https://example.com/over" })),
    });
    expect(res.body).toMatchObject({ created: 5, failed: 5 });
    for (const result of res.body.results.filter((r: { status: number }) => r.status !== 201)) {
      expect(result).toMatchObject({
        status: 403,
        error: { code: "qr_code_limit_reached", details: { limit: 100, used: 100 } },
      });
    }
    expect(await codesIn(key, workspaceId)).toHaveLength(100);
  });

  it("runs once for concurrent retries with one Idempotency-Key, through the typed client", async () => {
    const { key, workspaceId } = await accountWithWorkspace();
    const client = typedClient(stack.baseUrl, key);
    const idempotencyKey = randomUUID();
    const items = [0, 1, 2].map((i) => ({ name: `Retried ${i}`, destination_url: `https://example.com/r/${i}` }));
    const send = () =>
      client.POST("/workspaces/{workspace_id}/qr-codes/bulk", {
        params: { path: { workspace_id: workspaceId }, header: { "Idempotency-Key": idempotencyKey } },
        body: { items },
      });
    const answers = await Promise.all(Array.from({ length: 10 }, send));
    expect(answers.map((a) => a.response.status)).toEqual(Array(10).fill(200));
    expect(answers.map((a) => a.data)).toEqual(Array(10).fill(answers[0]!.data));
    expect(answers.filter((a) => a.response.headers.get("idempotent-replayed") === "true")).toHaveLength(9);
    expect(await codesIn(key, workspaceId)).toHaveLength(3);
  });

  describe("workspace export", () => {
    /** How many codes the memory test exports. */
    const MEMORY_CODES = 500;
    /**
     * How much the edge's memory outside the V8 heap (the buffers of images, pages and sockets) may grow while
     * it streams them. V8 frees buffers nobody holds at its next collection, and collects at the latest when
     * this memory has grown by 64 MiB since the last one; the rest is what the export holds at once: a page
     * of 20 listed codes (designs of about 340 KB), two images rendered ahead and about 1 MiB waiting for
     * the socket. It does not grow with the number of codes: the archive is larger than the bound, and an
     * export that held it, or its images, would pass it.
     */
    const MEMORY_BOUND_BYTES = 80 * 1024 * 1024;

    /** A field of /proc/<pid>/status in bytes (VmRSS: resident now; VmHWM: the peak since the last reset). */
    function memoryOf(pid: number, field: "VmRSS" | "VmHWM"): number {
      const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      return Number(match![1]) * 1024;
    }

    /** Resets the peak resident memory (VmHWM) to the current one; false where the kernel does not allow it. */
    function resetPeak(pid: number): boolean {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, "5");
        return true;
      } catch {
        return false;
      }
    }

    const exportPath = (workspaceId: string, query = "") => `/workspaces/${workspaceId}/qr-codes/export${query}`;

    /** Decodes each image of an archive with zbarimg (SVG rasterized by librsvg first). */
    async function decodeEntries(
      entries: { data: Buffer }[],
      format: "png" | "jpg" | "svg",
    ): Promise<(string | null)[]> {
      if (format !== "svg")
        return zbarDecode(
          entries.map((entry) => entry.data),
          format,
        );
      return zbarDecode(await Promise.all(entries.map((entry) => rsvgToPng(entry.data))), "png");
    }

    it("exports every code of the workspace, oldest first, as images named after the codes that decode to their links, in each format", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      const names = ["Menu", "Menu", "Café du Parc", "menu-2", "☕"];
      const made = await bulk(key, workspaceId, {
        items: names.map((name, i) => ({ name, destination_url: `https://example.com/${i}` })),
      });
      expect(made.body.created).toBe(5);
      // Sent in one call, created a few at a time: the archive follows the list's order.
      const listed = await codesIn(key, workspaceId);
      const other = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Other" } });
      await bulk(key, other.body.id, { items: [{ name: "Elsewhere", destination_url: "https://example.com/else" }] });

      const expectedNames = (ext: string) => {
        const files: string[] = [];
        for (const [i, { name }] of listed.entries()) {
          const base = { Menu: "menu", "Café du Parc": "cafe-du-parc", "menu-2": "menu-2", "☕": listed[i]!.id }[name]!;
          let file = `${base}.${ext}`;
          for (let n = 2; files.includes(file); n++) file = `${base}-${n}.${ext}`;
          files.push(file);
        }
        return files;
      };
      for (const format of ["png", "jpg", "svg"] as const) {
        const res = await call(stack.baseUrl, "GET", exportPath(workspaceId, `?format=${format}&size=256`), { key });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/zip");
        expect(res.headers.get("content-disposition")).toBe(`attachment; filename="bulk-${format}-256.zip"`);
        const entries = await readZip(res.body);
        expect(entries.map((entry) => entry.name)).toEqual(expectedNames(format));
        expect(entries.every((entry) => entry.deflated === (format === "svg"))).toBe(true);
        expect(await decodeEntries(entries, format)).toEqual(
          listed.map((code) => (code as unknown as { vanity_url: string }).vanity_url),
        );
      }
      expect(accountId).toBeTruthy();

      // The typed client reads the same archive as bytes.
      const { data, response } = await typedClient(stack.baseUrl, key).GET(
        "/workspaces/{workspace_id}/qr-codes/export",
        {
          params: { path: { workspace_id: workspaceId }, query: { format: "png", size: 128 } },
          parseAs: "arrayBuffer",
        },
      );
      expect(response.status).toBe(200);
      expect((await readZip(Buffer.from(data as ArrayBuffer))).map((entry) => entry.name)).toEqual(
        expectedNames("png"),
      );
    });

    it("refuses bad input, missing scopes and other accounts' workspaces with the error envelope, and gives an empty workspace an empty archive", async () => {
      const { accountId, key, workspaceId } = await accountWithWorkspace();
      await bulk(key, workspaceId, { items: [{ name: "Only", destination_url: "https://example.com/" }] });
      for (const [query, field] of [
        ["?format=gif", "format"],
        ["?size=100", "size"],
        ["?size=4097", "size"],
        ["?size=abc", "size"],
      ] as const) {
        const res = await call(stack.baseUrl, "GET", exportPath(workspaceId, query), { key });
        expectError(res, 400, "validation_error");
        expect(invalidFields(res)).toEqual([field]);
      }
      expectError(await call(stack.baseUrl, "GET", exportPath("not-a-uuid"), { key }), 400, "validation_error");
      expectError(await call(stack.baseUrl, "GET", exportPath(randomUUID()), { key }), 404, "not_found");

      const stranger = await accountWithWorkspace();
      expectError(await call(stack.baseUrl, "GET", exportPath(workspaceId), { key: stranger.key }), 404, "not_found");

      for (const [scopes, missing] of [
        [["export:read"], "qr_codes:read"],
        [["qr_codes:read"], "export:read"],
      ] as const) {
        const { secret } = await stack.admin.createApiKey({ accountId, scopes: [...scopes] });
        const res = await call(stack.baseUrl, "GET", exportPath(workspaceId), { key: secret });
        expectError(res, 403, "insufficient_scope");
        expect(res.body.error.details).toEqual({ required_scope: missing });
      }

      const empty = await call(stack.baseUrl, "GET", exportPath(stranger.workspaceId), { key: stranger.key });
      expect(empty.status).toBe(200);
      expect(await readZip(empty.body)).toEqual([]);
    });

    if (mode === "in-process") {
      it("answers the envelope when the first image fails, and cuts the transfer when a later one does", async () => {
        const { key, workspaceId } = await accountWithWorkspace();
        await bulk(key, workspaceId, {
          items: Array.from({ length: 6 }, (_, i) => ({
            name: `Code ${i}`,
            destination_url: `https://example.com/${i}`,
          })),
        });
        const renderer = stack.renderer!;
        const render = renderer.render;
        const failingFrom = (failAt: number) => {
          let calls = 0;
          renderer.render = (...args) =>
            ++calls === failAt ? Promise.reject(new Error("the renderer broke")) : render.apply(renderer, args);
        };
        try {
          failingFrom(1);
          expectError(
            await call(stack.baseUrl, "GET", exportPath(workspaceId, "?size=128"), { key }),
            500,
            "internal_error",
          );

          failingFrom(5);
          const res = await fetch(`${stack.baseUrl}${exportPath(workspaceId, "?size=128")}`, {
            headers: { authorization: `Bearer ${key}` },
          });
          expect(res.status).toBe(200);
          await expect(res.arrayBuffer()).rejects.toThrow();
        } finally {
          renderer.render = render;
        }
        // Nothing stays broken: the next export is whole.
        const whole = await call(stack.baseUrl, "GET", exportPath(workspaceId, "?size=128"), { key });
        expect(await readZip(whole.body)).toHaveLength(6);
      });
    } else {
      // Needs DATABASE_URL: the codes are copied in SQL, as 500 creates with a logo would only slow the test.
      it.skipIf(!process.env.DATABASE_URL)(
        `streams ${MEMORY_CODES} codes as a ZIP larger than the memory bound while the edge's memory grows less than the bound`,
        async () => {
          const { accountId, key, workspaceId } = await accountWithWorkspace(SubscriptionTier.SCALE);
          // Noise does not compress: a PNG logo just under the 256 KiB a logo may hold, on every code as a brand's
          // logo would be. An SVG embeds it, so the archive is large while drawing stays cheap.
          const noise = Buffer.from(Array.from({ length: 280 * 280 * 3 }, () => Math.floor(Math.random() * 256)));
          const logo = await sharp(noise, { raw: { width: 280, height: 280, channels: 3 } })
            .png()
            .toBuffer();
          const dataUri = `data:image/png;base64,${logo.toString("base64")}`;
          const warmUp = await call(stack.baseUrl, "POST", "/workspaces", { key, body: { name: "Warm up" } });
          // Made through the catalog: the test stack's edge takes bodies of 64 KiB at most.
          const { qrCode: first } = await stack.catalog.createQrCode({
            accountId,
            workspaceId,
            name: "Code 0",
            destinationUrl: "https://example.com/",
            design: { logo: { dataUri, scale: 0.2 } },
          });
          // Copies of it, each with a link of its own so that no image comes from the cache: 20 to warm up, the rest to measure.
          await adminQuery(
            stack.databaseUrl!,
            `insert into catalog.qr_codes (id, account_id, workspace_id, name, destination_url, status, link_id, vanity_url, canonical_url, design, created_at)
           select gen_random_uuid(), account_id, case when n <= 20 then '${warmUp.body.id}'::uuid else workspace_id end, 'Code ' || n,
                  destination_url, status, gen_random_uuid(), vanity_url || '-' || n, canonical_url || '-' || n, design, created_at + n * interval '1 ms'
           from catalog.qr_codes, generate_series(1, ${MEMORY_CODES + 19}) as n where id = '${first!.id}'`,
          );
          // The edge's V8 heap capped at 112 MiB (it needs about 55 to start), less than that and the archive and its codes' designs: garbage is
          // collected rather than left to pile up to the machine's default limit, and an export that kept
          // what it sent would run out of heap and end the process.
          const edge = await stack.startEdgeReplica({ nodeOptions: "--max-old-space-size=112" });
          const pid = edge.process!.child.pid!;
          const exportZip = async (id: string, onChunk: () => void = () => {}) => {
            const res = await fetch(`${edge.baseUrl}${exportPath(id, "?format=svg")}`, {
              headers: { authorization: `Bearer ${key}` },
            });
            expect(res.status).toBe(200);
            const chunks: Buffer[] = [];
            for await (const chunk of res.body!) {
              chunks.push(Buffer.from(chunk));
              onChunk();
            }
            return Buffer.concat(chunks);
          };
          // The first export warms what every export needs once (pools, buffers, code paths).
          expect(await readZip(await exportZip(warmUp.body.id))).toHaveLength(20);

          // The edge's memory outside the V8 heap, as its own metrics tell it: the buffers of images, pages and
          // sockets, freed as soon as nothing holds them. The heap itself is capped (above), so objects the
          // export held on to would end the process instead.
          const liveMemory = async () => (await scrapeMetrics(edge.metricsUrl!)).value("nodejs_external_memory_bytes");
          const liveBefore = await liveMemory();
          const rssBefore = memoryOf(pid, "VmRSS");
          const peakReset = resetPeak(pid);
          let livePeak = liveBefore;
          let sampling = true;
          const sampler = (async () => {
            while (sampling) {
              livePeak = Math.max(livePeak, await liveMemory());
              await new Promise((resolve) => setTimeout(resolve, 200));
            }
          })();
          const started = Date.now();
          const archive = await exportZip(workspaceId).finally(() => (sampling = false));
          await sampler;
          const liveGrowth = livePeak - liveBefore;
          const rssGrowth = (peakReset ? memoryOf(pid, "VmHWM") : memoryOf(pid, "VmRSS")) - rssBefore;
          const entries = await readZip(archive);
          expect(entries).toHaveLength(MEMORY_CODES);
          expect(entries.every((entry) => entry.data.includes(dataUri))).toBe(true);
          const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
          console.log(
            `workspace export: ${MEMORY_CODES} codes, ${mib(archive.length)} archive in ${Date.now() - started} ms; edge memory outside the heap ` +
              `+${mib(liveGrowth)} at its peak (bound ${mib(MEMORY_BOUND_BYTES)}), resident +${mib(rssGrowth)}`,
          );
          expect(archive.length).toBeGreaterThan(MEMORY_BOUND_BYTES);
          expect(liveGrowth).toBeLessThan(MEMORY_BOUND_BYTES);
        },
        480_000,
      );

      it("cuts the transfer when the rendering service dies midway, and exports whole once it is back", async () => {
        const { key, workspaceId } = await accountWithWorkspace();
        await bulk(key, workspaceId, {
          items: Array.from({ length: 40 }, (_, i) => ({
            name: `Code ${i}`,
            destination_url: `https://example.com/${i}`,
          })),
        });
        const res = await fetch(`${stack.baseUrl}${exportPath(workspaceId, "?size=1024")}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        expect(res.status).toBe(200);
        const reader = res.body!.getReader();
        expect((await reader.read()).done).toBe(false);
        await stack.processes!.rendering.kill();
        try {
          await expect(
            (async () => {
              for (;;) if ((await reader.read()).done) return "ended";
            })(),
          ).rejects.toThrow();
        } finally {
          await stack.processes!.rendering.start();
        }
        const whole = await call(stack.baseUrl, "GET", exportPath(workspaceId, "?size=128"), { key });
        expect(await readZip(whole.body)).toHaveLength(40);
      }, 60_000);
    }
  });
});
