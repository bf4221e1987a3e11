// The edge's cache of exported images: addressed by what draws them, bounded in bytes, and off at 0.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { DesignSchema, ImageFormat, RenderQrCodeResponseSchema } from "@qrplatform/api/rendering";
import { exportedImages, type ImageInputs } from "../src/resources/exported-images.js";

const inputs = (overrides: Partial<ImageInputs> = {}): ImageInputs => ({
  content: "https://qr.example.com/ab3k9mzq",
  design: create(DesignSchema, { foreground: "#000000" }),
  format: ImageFormat.PNG,
  size: 512,
  ...overrides,
});
const image = (bytes: number) =>
  create(RenderQrCodeResponseSchema, { image: new Uint8Array(bytes).fill(7), contentType: "image/png" });

describe("exported images", () => {
  it("answers an image only for the same content, design, format and size", () => {
    const images = exportedImages({ maxBytes: 1024 * 1024, ttlMs: 60_000 });
    const kept = image(100);
    images.keep(inputs(), kept);
    expect(images.get(inputs())).toBe(kept);
    expect(images.get(inputs({ content: "https://qr.example.com/other" }))).toBeUndefined();
    expect(images.get(inputs({ design: create(DesignSchema, { foreground: "#000001" }) }))).toBeUndefined();
    expect(images.get(inputs({ design: undefined }))).toBeUndefined();
    expect(images.get(inputs({ format: ImageFormat.SVG }))).toBeUndefined();
    expect(images.get(inputs({ size: 513 }))).toBeUndefined();
  });

  it("keeps at most maxBytes, dropping the least recently used first, and never an image larger than that", () => {
    const images = exportedImages({ maxBytes: 1000, ttlMs: 60_000 });
    images.keep(inputs({ size: 1 }), image(400));
    images.keep(inputs({ size: 2 }), image(400));
    images.get(inputs({ size: 1 }));
    images.keep(inputs({ size: 3 }), image(400));
    expect(images.get(inputs({ size: 1 }))).toBeDefined();
    expect(images.get(inputs({ size: 2 }))).toBeUndefined();
    expect(images.get(inputs({ size: 3 }))).toBeDefined();
    images.keep(inputs({ size: 4 }), image(1001));
    expect(images.get(inputs({ size: 4 }))).toBeUndefined();
    expect(images.get(inputs({ size: 1 }))).toBeDefined();
  });

  it("keeps nothing when its size is 0", () => {
    const images = exportedImages({ maxBytes: 0, ttlMs: 60_000 });
    images.keep(inputs(), image(100));
    expect(images.get(inputs())).toBeUndefined();
  });

  it("forgets an image after ttlMs, so a new renderer's drawing reaches every export", async () => {
    const images = exportedImages({ maxBytes: 1024, ttlMs: 20 });
    images.keep(inputs(), image(100));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(images.get(inputs())).toBeUndefined();
  });
});
