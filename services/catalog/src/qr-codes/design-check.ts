import { Code } from "@connectrpc/connect";
import { Addon } from "@qrplatform/api/tenancy";
import type { Design } from "@qrplatform/api/rendering";
import { serviceError } from "@qrplatform/platform";
import type { CatalogDeps } from "../deps.js";

/**
 * Has the rendering service check a design and fill in its defaults (an invalid design comes back as
 * INVALID_ARGUMENT naming its fields), then applies the account's add-ons: premium frames need the
 * premium_frames add-on.
 */
export async function checkDesign(deps: CatalogDeps, design: Design | undefined, addons: readonly Addon[]): Promise<Design> {
  const checked = await deps.rendering.validateDesign({ design });
  if (checked.premiumFrameFields.length > 0 && !addons.includes(Addon.PREMIUM_FRAMES)) {
    throw serviceError(
      Code.PermissionDenied,
      "premium_frames_required",
      "Circle frames and frame labels need the premium frames add-on on this account.",
      { metadata: { fields: checked.premiumFrameFields.join(",") } },
    );
  }
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
