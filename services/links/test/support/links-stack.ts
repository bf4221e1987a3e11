import { randomUUID } from "node:crypto";
import { createClient, type Client } from "@connectrpc/connect";
import { DomainService, LinkService, RedirectService, type Domain } from "@qrplatform/api/links";
import type { Database } from "@qrplatform/db";
import { openTestDatabase } from "@qrplatform/db/testing";
import { credentials, MIGRATED_PLATFORM, PAGE_TOKEN_SECRET, VISITOR_KEY_SECRET } from "@qrplatform/testing";
import { createLogger, inProcessTransport } from "@qrplatform/platform";
import { buildLinks, resolverTxtLookup, type LinksModule, type LinksOptions } from "../../src/server.js";
import { TestDnsServer } from "@qrplatform/testing/dns-server";

export { credentials };
export const logger = createLogger({ service: "test", level: "silent" });
export const SHORT_BASE = "https://s.qr.example";
export const SHORT_HOST = "s.qr.example";

/** The environment of the links service run as its own process (services/links/src/main.ts). */
export function linksProcessEnv(options: {
  grpcPort: number;
  redirectPort: number;
  dataDir: string;
  shortLinkBaseUrl: string;
  databaseUrl?: string;
}): Record<string, string> {
  return {
    LOG_LEVEL: "info",
    SERVICE_TOKEN: credentials.serviceToken,
    ADMIN_TOKEN: credentials.adminToken,
    PAGE_TOKEN_SECRET,
    VISITOR_KEY_SECRET,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: String(options.grpcPort),
    REDIRECT_HOST: "127.0.0.1",
    REDIRECT_PORT: String(options.redirectPort),
    SHORT_LINK_BASE_URL: options.shortLinkBaseUrl,
    DATA_DIR: options.dataDir,
    ...(options.databaseUrl && { DATABASE_URL: options.databaseUrl }),
  };
}

/** The links service on a test database, with a test DNS server, and clients with either credential. */
export interface LinksStack {
  database: Database;
  dns: TestDnsServer;
  module: LinksModule;
  links: Client<typeof LinkService>;
  domains: Client<typeof DomainService>;
  redirects: Client<typeof RedirectService>;
  /** DomainService with the admin credential, as qrctl calls it. */
  adminDomains: Client<typeof DomainService>;
  /** Registers a hostname for the account and verifies it through the test DNS server. */
  verifiedDomain(accountId: string, hostname?: string): Promise<Domain>;
  close(): Promise<void>;
}

export async function startLinks(options: Partial<LinksOptions> = {}): Promise<LinksStack> {
  const database = await openTestDatabase(MIGRATED_PLATFORM);
  const dns = await new TestDnsServer().start();
  const module = await buildLinks({
    db: database.db,
    shortLinkBaseUrl: SHORT_BASE,
    lookupTxt: resolverTxtLookup({ server: dns.address, timeoutMs: 300 }),
    pageTokenSecret: PAGE_TOKEN_SECRET,
    ...options,
  });
  const asService = inProcessTransport({ modules: [module], credentials, logger, token: credentials.serviceToken });
  const asAdmin = inProcessTransport({ modules: [module], credentials, logger, token: credentials.adminToken });
  const domains = createClient(DomainService, asService);
  return {
    database,
    dns,
    module,
    links: createClient(LinkService, asService),
    domains,
    redirects: createClient(RedirectService, asService),
    adminDomains: createClient(DomainService, asAdmin),
    async verifiedDomain(accountId, hostname = `go-${randomUUID().slice(0, 8)}.brand.example`) {
      const { domain } = await domains.createDomain({ accountId, hostname });
      dns.setTxt(domain!.challengeRecordName, domain!.challengeRecordValue);
      const verified = await domains.verifyDomain({ accountId, domainId: domain!.id });
      return verified.domain!;
    },
    async close() {
      await dns.close();
      await database.close();
    },
  };
}
