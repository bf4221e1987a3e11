import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { createRequire } from "node:module";
import { create, toJsonString } from "@bufbuild/protobuf";
import {
  DesignSchema,
  ImageFormat,
  type Design,
  RenderQrCodeResponseSchema,
  type RenderQrCodeRequest,
  type RenderQrCodeResponse,
} from "@qrplatform/api/rendering";
import { invalidArgument, type FieldProblem } from "@qrplatform/platform";
import { LRUCache } from "lru-cache";
import pLimit from "p-limit";
import sharp from "sharp";
import { contentProblem, DESIGN_LIMITS, normalizeDesign } from "../design/design-rules.js";
import { encodeQr, type Level } from "./qr-matrix.js";
import { svgToJpeg, svgToPng } from "./raster.js";
import { renderSvg } from "./svg.js";

/** The export size when none is asked for, as the public contract sets it. */
export const DEFAULT_EXPORT_SIZE = 1024;
/** Export sizes follow the design's own bounds: a 4096 px image is already print quality at 30 cm. */
export const EXPORT_SIZE_LIMITS = DESIGN_LIMITS.size;

const MEDIA_TYPES: Record<ImageFormat, string> = {
  [ImageFormat.UNSPECIFIED]: "image/png",
  [ImageFormat.PNG]: "image/png",
  [ImageFormat.JPG]: "image/jpeg",
  [ImageFormat.SVG]: "image/svg+xml",
};

const require = createRequire(import.meta.url);
/**
 * Part of every cache key and ETag: bump the first number when our drawing changes; the libraries'
 * versions are read so an upgrade that changes pixels also changes ETags.
 */
const RENDERER_VERSION = [
  "2",
  (require("@resvg/resvg-js/package.json") as { version: string }).version,
  sharp.versions.sharp,
  (require("qrcode/package.json") as { version: string }).version,
].join("/");

export interface RendererOptions {
  /** Bytes of rendered images kept; 64 MiB by default. */
  readonly cacheBytes?: number;
  /** Renders running at once; one per core by default. Bounds memory: a 4096 px bitmap alone is 64 MiB. */
  readonly concurrency?: number;
}

export interface RenderedImage {
  readonly image: Uint8Array;
  readonly contentType: string;
  readonly etag: string;
}

/** Renders QR-code images, each at most once while it stays in the cache. */
export class Renderer {
  private readonly cache: LRUCache<string, RenderedImage>;
  private readonly inFlight = new Map<string, Promise<RenderedImage>>();
  private readonly limit: ReturnType<typeof pLimit>;
  /** How many images were actually drawn; the cache's hits are the rest. */
  renders = 0;
  /** The most renders that ever ran at once; never above the concurrency limit. */
  peakConcurrentRenders = 0;
  private running = 0;

  constructor(options: RendererOptions = {}) {
    this.cache = new LRUCache({ maxSize: options.cacheBytes ?? 64 * 1024 * 1024, sizeCalculation: (v) => Math.max(1, v.image.length) });
    this.limit = pLimit(options.concurrency ?? availableParallelism());
  }

  /** Bytes of images held by the cache. */
  get cachedBytes(): number {
    return this.cache.calculatedSize;
  }

  async render(req: RenderQrCodeRequest): Promise<RenderQrCodeResponse> {
    const { design, format, size } = checkRenderRequest(req);
    const key = createHash("sha256")
      .update(JSON.stringify([RENDERER_VERSION, req.content, toJsonString(DesignSchema, design), format, size]))
      .digest("base64url");
    const etag = `"${key.slice(0, 32)}"`;
    const contentType = MEDIA_TYPES[format];
    if (matchesIfNoneMatch(req.ifNoneMatch, etag)) {
      return create(RenderQrCodeResponseSchema, { etag, contentType, notModified: true });
    }
    const rendered = await this.cached(key, async () => {
      const svg = renderSvg(encodeQr(req.content, design.errorCorrection as Level), design, size);
      const image = format === ImageFormat.SVG ? Buffer.from(svg) : format === ImageFormat.JPG ? await svgToJpeg(svg) : await svgToPng(svg);
      return { image, contentType, etag };
    });
    return create(RenderQrCodeResponseSchema, rendered);
  }

  /** One render per key at a time: concurrent requests for the same image wait for the first. */
  private cached(key: string, draw: () => Promise<RenderedImage>): Promise<RenderedImage> {
    const hit = this.cache.get(key);
    if (hit) return Promise.resolve(hit);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const started = this.limit(async () => {
      this.renders++;
      this.peakConcurrentRenders = Math.max(this.peakConcurrentRenders, ++this.running);
      try {
        const image = await draw();
        this.cache.set(key, image);
        return image;
      } finally {
        this.running--;
      }
    }).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, started);
    return started;
  }
}

/**
 * The request's design normalized, with its format and size; INVALID_ARGUMENT naming every bad field.
 * Only the vocabulary is checked, not the scannability rules, so codes made before a rule tightened export.
 */
function checkRenderRequest(req: RenderQrCodeRequest): { design: Design; format: ImageFormat; size: number } {
  const { design, problems: designProblems } = normalizeDesign(req.design);
  const problems: FieldProblem[] = designProblems.map((p) => ({ ...p, field: `design.${p.field}` }));
  if (req.content === "") problems.push({ field: "content", reason: "required", description: "is required" });
  const levelIsValid = !designProblems.some((p) => p.field === "error_correction");
  const tooLong = req.content !== "" && levelIsValid ? contentProblem(req.content, design.errorCorrection) : undefined;
  if (tooLong) problems.push(tooLong);
  const size = req.size === 0 ? DEFAULT_EXPORT_SIZE : req.size;
  if (!Number.isInteger(size) || size < EXPORT_SIZE_LIMITS.min || size > EXPORT_SIZE_LIMITS.max) {
    problems.push({ field: "size", reason: "out_of_range", description: `must be from ${EXPORT_SIZE_LIMITS.min} to ${EXPORT_SIZE_LIMITS.max}` });
  }
  if (!(req.format in MEDIA_TYPES)) problems.push({ field: "format", reason: "unknown_value", description: `${req.format} is not an image format` });
  if (problems.length > 0) throw invalidArgument(problems, "The render request is not valid.");
  return { design, format: req.format === ImageFormat.UNSPECIFIED ? ImageFormat.PNG : req.format, size };
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): "*" or any listed tag with the same opaque value. */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  return header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}
