// API errors in words a person acts on. The API's own message is already English for people; for the
// codes a console user meets most, a sentence that says what to do instead.
import type { ApiError } from "./api.ts";

const PLAIN: Record<string, string> = {
  missing_api_key: "Sign in with an API key first.",
  invalid_api_key:
    "That API key was not accepted: it may be mistyped, expired or revoked. Ask for a new key if it keeps failing.",
  plan_not_eligible:
    "This account's plan has no API access, so the console cannot be used with it. Upgrade the plan to continue.",
  account_inactive:
    "This account's subscription is suspended or canceled, so nothing can be changed until it is active again.",
  insufficient_scope: "This API key is not allowed to do that. Use a key with more permissions.",
  rate_limited: "This API key has used up its requests for this hour. Wait until the quota resets and try again.",
  not_found: "That no longer exists, or belongs to another account.",
  workspace_not_empty: "This workspace still holds QR codes. Move or delete them first.",
  qr_code_limit_reached: "The account holds as many QR codes as its plan allows. Delete some or upgrade the plan.",
  link_limit_reached: "The account has as many custom links as its plan allows.",
  premium_frames_required: "Circle frames and frame labels need the premium frames add-on.",
  webhook_endpoint_limit_reached: "The account has as many webhook endpoints as it may. Delete one first.",
  render_queue_full: "Too many images are being drawn for this account right now. Try again in a moment.",
  service_unavailable: "The platform is busy or restarting. Try again in a few seconds.",
  upstream_timeout: "The platform took too long to answer. Try again in a few seconds.",
  internal_error: "Something went wrong on the platform's side. If it happens again, send the request id to support.",
  network_error: "The platform could not be reached. Check the connection and try again.",
};

/** The sentence to show for an API error. */
export function plainWords(error: ApiError): string {
  if (error.code === "validation_error" && error.fields.length > 0) {
    return `Some values were not accepted: ${error.fields.map((f) => `${f.field} ${f.message}`).join("; ")}`;
  }
  return PLAIN[error.code] ?? error.message;
}
