import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { usageError } from "./errors.js";

/** The services qrctl calls; each may listen at its own address. */
export type AdminTarget = "tenancy" | "links";

/** Where the admin API is and the credential that opens it. */
export interface Credential {
  /** Each service's gRPC address; undefined when none was given for it. */
  addresses: Record<AdminTarget, string | undefined>;
  token: string;
}

/** The global options that locate the platform. */
export interface CredentialFlags {
  address?: string | undefined;
  tenancyAddress?: string | undefined;
  linksAddress?: string | undefined;
  token?: string | undefined;
}

const adminFileSchema = z.object({ address: z.string().min(1), token: z.string().min(1) });

const nonEmpty = (value: string | undefined) => (value ? value : undefined);

function checkAddress(address: string, from: string): string {
  let url: URL | undefined;
  try {
    url = new URL(address);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw usageError(`${from} must be an http:// or https:// URL such as http://127.0.0.1:9090, not "${address}"`);
  }
  return address;
}

/**
 * Finds the admin credential. Each service's address is its own flag (--tenancy-address,
 * --links-address), else --address, else its own variable (QRCTL_TENANCY_ADDRESS, QRCTL_LINKS_ADDRESS),
 * else QRCTL_ADDRESS: one address serves a platform whose services share a port (`npm start`, or a
 * front that routes by gRPC service name), per-service ones serve services on ports of their own. The
 * token is --token, else QRCTL_TOKEN. With neither an address nor a token, $DATA_DIR/admin.json (which
 * `npm start` writes) is used, and only as a whole, so its local token is never sent to an address
 * given elsewhere.
 */
export function resolveCredential(
  flags: CredentialFlags,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Credential {
  const addressOf = (own: string | undefined, ownFlag: string, ownVariable: string): string | undefined => {
    const sources: [string | undefined, string][] = [
      [own, ownFlag],
      [flags.address, "--address"],
      [env[ownVariable], ownVariable],
      [env.QRCTL_ADDRESS, "QRCTL_ADDRESS"],
    ];
    const found = sources.find(([value]) => nonEmpty(value) !== undefined);
    return found && checkAddress(found[0]!, found[1]);
  };
  const addresses = {
    tenancy: addressOf(flags.tenancyAddress, "--tenancy-address", "QRCTL_TENANCY_ADDRESS"),
    links: addressOf(flags.linksAddress, "--links-address", "QRCTL_LINKS_ADDRESS"),
  };
  const token = nonEmpty(flags.token) ?? nonEmpty(env.QRCTL_TOKEN);
  const anyAddress = addresses.tenancy !== undefined || addresses.links !== undefined;
  if (anyAddress && token !== undefined) return { addresses, token };
  if (anyAddress) throw usageError("an address was given without a token: pass --token or set QRCTL_TOKEN");
  if (token !== undefined)
    throw usageError("a token was given without an address: pass --address or set QRCTL_ADDRESS");
  return readAdminFile(resolve(cwd, nonEmpty(env.DATA_DIR) ?? ".data", "admin.json"));
}

/** The address of `target`, or a usage error saying how to give it. */
export function addressOf(credential: Credential, target: AdminTarget): string {
  const address = credential.addresses[target];
  if (address === undefined) {
    throw usageError(
      `no address for the ${target} service: pass --${target}-address or --address (or set QRCTL_${target.toUpperCase()}_ADDRESS or QRCTL_ADDRESS)`,
    );
  }
  return address;
}

/** Reads admin.json, refusing a copy other users could read or change: it holds the admin credential. */
export function readAdminFile(path: string): Credential {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw usageError(
        `no admin credential: ${path} does not exist. Start the platform with \`npm start\` (it writes that file), ` +
          "or pass --address and --token (or set QRCTL_ADDRESS and QRCTL_TOKEN)",
      );
    }
    throw usageError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    // fstat on the open descriptor checks the very file that is then read.
    const mode = fstatSync(fd).mode & 0o777;
    if (process.platform !== "win32" && (mode & 0o077) !== 0) {
      throw usageError(
        `refusing to read ${path}: its mode is ${mode.toString(8).padStart(4, "0")}, so other users can read or change the ` +
          `admin credential; make it owner-only with \`chmod 600 ${path}\``,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(fd, "utf8"));
    } catch {
      parsed = undefined;
    }
    const file = adminFileSchema.safeParse(parsed);
    if (!file.success) {
      throw usageError(
        `${path} is not a valid admin credential file (expected {"address": ..., "token": ...}); restart the platform to rewrite it`,
      );
    }
    const address = checkAddress(file.data.address, `"address" in ${path}`);
    return { addresses: { tenancy: address, links: address }, token: file.data.token };
  } finally {
    closeSync(fd);
  }
}
