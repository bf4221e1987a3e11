// The worker threads that draw images: they draw what the main thread would, and a render whose
// caller gave up is stopped mid-way without breaking the pool.
import { afterAll, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { DesignSchema, ImageFormat } from "@qrplatform/api/rendering";
import sharp from "sharp";
import { normalizeDesign } from "../src/design/design-rules.js";
import { draw, type DrawTask } from "../src/render/draw.js";
import { RenderPool } from "../src/render/render-pool.js";
import { jsqrDecode } from "@qrplatform/testing/decoders";

const CONTENT = "https://qr.example.com/ab3k9mzq";
const task = (init: Partial<DrawTask> = {}): DrawTask => ({
  content: CONTENT,
  design: normalizeDesign(create(DesignSchema, { foreground: "#1a237e" })).design,
  format: ImageFormat.PNG,
  size: 512,
  ...init,
});

const pool = new RenderPool(1);
afterAll(() => pool.close());

describe("render pool", () => {
  it("draws the same bytes on its thread as drawing here, in every format", async () => {
    for (const format of [ImageFormat.PNG, ImageFormat.JPG, ImageFormat.SVG]) {
      const pooled = await pool.draw(task({ format }), new AbortController().signal);
      expect(Buffer.from(pooled).equals(Buffer.from(await draw(task({ format }))))).toBe(true);
    }
    expect(await jsqrDecode(Buffer.from(await pool.draw(task(), new AbortController().signal)))).toBe(CONTENT);
  });

  it("stops a render whose caller gave up, and draws the next one", async () => {
    const giveUp = new AbortController();
    const stopped = pool.draw(task({ size: 4096, format: ImageFormat.JPG }), giveUp.signal);
    setImmediate(() => giveUp.abort());
    await expect(stopped).rejects.toMatchObject({ name: "AbortError" });
    const next = await pool.draw(task({ size: 300 }), new AbortController().signal);
    expect(await sharp(next).metadata()).toMatchObject({ format: "png", width: 300 });
  });
});
