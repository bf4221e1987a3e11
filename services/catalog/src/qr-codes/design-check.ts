import { toBinary } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { LRUCache } from "lru-cache";
import type { Addon } from "@qrplatform/api/tenancy";
import {
  DesignSchema,
  type Design,
  type RenderingService,
  type ValidateDesignResponse,
} from "@qrplatform/api/rendering";
import { requirePremiumFrames } from "@qrplatform/design";

/** Rendering's check of a design before its content is known: the design with its defaults, and its premium-frame fields. */
export type DesignCheck = (design: Design | undefined) => Promise<ValidateDesignResponse>;

/** How many checked designs are kept, and how long. */
export interface DesignCheckCacheOptions {
  /** Designs kept, least recently used dropped first (default 1,000). */
  maxEntries?: number;
  /** How long an answer is kept, in milliseconds (default 10 minutes): how long a new renderer's rules take to reach every create. */
  ttlMs?: number;
}

/**
 * Rendering's answers for designs without a logo, kept by the design's encoding. Such a check follows
 * from the design and rendering's rules alone (not the account, not the content), so most creates,
 * which reuse a few designs, skip the call; an answer is as right as the rules it was checked by, and
 * a change of rules reaches every create within `ttlMs`, as an exported image does (ADR 0015). A design
 * with a logo is asked about every time (its check reads the logo, and judges it again with the
 * content), and refusals are never kept.
 */
export function rememberedDesignChecks(
  rendering: Client<typeof RenderingService>,
  options: DesignCheckCacheOptions = {},
): DesignCheck {
  const answers = new LRUCache<string, ValidateDesignResponse>({
    max: options.maxEntries ?? 1000,
    ttl: options.ttlMs ?? 10 * 60_000,
  });
  return async (design) => {
    if (design && dependsOnContent(design)) return rendering.validateDesign({ design });
    const key = design ? Buffer.from(toBinary(DesignSchema, design)).toString("base64") : "";
    const kept = answers.get(key);
    if (kept) return kept;
    const answer = await rendering.validateDesign({ design });
    answers.set(key, answer);
    return answer;
  };
}

/**
 * Has rendering check a design and fill in its defaults, through `check`, which may answer from what it
 * kept (an invalid design comes back as INVALID_ARGUMENT naming its fields); then applies the account's
 * add-ons: premium frames need the premium_frames add-on.
 */
export async function checkDesign(
  check: DesignCheck,
  design: Design | undefined,
  addons: readonly Addon[],
): Promise<Design> {
  const checked = await check(design);
  requirePremiumFrames(checked.premiumFrameFields, addons);
  return checked.design!;
}

/**
 * Whether a checked design must be checked again once its content (the short link) is known. Only a
 * logo depends on it: the symbol's version decides how much of the code a logo may hide. Without one,
 * the first check judged everything, and the content, a short link of a few hundred characters at
 * most, fits a QR code at every error-correction level.
 */
export function dependsOnContent(design: Design): boolean {
  return design.logo !== undefined && (design.logo.dataUri !== "" || design.logo.url !== "");
}
