import { isPublicAddress, isPublicOrLoopbackAddress, resolveAllowedHost, type RuleProblem } from "@qrplatform/platform";
import type { WebhookOptions } from "./webhook-options.js";

const MAX_URL_LENGTH = 2048;

/** Which addresses deliveries may reach: public ones, and loopback ones where tests allow them. */
export function deliveryAddressPolicy(options: Pick<WebhookOptions, "allowLoopback">) {
  return options.allowLoopback ? isPublicOrLoopbackAddress : isPublicAddress;
}

/** The rules an endpoint URL follows as written: https (http only where loopback is allowed), no credentials. */
export function webhookUrlProblem(
  value: string,
  options: Pick<WebhookOptions, "allowLoopback">,
): RuleProblem | undefined {
  if (value.length > MAX_URL_LENGTH)
    return { reason: "too_long", description: `must be at most ${MAX_URL_LENGTH} characters` };
  if (!URL.canParse(value)) return { reason: "invalid_url", description: "must be an absolute https URL" };
  const url = new URL(value);
  const schemes = options.allowLoopback ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) return { reason: "invalid_url", description: "must be an https URL" };
  if (url.username || url.password)
    return { reason: "invalid_url", description: "must not contain a user name or password" };
  if (url.hash) return { reason: "invalid_url", description: "must not contain a fragment" };
  return undefined;
}

/**
 * Whether the URL's host resolves to an address deliveries may not reach (private, loopback,
 * link-local …). A host that does not resolve yet is accepted: its deliveries fail and are retried
 * until it does. The check is repeated before every attempt, against the addresses connected to.
 */
export async function webhookHostProblem(
  value: string,
  options: Pick<WebhookOptions, "allowLoopback" | "lookup">,
): Promise<RuleProblem | undefined> {
  const resolved = await resolveAllowedHost(new URL(value).hostname, {
    lookup: options.lookup,
    isAllowedAddress: deliveryAddressPolicy(options),
    deadline: AbortSignal.timeout(2000),
  });
  if ("refused" in resolved && resolved.refused === "forbidden_address") {
    return {
      reason: "forbidden_address",
      description: "resolves to a private, loopback or link-local address; webhooks go to public addresses only",
    };
  }
  return undefined;
}
