import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/** The secrets an embedded platform keeps between runs, so page tokens and credentials stay valid. */
export interface EmbeddedSecrets {
  serviceToken: string;
  adminToken: string;
  pageTokenSecret: string;
  /** Salts the visitor keys of scans; a new one would make every visitor new. */
  visitorKeySecret: string;
}

const secretsSchema = z.object({
  serviceToken: z.string().min(32),
  adminToken: z.string().min(32),
  pageTokenSecret: z.string().min(32),
  // Absent from files written before scans were recorded; added on the next start.
  visitorKeySecret: z.string().min(32).optional(),
});

const OWNER_ONLY = 0o600;
const newSecret = () => randomBytes(32).toString("base64url");

function writeOwnerOnly(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`, { mode: OWNER_ONLY });
  // writeFileSync's mode applies only when it creates the file.
  chmodSync(path, OWNER_ONLY);
}

/** Reads DATA_DIR/secrets.json, creating it with fresh random secrets on first start. */
export function loadOrCreateSecrets(dataDir: string): EmbeddedSecrets {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, "secrets.json");
  const stored = existsSync(path) ? secretsSchema.parse(JSON.parse(readFileSync(path, "utf8"))) : undefined;
  const secrets: EmbeddedSecrets = {
    serviceToken: stored?.serviceToken ?? newSecret(),
    adminToken: stored?.adminToken ?? newSecret(),
    pageTokenSecret: stored?.pageTokenSecret ?? newSecret(),
    visitorKeySecret: stored?.visitorKeySecret ?? newSecret(),
  };
  if (!stored?.visitorKeySecret) writeOwnerOnly(path, secrets);
  return secrets;
}

/** The file qrctl reads to reach a running embedded platform with no flags. */
export const ADMIN_CREDENTIAL_FILE = "admin.json";

/** Writes where the admin gRPC API listens and its credential, readable by the owner only. */
export function writeAdminCredential(dataDir: string, address: string, token: string): string {
  const path = join(dataDir, ADMIN_CREDENTIAL_FILE);
  writeOwnerOnly(path, { address, token });
  return path;
}
