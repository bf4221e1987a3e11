import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScratchDatabase, type ScratchDatabase } from "@qrplatform/db/testing";
import {
  credentials,
  exitWithin,
  freePort,
  PAGE_TOKEN_SECRET,
  qrctlJson,
  type QrctlResult,
  runQrctl,
  type ServiceProcess,
  spawnService,
  VISITOR_KEY_SECRET,
  waitForLog,
} from "@qrplatform/testing";

// qrctl against tenancy and links as separate processes on ports of their own, as
// deploy/local/run-services.sh runs them: each service's address is given on its own.

const ADMIN_TOKEN = credentials.adminToken;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let dataDir: string;
let scratch: ScratchDatabase | undefined;
let tenancy: ServiceProcess;
let links: ServiceProcess;
let tenancyAddress: string;
let linksAddress: string;

function qrctl(args: string[], env: Record<string, string> = {}): Promise<QrctlResult> {
  return runQrctl(args, { env: { QRCTL_TOKEN: ADMIN_TOKEN, ...env } });
}

const json = qrctlJson;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "qrctl-separate-"));
  scratch = await createScratchDatabase();
  const [tenancyPort, linksPort, redirectPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const common = {
    SERVICE_TOKEN: credentials.serviceToken,
    ADMIN_TOKEN,
    PAGE_TOKEN_SECRET,
    GRPC_HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    ...(scratch && { DATABASE_URL: scratch.url }),
  };
  tenancy = spawnService("dist/tenancy.js", { ...common, GRPC_PORT: String(tenancyPort) });
  links = spawnService("dist/links.js", {
    ...common,
    GRPC_PORT: String(linksPort),
    REDIRECT_HOST: "127.0.0.1",
    REDIRECT_PORT: String(redirectPort),
    SHORT_LINK_BASE_URL: `http://127.0.0.1:${redirectPort}`,
    VISITOR_KEY_SECRET,
  });
  const listening = (line: Record<string, unknown>) => line.msg === "gRPC listening";
  await Promise.all([waitForLog(tenancy, listening, 60_000), waitForLog(links, listening, 60_000)]);
  tenancyAddress = `http://127.0.0.1:${tenancyPort}`;
  linksAddress = `http://127.0.0.1:${linksPort}`;
}, 90_000);

afterAll(async () => {
  for (const service of [tenancy, links]) {
    if (service && service.child.exitCode === null) {
      service.child.kill("SIGTERM");
      await exitWithin(service, 15_000);
    }
  }
  await scratch?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("qrctl with tenancy and links at addresses of their own", () => {
  it("creates an account, adds and lists its domain, with QRCTL_TENANCY_ADDRESS and QRCTL_LINKS_ADDRESS", async () => {
    const env = { QRCTL_TENANCY_ADDRESS: tenancyAddress, QRCTL_LINKS_ADDRESS: linksAddress };
    const account = json(await qrctl(["accounts", "create", "--name", "Separate", "--plan", "scale", "--json"], env));
    expect(account.id).toMatch(UUID);

    const added = json(
      await qrctl(["domains", "add", "--account", account.id, "--hostname", "qr.separate.example", "--json"], env),
    );
    expect(added).toMatchObject({ account_id: account.id, hostname: "qr.separate.example", status: "pending" });

    const listed = json(await qrctl(["domains", "list", "--account", account.id, "--json"], env));
    expect(listed.domains.map((d: { id: string }) => d.id)).toEqual([added.id]);
  });

  it("takes the addresses as flags too, and a flag beats the variables", async () => {
    const elsewhere = { QRCTL_ADDRESS: "http://127.0.0.1:1", QRCTL_LINKS_ADDRESS: "http://127.0.0.1:1" };
    const flags = ["--tenancy-address", tenancyAddress, "--links-address", linksAddress];
    const account = json(
      await qrctl(["accounts", "create", "--name", "Flags", "--plan", "origin", "--json", ...flags], elsewhere),
    );
    const added = json(
      await qrctl(
        ["domains", "add", "--account", account.id, "--hostname", "qr.flags.example", "--json", ...flags],
        elsewhere,
      ),
    );
    expect(added.account_id).toBe(account.id);
  });

  it("says which address is missing when only one service has one", async () => {
    const result = await qrctl(["domains", "list"], { QRCTL_TENANCY_ADDRESS: tenancyAddress });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/no address for the links service: pass --links-address or --address/);
  });

  it("names the address that does not serve the call", async () => {
    const result = await qrctl(["domains", "list"], {
      QRCTL_TENANCY_ADDRESS: tenancyAddress,
      QRCTL_LINKS_ADDRESS: tenancyAddress,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(tenancyAddress);
    expect(result.stderr).toMatch(/UNIMPLEMENTED.*--links-address/);
  });
});
