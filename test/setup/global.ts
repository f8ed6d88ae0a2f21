import { provideNeo4j, type Neo4jEndpoint } from '../../src/dev/local-neo4j.js';
import { contractViolations, noteCurrentTest, startTestApp } from '../helpers/app.js';
import { redisNeeded, resolveTestRedis, shownUrl, type TestRedis } from '../helpers/redis.js';

/**
 * One Neo4j for the whole run: the configured one (NEO4J_URI), else Docker, else the embedded
 * Neo4j from tools/neo4j in a throwaway directory. Without any of them the run fails: tests
 * never skip for want of a database. A Neo4j started here also serves Neo4j Browser, whose
 * address the Browser test finds in NEO4J_BROWSER_URL (set it yourself next to NEO4J_URI).
 */
let endpoint: Neo4jEndpoint | undefined;

/**
 * One Redis for the run, found the same way: TEST_REDIS_URL, else a Redis answering on
 * 127.0.0.1:6379, else one started in Docker. A run that includes a test file needing Redis
 * (`needsRedis()`, called as the files are read, before this setup) fails here without one, with
 * the message naming the three ways: it never skips those tests. A run of other files goes on
 * without one, and starts no container for it.
 */
let redis: TestRedis | undefined;

async function provideRedis(): Promise<void> {
  const needed = redisNeeded();
  try {
    redis = await resolveTestRedis({
      configured: process.env['TEST_REDIS_URL'] || undefined,
      docker: needed,
    });
  } catch (err) {
    if (needed) throw err;
    delete process.env['TEST_REDIS_URL'];
    return;
  }
  // The tests read it, and so do the service processes they start.
  process.env['TEST_REDIS_URL'] = redis.url;
  const source = { TEST_REDIS_URL: 'configured', local: 'local', docker: 'Docker' }[redis.source];
  process.stderr.write(`[redis] ${source} Redis at ${shownUrl(redis.url)}\n`);
}

export async function mochaGlobalSetup(): Promise<void> {
  await provideRedis();
  try {
    await provideNeo4jAndWarmUp();
  } catch (err) {
    // Mocha runs no teardown after a failed setup: a container left running would outlive the run.
    await redis?.stop();
    redis = undefined;
    throw err;
  }
}

async function provideNeo4jAndWarmUp(): Promise<void> {
  const started = Date.now();
  endpoint = await provideNeo4j(
    {
      uri: process.env['NEO4J_URI'] || undefined,
      user: process.env['NEO4J_USER'] || 'neo4j',
      password: process.env['NEO4J_PASSWORD'] ?? '',
    },
    {
      provider: (process.env['NEO4J_PROVIDER'] as 'auto' | 'docker' | 'maven' | undefined) ?? 'auto',
      dataDir: undefined,
      port: 0,
      httpPort: 0,
      heap: '1g',
      pageCache: '256m',
      progress: (message) => process.stderr.write(`[neo4j] ${message}\n`),
    },
  );
  process.env['NEO4J_URI'] = endpoint.uri;
  process.env['NEO4J_USER'] = endpoint.user;
  process.env['NEO4J_PASSWORD'] = endpoint.password;
  if (endpoint.browserUrl) process.env['NEO4J_BROWSER_URL'] = endpoint.browserUrl;
  const browser = endpoint.browserUrl ? `, Neo4j Browser at ${endpoint.browserUrl}` : '';
  process.stderr.write(
    `[neo4j] ${endpoint.source} Neo4j at ${endpoint.uri}${browser} (${Date.now() - started} ms)\n`,
  );
  // One start of the service before any test: it applies the schema migrations and warms the
  // database up, so that no test's own start-up pays for a cold store.
  const warm = Date.now();
  try {
    const app = await startTestApp();
    await app.close();
  } catch (err) {
    // Mocha runs no teardown after a failed setup: a Neo4j left running would keep it from exiting.
    await endpoint.stop();
    endpoint = undefined;
    throw err;
  }
  process.stderr.write(`[neo4j] schema applied and warmed up (${Date.now() - warm} ms)\n`);
}

export async function mochaGlobalTeardown(): Promise<void> {
  await endpoint?.stop();
  await redis?.stop();
}

/**
 * Every response any test triggers is checked against the OpenAPI document; the run fails at the
 * end, naming the tests and responses, if one broke it.
 */
export const mochaHooks = {
  beforeEach(this: Mocha.Context): void {
    noteCurrentTest(this.currentTest?.fullTitle() ?? '(unknown test)');
  },
  afterAll(): void {
    if (contractViolations.length > 0) {
      throw new Error(
        `responses that break the OpenAPI document:\n  ${[...new Set(contractViolations)].join('\n  ')}`,
      );
    }
  },
};
