/**
 * What the benchmarks share: knobs from the environment, percentiles and latency series measured
 * in rounds, the table of results with each figure's ratio to its target, the embedded Neo4j and
 * the service they run on with its configuration, the administrator's client, child processes
 * spoken to over IPC, the results files, and the entry point's error report.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import {
  constants,
  monitorEventLoopDelay,
  type PerformanceEntry,
  PerformanceObserver,
} from 'node:perf_hooks';
import path from 'node:path';
import neo4jDriver from 'neo4j-driver';
import { loadConfig, LOCAL_NEO4J_NICENESS, type Config } from '../src/config/config.js';
import { fromNeo4j, toNeo4jParams, type Database } from '../src/db/database.js';
import { freePort, provideNeo4j, type Neo4jEndpoint } from '../src/dev/local-neo4j.js';
import { startServer, type Server } from '../src/http/server.js';
import { createLogger } from '../src/logging/logger.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import type { BulkLoader, SeedPrincipal } from '../src/seed/bulk.js';
import { BenchClient } from './client.js';
import type { PollResult, PollRun } from './sync-poller.js';

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

/** One run of calls: its latencies' p50, p90, p99 and the longest (the samples are sorted in place). */
export function latencySummary(samples: number[]): { p50: number; p90: number; p99: number; max: number } {
  samples.sort((a, b) => a - b);
  return {
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    max: samples.at(-1) ?? NaN,
  };
}

/**
 * A latency series measured in rounds: each round's p50 and p99 (the spread the tables show) and
 * their medians over the rounds (the figures reported).
 */
export class LatencyRounds {
  readonly medians: number[] = [];
  readonly p99s: number[] = [];

  /** One round's samples, sorted in place. */
  add(samples: number[]): void {
    samples.sort((a, b) => a - b);
    this.medians.push(percentile(samples, 50));
    this.p99s.push(percentile(samples, 99));
  }

  /** The median over the rounds of each round's median. */
  get median(): number {
    return median(this.medians);
  }

  /** The median over the rounds of each round's p99. */
  get p99(): number {
    return median(this.p99s);
  }
}

export interface LatencySeries {
  name: string;
  /** Calls per round. */
  count: number;
  /** Calls before the rounds, answered but not counted. */
  warmup: number;
  /** The `i`-th call of a round (or of the warm-up): answers its latency in ms. */
  next: (i: number) => Promise<number>;
  /** Profiles the first round under this name (see `profiled`). */
  profileAs?: string;
}

/**
 * Latency series measured in rounds, calls one at a time: every series warmed up first, then in
 * each round every series in turn, so that whatever drifts during the run falls on all of them
 * alike. `afterRound` runs between rounds (writing what the calls queued, reporting progress).
 */
export async function measureRounds(
  series: readonly LatencySeries[],
  options: { rounds: number; afterRound?: (round: number) => Promise<void> | void },
): Promise<Record<string, LatencyRounds>> {
  const out: Record<string, LatencyRounds> = {};
  for (const s of series) {
    for (let i = 0; i < s.warmup; i += 1) await s.next(i);
    out[s.name] = new LatencyRounds();
  }
  for (let round = 0; round < options.rounds; round += 1) {
    for (const s of series) {
      const samples: number[] = [];
      await profiled(round === 0 ? s.profileAs : undefined, async () => {
        for (let i = 0; i < s.count; i += 1) samples.push(await s.next(i));
      });
      out[s.name]!.add(samples);
    }
    await options.afterRound?.(round);
  }
  return out;
}

/** A statement of the benchmark's own (setting up, inspecting or emptying the graph), in a transaction of its own. */
export async function cypher(
  db: Pick<Database, 'driver'>,
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

/** A driver on `neo4j` for `cypher` where no runtime of this process holds one (close it after). */
export function graphReader(neo4j: Neo4jEndpoint): Pick<Database, 'driver'> {
  const auth = neo4j.password === '' ? undefined : neo4jDriver.auth.basic(neo4j.user, neo4j.password);
  return {
    driver: neo4jDriver.driver(neo4j.uri, auth, { logging: { level: 'error', logger: () => undefined } }),
  };
}

/** The CPU seconds, user and system, a `stat` file of /proc says (of a process or a thread). */
function cpuOfStat(file: string): number {
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds a process has used so far, user and system, from /proc (0 once it is gone). */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return cpuOfStat(`/proc/${pid}/stat`);
  } catch {
    return 0;
  }
}

/** The processes whose parent is `pid`, with their command names (from /proc). */
export function childProcesses(pid: number): { pid: number; comm: string }[] {
  const out: { pid: number; comm: string }[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    // Not Linux: no process is known.
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid)
        out.push({ pid: Number(entry), comm: readFileSync(`/proc/${entry}/comm`, 'utf8').trim() });
    } catch {
      // The process ended while it was read.
    }
  }
  return out;
}

/** CPU seconds every core of the machine has been busy so far (not idle nor waiting), from /proc/stat; NaN elsewhere. */
export function machineBusySeconds(): number {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  } catch {
    return Number.NaN;
  }
  const [user, nice, system, , , irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

/** A variable of a process's environment as it started (from /proc); undefined where unreadable. */
export function processEnv(pid: number, name: string): string | undefined {
  try {
    const entry = readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((e) => e.startsWith(`${name}=`));
    return entry?.slice(name.length + 1);
  } catch {
    return undefined;
  }
}

/** CPU seconds the threads of a process whose names begin with `prefix` have used so far (from /proc). */
export function threadCpuSeconds(pid: number, prefix: string): number {
  let total = 0;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    try {
      if (!readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').startsWith(prefix)) continue;
      total += cpuOfStat(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      // The thread ended while it was read.
    }
  }
  return total;
}

/**
 * Principals through the bulk loader: `batch` rows per transaction, `loaders` transactions at a
 * time, then the manager links whose manager was not in the graph yet when its report was written.
 */
export function loadPrincipals(
  loader: BulkLoader,
  rows: SeedPrincipal[],
  options: { batch: number; loaders: number },
): Promise<{ nodesMs: number; managersMs: number }> {
  const { batch } = options;
  function* slices(): Generator<SeedPrincipal[]> {
    for (let from = 0; from < rows.length; from += batch) yield rows.slice(from, from + batch);
  }
  return loadPrincipalBatches(loader, slices(), options);
}

/**
 * Principals through the bulk loader as `loadPrincipals` writes them, from batches made while
 * the load runs (one transaction each, `loaders` at a time): an organisation too big to hold
 * whole is loaded as it is generated.
 */
export async function loadPrincipalBatches(
  loader: BulkLoader,
  batches: Iterator<SeedPrincipal[]>,
  options: { loaders: number },
): Promise<{ nodesMs: number; managersMs: number }> {
  const started = Date.now();
  const pending: SeedPrincipal[] = [];
  // The first batch alone: it creates most of the attribute vocabulary, which the concurrent
  // batches below then mostly read.
  const first = batches.next();
  if (!first.done) pending.push(...(await loader.principals(first.value)));
  const worker = async (): Promise<void> => {
    for (let next = batches.next(); !next.done; next = batches.next()) {
      pending.push(...(await loader.principals(next.value)));
    }
  };
  await Promise.all(Array.from({ length: options.loaders }, worker));
  const nodesMs = Date.now() - started;
  // Reports whose manager was still being written by another transaction.
  await loader.managers(pending);
  return { nodesMs, managersMs: Date.now() - started - nodesMs };
}

// ---- the service under test ------------------------------------------------------------------

/** The repository's root: the compiled service is `dist/src/main.js` below it. */
export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** The node flags `npm start` runs the service with (those before `dist/src/main.js`). */
export const START_FLAGS = ((): string[] => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const flags = /\bnode ((?:--\S+ )*)dist\/src\/main\.js/.exec(pkg.scripts.start)?.[1];
  if (flags === undefined)
    throw new Error('package.json: the start script does not run node dist/src/main.js');
  return flags.split(' ').filter(Boolean);
})();

export const ADMIN_ID = 'cli_01JBENCH000000000000000000';
export const ADMIN_SECRET = 'benchmark-admin-secret-0123456789';
/** The key that encrypts the signing keys, shared by every service a benchmark starts on one database. */
export const BENCH_KEY_ENCRYPTION_KEY = Buffer.alloc(32, 3).toString('base64');

/**
 * The Neo4j at NEO4J_URI, else an embedded one in a throwaway directory, with a 2 GB heap and a
 * 1 GB page cache unless `memory` asks for more, at the nice value the service gives the one it
 * starts (BENCH_NEO4J_NICENESS sets another; the embedded one only: a Neo4j at NEO4J_URI or in
 * Docker keeps its own settings).
 */
export function benchNeo4j(
  progress: (m: string) => void = log,
  memory: { heap?: string; pageCache?: string } = {},
  /** Where the embedded Neo4j keeps its store (kept after the run); a throwaway directory if unset. */
  dataDir?: string,
): Promise<Neo4jEndpoint> {
  return provideNeo4j(
    {
      uri: process.env['NEO4J_URI'] || undefined,
      user: process.env['NEO4J_USER'] || 'neo4j',
      password: process.env['NEO4J_PASSWORD'] ?? '',
    },
    {
      provider: 'auto',
      dataDir,
      port: 0,
      heap: memory.heap ?? '2g',
      pageCache: memory.pageCache ?? '1g',
      niceness: env('BENCH_NEO4J_NICENESS', LOCAL_NEO4J_NICENESS),
      progress: (m) => progress(`[neo4j] ${m}`),
    },
  );
}

/**
 * The service's configuration for a benchmark: the bootstrap administrator above, and every rate
 * limit raised so that the benchmark measures the service, not its quota (the limiter still runs).
 */
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

/** A token lives 15 minutes: one older than this is taken again before the next request. */
const TOKEN_RENEWAL_MS = 5 * 60_000;

/**
 * The bootstrap administrator's client: its token taken when the first request needs it (so
 * that creating the client costs nothing), then again once it is five minutes old, always before
 * a timed call starts its clock.
 */
export function adminClient(base: string): BenchClient {
  let token: Promise<string> | undefined;
  let takenAt = 0;
  return new BenchClient(base, () => {
    if (!token || Date.now() - takenAt > TOKEN_RENEWAL_MS) {
      takenAt = Date.now();
      token = adminToken(base);
      // A failed attempt is not remembered: the next request tries again.
      token.catch(() => (token = undefined));
    }
    return token;
  });
}

/**
 * A connector's sync of `body` (NDJSON) through `POST /v1/connectors/{id}/sync`, followed by the
 * poller until it ends: when the service accepted it (seconds after the POST), and what the poller
 * saw. Throws unless it completed within `timeoutS`.
 */
export async function runSync(
  admin: BenchClient,
  poller: ChildProcess,
  connectorId: string,
  body: Buffer,
  timeoutS: number,
): Promise<{ accepted_s: number; polled: PollResult }> {
  const t0 = performance.now();
  const posted = await admin.send('POST', `/v1/connectors/${connectorId}/sync`, body, {
    contentType: 'application/x-ndjson',
  });
  const accepted = (performance.now() - t0) / 1000;
  if (posted.status !== 202) {
    throw new Error(`POST /v1/connectors/{id}/sync answered ${posted.status}: ${posted.text.slice(0, 500)}`);
  }
  const started = posted.json as { id: string };
  const location = posted.headers.get('location') ?? `/v1/connectors/${connectorId}/sync/${started.id}`;
  const spec: PollRun = {
    url: new URL(location, admin.base).href,
    token: await admin.token(),
    intervalMs: 250,
    timeoutS,
  };
  const polled = await ask<PollResult>(poller, spec);
  const state = polled.final;
  if (!state) throw new Error(`the sync did not finish within ${timeoutS} s`);
  if (state.status !== 'completed') {
    throw new Error(
      `the sync ${state.status}: ${JSON.stringify(state.error ?? null)} ${JSON.stringify((state.errors ?? []).slice(0, 3))}`,
    );
  }
  return { accepted_s: accepted, polled };
}

/** A report as `GET /v1/audit/reports/{id}` shows it. */
export interface ReportView {
  id: string;
  status: string;
  progress: number;
  requested_at: string;
  started_at: string | null;
  completed_at: string | null;
  row_count: number;
  error: string | null;
}

/** A connector's groups as `GET /v1/groups` lists them, by display name. */
export async function listGroups(
  admin: BenchClient,
  connector: string,
): Promise<Map<string, { id: string; member_count: number }>> {
  const out = new Map<string, { id: string; member_count: number }>();
  for (let page = 1; ; page += 1) {
    const list = await admin.json<{
      data: { id: string; name: string; member_count: number }[];
      pagination: { pages: number };
    }>('GET', `/v1/groups?connector_source=${encodeURIComponent(connector)}&limit=100&page=${page}`);
    for (const g of list.data) out.set(g.name, { id: g.id, member_count: g.member_count });
    if (page >= list.pagination.pages) return out;
  }
}

/** The service a benchmark measures, started by `withBenchService`. */
export interface BenchService {
  runtime: Runtime;
  server: Server;
  /** Where to send requests: the HTTP server on 127.0.0.1, on a free port. */
  base: string;
  /** The bootstrap administrator's client. */
  client: BenchClient;
  neo4j: Neo4jEndpoint;
}

/**
 * Runs `work` against the service in this process, as every benchmark measures it, on `neo4j`
 * (which stays up afterwards) or else on the one `benchNeo4j` provides for the length of the run.
 * `empty` counts, as `n`, what the database must not hold yet: a benchmark loads its own data and
 * measures against exactly that. The server is shut down and the Neo4j it started stopped when
 * `work` settles.
 */
export async function withBenchService<T>(
  setup: { config?: Config; neo4j?: Neo4jEndpoint; empty?: string },
  work: (service: BenchService) => Promise<T>,
): Promise<T> {
  const neo4j = setup.neo4j ?? (await benchNeo4j());
  try {
    const logger = createLogger('warn');
    const runtime = await createRuntime({ config: setup.config ?? benchConfig(), logger, neo4j });
    const server = await startServer(runtime, {
      port: 0,
      host: '127.0.0.1',
      shutdownTimeoutMs: 5_000,
      logger,
    });
    // The benchmark's client runs in this process: a long synchronous step of the benchmark (a
    // generator, an estimate over a million principals) would otherwise let the server close idle
    // keep-alive sockets (after 5 s) at the very moment the client takes them up again, and the
    // next request would fail with ECONNRESET. Idle sockets still close at shutdown.
    server.http.keepAliveTimeout = 120_000;
    try {
      if (setup.empty) {
        const [existing] = await cypher(runtime.db, setup.empty);
        if ((existing?.['n'] as number) > 0) throw new Error('the benchmark needs an empty database');
      }
      const base = `http://127.0.0.1:${server.address.port}`;
      return await work({ runtime, server, base, client: adminClient(base), neo4j });
    } finally {
      await server.shutdown();
    }
  } finally {
    if (!setup.neo4j) await neo4j.stop();
  }
}

export interface GcPauses {
  count: number;
  /** Mark-compact collections among them. */
  major: number;
  max_ms: number;
  total_ms: number;
}

export interface Observation {
  loop_max_ms: number;
  loop_p99_ms: number;
  gc: GcPauses;
}

/**
 * Runs `work` while watching this process's event loop (the service's, when it runs here), its
 * delay sampled every millisecond, and the GC pauses it takes.
 */
export async function observed<T>(work: () => Promise<T>): Promise<{ result: T; seen: Observation }> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const gcs: GcPauses = { count: 0, major: 0, max_ms: 0, total_ms: 0 };
  const take = (entries: PerformanceEntry[]): void => {
    for (const entry of entries) {
      const { detail } = entry as { detail?: { kind?: number } };
      gcs.count += 1;
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gcs.major += 1;
      gcs.max_ms = Math.max(gcs.max_ms, entry.duration);
      gcs.total_ms += entry.duration;
    }
  };
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  loop.enable();
  try {
    const result = await work();
    loop.disable();
    take(observer.takeRecords());
    return {
      result,
      seen: { loop_max_ms: loop.max / 1e6, loop_p99_ms: loop.percentile(99) / 1e6, gc: gcs },
    };
  } finally {
    loop.disable();
    observer.disconnect();
  }
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

// ---- the entry point ---------------------------------------------------------------------------

/** Runs a benchmark's `main`, and on failure reports the error and exits with 1. */
export function benchMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(
      `benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}

/** The compiled service as a process of its own (`startServiceProcess`). */
export interface ServiceProcess {
  base: string;
  pid: number;
  /** Where its standard output and error go (access log, GC trace). */
  logFile: string;
  stop(): Promise<void>;
}

/** Extra settings for a service process, from BENCH_SERVICE_ENV (`A=1,B=2`). */
export function serviceEnv(): Record<string, string> {
  return Object.fromEntries(
    (process.env['BENCH_SERVICE_ENV'] || '')
      .split(',')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

/** Node and V8 flags for a service process besides those of `npm start`, from BENCH_SERVICE_FLAGS (space-separated). */
export function serviceFlags(): string[] {
  return (process.env['BENCH_SERVICE_FLAGS'] || '').split(' ').filter((f) => f !== '');
}

/** The service compiled from the source as it stands, once per benchmark run. */
let compiled: Promise<void> | undefined;
export function compileService(): Promise<void> {
  // The compiler builds incrementally: without its output, its record of it is stale.
  if (!existsSync(path.join(ROOT, 'dist/src/main.js')))
    rmSync(path.join(ROOT, 'dist/.tsbuildinfo-build'), { force: true });
  compiled ??= new Promise<void>((resolve, reject) => {
    const tsc = spawn(
      process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    tsc.once('error', reject);
    tsc.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`compiling the service failed (tsc exited with ${code})`)),
    );
  });
  return compiled;
}

/**
 * The compiled service (`npm start` without the console build), compiled from the source as it
 * stands (a benchmark never measures an older build), as its own process on `neo4j`,
 * with the benchmarks' admin client and quotas no load meets, one serving process unless `env`
 * says otherwise (WORKERS, BACKGROUND_PROCESS, any setting), and `flags` for node besides those
 * `npm start` gives. Resolves once it is ready: with several serving processes, once the primary
 * says every one serves.
 */
export async function startServiceProcess(
  neo4j: { uri: string },
  env: Record<string, string>,
  flags: string[] = [],
): Promise<ServiceProcess> {
  await compileService();
  const port = await freePort();
  const logFile = path.join(os.tmpdir(), `pas-bench-service-${process.pid}-${port}.log`);
  const out = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...START_FLAGS, ...flags, path.join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'],
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      NEO4J_URI: neo4j.uri,
      KEY_ENCRYPTION_KEY: BENCH_KEY_ENCRYPTION_KEY,
      BOOTSTRAP_CLIENT_ID: ADMIN_ID,
      BOOTSTRAP_CLIENT_SECRET: ADMIN_SECRET,
      // The limiter still counts every request; the quota is only set where this load never meets it.
      RATE_LIMIT_DECISIONS: '100000000',
      RATE_LIMIT_BULK: '100000000',
      RATE_LIMIT_STANDARD: '100000000',
      // One serving process unless asked for more (the service's default is one per core).
      WORKERS: '1',
      ...env,
    },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  const processes = Number(env['WORKERS'] ?? '1');
  for (;;) {
    const status = await fetch(`${base}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (
      status === 200 &&
      (processes <= 1 || readFileSync(logFile, 'utf8').includes(`serving with ${processes} processes`))
    )
      break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service did not start; its log is ${logFile}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    pid: child.pid!,
    logFile,
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
