// A stand-in Kubernetes API server for the image check (tools/image/build.sh): the fake API server
// with the CustomDomain CRD, its kubeconfig written to the path given, running until it is stopped.
//
//   tsx tools/image/fake-cluster.ts <kubeconfig-path> <pid-file>
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { startFakeKubeApiServer } from "@qrplatform/fake-kube-apiserver";

const [kubeconfigPath, pidFile] = process.argv.slice(2);
if (!kubeconfigPath || !pidFile) throw new Error("usage: fake-cluster.ts <kubeconfig-path> <pid-file>");
const crd = readFileSync(
  resolve(import.meta.dirname, "../../charts/qr-platform/crds/customdomains.qr-platform.io.yaml"),
  "utf8",
);
const cluster = await startFakeKubeApiServer({ crds: [crd], namespace: "qrp" });
writeFileSync(kubeconfigPath, cluster.kubeConfigYaml(), { mode: 0o644 });
writeFileSync(pidFile, `${process.pid}\n`);
console.log(cluster.url);
for (const signal of ["SIGTERM", "SIGINT"] as const)
  process.once(signal, () => void cluster.close().then(() => process.exit(0)));
