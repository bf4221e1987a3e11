#!/usr/bin/env bash
# Builds the container image from the Dockerfile with buildah, offline, and starts the edge from it.
#
#   tools/image/build.sh [TAG]          (default localhost/qr-platform:dev)
#
# No image registry is reachable here, so the Dockerfile's BASE (node:24-bookworm-slim elsewhere) is
# made locally: a minimal Debian bookworm root filesystem from Debian's packages (mmdebstrap), the
# Node 24 binary of the `node` devDependency, npm from the npm registry, and this machine's CA
# certificates (npm inside the build reaches the registry through them). It is built once and reused.
# Then the image runs the embedded services (dist/embedded.js) and, beside them, the edge
# (dist/edge.js) as the non-root user; qrctl (dist/qrctl.js) makes an account and a key, and one
# call through the edge must answer 200. Last, the domain operator (dist/operator.js) runs from the
# image against a stand-in API server on this machine and must project a domain added with qrctl.
set -euo pipefail
cd "$(dirname "$0")/../.."
TAG=${1:-localhost/qr-platform:dev}
BASE=localhost/qrp-node-base:24
export STORAGE_DRIVER=vfs
b() { buildah --storage-driver vfs "$@"; }

if ! command -v buildah >/dev/null || ! command -v mmdebstrap >/dev/null; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q buildah mmdebstrap >/dev/null
fi

work=$(mktemp -d)
containers=()
# Stops the servers started from the image (by the PIDs they wrote: chroot isolation has no PID
# namespace, so they are this machine's PIDs), then removes the containers and the scratch files.
cleanup() {
  local pids; pids=$(cat "$work"/data/*.pid 2>/dev/null || true)
  if [ -n "$pids" ]; then
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 $pids 2>/dev/null || break; sleep 0.1; done
    kill -KILL $pids 2>/dev/null || true
  fi
  wait 2>/dev/null || true
  for c in "${containers[@]}"; do b rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

if ! b inspect --type image "$BASE" >/dev/null 2>&1; then
  echo "--- base image $BASE (Debian bookworm minbase + Node $(node --version) + npm $(npm --version))"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar"
  (cd "$work" && npm pack --silent "npm@$(npm --version)" >/dev/null)
  ctr=$(b from scratch); containers+=("$ctr")
  root=$(b mount "$ctr")
  tar -C "$root" -xf "$work/rootfs.tar"
  install -m 0755 node_modules/node/bin/node "$root/usr/local/bin/node"
  mkdir -p "$root/usr/local/lib/node_modules/npm"
  tar -C "$root/usr/local/lib/node_modules/npm" --strip-components=1 -xzf "$work"/npm-*.tgz
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  b config --env PATH=/usr/local/bin:/usr/bin:/bin --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    --env NPM_CONFIG_UPDATE_NOTIFIER=false --cmd node "$ctr"
  b commit --quiet "$ctr" "$BASE" >/dev/null
fi

echo "--- image $TAG"
b bud --quiet --isolation chroot --layers=false --build-arg "BASE=$BASE" -t "$TAG" . >/dev/null
b images "$TAG"

echo "--- starting the services and the edge from the image"
data="$work/data"; mkdir -p "$data"; chown 1000:1000 "$data"
free_port() { node -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
api_port=$(free_port); grpc_port=$(free_port); edge_port=$(free_port); metrics_port=$(free_port); edge_metrics_port=$(free_port)
# Runs a compiled entry point in a fresh container of the image, as its non-root user, with the data
# directory mounted; the host's network, so the processes reach each other on loopback.
run() {
  local ctr; ctr=$(b from --quiet "$TAG"); containers+=("$ctr")
  b run --isolation chroot --user 1000:1000 --volume "$data:/data" "$@" "$ctr" -- "${cmd[@]}"
}
# Starts dist/NAME.js from the image in the background; it writes its PID for cleanup, then becomes node.
serve() {
  local name=$1; shift
  cmd=(sh -c "echo \$\$ > /data/$name.pid && exec node --enable-source-maps dist/$name.js")
  run "$@" > "$work/$name.log" 2>&1 &
}
serve embedded --env HOST=127.0.0.1 --env PORT="$api_port" --env GRPC_PORT="$grpc_port" --env METRICS_PORT="$metrics_port" --env LOG_LEVEL=warn
for _ in $(seq 1 120); do [ -f "$data/secrets.json" ] && curl -sf "http://127.0.0.1:$api_port/readyz" >/dev/null && break; sleep 0.5; done
token=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).serviceToken)' "$data/secrets.json")
grpc="http://127.0.0.1:$grpc_port"
serve edge --env HOST=127.0.0.1 --env PORT="$edge_port" --env METRICS_HOST=127.0.0.1 --env METRICS_PORT="$edge_metrics_port" --env SERVICE_TOKEN="$token" --env LOG_LEVEL=warn \
  --env TENANCY_URL="$grpc" --env CATALOG_URL="$grpc" --env LINKS_URL="$grpc" --env RENDERING_URL="$grpc"
for _ in $(seq 1 60); do curl -sf "http://127.0.0.1:$edge_port/readyz" >/dev/null && break; sleep 0.5; done
if ! curl -sf "http://127.0.0.1:$edge_port/readyz"; then cat "$work/embedded.log" "$work/edge.log"; exit 1; fi
echo

cmd=(node dist/qrctl.js accounts create --name Image --plan origin --json)
account=$(run | node -e 'process.stdin.on("data",d=>console.log(JSON.parse(d).id))')
cmd=(node dist/qrctl.js keys create --account "$account" --json)
key=$(run | node -e 'process.stdin.on("data",d=>console.log(JSON.parse(d).key))')
status=$(curl -s -o "$work/account.json" -w '%{http_code}' -H "Authorization: Bearer $key" "http://127.0.0.1:$edge_port/api/v1/account")
cat "$work/account.json"; echo
[ "$status" = 200 ] || { echo "GET /account through the edge in the image answered $status"; cat "$work/edge.log"; exit 1; }
edge_metrics=$(curl -sf "http://127.0.0.1:$edge_metrics_port/metrics") || edge_metrics=""
grep -q '^http_server_request_duration_seconds_count{method="GET",route="/api/v1/account",status_code="200"} 1$' <<<"$edge_metrics" \
  || { echo "the edge in the image did not count GET /account on /metrics"; cat "$work/edge.log"; exit 1; }
services_metrics=$(curl -sf "http://127.0.0.1:$metrics_port/metrics") || services_metrics=""
grep -q '^grpc_server_handled_total{.*grpc_method="AuthenticateApiKey",grpc_code="OK"}' <<<"$services_metrics" \
  || { echo "the embedded services in the image did not count their RPCs on /metrics"; cat "$work/embedded.log"; exit 1; }
console_headers=$(curl -s -D - -o "$work/console.html" "http://127.0.0.1:$edge_port/console/") || console_headers=""
grep -qi '^content-security-policy: .*script-src .self.' <<<"$console_headers" && grep -q '<div id="app">' "$work/console.html" \
  || { echo "the edge in the image did not serve the console at /console/"; echo "$console_headers"; cat "$work/edge.log"; exit 1; }
echo "--- the domain operator from the image, against a stand-in API server"
node_modules/.bin/tsx tools/image/fake-cluster.ts "$data/kubeconfig" "$data/fake-cluster.pid" > "$work/fake-cluster.log" 2>&1 &
for _ in $(seq 1 60); do [ -s "$work/fake-cluster.log" ] && break; sleep 0.5; done
kube_url=$(head -1 "$work/fake-cluster.log")
admin_token=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).token)' "$data/admin.json")
operator_port=$(free_port)
serve operator --env KUBECONFIG=/data/kubeconfig --env OPERATOR_NAMESPACE=qrp --env LINKS_URL="$grpc" --env TENANCY_URL="$grpc" \
  --env ADMIN_TOKEN="$admin_token" --env REDIRECTOR_SERVICE=qrp-links-redirect --env CLUSTER_ISSUER=letsencrypt \
  --env HEALTH_HOST=127.0.0.1 --env HEALTH_PORT="$operator_port" --env METRICS_PORT=off --env POD_NAME=image-check --env LOG_LEVEL=warn
for _ in $(seq 1 60); do curl -sf "http://127.0.0.1:$operator_port/readyz" >/dev/null && break; sleep 0.5; done
curl -sf "http://127.0.0.1:$operator_port/readyz" >/dev/null || { echo "the operator in the image never became ready"; cat "$work/operator.log" "$work/fake-cluster.log"; exit 1; }
cmd=(node dist/qrctl.js domains add --account "$account" --hostname go.image-check.example --json)
run >/dev/null
for _ in $(seq 1 60); do curl -sf "$kube_url/apis/qr-platform.io/v1alpha1/customdomains/go.image-check.example" >/dev/null && break; sleep 0.5; done
curl -sf "$kube_url/apis/qr-platform.io/v1alpha1/customdomains/go.image-check.example" >/dev/null \
  || { echo "the operator in the image did not project the domain into a CustomDomain"; cat "$work/operator.log"; exit 1; }
echo "image $TAG: built, its edge answered GET /api/v1/account with 200, both processes serve /metrics, its edge serves the console, and its operator projected a domain"
