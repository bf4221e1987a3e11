# syntax=docker/dockerfile:1
# The qr-platform image: every process compiled to dist/, production dependencies only, Node 24, run
# as a non-root user; the root filesystem may be read-only (state lives in DATA_DIR and /tmp).
# One image, one entry point per component: the chart runs `node dist/<component>.js`, where the
# component is tenancy, catalog, links, rendering, edge, embedded or qrctl. Build it with
#   docker build -t qr-platform .
# BASE may name any Debian-based Node 24 image with npm (tools/image/build.sh passes one made offline).
ARG BASE=node:24-bookworm-slim

# Every workspace's package.json, so that `npm ci` links the workspaces as on a developer's machine.
FROM ${BASE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY services/libs/api/package.json services/libs/api/
COPY services/libs/api-client/package.json services/libs/api-client/
COPY services/libs/db/package.json services/libs/db/
COPY services/libs/design/package.json services/libs/design/
COPY services/libs/platform/package.json services/libs/platform/
COPY services/libs/routing/package.json services/libs/routing/
COPY services/tenancy/package.json services/tenancy/
COPY services/catalog/package.json services/catalog/
COPY services/links/package.json services/links/
COPY services/rendering/package.json services/rendering/
COPY services/console/package.json services/console/
COPY services/edge/package.json services/edge/
COPY services/embedded/package.json services/embedded/
COPY tools/qrctl/package.json tools/qrctl/

# Compiles with every dependency installed.
FROM manifests AS build
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY services services
COPY tools tools
RUN npm run build

# Production dependencies alone: no TypeScript, tsx, test tools or the Node binary devDependency.
FROM manifests AS production-dependencies
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${BASE}
ENV NODE_ENV=production DATA_DIR=/data
WORKDIR /app
COPY --from=production-dependencies /app ./
COPY --from=build /app/dist ./dist
# The edge serves its OpenAPI document and reference page from its package, and the console (built by
# `npm run build` with Vite) from the console's package.
COPY services/edge/openapi services/edge/openapi
COPY --from=build /app/services/console/dist services/console/dist
RUN mkdir -p /data && chown 1000:1000 /data
USER 1000:1000
ENTRYPOINT ["node", "--enable-source-maps"]
CMD ["dist/edge.js"]
