import { promises as dns } from "node:dns";
import { ConfigError } from "@qrplatform/platform";
import type { TxtLookup } from "./challenge.js";

/** Looks up the TXT records at a name; never throws for what DNS answers, only describes it. */
export type LookupTxt = (name: string) => Promise<TxtLookup>;

/**
 * The TXT records at a hostname, each as the strings it is made of, as `dns.Resolver.resolveTxt`
 * answers; rejects with its error codes (ENOTFOUND, ENODATA, ETIMEOUT, ECONNREFUSED, ...). The
 * process's main builds one with {@link resolverTxtLookup}; tests may answer from memory.
 */
export type TxtRecordsLookup = (hostname: string) => Promise<string[][]>;

/**
 * Asks the system's resolvers, or `server` ("ip:port") when given, so private deployments and tests can
 * point at their own DNS server. Throws a ConfigError for an address that is not an IP address.
 */
export function resolverTxtLookup(
  options: { server?: string | undefined; timeoutMs?: number; tries?: number } = {},
): TxtRecordsLookup {
  if (options.server !== undefined && !isDnsServerAddress(options.server)) {
    throw new ConfigError(
      `The DNS resolver "${options.server}" must be an IP address with an optional port, such as 10.0.0.2:53.`,
    );
  }
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
  if (options.server) resolver.setServers([options.server]);
  return (hostname) => resolver.resolveTxt(hostname);
}

/** What a lookup of TXT records found, in the terms domain verification reasons in. */
export function classifiedTxtLookup(lookup: TxtRecordsLookup): LookupTxt {
  return async (name) => {
    try {
      const records = await lookup(name);
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
function isDnsServerAddress(value: string): boolean {
  try {
    new dns.Resolver().setServers([value]);
    return true;
  } catch {
    return false;
  }
}
