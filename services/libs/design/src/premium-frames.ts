import { Code } from "@connectrpc/connect";
import { Addon } from "@qrplatform/api/tenancy";
import { serviceError } from "@qrplatform/platform";

/**
 * Refuses a design whose premium frame fields (rendering's `premium_frame_fields`, such as
 * "design.frame.type") need the premium_frames add-on the account lacks: PERMISSION_DENIED, reason
 * `premium_frames_required`, one field violation per field. The catalog applies it when a code is
 * created and the edge when a design is previewed, so both refuse the same designs alike.
 */
export function requirePremiumFrames(premiumFrameFields: readonly string[], addons: readonly Addon[]): void {
  if (premiumFrameFields.length === 0 || addons.includes(Addon.PREMIUM_FRAMES)) return;
  throw serviceError(
    Code.PermissionDenied,
    "premium_frames_required",
    "Circle frames and frame labels need the premium frames add-on on this account.",
    {
      fields: premiumFrameFields.map((field) => ({
        field,
        reason: "addon_required",
        description: "needs the premium_frames add-on",
      })),
    },
  );
}
