import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import { usageError } from "./errors.js";

/** Where the admin API is and the credential that opens it. */
export interface Credential {
  address: string;
  token: string;
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
 * Finds the admin credential: --address/--token, then QRCTL_ADDRESS/QRCTL_TOKEN, then the
 * $DATA_DIR/admin.json that `npm start` writes. Flags and variables may be mixed, but the file is
 * used only as a whole, so its local token is never sent to an address given elsewhere.
 */
export function resolveCredential(
  flags: { address?: string | undefined; token?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Credential {
  const address = nonEmpty(flags.address) ?? nonEmpty(env.QRCTL_ADDRESS);
  const token = nonEmpty(flags.token) ?? nonEmpty(env.QRCTL_TOKEN);
  if (address !== undefined && token !== undefined) return { address: checkAddress(address, "--address"), token };
  if (address !== undefined) throw usageError("an address was given without a token: pass --token or set QRCTL_TOKEN");
  if (token !== undefined) throw usageError("a token was given without an address: pass --address or set QRCTL_ADDRESS");
  return readAdminFile(resolve(cwd, nonEmpty(env.DATA_DIR) ?? ".data", "admin.json"));
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
      throw usageError(`${path} is not a valid admin credential file (expected {"address": ..., "token": ...}); restart the platform to rewrite it`);
    }
    return { address: checkAddress(file.data.address, `"address" in ${path}`), token: file.data.token };
  } finally {
    closeSync(fd);
  }
}
