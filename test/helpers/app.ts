import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config/config.js';
import type { AnyRoute } from '../../src/http/route.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { startServer, type Server } from '../../src/http/server.js';
import { freePort } from '../../src/dev/local-neo4j.js';
import { resetDatabaseAt } from './db.js';
import { HttpClient } from './http.js';

/** Log lines the app wrote, kept in memory so tests can check what reaches the log. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
  entries(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

/**
 * Responses that broke the OpenAPI document, from every test app of the run, with the test that
 * caused them: the run fails at its end if there is any (test/setup/global.ts).
 */
export const contractViolations: string[] = [];
let currentTest = '(outside a test)';

export function noteCurrentTest(title: string): void {
  currentTest = title;
}

export interface TestApp {
  config: Config;
  runtime: Runtime;
  server: Server;
  http: HttpClient;
  logs: LogCapture;
  logger: Logger;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  extraRoutes?: AnyRoute[];
  /** Keep the data of earlier tests (default: start from an empty graph). */
  keepData?: boolean;
  neo4jUri?: string;
  /** Where the built console is (default: the project's build). */
  consoleDir?: string;
}

/** The bootstrap admin client every test app starts with (a store without clients creates it). */
export const ADMIN_CLIENT_ID = 'cli_01JTESTADM1N0000000000000A';
export const ADMIN_CLIENT_SECRET = 'test-admin-secret-0123456789abcdef';
export const TEST_KEY_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * Test defaults: a fast secret hash, fixed admin credentials and key-encryption key, limits high
 * enough that only the rate-limit tests ever meet them, and background work never paced.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    PORT: '8080',
    LOG_LEVEL: 'info',
    KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
    CLIENT_SECRET_HASH_COST: '10',
    BOOTSTRAP_CLIENT_ID: ADMIN_CLIENT_ID,
    BOOTSTRAP_CLIENT_SECRET: ADMIN_CLIENT_SECRET,
    RATE_LIMIT_STANDARD: '1000000',
    AUTH_FAILURE_LIMIT: '1000',
    AUTH_FAILURE_IP_LIMIT: '100000',
    INDEX_SNAPSHOT: 'off',
    // Syncs and reports at full speed: the test's own requests, on the loop the app shares with
    // it, would otherwise slow them down (test/http/pacing.test.ts turns the pacing on).
    BACKGROUND_PACING: 'off',
    ...env,
  });
}

/** The real service (runtime, Koa, HTTP server) on the test Neo4j, on a free port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const port = await freePort();
  const config = testConfig({
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    ...options.env,
  });
  const logs = new LogCapture();
  const logger = createLogger(config.logLevel, logs);
  const neo4j = {
    uri: options.neo4jUri ?? process.env['NEO4J_URI']!,
    user: process.env['NEO4J_USER'] ?? 'neo4j',
    password: process.env['NEO4J_PASSWORD'] ?? '',
  };
  // Emptied before start-up, so that the bootstrap client and signing key are created afresh.
  if (!options.keepData) await resetDatabaseAt(neo4j);
  const runtime = await createRuntime({ config, logger, neo4j, connectTimeoutMs: 20_000 });
  const server = await startServer(runtime, {
    port,
    host: '127.0.0.1',
    shutdownTimeoutMs: 5_000,
    logger,
    validateResponses: true,
    onContractViolation: (violation) => contractViolations.push(`${currentTest}: ${violation}`),
    extraRoutes: options.extraRoutes ?? [],
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
  });
  const http = new HttpClient(`http://127.0.0.1:${server.address.port}`);

  return {
    config,
    runtime,
    server,
    http,
    logs,
    logger,
    close: () => server.shutdown(),
  };
}
