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
import { z } from "zod";
import { EXPORT_SIZE } from "@qrplatform/design";
import {
  checkedBy,
  fieldProblemsOf,
  invalidArgument,
  noMetrics,
  type FieldProblem,
  type Metrics,
} from "@qrplatform/platform";
import type { Counter } from "prom-client";
import { LRUCache } from "lru-cache";
import sharp from "sharp";
import { contentProblem, normalizeDesign } from "../design/design-rules.js";
import { dataUriPixelProblem } from "../design/logo-data-uri.js";
import type { DrawTask } from "./draw.js";
import { RenderPool } from "./render-pool.js";
import { ANONYMOUS_ACCOUNT, canceled, isQueueFull, RenderQueue } from "./render-queue.js";

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
  /**
   * Renders running at once, each on its own pool thread; one per core by default. Bounds memory too:
   * a 4096 px bitmap alone is 64 MiB.
   */
  readonly concurrency?: number;
  /** Renders of one account running at once; 2 by default. */
  readonly concurrencyPerAccount?: number;
  /** Renders of one account waiting for their turn; beyond it a render is refused with `render_queue_full`. 32 by default. */
  readonly queuedPerAccount?: number;
  /** What draws the images; worker threads (RenderPool) unless a test passes its own. */
  readonly drawer?: Drawer;
  /** Where cache hits and misses, cached bytes and waiting renders are reported. */
  readonly metrics?: Metrics;
}

/** Draws one image; an abort of `signal` stops the drawing and rejects. */
export interface Drawer {
  draw(task: DrawTask, signal: AbortSignal): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Defaults of the options above that are not the machine's. */
const RENDER_DEFAULTS = { concurrencyPerAccount: 2, queuedPerAccount: 32 } as const;

export interface RenderedImage {
  readonly image: Uint8Array;
  readonly contentType: string;
  readonly etag: string;
}

/** One image being drawn, and how many callers still wait for it. */
interface Flight {
  readonly image: Promise<RenderedImage>;
  /** Aborted when every caller gave up: the render is dropped if it has not started, stopped if it has. */
  readonly abandon: AbortController;
  waiters: number;
}

/**
 * Renders QR-code images, each at most once while it stays in the cache. The cache and the joining of
 * identical requests live here, on the thread that answers requests; the drawing happens on a pool of
 * worker threads, in the turns a fair queue gives each account.
 */
export class Renderer {
  private readonly cache: LRUCache<string, RenderedImage>;
  private readonly inFlight = new Map<string, Flight>();
  private readonly queue: RenderQueue;
  private readonly drawer: Drawer;
  private readonly lookups: Counter<"result">;
  /** How many images were actually drawn; the cache's hits are the rest. */
  renders = 0;

  constructor(options: RendererOptions = {}) {
    this.cache = new LRUCache({
      maxSize: options.cacheBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (v) => Math.max(1, v.image.length),
    });
    const concurrency = options.concurrency ?? availableParallelism();
    this.queue = new RenderQueue({
      concurrency,
      perAccount: options.concurrencyPerAccount ?? RENDER_DEFAULTS.concurrencyPerAccount,
      queuedPerAccount: options.queuedPerAccount ?? RENDER_DEFAULTS.queuedPerAccount,
    });
    this.drawer = options.drawer ?? new RenderPool(concurrency);
    const metrics = options.metrics ?? noMetrics;
    this.lookups = metrics.counter({
      name: "qrp_render_cache_total",
      help: "Image requests by how the cache answered: hit, miss (drawn), or joined (waited for the same image being drawn).",
      labelNames: ["result"],
    });
    metrics.gaugeOnScrape(
      { name: "qrp_render_cache_bytes", help: "Bytes of rendered images held in the cache." },
      (gauge) => gauge.set(this.cachedBytes),
    );
    metrics.gaugeOnScrape({ name: "qrp_renders_queued", help: "Renders waiting for their account's turn." }, (gauge) =>
      gauge.set(this.queuedRenders),
    );
  }

  /** Bytes of images held by the cache. */
  get cachedBytes(): number {
    return this.cache.calculatedSize;
  }

  /** Renders waiting for their account's turn. */
  get queuedRenders(): number {
    return this.queue.waiting;
  }

  /** The most renders that ever ran at once; never above the concurrency limit. */
  get peakConcurrentRenders(): number {
    return this.queue.peakRunning;
  }

  /**
   * Answers the image, from the cache when it can. `signal` is the caller giving up (the client went
   * away): its wait ends with CANCELED, and the render itself stops once no caller waits for it.
   */
  async render(req: RenderQrCodeRequest, signal?: AbortSignal): Promise<RenderQrCodeResponse> {
    const { design, format, size } = checkRenderRequest(req);
    const key = createHash("sha256")
      .update(JSON.stringify([RENDERER_VERSION, req.content, toJsonString(DesignSchema, design), format, size]))
      .digest("base64url");
    const etag = `"${key.slice(0, 32)}"`;
    const contentType = MEDIA_TYPES[format];
    if (matchesIfNoneMatch(req.ifNoneMatch, etag)) {
      return create(RenderQrCodeResponseSchema, { etag, contentType, notModified: true });
    }
    const task: DrawTask = { content: req.content, design, format, size };
    const draw = async (drawSignal: AbortSignal): Promise<RenderedImage> => {
      // Checked again before drawing (not on cache hits: such a logo is never drawn, so never cached),
      // so a design stored before the pixel bound cannot exhaust memory.
      const logoPixels = design.logo ? await dataUriPixelProblem(design.logo.dataUri) : undefined;
      if (logoPixels)
        throw invalidArgument([{ field: "design.logo.data_uri", ...logoPixels }], "The design's logo cannot be drawn.");
      this.renders++;
      return { image: await this.drawer.draw(task, drawSignal), contentType, etag };
    };
    const account = req.accountId || ANONYMOUS_ACCOUNT;
    for (;;) {
      try {
        return create(RenderQrCodeResponseSchema, await this.cached(key, account, signal, req.waitForTurn, draw));
      } catch (error) {
        // A caller that waits for its turn may have joined a render that was refused for a full queue;
        // that render is forgotten by now, so asking again starts one that waits.
        if (!req.waitForTurn || !isQueueFull(error)) throw error;
      }
    }
  }

  /** Stops the drawing threads. */
  close(): Promise<void> {
    return this.drawer.close();
  }

  /**
   * One render per key at a time: concurrent requests for the same image wait for the first, which
   * takes its turn in the queue of the account that asked first.
   */
  private cached(
    key: string,
    account: string,
    signal: AbortSignal | undefined,
    waitForTurn: boolean,
    draw: (signal: AbortSignal) => Promise<RenderedImage>,
  ): Promise<RenderedImage> {
    const hit = this.cache.get(key);
    if (hit) {
      this.lookups.inc({ result: "hit" });
      return Promise.resolve(hit);
    }
    let flight = this.inFlight.get(key);
    this.lookups.inc({ result: flight ? "joined" : "miss" });
    if (!flight) {
      const abandon = new AbortController();
      const started: Flight = {
        abandon,
        waiters: 0,
        image: this.queue
          .run(
            account,
            async (drawSignal) => {
              const image = await draw(drawSignal);
              this.cache.set(key, image);
              return image;
            },
            abandon.signal,
            { waitForTurn },
          )
          .finally(() => this.forget(key, started)),
      };
      this.inFlight.set(key, started);
      flight = started;
    }
    return this.wait(key, flight, signal);
  }

  /** One caller's wait for a flight; the last caller to give up abandons the render. */
  private wait(key: string, flight: Flight, signal: AbortSignal | undefined): Promise<RenderedImage> {
    flight.waiters++;
    if (!signal) return flight.image;
    return new Promise((resolve, reject) => {
      let waiting = true;
      const giveUp = () => {
        if (!waiting) return;
        waiting = false;
        reject(canceled());
        if (--flight.waiters > 0) return;
        // A caller arriving from now on starts a new render rather than join the abandoned one.
        this.forget(key, flight);
        flight.abandon.abort();
      };
      flight.image.then(resolve, reject).finally(() => {
        waiting = false;
        signal.removeEventListener("abort", giveUp);
      });
      if (signal.aborted) giveUp();
      else signal.addEventListener("abort", giveUp, { once: true });
    });
  }

  private forget(key: string, flight: Flight): void {
    if (this.inFlight.get(key) === flight) this.inFlight.delete(key);
  }
}

/** RenderQrCode's own fields; the design is checked by its vocabulary (normalizeDesign). */
const renderOptions = z.object({
  content: z.string().refine((content) => content !== "", { message: "is required", params: { reason: "required" } }),
  size: z
    .number()
    .superRefine(
      checkedBy((size: number) =>
        size === 0 || (Number.isInteger(size) && size >= EXPORT_SIZE.min && size <= EXPORT_SIZE.max)
          ? undefined
          : { reason: "out_of_range", description: `must be from ${EXPORT_SIZE.min} to ${EXPORT_SIZE.max}` },
      ),
    ),
  format: z
    .number()
    .superRefine(
      checkedBy((format: number) =>
        format in MEDIA_TYPES
          ? undefined
          : { reason: "unknown_value", description: `${format} is not an image format` },
      ),
    ),
});

/**
 * The request's design normalized, with its format and size; INVALID_ARGUMENT naming every bad field.
 * Only the vocabulary is checked, not the scannability rules, so codes made before a rule tightened export.
 */
function checkRenderRequest(req: RenderQrCodeRequest): { design: Design; format: ImageFormat; size: number } {
  const { design, problems: designProblems } = normalizeDesign(req.design);
  const problems: FieldProblem[] = designProblems.map((p) => ({ ...p, field: `design.${p.field}` }));
  const options = renderOptions.safeParse(req);
  if (!options.success) problems.push(...fieldProblemsOf(options.error));
  const levelIsValid = !designProblems.some((p) => p.field === "error_correction");
  const tooLong = req.content !== "" && levelIsValid ? contentProblem(req.content, design.errorCorrection) : undefined;
  if (tooLong) problems.push(tooLong);
  if (problems.length > 0) throw invalidArgument(problems, "The render request is not valid.");
  return {
    design,
    format: req.format === ImageFormat.UNSPECIFIED ? ImageFormat.PNG : req.format,
    size: req.size === 0 ? EXPORT_SIZE.default : req.size,
  };
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): "*" or any listed tag with the same opaque value. */
export function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (header.trim() === "*") return true;
  return header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}
