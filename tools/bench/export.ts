// Export benchmark: cold and cached renders per format at 256 and 1024 px, side by side with the
// qrencode CLI (Debian qrencode) writing a PNG of the same URL, and peak memory under 20 parallel
// 4096 px exports. Figures are from one run on this machine; compare the ratios, not the numbers.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { create } from "@bufbuild/protobuf";
import {
  CornerDotShape,
  CornerSquareShape,
  ImageFormat,
  ModuleStyle,
  RenderQrCodeRequestSchema,
} from "@qrplatform/api/rendering";
import { Renderer } from "../../services/rendering/src/render/renderer.js";

const run = promisify(execFile);
const URL = "https://qr.example.com/ab3k9mzq";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const STYLED = {
  foreground: "#1a237e",
  style: ModuleStyle.EXTRA_ROUNDED,
  cornerSquareShape: CornerSquareShape.ROUNDED,
  cornerDotShape: CornerDotShape.ROUNDED,
};

/** Calls `once` for SECONDS, `parallel` calls at a time, and answers operations per second. */
async function throughput(once: (i: number) => Promise<unknown>, parallel = 1): Promise<number> {
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (performance.now() < until) await once(done++);
    }),
  );
  return done / SECONDS;
}

const FORMATS = { png: ImageFormat.PNG, jpg: ImageFormat.JPG, svg: ImageFormat.SVG } as const;

async function main(): Promise<void> {
  try {
    await run("qrencode", ["--version"]);
  } catch {
    throw new Error("the benchmark compares with the qrencode CLI: install Debian's qrencode package");
  }
  const dir = await mkdtemp(join(tmpdir(), "qrp-bench-"));
  const rows: { scenario: string; size: number; perSecond: number }[] = [];
  try {
    for (const size of [256, 1024]) {
      // qrencode: version 3 at M is 29 modules plus an 8-module margin; -s is pixels per module.
      const pixelsPerModule = Math.max(1, Math.round(size / 37));
      const qrencode = await throughput((i) =>
        run("qrencode", ["-l", "M", "-m", "4", "-s", String(pixelsPerModule), "-o", join(dir, `${i}.png`), URL]),
      );
      rows.push({ scenario: `qrencode CLI, png, ${size} px`, size, perSecond: qrencode });
      for (const [name, format] of Object.entries(FORMATS)) {
        // Cold: every request is a new content, so nothing comes from the cache.
        const cold = new Renderer();
        const coldRate = await throughput(
          (i) =>
            cold.render(create(RenderQrCodeRequestSchema, { content: `${URL}${i}`, design: STYLED, format, size })),
          2,
        );
        const warm = new Renderer();
        const request = create(RenderQrCodeRequestSchema, { content: URL, design: STYLED, format, size });
        await warm.render(request);
        const warmRate = await throughput(() => warm.render(request), 2);
        rows.push({ scenario: `qr-platform cold, ${name}, ${size} px`, size, perSecond: coldRate });
        rows.push({ scenario: `qr-platform cached, ${name}, ${size} px`, size, perSecond: warmRate });
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const baseline = (size: number) => rows.find((r) => r.scenario.startsWith("qrencode") && r.size === size)!.perSecond;
  console.log(
    `\nExport throughput, ${SECONDS} s per scenario (2 requests in flight for qr-platform, 1 qrencode process at a time)\n`,
  );
  console.log("| scenario | per second | vs qrencode CLI at the same size |");
  console.log("|---|---:|---:|");
  for (const { scenario, size, perSecond } of rows) {
    console.log(`| ${scenario} | ${perSecond.toFixed(1)} | ${(perSecond / baseline(size)).toFixed(2)}x |`);
  }

  // Memory: rounds of 20 different 4096 px PNGs at once; the renderer lets one per core draw at a time,
  // so the peak should stop growing after the first round (freed bitmaps are reused, not added to).
  const renderer = new Renderer();
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
  let peak = process.memoryUsage().rss;
  const start = peak;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const peaks: string[] = [];
  for (let round = 0; round < 3; round++) {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        renderer.render(
          create(RenderQrCodeRequestSchema, { content: `${URL}/${round}/${i}`, design: STYLED, size: 4096 }),
        ),
      ),
    );
    peaks.push(`${mib(peak)} MiB`);
  }
  clearInterval(sampler);
  console.log(
    `\n3 rounds of 20 parallel 4096 px PNG exports: RSS ${mib(start)} MiB before, peak after each round ${peaks.join(", ")} ` +
      `(at most ${renderer.peakConcurrentRenders} drawing at once; one 4096 px RGBA bitmap is 64 MiB)`,
  );
}

await main();
