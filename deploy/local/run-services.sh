#!/usr/bin/env bash
# Runs tenancy, links, rendering, catalog and the REST edge as separate processes on this machine,
# talking gRPC to each other, against the PostgreSQL database in DATABASE_URL (each service in its
# own schema). Ctrl-C stops them all gracefully.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH"

: "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL database, e.g. postgres://postgres@127.0.0.1:5432/qrplatform}"
secret() { node -e 'console.log(require("node:crypto").randomBytes(32).toString("base64url"))'; }
export SERVICE_TOKEN="${SERVICE_TOKEN:-$(secret)}"
export ADMIN_TOKEN="${ADMIN_TOKEN:-$(secret)}"
export PAGE_TOKEN_SECRET="${PAGE_TOKEN_SECRET:-$(secret)}"
export VISITOR_KEY_SECRET="${VISITOR_KEY_SECRET:-$(secret)}"
export GRPC_HOST=127.0.0.1 LOG_LEVEL="${LOG_LEVEL:-info}"

TENANCY_PORT=9091 LINKS_PORT=9092 RENDERING_PORT=9093 CATALOG_PORT=9094 EDGE_PORT="${PORT:-8080}"
# Each process serves /metrics on its own port, from 9464 up: tenancy 9464, links 9465, rendering 9466,
# catalog 9467, the edge 9468.
METRICS_BASE="${METRICS_PORT:-9464}"
pids=()
run() { local port=$1; shift; GRPC_PORT=$port METRICS_PORT=$((METRICS_BASE + ${#pids[@]})) "$@" & pids+=($!); }
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' INT TERM EXIT

run $TENANCY_PORT tsx services/tenancy/src/main.ts
REDIRECT_HOST=127.0.0.1 REDIRECT_PORT=8081 SHORT_LINK_BASE_URL="${SHORT_LINK_BASE_URL:-http://127.0.0.1:8081}" \
  run $LINKS_PORT tsx services/links/src/main.ts
run $RENDERING_PORT tsx services/rendering/src/main.ts
TENANCY_URL=http://127.0.0.1:$TENANCY_PORT LINKS_URL=http://127.0.0.1:$LINKS_PORT RENDERING_URL=http://127.0.0.1:$RENDERING_PORT \
  run $CATALOG_PORT tsx services/catalog/src/main.ts
HOST=127.0.0.1 PORT=$EDGE_PORT TENANCY_URL=http://127.0.0.1:$TENANCY_PORT CATALOG_URL=http://127.0.0.1:$CATALOG_PORT LINKS_URL=http://127.0.0.1:$LINKS_PORT \
  RENDERING_URL=http://127.0.0.1:$RENDERING_PORT run 0 tsx services/edge/src/main.ts

cat >&2 <<INFO

REST API on http://127.0.0.1:$EDGE_PORT/api/v1
Prometheus metrics on http://127.0.0.1:$METRICS_BASE/metrics .. $((METRICS_BASE + 4)) (tenancy, links, rendering, catalog, edge)
For qrctl in another terminal (tenancy and links each have their own address):
  export QRCTL_TENANCY_ADDRESS=http://127.0.0.1:$TENANCY_PORT QRCTL_LINKS_ADDRESS=http://127.0.0.1:$LINKS_PORT QRCTL_TOKEN=$ADMIN_TOKEN

INFO
wait
