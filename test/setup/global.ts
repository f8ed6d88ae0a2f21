import { provideNeo4j, type Neo4jEndpoint } from '../../src/dev/local-neo4j.js';
import { contractViolations, noteCurrentTest, startTestApp } from '../helpers/app.js';

/**
 * One Neo4j for the whole run: the configured one (NEO4J_URI), else Docker, else the embedded
 * Neo4j from tools/neo4j in a throwaway directory. Without any of them the run fails: tests
 * never skip for want of a database. A Neo4j started here also serves Neo4j Browser, whose
 * address the Browser test finds in NEO4J_BROWSER_URL (set it yourself next to NEO4J_URI).
 */
let endpoint: Neo4jEndpoint | undefined;

export async function mochaGlobalSetup(): Promise<void> {
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
