# syntax=docker/dockerfile:1
#
# One image for every Quire process; the arguments pick the process (see the README, "Container image"):
#
#   docker build -t quire .
#   docker run --rm -e DATABASE_URL=postgres://… quire migrate
#   docker run --read-only --tmpfs /tmp -v quire-files:/data/files -p 8000:8000 -e DATABASE_URL=postgres://… quire
#                                                  # CMD: serve api; also serve auth | serve webhooks | serve worker | tenant … | ping …
#
# The build and start steps are the repository's own scripts, which the test suite runs outside
# Docker (tests/image/build-and-serve.test.ts): scripts/build.mjs compiles each workspace's
# TypeScript into its dist/, and the entrypoint runs that JavaScript with plain node (no tsx).

ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS base
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
WORKDIR /src

# Only the package.json files and the lockfile: the dependency layers below are rebuilt when these
# change, not on every source change.
FROM base AS manifests
COPY . .
RUN node scripts/build.mjs --manifests /manifests

# Every dependency (TypeScript among them), then the sources compiled: /out is the tree the image
# runs (package.json files, bin/, each workspace's dist/; no TypeScript).
FROM base AS build
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY . .
RUN node scripts/build.mjs --out /out

# Production dependencies only (the workspaces linked as npm links them).
FROM base AS prod-deps
WORKDIR /app
COPY --from=manifests /manifests/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts

FROM node:${NODE_VERSION}-bookworm-slim
ARG NODE_VERSION
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="Quire" \
      org.opencontainers.image.description="Multi-tenant platform serving the Frappe REST API: one image for the api, auth and webhooks services and the migrate job" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="docker.io/library/node:${NODE_VERSION}-bookworm-slim"

# The only writable paths are /data (QUIRE_FILES_DIR, and QUIRE_DATA_DIR, which only the embedded
# database uses: it is unused with DATABASE_URL) and /tmp, so the root filesystem can be read-only.
# The ports are Quire's defaults (PORT 8000, AUTH_PORT 8002, METRICS_PORT 9464).
ENV NODE_ENV=production \
    QUIRE_FILES_DIR=/data/files \
    QUIRE_DATA_DIR=/data/db \
    NPM_CONFIG_UPDATE_NOTIFIER=false

WORKDIR /app
COPY --from=prod-deps /app/ ./
COPY --from=build /out/ ./

# `quire …` on PATH for `docker exec` / `kubectl exec`: the entrypoint's command.
RUN printf '#!/bin/sh\nexec node --conditions=quire-dist /app/bin/quire.mjs "$@"\n' > /usr/local/bin/quire \
 && chmod 0755 /usr/local/bin/quire \
 && groupadd --gid 10001 quire \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin quire \
 && mkdir -p /data/files /data/db \
 && chown -R 10001:10001 /data

USER 10001:10001
VOLUME ["/data"]
# api (PORT), auth (AUTH_PORT), /metrics /healthz /readyz on every process (METRICS_PORT)
EXPOSE 8000 8002 9464
ENTRYPOINT ["node", "--conditions=quire-dist", "/app/bin/quire.mjs"]
CMD ["serve", "api"]
