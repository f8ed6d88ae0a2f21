import { provideNeo4j, type Neo4jEndpoint } from '../../src/db/local-neo4j.js';

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
}

export async function mochaGlobalTeardown(): Promise<void> {
  await endpoint?.stop();
}
