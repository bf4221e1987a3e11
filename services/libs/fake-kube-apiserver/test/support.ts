// Shared by the fake's tests: the chart's CustomDomain CRD, and reading a Status out of client-node's ApiException.
import { readFileSync } from "node:fs";
import { ApiException } from "@kubernetes/client-node";
import { expect } from "vitest";

/** The chart's CustomDomain CRD, as YAML text. */
export const customDomainCrd = readFileSync(
  new URL("../../../../charts/qr-platform/crds/customdomains.qr-platform.io.yaml", import.meta.url),
  "utf8",
);

/** The coordinates client-node's CustomObjectsApi takes for CustomDomains. */
export const customDomains = { group: "qr-platform.io", version: "v1alpha1", plural: "customdomains" } as const;

/** A CustomDomain named after its hostname. */
export function customDomain(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: "qr-platform.io/v1alpha1",
    kind: "CustomDomain",
    metadata: { name },
    spec: { accountId: "7b0e3c52-61b4-4f7c-9d3e-1a2b3c4d5e6f", ...spec },
  };
}

/** Awaits a call that must fail, and returns the HTTP code, the Status body and the headers client-node saw. */
export async function failure(
  call: Promise<unknown>,
): Promise<{ code: number; status: Record<string, any>; headers: Record<string, string> }> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiException);
  const e = err as ApiException<unknown>;
  const status = typeof e.body === "string" ? JSON.parse(e.body) : (e.body as Record<string, any>);
  return { code: e.code, status, headers: e.headers };
}
