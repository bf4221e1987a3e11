// The webhook address rules on their own: an endpoint whose host is, or resolves to, an IPv6 address
// carrying a private IPv4 address inside is refused at registration and never connected to, whether
// or not tests allow loopback receivers.
import { describe, expect, it } from "vitest";
import type { ResolvedAddress } from "@qrplatform/platform";
import { EMBEDDED_IPV4_ADDRESSES, EMBEDDED_PUBLIC_IPV4_ADDRESSES } from "@qrplatform/testing";
import { sendWebhook } from "../src/webhooks/webhook-sender.js";
import { deliveryAddressPolicy, webhookHostProblem } from "../src/webhooks/webhook-url.js";

const lookupTo = (address: string) => async (): Promise<ResolvedAddress[]> => [{ address, family: 6 }];

describe.each([false, true])("webhook addresses (loopback allowed: %s)", (allowLoopback) => {
  it.each(EMBEDDED_IPV4_ADDRESSES)(
    "refuses to register https://[$address]/ ($form of $inside)",
    async ({ address }) => {
      expect(await webhookHostProblem(`https://[${address}]/hook`, { allowLoopback })).toMatchObject({
        reason: "forbidden_address",
      });
    },
  );

  it.each(EMBEDDED_IPV4_ADDRESSES)(
    "refuses to register a host that resolves to $address ($form of $inside)",
    async ({ address }) => {
      expect(
        await webhookHostProblem("https://hooks.test/hook", { allowLoopback, lookup: lookupTo(address) }),
      ).toMatchObject({ reason: "forbidden_address" });
    },
  );

  it.each(EMBEDDED_IPV4_ADDRESSES)(
    "sends nothing to a host that resolves to $address ($form of $inside)",
    async ({ address }) => {
      const outcome = await sendWebhook("https://hooks.test/hook", {}, "{}", {
        timeoutMs: 1000,
        maxResponseBytes: 100,
        isAllowedAddress: deliveryAddressPolicy({ allowLoopback }),
        lookup: lookupTo(address),
      });
      expect(outcome).toEqual({ error: "the host resolves to a private, loopback or link-local address" });
    },
  );

  it.each(EMBEDDED_PUBLIC_IPV4_ADDRESSES)(
    "registers https://[%s]/, whose IPv4 address inside is public",
    async (address) => {
      expect(await webhookHostProblem(`https://[${address}]/hook`, { allowLoopback })).toBeUndefined();
    },
  );
});
