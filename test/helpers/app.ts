import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config/config.js';
import type { AnyRoute } from '../../src/http/route.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { startServer, type Server } from '../../src/server.js';
import { resetDatabase } from './db.js';
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
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ PORT: '8080', LOG_LEVEL: 'info', ...env });
}

/** The real service (runtime, Koa, HTTP server) on the test Neo4j, on a free port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(options.env);
  const logs = new LogCapture();
  const logger = createLogger(config.logLevel, logs);
  const runtime = await createRuntime({
    config,
    logger,
    neo4j: {
      uri: options.neo4jUri ?? process.env['NEO4J_URI']!,
      user: process.env['NEO4J_USER'] ?? 'neo4j',
      password: process.env['NEO4J_PASSWORD'] ?? '',
    },
    validateResponses: true,
    extraRoutes: options.extraRoutes ?? [],
    connectTimeoutMs: 20_000,
  });
  if (!options.keepData) await resetDatabase(runtime.db);
  const server = await startServer(runtime, { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 5_000, logger });
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
