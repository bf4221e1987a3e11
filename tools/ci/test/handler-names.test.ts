// Each handler is named after its RPC, so a service's routes.ts reads as a list of RPCs rather than a
// table of aliases. Every *.handlers.ts module of a service is gathered from its source tree, so a new
// feature folder is checked without being listed here.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { DescService } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import * as catalogApi from "@qrplatform/api/catalog";
import * as linksApi from "@qrplatform/api/links";
import * as tenancyApi from "@qrplatform/api/tenancy";

const services = fileURLToPath(new URL("../../../services/", import.meta.url));

/** Every export of every *.handlers.ts under a service's src/. */
async function handlersOf(service: string): Promise<Record<string, unknown>> {
  const src = join(services, service, "src");
  const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".handlers.ts"));
  const modules = await Promise.all(files.map((f) => import(pathToFileURL(join(src, f)).href)));
  return Object.assign({}, ...modules);
}

/** The gRPC services a generated package exports. */
function servicesIn(api: Record<string, unknown>): DescService[] {
  return Object.values(api).filter((value): value is DescService => (value as DescService)?.kind === "service");
}

describe.each([
  ["catalog", catalogApi],
  ["tenancy", tenancyApi],
  ["links", linksApi],
])("%s's handlers", (service, api) => {
  it("has one named after each RPC of each of its services", async () => {
    const handlers = await handlersOf(service);
    const rpcs = servicesIn(api).flatMap((s) => s.methods.map((m) => `${s.typeName}.${m.localName}`));
    expect(rpcs.length).toBeGreaterThan(3);
    const missing = rpcs.filter((rpc) => typeof handlers[rpc.split(".").at(-1) ?? ""] !== "function");
    expect(missing).toEqual([]);
  });
});
