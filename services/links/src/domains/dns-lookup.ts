import { promises as dns } from "node:dns";
import type { TxtLookup } from "./challenge.js";

/** Looks up the TXT records at a name; never throws for what DNS answers, only describes it. */
export type LookupTxt = (name: string) => Promise<TxtLookup>;

/**
 * A TXT lookup through the system's resolvers, or through `server` ("host:port") when given, so tests
 * and private deployments can point at their own DNS server.
 */
export function dnsTxtLookup(options: { server?: string | undefined; timeoutMs: number; tries: number }): LookupTxt {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs, tries: options.tries });
  if (options.server) resolver.setServers([options.server]);
  return async (name) => {
    try {
      const records = await resolver.resolveTxt(name);
      // A TXT record may be split into several strings of at most 255 bytes; they form one value.
      return { kind: "records", values: records.map((chunks) => chunks.join("")) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "UNKNOWN";
      switch (code) {
        case dns.NOTFOUND:
          return { kind: "no_domain" };
        case dns.NODATA:
          return { kind: "no_records" };
        case dns.TIMEOUT:
          return { kind: "timeout" };
        case dns.CONNREFUSED:
          return { kind: "unreachable", code };
        default:
          return { kind: "server_failure", code };
      }
    }
  };
}

/** Whether a DNS server address is one `Resolver.setServers` accepts: an IP address with an optional port. */
export function isDnsServerAddress(value: string): boolean {
  try {
    new dns.Resolver().setServers([value]);
    return true;
  } catch {
    return false;
  }
}
