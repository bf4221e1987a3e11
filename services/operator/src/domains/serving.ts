// The serving state back to the platform (ReportDomainServing), for tenants to read in Domain.serving.
// The policy sends a report only when it differs from what the platform holds; the answer is kept so
// the next comparison is against what was stored.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { DomainServingSchema } from "@qrplatform/api/links";
import { Code, ConnectError } from "@qrplatform/platform";
import type { DomainClient } from "./client.js";
import type { DomainCache } from "./domain-cache.js";

export async function reportServing(
  client: DomainClient,
  cache: DomainCache,
  report: { domainId: string; serving: MessageInitShape<typeof DomainServingSchema> },
): Promise<void> {
  try {
    const response = await client.reportDomainServing(report);
    if (response.domain) cache.remember(response.domain);
  } catch (error) {
    // A domain removed meanwhile: its CR goes on the next reconcile, there is nothing to report.
    if (ConnectError.from(error).code === Code.NotFound) return;
    throw error;
  }
}
