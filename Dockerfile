# The operator image, in three stages: `build` compiles src/ to dist/, `prod-deps` installs only
# production dependencies, and the distroless `runtime` stage holds dist/, those node_modules,
# package.json, config/crd and schemas/ (the built-in kinds' schemas, ADR 0029), and runs
# `node dist/cli.js run` as the non-root user 65532.
ARG NODE_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
COPY tools/bundle-cli.ts tools/
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${RUNTIME_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY --from=prod-deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
COPY config/crd ./config/crd
COPY schemas ./schemas
USER 65532:65532
EXPOSE 8080 8081 9443
# The distroless image's node lives at /nodejs/bin/node (there is no shell and no PATH lookup).
ENTRYPOINT ["/nodejs/bin/node", "dist/cli.js"]
CMD ["run"]
