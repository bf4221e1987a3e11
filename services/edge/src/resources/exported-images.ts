import { createHash } from "node:crypto";
import { toJsonString } from "@bufbuild/protobuf";
import { LRUCache } from "lru-cache";
import { DesignSchema, type Design, type ImageFormat, type RenderQrCodeResponse } from "@qrplatform/api/rendering";

/** What an image is drawn from: the same inputs always draw the same image. */
export interface ImageInputs {
  content: string;
  design: Design | undefined;
  format: ImageFormat;
  size: number;
}

/** Images the edge answered before, by what they were drawn from. */
export interface ExportedImages {
  /** The image drawn from these inputs, when it is kept. */
  get(inputs: ImageInputs): RenderQrCodeResponse | undefined;
  /** Keeps an image rendering answered for these inputs. */
  keep(inputs: ImageInputs, image: RenderQrCodeResponse): void;
}

/**
 * The rendering service's answers kept at the edge, so a repeated export costs no call. An image is
 * addressed by its content, design, format and size, which decide every pixel, so nothing has to be
 * invalidated; entries still expire after `ttlMs`, so a new renderer's drawing reaches every export
 * within that time. Least recently used images go first once `maxBytes` are kept; 0 keeps none.
 */
export function exportedImages(options: { maxBytes: number; ttlMs: number }): ExportedImages {
  if (options.maxBytes === 0) return { get: () => undefined, keep: () => {} };
  const images = new LRUCache<string, RenderQrCodeResponse>({
    maxSize: options.maxBytes,
    sizeCalculation: (image) => Math.max(1, image.image.length),
    ttl: options.ttlMs,
  });
  const keyOf = ({ content, design, format, size }: ImageInputs) =>
    createHash("sha256")
      .update(JSON.stringify([content, design ? toJsonString(DesignSchema, design) : "", format, size]))
      .digest("base64url");
  return {
    get: (inputs) => images.get(keyOf(inputs)),
    keep: (inputs, image) => {
      if (image.image.length > 0 && image.image.length <= options.maxBytes) images.set(keyOf(inputs), image);
    },
  };
}
