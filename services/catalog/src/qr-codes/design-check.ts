import { Code } from "@connectrpc/connect";
import { Addon, type Account } from "@qrplatform/api/tenancy";
import type { Design } from "@qrplatform/api/rendering";
import { serviceError } from "@qrplatform/platform";
import type { CatalogDeps } from "../deps.js";

/**
 * Has the rendering service check a design and fill in its defaults (an invalid design comes back as
 * INVALID_ARGUMENT naming its fields), then applies the account's add-ons: premium frames need the
 * premium_frames add-on.
 */
export async function checkDesign(deps: CatalogDeps, design: Design | undefined, account: Account): Promise<Design> {
  const checked = await deps.rendering.validateDesign({ design });
  if (checked.premiumFrameFields.length > 0 && !account.addons.includes(Addon.PREMIUM_FRAMES)) {
    throw serviceError(
      Code.PermissionDenied,
      "premium_frames_required",
      "Circle frames and frame labels need the premium frames add-on on this account.",
      { metadata: { fields: checked.premiumFrameFields.join(",") } },
    );
  }
  return checked.design!;
}
