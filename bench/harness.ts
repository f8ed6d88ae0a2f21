/**
 * What the benchmarks share: knobs from the environment, percentiles, the table of results with
 * each figure's ratio to its target, the embedded Neo4j and the service's configuration they run
 * on, the administrator's token, child processes spoken to over IPC, and the results files.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../src/config/config.js';
import { fromNeo4j, toNeo4jParams, type Database } from '../src/db/database.js';
import { provideNeo4j, type Neo4jEndpoint } from '../src/dev/local-neo4j.js';
import { startServer, type Server } from '../src/http/server.js';
import type { Logger } from '../src/logging/logger.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import type { BulkLoader, SeedPrincipal } from '../src/seed/bulk.js';

/** A numeric knob; unset or empty: the fallback. */
export const env = (name: string, fallback: number): number => Number(process.env[name] || fallback);

/** Two full collections, when the process runs with --expose-gc (the heap figures need it). */
export const gc = (): void => {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect) {
    collect();
    collect();
  }
};

const PROFILE_DIR = process.env['BENCH_CPU_PROFILE'] || undefined;

/** Runs `work` under the CPU profiler when BENCH_CPU_PROFILE names a directory (and `name` is given). */
export async function profiled<T>(name: string | undefined, work: () => Promise<T>): Promise<T> {
  if (!PROFILE_DIR || !name) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    await mkdir(PROFILE_DIR, { recursive: true });
    const file = path.join(PROFILE_DIR, `${name.replace(/[^A-Za-z0-9]+/g, '-')}.cpuprofile`);
    await writeFile(file, JSON.stringify(profile));
    log(`  CPU profile written to ${file}`);
  }
}

export const log = (message: string): void => {
  process.stdout.write(`${message}\n`);
};

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, rank)]!;
}

export const median = (values: readonly number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** A statement of the benchmark's own (setting up, inspecting or emptying the graph), in a transaction of its own. */
export async function cypher(
  db: Database,
  text: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, unknown>[]> {
  const session = db.driver.session();
  try {
    const result = await session.run(text, toNeo4jParams(params));
    return result.records.map((r) => fromNeo4j(r.toObject()) as Record<string, unknown>);
  } finally {
    await session.close();
  }
}

/**
 * Principals through the bulk loader: `batch` rows per transaction, `loaders` transactions at a
 * time, then the manager links whose manager was not in the graph yet when its report was written.
 */
export async function loadPrincipals(
  loader: BulkLoader,
  rows: SeedPrincipal[],
  options: { batch: number; loaders: number },
): Promise<{ nodesMs: number; managersMs: number }> {
  const { batch } = options;
  const started = Date.now();
  // The first batch alone: it creates most of the attribute vocabulary, which the concurrent
  // batches below then mostly read.
  const pending = await loader.principals(rows.slice(0, batch));
  let next = batch;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const from = next;
      next += batch;
      pending.push(...(await loader.principals(rows.slice(from, from + batch))));
    }
  };
  await Promise.all(Array.from({ length: options.loaders }, worker));
  const nodesMs = Date.now() - started;
  // Reports whose manager was still being written by another transaction.
  await loader.managers(pending);
  return { nodesMs, managersMs: Date.now() - started - nodesMs };
}

// ---- the service under test ------------------------------------------------------------------

export const ADMIN_ID = 'cli_01JBENCH000000000000000000';
export const ADMIN_SECRET = 'benchmark-admin-secret-0123456789';
/** The key that encrypts the signing keys, shared by every service a benchmark starts on one database. */
export const BENCH_KEY_ENCRYPTION_KEY = Buffer.alloc(32, 3).toString('base64');

/** The Neo4j at NEO4J_URI, else an embedded one in a throwaway directory. */
export function benchNeo4j(progress: (m: string) => void = log): Promise<Neo4jEndpoint> {
  return provideNeo4j(
    {
      uri: process.env['NEO4J_URI'] || undefined,
      user: process.env['NEO4J_USER'] || 'neo4j',
      password: process.env['NEO4J_PASSWORD'] ?? '',
    },
    {
      provider: 'auto',
      dataDir: undefined,
      port: 0,
      heap: '2g',
      pageCache: '1g',
      progress: (m) => progress(`[neo4j] ${m}`),
    },
  );
}

/**
 * The service's configuration for a benchmark: the bootstrap administrator above, and every rate
 * limit raised so that the benchmark measures the service, not its quota (the limiter still runs).
 */
/**
 * The service with its HTTP server on 127.0.0.1 (a free port), as every benchmark measures it;
 * `base` is where to send requests.
 */
export async function startBenchService(
  config: Config,
  neo4j: { uri: string; user: string; password: string },
  logger: Logger,
): Promise<{ runtime: Runtime; server: Server; base: string }> {
  const runtime = await createRuntime({ config, logger, neo4j });
  const server = await startServer(runtime, { port: 0, host: '127.0.0.1', shutdownTimeoutMs: 5_000, logger });
  return { runtime, server, base: `http://127.0.0.1:${server.address.port}` };
}

export function benchConfig(extra: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'warn',
    KEY_ENCRYPTION_KEY: BENCH_KEY_ENCRYPTION_KEY,
    BOOTSTRAP_CLIENT_ID: ADMIN_ID,
    BOOTSTRAP_CLIENT_SECRET: ADMIN_SECRET,
    CLIENT_SECRET_HASH_COST: '12',
    RATE_LIMIT_STANDARD: '100000000',
    RATE_LIMIT_DECISIONS: '100000000',
    RATE_LIMIT_BULK: '100000000',
    RATE_LIMIT_SCIM: '100000000',
    NEO4J_DATA_DIR: path.join(os.tmpdir(), 'pas-bench'),
    ...extra,
  });
}

/** An access token of the bootstrap administrator (client credentials). */
export async function adminToken(base: string): Promise<string> {
  const res = await fetch(`${base}/v1/auth/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`${ADMIN_ID}:${ADMIN_SECRET}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  if (res.status !== 200) throw new Error(`the token endpoint answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

// ---- child processes -----------------------------------------------------------------------------

/** A module of bench/ in a process of its own, so that it shares no event loop with the server. */
export function forkBench(file: string): ChildProcess {
  return fork(path.join(path.dirname(new URL(import.meta.url).pathname), file), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Sends one message to a child and waits for its answer, `{ ok, result | error }`. */
export function ask<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: { ok: boolean; result?: T; error?: string }): void => {
      child.off('exit', onExit);
      if (answer.ok) resolve(answer.result!);
      else reject(new Error(answer.error));
    };
    const onExit = (code: number | null): void => {
      child.off('message', onMessage);
      reject(new Error(`the child process stopped (${code})`));
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
    child.send(message as object);
  });
}

// ---- results -----------------------------------------------------------------------------------

export interface Row {
  scenario: string;
  unit: string;
  /** Median over the rounds of each round's median (or of its value). */
  median: number;
  /** Median over the rounds of each round's p99, where there is one. */
  p99?: number;
  target?: number;
  /** `max`: the figure must stay at or under the target; `min`: at or above. */
  direction?: 'max' | 'min';
  /** Which figure the target applies to. */
  on?: 'median' | 'p99';
  ratio?: number;
  rounds: number[];
  note?: string;
}

export const fmt = (v: number | undefined, digits = 2): string =>
  v === undefined || Number.isNaN(v) ? '-' : v >= 1000 ? Math.round(v).toString() : v.toFixed(digits);

/** The figures of a run, printed as one table with each figure's ratio to its target. */
export class ResultTable {
  readonly rows: Row[] = [];

  add(row: Omit<Row, 'ratio'>): Row {
    const figure = row.on === 'p99' ? row.p99 : row.median;
    const full: Row = {
      ...row,
      ...(row.target !== undefined && figure !== undefined ? { ratio: figure / row.target } : {}),
    };
    this.rows.push(full);
    return full;
  }

  print(width = 58): void {
    log('');
    log(
      `${'scenario'.padEnd(width)} ${'unit'.padEnd(9)} ${'median'.padStart(9)} ${'p99'.padStart(9)} ${'target'.padStart(
        11,
      )} ${'ratio'.padStart(6)}  ok  per round`,
    );
    for (const r of this.rows) {
      const target =
        r.target === undefined
          ? ''
          : `${r.direction === 'min' ? '>=' : '<='} ${r.target}${r.on === 'p99' ? ' p99' : ''}`;
      const ok =
        r.ratio === undefined ? '  ' : (r.direction === 'min' ? r.ratio >= 1 : r.ratio <= 1) ? 'ok' : 'NO';
      log(
        `${r.scenario.padEnd(width)} ${r.unit.padEnd(9)} ${fmt(r.median).padStart(9)} ${fmt(r.p99).padStart(9)} ${target.padStart(
          11,
        )} ${fmt(r.ratio).padStart(6)}  ${ok}  ${r.rounds.map((v) => fmt(v)).join(' / ')}${r.note ? `  (${r.note})` : ''}`,
      );
    }
  }
}

/** Writes `bench/results/<name>-<timestamp>.json` and answers its path relative to the working directory. */
export async function writeResults(name: string, data: unknown): Promise<string> {
  const dir = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, JSON.stringify(data, null, 2));
  return path.relative(process.cwd(), file);
}
