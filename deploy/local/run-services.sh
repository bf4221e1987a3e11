#!/usr/bin/env bash
# Runs every process of the platform side by side on this machine against the PostgreSQL database in
# DATABASE_URL; see run-services.ts (which reads the process layout) and docs/operations.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH"
exec tsx deploy/local/run-services.ts
