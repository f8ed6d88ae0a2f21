# syntax=docker/dockerfile:1
# Node 24, an LTS line supported until April 2028, in both stages; the code itself runs on
# Node 20.19 and later (package.json's engines).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8080 NEO4J_DATA_DIR=/app/data
WORKDIR /app
# Holds the generated key-encryption key when KEY_ENCRYPTION_KEY is not configured, and the
# bootstrap admin client's generated secret (bootstrap-admin.json) when BOOTSTRAP_CLIENT_SECRET is not.
RUN mkdir -p /app/data && chown node:node /app/data
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY cypher ./cypher
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The same node flags as `npm start` (test/unit/start-flags.test.ts keeps them in step).
CMD ["node", "--max-semi-space-size=64", "--initial-old-space-size=256", "dist/src/main.js"]
