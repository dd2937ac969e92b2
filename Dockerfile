# syntax=docker/dockerfile:1
# The sampledb-operator controller image. Built by the Pulumi stack (src/deploy/image.ts) with @pulumi/docker-build,
# or by CI, and deployed pinned by digest. Its rules are checked by test/unit/deploy/dockerfile.test.ts and the
# files it copies are started by test/integration/deploy/image.test.ts exactly as the entrypoint below would.

# 1. Compile src/ to lib/ (tsc, the same as `npm run build`). Install scripts stay off: the `node` devDependency
#    would download a second Node, and nothing here needs one.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
COPY scripts/bundle-operator.ts scripts/
# lib/operator.js: lib/main.js and everything it imports in one minified module, what the runtime stage runs (ADR 0011).
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json && node scripts/bundle-operator.ts

# 2. Production dependencies only.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. Runtime: distroless Node 24, no shell, no package manager, non-root (uid 65532, the Deployment's runAsUser).
#    Nothing is written under /app, so it runs with readOnlyRootFilesystem (the Deployment mounts /tmp).
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/lib ./lib
COPY package.json ./
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/nodejs/bin/node"]
# V8 flags for a small resident set (ADR 0011): a 1 MiB young generation and "optimize for size" cost about 10% more CPU
# on a light load and keep RSS near 1.3x CloudNativePG's (docs/performance.md).
CMD ["--max-semi-space-size=1", "--optimize-for-size", "lib/operator.js"]
