import { createApp, type App } from './app.js';
import type { Config } from './config/config.js';
import { Catalogue } from './db/catalogue.js';
import { Database, createDriver } from './db/database.js';
import { loadMigrations, migrate } from './db/migrations.js';
import type { AnyRoute } from './http/route.js';
import type { Lifecycle } from './http/routes/operations.js';
import type { Logger } from './logging/logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createRateLimiting, type RateLimiting } from './ratelimit/index.js';
import { createServices, type Services } from './services.js';

export interface Runtime {
  app: App;
  db: Database;
  metrics: Metrics;
  lifecycle: Lifecycle;
  rateLimiting: RateLimiting;
  services: Services;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  config: Config;
  logger: Logger;
  neo4j: { uri: string; user: string; password: string };
  validateResponses?: boolean;
  extraRoutes?: AnyRoute[];
  /** How long to wait at boot for a database that is still starting. */
  connectTimeoutMs?: number;
}

async function waitForDatabase(db: Database, timeoutMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let announced = false;
  for (;;) {
    try {
      await db.ping();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      if (!announced) {
        logger.info('waiting for the database to accept connections');
        announced = true;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * Wires the service together on a database: driver, query catalogue, schema migrations, app.
 * `main.ts` adds the HTTP server and signals; tests use this directly.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, logger } = options;
  const metrics = createMetrics();
  const catalogue = await Catalogue.load();
  const driver = createDriver(options.neo4j.uri, options.neo4j.user, options.neo4j.password, config.neo4j);
  const db = new Database(driver, catalogue, {
    database: config.neo4j.database,
    maxPoolSize: config.neo4j.maxPoolSize,
    logger,
    metrics,
  });
  try {
    await waitForDatabase(db, options.connectTimeoutMs ?? 60_000, logger);
    const applied = await migrate(db, await loadMigrations());
    if (applied.length > 0) logger.info({ migrations: applied }, 'schema migrations applied');
  } catch (err) {
    await db.close();
    throw err;
  }
  const lifecycle: Lifecycle = { draining: false };
  const rateLimiting = createRateLimiting(config, logger);
  let services: Services;
  try {
    services = await createServices(config, db, rateLimiting, logger);
  } catch (err) {
    await rateLimiting.close();
    await db.close();
    throw err;
  }
  const app = createApp({
    config,
    logger,
    metrics,
    db,
    lifecycle,
    rateLimiter: rateLimiting.limiter,
    services,
    validateResponses: options.validateResponses ?? false,
    extraRoutes: options.extraRoutes ?? [],
  });
  return {
    app,
    db,
    metrics,
    lifecycle,
    rateLimiting,
    services,
    close: async () => {
      services.stop();
      await rateLimiting.close();
      await db.close();
    },
  };
}
