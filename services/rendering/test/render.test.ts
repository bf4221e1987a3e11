import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorCorrection, ImageFormat, RenderQrCodeRequestSchema } from "@qrplatform/api/rendering";
import { errorInfoOf } from "@qrplatform/platform";
import sharp from "sharp";
import { encodeQr } from "../src/render/qr-matrix.js";
import type { DrawTask } from "../src/render/draw.js";
import { matchesIfNoneMatch, Renderer, type Drawer } from "../src/render/renderer.js";
import { jsqrDecode, rsvgToPng, zbarDecode } from "@qrplatform/testing/decoders";

const CONTENT = "https://qr.example.com/ab3k9mzq";
const request = (init: MessageInitShape<typeof RenderQrCodeRequestSchema> = {}) =>
  create(RenderQrCodeRequestSchema, { content: CONTENT, ...init });

async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

describe("rendering", () => {
  it("renders PNG, JPEG and SVG at the asked size, each read back by independent decoders", async () => {
    const renderer = new Renderer();
    const png = await renderer.render(request({ format: ImageFormat.PNG, size: 512 }));
    const jpg = await renderer.render(request({ format: ImageFormat.JPG, size: 512 }));
    const svg = await renderer.render(request({ format: ImageFormat.SVG, size: 512 }));
    expect([png.contentType, jpg.contentType, svg.contentType]).toEqual(["image/png", "image/jpeg", "image/svg+xml"]);
    expect(await sharp(png.image).metadata()).toMatchObject({ format: "png", width: 512, height: 512 });
    expect(await sharp(jpg.image).metadata()).toMatchObject({ format: "jpeg", width: 512, height: 512 });
    expect(Buffer.from(svg.image).toString()).toMatch(/^<svg [^>]*width="512" height="512"/);

    const svgRaster = await rsvgToPng(Buffer.from(svg.image));
    expect(await zbarDecode([Buffer.from(png.image), svgRaster], "png")).toEqual([CONTENT, CONTENT]);
    expect(await zbarDecode([Buffer.from(jpg.image)], "jpg")).toEqual([CONTENT]);
    for (const image of [png.image, jpg.image, svgRaster]) expect(await jsqrDecode(Buffer.from(image))).toBe(CONTENT);
  });

  it("defaults to a 1024 px PNG and draws the design's colours", async () => {
    const rendered = await new Renderer().render(request({ design: { foreground: "#c62828", background: "#fffde7" } }));
    expect(rendered.contentType).toBe("image/png");
    const { data, info } = await sharp(rendered.image).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([1024, 1024]);
    const pixel = (x: number, y: number) =>
      `#${[0, 1, 2].map((c) => data[(y * info.width + x) * info.channels + c]!.toString(16).padStart(2, "0")).join("")}`;
    expect(pixel(2, 2)).toBe("#fffde7"); // the quiet zone
    const moduleSize = 1024 / (encodeQr(CONTENT, ErrorCorrection.M).size + 8);
    expect(pixel(Math.round(4.5 * moduleSize), Math.round(4.5 * moduleSize))).toBe("#c62828"); // the finder's outer ring
    expect(pixel(Math.round(5.5 * moduleSize), Math.round(5.5 * moduleSize))).toBe("#fffde7"); // its light ring
    expect(pixel(Math.round(7.5 * moduleSize), Math.round(7.5 * moduleSize))).toBe("#c62828"); // its centre
  });

  it("gives one strong ETag per content, design, format and size", async () => {
    const renderer = new Renderer();
    const etag = async (init: MessageInitShape<typeof RenderQrCodeRequestSchema>) =>
      (await renderer.render(request(init))).etag;
    const base = await etag({ size: 256 });
    expect(base).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(await etag({ size: 256 })).toBe(base);
    const others = [
      await etag({ size: 257 }),
      await etag({ size: 256, format: ImageFormat.SVG }),
      await etag({ size: 256, content: `${CONTENT}x` }),
      await etag({ size: 256, design: { foreground: "#111111" } }),
    ];
    expect(new Set([base, ...others]).size).toBe(5);
    // Unset fields and their explicit defaults are the same image.
    expect(await etag({ size: 256, design: { foreground: "#000", background: "#FFFFFF" } })).toBe(base);
  });

  it("answers If-None-Match without rendering, and renders a repeated request only once", async () => {
    const renderer = new Renderer();
    const first = await renderer.render(request({ size: 300 }));
    expect(renderer.renders).toBe(1);
    const again = await renderer.render(request({ size: 300 }));
    expect(Buffer.from(again.image).equals(Buffer.from(first.image))).toBe(true);
    expect(renderer.renders).toBe(1);

    for (const header of [first.etag, `W/${first.etag}`, `"other", ${first.etag}`, "*"]) {
      const notModified = await new Renderer().render(request({ size: 300, ifNoneMatch: header }));
      expect(notModified).toMatchObject({ notModified: true, etag: first.etag, image: new Uint8Array() });
    }
    const fresh = new Renderer();
    expect((await fresh.render(request({ size: 300, ifNoneMatch: '"stale"' }))).notModified).toBe(false);
    expect(fresh.renders).toBe(1);

    const parallel = new Renderer();
    await Promise.all(Array.from({ length: 10 }, () => parallel.render(request({ size: 300 }))));
    expect(parallel.renders).toBe(1);
  });

  it("keeps at most `concurrency` renders running under 20 parallel large exports", async () => {
    const renderer = new Renderer({ concurrency: 2 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => renderer.render(request({ size: 2048, content: `${CONTENT}${i}` }))),
    );
    expect(results.every((r) => r.image.length > 0)).toBe(true);
    expect(renderer.renders).toBe(20);
    expect(renderer.peakConcurrentRenders).toBe(2);
  });

  it("stops a render only once every caller waiting for it gave up", async () => {
    // A drawer that draws nothing until told, and shows whether its render was stopped.
    const draws: { task: DrawTask; signal: AbortSignal; finish(): void }[] = [];
    const drawer: Drawer = {
      draw: (task, signal) =>
        new Promise((resolve, reject) => {
          draws.push({ task, signal, finish: () => resolve(new Uint8Array([1])) });
          signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true });
        }),
      close: async () => {},
    };
    const renderer = new Renderer({ drawer });
    const started = async (count: number) => {
      while (draws.length < count) await new Promise((resolve) => setImmediate(resolve));
    };

    const [first, second] = [new AbortController(), new AbortController()];
    const kept = [
      renderer.render(request({ size: 256 }), first.signal),
      renderer.render(request({ size: 256 }), second.signal),
    ];
    await started(1);
    first.abort();
    expect((await failure(kept[0]!)).code).toBe(Code.Canceled);
    expect(draws[0]!.signal.aborted).toBe(false);
    draws[0]!.finish();
    expect((await kept[1]!).image).toEqual(new Uint8Array([1]));

    const [third, fourth] = [new AbortController(), new AbortController()];
    const abandoned = [
      renderer.render(request({ size: 512 }), third.signal),
      renderer.render(request({ size: 512 }), fourth.signal),
    ];
    await started(2);
    third.abort();
    fourth.abort();
    for (const call of abandoned) expect((await failure(call)).code).toBe(Code.Canceled);
    expect(draws[1]!.signal.aborted).toBe(true);
    // The next caller draws the image anew rather than join the stopped render.
    const again = renderer.render(request({ size: 512 }));
    await started(3);
    draws[2]!.finish();
    expect((await again).image).toEqual(new Uint8Array([1]));
    expect(renderer.renders).toBe(3);
  });

  it("keeps the cache within its byte budget", async () => {
    const renderer = new Renderer({ cacheBytes: 64 * 1024 });
    for (let i = 0; i < 30; i++) await renderer.render(request({ size: 512, content: `${CONTENT}${i}` }));
    expect(renderer.cachedBytes).toBeLessThanOrEqual(64 * 1024);
    expect(renderer.cachedBytes).toBeGreaterThan(0);
    await renderer.render(request({ size: 512, content: `${CONTENT}0` }));
    expect(renderer.renders).toBe(31); // the oldest image was evicted and drawn again
  });

  it("refuses bad requests with INVALID_ARGUMENT before rendering", async () => {
    const renderer = new Renderer();
    const cases: [MessageInitShape<typeof RenderQrCodeRequestSchema>, string][] = [
      [{ content: "" }, "content"],
      [{ size: 127 }, "size"],
      [{ size: 4097 }, "size"],
      [{ format: 9 as ImageFormat }, "format"],
      [{ design: { foreground: "red" } }, "design.foreground"],
      [{ content: "x".repeat(3000) }, "content"],
    ];
    for (const [init, field] of cases) {
      const error = await failure(renderer.render(request(init)));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(errorInfoOf(error)?.fieldViolations.map((v) => v.field)).toEqual([field]);
    }
    expect(renderer.renders).toBe(0);
  });

  it("renders a stored design that today's scannability rules would refuse, so old codes still export", async () => {
    const rendered = await new Renderer().render(request({ size: 256, design: { foreground: "#cccccc" } }));
    expect(rendered.image.length).toBeGreaterThan(0);
  });
});

describe("If-None-Match", () => {
  it("compares weakly and understands lists and *", () => {
    expect(matchesIfNoneMatch('"a"', '"a"')).toBe(true);
    expect(matchesIfNoneMatch('W/"a"', '"a"')).toBe(true);
    expect(matchesIfNoneMatch(' "b" , "a" ', '"a"')).toBe(true);
    expect(matchesIfNoneMatch("*", '"a"')).toBe(true);
    expect(matchesIfNoneMatch("", '"a"')).toBe(false);
    expect(matchesIfNoneMatch('"ab"', '"a"')).toBe(false);
    expect(matchesIfNoneMatch("a", '"a"')).toBe(false);
  });
});
