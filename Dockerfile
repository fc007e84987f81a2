# Keel's container image: one image for every role (`keel server`, `keel worker`, `keel migrate`, `keel dev`).
# Build:  podman build -t keel .   (or docker build)
#         The base image is a build argument: --build-arg NODE_IMAGE=<a Node 24 Debian image> where docker.io is not
#         reachable (scripts/image-smoke.ts builds one with mmdebstrap; see docs/guides/deploy.md).
# Run:    see deploy/compose.yaml and deploy/kubernetes/, and docs/guides/deploy.md.
#
# Stage 1 installs every dependency and compiles dist/ (the TypeScript library and CLI, and the dashboard with
# Vite); stage 2 keeps only the production dependencies, dist/, bin/ and the example agents, on Node 24.

ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` (the build) runs below, once the sources are here.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts ./scripts/build.ts
COPY src ./src
COPY web ./web
COPY bin ./bin
RUN node scripts/build.ts && npm prune --omit=dev --no-audit --no-fund --ignore-scripts

FROM ${NODE_IMAGE}
# bubblewrap: the `namespace` sandbox tier (the container must be allowed to create namespaces for it: see
# docs/guides/deploy.md); without it sandboxes fall back as `keel doctor` explains.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    KEEL_HOST=0.0.0.0 \
    KEEL_PORT=7070 \
    KEEL_DATA_DIR=/var/lib/keel
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY examples ./examples
RUN mkdir -p /var/lib/keel /app/agents && chown node:node /var/lib/keel
USER node
EXPOSE 7070 9464
# Your agents module goes in /app/agents (mounted, or COPY in an image FROM this one); it imports `keel` by name.
ENTRYPOINT ["node", "/app/bin/keel.js"]
CMD ["dev", "--agents", "/app/examples/agents.ts"]
