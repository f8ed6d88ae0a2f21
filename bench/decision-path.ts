/**
 * The decision path as a client meets it: `POST /v1/decisions/evaluate` over HTTP against the
 * service running as `npm start` runs it (the compiled build in a process of its own, every
 * background task on, access log at `info`), on a graph of 2,000 principals and 300 policies,
 * beside a bare Koa app answering `{"hello":"world"}` (no middleware) measured the same way in the
 * same run, so that the ratios hold on a faster or slower machine. Measured, in rounds (medians
 * reported, every round shown):
 *
 * 1. saturated throughput (autocannon, BENCH_CONNECTIONS connections) of the service, of the
 *    service with decision recording switched off (a benchmark-only switch: what recording
 *    costs), of the service as WORKERS=2 runs it (two serving processes; every other
 *    measurement runs one, WORKERS=1), and of the bare Koa app;
 * 2. latency (p50, p90, p99, p99.9, max) at fixed rates of 5% and 10% of the bare app's measured
 *    rate and at 50% of the decisions' own, open loop (bench/open-loop.ts: latencies count from
 *    when each request was due), with the service's event-loop delay (max, p99: read from its
 *    /metrics around each run, the worst of its serving processes) and, as a control, the bare app
 *    at the same rates;
 * 3. `POST /v1/decisions/batch` of 1,000 requests, one at a time; then, at each of the rates of
 *    (2) that are fractions of the bare app's, a saturated burst of BENCH_SATURATION_S seconds
 *    followed at once by BENCH_AFTER_BURST_S (10) seconds at that rate, open loop, the bare app
 *    measured the same way: the tail a burst leaves (p99 and p99.9 over the bare app's);
 *    With BENCH_TRACED (1), each round also runs the service with OpenTelemetry on
 *    (OTEL_EXPORTER_OTLP_ENDPOINT naming a receiver in this process that counts the bytes and
 *    drops them; every request sampled): saturated and at the fixed rates, beside the same
 *    service untraced;
 * 4. that every decision answered was recorded: decisions written against 2xx answers, after a
 *    graceful stop of the service;
 * 5. the CPU time each process spends per request at saturation (from /proc: the service, Neo4j,
 *    the load generator, the bare app), steadier than throughput on a shared machine;
 * 6. the pieces of the path one by one, in-process: token check, rate limiter (in memory and in
 *    Redis), body parsing, validation, the engine, the record, serialising the answer, the access
 *    log line; and the engine deciding along delegation chains (an agent for a person, a
 *    sub-agent for that agent) against the same requests made by the person alone;
 * 7. single decisions during heavy moments, once, after the rounds, on a service of its own (the
 *    graph they leave behind is not the one the rounds measure): the request stream of (2) at the
 *    highest of the rates that are fractions of the bare app's, open loop, while each of these
 *    happens in turn: `POST /v1/decisions/batch` of 1,000 requests one at a time, back to back,
 *    for BENCH_FIXED_S seconds; a SCIM sync of BENCH_SYNC_USERS users in groups of
 *    BENCH_HEAVY_GROUP_SIZE (`POST /v1/connectors/{id}/sync` of a snapshot from
 *    bench/directory.ts, polled by bench/sync-poller.ts), from the POST until it completes; the
 *    heaviest report, `access_review` of every principal (`POST /v1/audit/reports`, polled), from
 *    the request until it completes; and BENCH_HEAVY_POLICIES policies (`POST /v1/policies`, every
 *    other one granting `*`) naming synced groups whose members add up to BENCH_HEAVY_REACH
 *    principals, for BENCH_HEAVY_POLICY_S seconds from the first create, a window in which the
 *    service's privilege-risk refresh (every PRIVILEGE_RISK_INTERVAL_S, 15 s unless
 *    BENCH_SERVICE_ENV says otherwise) recomputes and writes their factors (each refresh the
 *    service logs in it is shown). For each: p99, p99.9 and max, each tail over the bare app's p99
 *    at the same rate measured just before (targets 5 and 15 ms), the service's event-loop delay
 *    max (target 20 ms over them all), and the batches' p50 and p99 (target 30 ms), the sync's
 *    users/s, the report's seconds.
 *
 * The graph holds delegations as an organisation using agents would (bench/org.ts
 * `generateDelegations`), and a policy letting AI agents act on every type of resource (what
 * they do for someone is bounded by the delegation and that person's access): every decision is
 * made with them in the index.
 *
 *   npm run bench:decision-path
 *
 * Knobs: BENCH_WARMUP_S (90: the service at saturation before anything is measured, so that Neo4j's
 * JIT has settled), BENCH_COMPONENT_CALLS (20000), BENCH_PIECES_ONLY (1: stop after the in-process pieces), BENCH_PRINCIPALS (2000), BENCH_GROUPS (120), BENCH_POLICIES (300), BENCH_RESOURCES
 * (1500), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10: autocannon's, and those an open-loop run opens
 * first), BENCH_MAX_CONNECTIONS (BENCH_CONNECTIONS, a fixed pool: the most an open-loop run opens
 * while every one is busy), BENCH_SATURATION_S (10), BENCH_FIXED_S (15),
 * BENCH_AFTER_BURST_S (10), BENCH_BARE_RATE (the bare app's rate the fixed rates are fractions
 * of, instead of measuring it: two runs compared back to back at the same rates),
 * BENCH_BATCHES (100 per round), BENCH_TRACED (1; 0 skips the traced service), BENCH_RATES (fractions of the bare app's rate, "0.05,0.1"),
 * BENCH_CPU_PROFILE (a directory: the service runs with --cpu-prof and writes its profile there
 * when it stops; a service of several processes, one per process in a directory named after it),
 * BENCH_HEAP_PROFILE (a directory: the same with --heap-prof, where the service
 * allocates), BENCH_TRACE_GC (1: the service runs with --trace-gc and the longest pause of
 * each run is reported), BENCH_SERVICE_ENV (extra settings for the service, `A=1,B=2`),
 * BENCH_HEAVY (1; 0 skips the heavy moments), BENCH_HEAVY_ONLY (1: after loading and the
 * calibration, the warm-up included, only the heavy moments), BENCH_SYNC_USERS (20000),
 * BENCH_HEAVY_GROUP_SIZE (100 users a group), BENCH_HEAVY_REACH (10000 principals the policies
 * reach, at most the synced users), BENCH_HEAVY_POLICIES (100, at most one a group reached),
 * BENCH_HEAVY_MOMENTS (batches,sync,report,policies: those to run; policies needs sync; none: the
 * quiet service alone), BENCH_SERVICE_FLAGS (node flags for the service besides those of `npm start`),
 * BENCH_HEAVY_POLICY_S (30), BENCH_HEAVY_REPORT (access_review: any report type),
 * BENCH_SYNC_TIMEOUT_S (1800), BENCH_REPORT_TIMEOUT_S (900). Results also go to
 * bench/results/decision-path-*.json.
 *
 *   BENCH_HEAVY_ONLY=1 BENCH_WARMUP_S=5 BENCH_ROUNDS=1 BENCH_SYNC_USERS=3000 BENCH_FIXED_S=5 \
 *     npm run bench:decision-path          # the heavy moments alone, small
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import neo4jDriver from 'neo4j-driver';
import { decide } from '../src/decisions/engine.js';
import { createAccessLog } from '../src/logging/logger.js';
import { createRateLimiting, type RateLimiting } from '../src/ratelimit/index.js';
import type { Runtime } from '../src/runtime.js';
import { DecisionRequestSchema, type DecisionRequest } from '../src/schemas/decisions.js';
import type { ThreadSchedule } from '../src/threads/thread.js';
import { compile, inputAjv } from '../src/schemas/validator.js';
import { createLogger } from '../src/logging/logger.js';
import { BulkLoader, type SeedPolicy, type SeedResource } from '../src/seed/bulk.js';
import { REPORT_TYPES, type ReportType } from '../src/vocabulary/report-types.js';
import type { BenchClient } from './client.js';
import { createConnector, generateDirectory, snapshot, type Directory } from './directory.js';
import {
  ADMIN_ID,
  adminClient,
  ask,
  benchConfig,
  benchMain,
  benchNeo4j,
  env,
  fmt,
  forkBench,
  latencySummary,
  loadPrincipals,
  log,
  median,
  percentile,
  profiled,
  ResultTable,
  type Row,
  withBenchService,
  writeResults,
  startServiceProcess,
  type ServiceProcess,
  listGroups,
  type ReportView,
  runSync,
  serviceEnv,
  serviceFlags,
  compileService,
  cpuSeconds,
} from './harness.js';
import type { GeneratorMessage, LoadResult } from './load-generator.js';
import type { OpenLoopResult } from './open-loop.js';
import { generateDelegations, generateOrg, seededId, type DelegationChain } from './org.js';
import {
  generatePolicies,
  generateResources,
  Membership,
  requestStream,
  TYPE_ACTIONS,
} from './policy-set.js';
import type { PollResult } from './sync-poller.js';

const PRINCIPALS = env('BENCH_PRINCIPALS', 2_000);
const GROUPS = env('BENCH_GROUPS', 120);
const POLICIES = env('BENCH_POLICIES', 300);
const RESOURCES = env('BENCH_RESOURCES', 1_500);
const ROUNDS = Math.max(1, env('BENCH_ROUNDS', 3));
const CONNECTIONS = env('BENCH_CONNECTIONS', 10);
/** The most connections an open-loop run may open while all are busy (bench/open-loop.ts): a fixed pool unless set. */
const MAX_CONNECTIONS = env('BENCH_MAX_CONNECTIONS', CONNECTIONS);
const SATURATION_S = env('BENCH_SATURATION_S', 10);
const FIXED_S = env('BENCH_FIXED_S', 15);
/** Seconds measured at a fixed rate right after a saturated burst. */
const AFTER_BURST_S = env('BENCH_AFTER_BURST_S', 10);
const BATCHES = env('BENCH_BATCHES', 100);
const COMPONENT_CALLS = env('BENCH_COMPONENT_CALLS', 20_000);
const PIECES_ONLY = process.env['BENCH_PIECES_ONLY'] === '1';
const WARMUP_S = env('BENCH_WARMUP_S', 90);
const RATES = (process.env['BENCH_RATES'] || '0.05,0.1').split(',').map(Number);
/** The bare app's saturated rate the fixed rates are fractions of, instead of measuring it. */
const BARE_RATE = process.env['BENCH_BARE_RATE'] ? Number(process.env['BENCH_BARE_RATE']) : undefined;
const PROFILE_DIR = process.env['BENCH_CPU_PROFILE'] || undefined;
const HEAP_PROFILE_DIR = process.env['BENCH_HEAP_PROFILE'] || undefined;
const TRACE_GC = process.env['BENCH_TRACE_GC'] === '1';
/** Each round also measures the service exporting every request's spans over OTLP. */
const TRACED = env('BENCH_TRACED', 1) !== 0;
/** The heavy moments: 0 skips them; BENCH_HEAVY_ONLY=1 measures nothing else but the calibration. */
const HEAVY_ONLY = process.env['BENCH_HEAVY_ONLY'] === '1';
const HEAVY = HEAVY_ONLY || env('BENCH_HEAVY', 1) !== 0;
/** Users the heavy moments' SCIM sync provisions, in groups of HEAVY_GROUP_SIZE. */
const SYNC_USERS = env('BENCH_SYNC_USERS', 20_000);
/** Which heavy moments run, in this order (the policy changes name the groups the sync made). */
const HEAVY_MOMENTS = new Set(
  (process.env['BENCH_HEAVY_MOMENTS'] || 'batches,sync,report,policies')
    .split(',')
    .filter((m) => m !== 'none'),
);
for (const m of HEAVY_MOMENTS) {
  if (!['batches', 'sync', 'report', 'policies'].includes(m)) {
    throw new Error(`BENCH_HEAVY_MOMENTS: ${m} is not one of batches, sync, report, policies`);
  }
}
if (HEAVY_MOMENTS.has('policies') && !HEAVY_MOMENTS.has('sync')) {
  throw new Error('BENCH_HEAVY_MOMENTS: policies needs sync (the policies name the groups it makes)');
}
const HEAVY_GROUP_SIZE = Math.max(1, env('BENCH_HEAVY_GROUP_SIZE', 100));
/** Principals the policies of the last heavy moment reach (at most the synced users), and how many policies. */
const HEAVY_REACH = env('BENCH_HEAVY_REACH', 10_000);
const HEAVY_POLICIES = Math.max(1, env('BENCH_HEAVY_POLICIES', 100));
/** Seconds the decisions are measured for from the first of those policies created. */
const HEAVY_POLICY_S = env('BENCH_HEAVY_POLICY_S', 30);
const HEAVY_REPORT = (process.env['BENCH_HEAVY_REPORT'] || 'access_review') as ReportType;
const SYNC_TIMEOUT_S = env('BENCH_SYNC_TIMEOUT_S', 1_800);
const REPORT_TIMEOUT_S = env('BENCH_REPORT_TIMEOUT_S', 900);
/** The SYNC_MAX_BYTES the service takes unless told: a larger snapshot raises it. */
const DEFAULT_SYNC_MAX_BYTES = 256 * 1024 * 1024;
if (!(REPORT_TYPES as readonly string[]).includes(HEAVY_REPORT)) {
  throw new Error(`BENCH_HEAVY_REPORT: ${HEAVY_REPORT} is not one of ${REPORT_TYPES.join(', ')}`);
}
const SERVICE_ENV = serviceEnv();

/** Node and V8 flags the service runs with besides those of `npm start` (BENCH_SERVICE_FLAGS, space-separated). */
const SERVICE_FLAGS = serviceFlags();

const table = new ResultTable();

// ---- processes -----------------------------------------------------------------------------

/** The compiled service (`npm start` without the console build), as its own process. */
function startService(
  neo4j: { uri: string },
  variant: Record<string, string>,
  profileAs?: string,
): Promise<ServiceProcess> {
  // Several processes (a primary and those it forks) each write a profile of their own, named by
  // Node (with its pid), in a directory named after the service.
  const settings = { ...SERVICE_ENV, ...variant };
  const several = Number(settings['WORKERS'] ?? '1') > 1 || settings['BACKGROUND_PROCESS'] === 'on';
  const flags = [
    ...SERVICE_FLAGS,
    ...(TRACE_GC ? ['--trace-gc'] : []),
    ...(PROFILE_DIR && profileAs
      ? several
        ? ['--cpu-prof', `--cpu-prof-dir=${path.join(PROFILE_DIR, profileAs)}`]
        : ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${profileAs}.cpuprofile`]
      : []),
    ...(HEAP_PROFILE_DIR && profileAs
      ? ['--heap-prof', `--heap-prof-dir=${HEAP_PROFILE_DIR}`, `--heap-prof-name=${profileAs}.heapprofile`]
      : []),
  ];
  return startServiceProcess(neo4j, settings, flags);
}

/**
 * An OTLP/HTTP receiver on 127.0.0.1 that takes span exports (`POST /v1/traces`), answers them
 * as a collector would and keeps nothing but their size.
 */
async function startOtlpSink(): Promise<{ url: string; bytes(): number; close(): Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The bare Koa app, as its own process. */
async function startHello(): Promise<{ base: string; pid: number; child: ChildProcess }> {
  const child = forkBench('hello-server.ts');
  const port = await new Promise<number>((resolve) =>
    child.once('message', (m: { port: number }) => resolve(m.port)),
  );
  return { base: `http://127.0.0.1:${port}`, pid: child.pid!, child };
}

/** The process listening on a local TCP port (the embedded Neo4j's JVM, found by its Bolt port). */
function pidListening(port: number): number {
  const out = execFileSync('ss', ['-Htlnp', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`no process found listening on ${port}`);
  return Number(pid);
}

// ---- readings ------------------------------------------------------------------------------

/** `GET /metrics` on a connection of its own (closed after), so that it may reach any serving process. */
function scrape(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { connection: 'close' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** The serving processes the service runs (WORKERS, by default one per core). */
const SERVING_PROCESSES = Math.max(1, Number(SERVICE_ENV['WORKERS'] || os.availableParallelism()));

interface LoopReading {
  max: number;
  p99: number;
  /**
   * Per serving process (by slot), the seconds its event-loop thread has been on a core and has
   * waited for one since it started (Linux; absent elsewhere).
   */
  threads: Map<string, ThreadSchedule>;
  /** The serving processes' pids. */
  pids: Set<string>;
}

/**
 * The service's event-loop delay since the last scrape, ms (prom-client resets it on each): the
 * worst of its serving processes. Each process answers a scrape for itself (its slot in
 * `service_process_info`) and connections go to them in turn, so scrapes on new connections go on
 * until every process has answered; a process answering twice adds only the moments between.
 */
async function eventLoop(base: string): Promise<LoopReading> {
  const seen = new Map<string, { max: number; p99: number }>();
  const threads = new Map<string, ThreadSchedule>();
  const pids = new Set<string>();
  for (let i = 0; i < SERVING_PROCESSES * 4 && seen.size < SERVING_PROCESSES; i += 1) {
    const text = await scrape(`${base}/metrics`);
    const read = (name: string): number => {
      const found = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
      return found ? Number(found[1]) * 1000 : NaN;
    };
    const slot = /^service_process_info\{[^}]*slot="([^"]+)"/m.exec(text)?.[1];
    const pid = /^service_process_info\{[^}]*pid="([^"]+)"/m.exec(text)?.[1];
    if (pid) pids.add(pid);
    const before = seen.get(slot ?? '');
    const max = read('nodejs_eventloop_lag_max_seconds');
    const p99 = read('nodejs_eventloop_lag_p99_seconds');
    seen.set(slot ?? '', {
      max: before ? Math.max(before.max, max) : max,
      p99: before ? Math.max(before.p99, p99) : p99,
    });
    const running = read('service_event_loop_thread_cpu_seconds_total') / 1000;
    const waiting = read('service_event_loop_thread_cpu_wait_seconds_total') / 1000;
    if (!Number.isNaN(running) && !Number.isNaN(waiting)) threads.set(slot ?? '', { running, waiting });
    // A service of one process says nothing of its slot.
    if (slot === undefined) break;
  }
  const readings = [...seen.values()];
  return {
    max: Math.max(...readings.map((r) => r.max)),
    p99: Math.max(...readings.map((r) => r.p99)),
    threads,
    pids,
  };
}

/**
 * Between two readings `seconds` apart, the most any serving process's event-loop thread waited
 * for a core per second (ms/s), and the share of a core it ran: NaN where the host does not say.
 */
function threadTime(
  before: LoopReading,
  after: LoopReading,
  seconds: number,
): { loop_thread_wait_ms_per_s: number; loop_thread_cpu_share: number } {
  let wait = NaN;
  let share = NaN;
  for (const [slot, end] of after.threads) {
    const start = before.threads.get(slot);
    if (!start || seconds <= 0) continue;
    wait = Math.max(Number.isNaN(wait) ? 0 : wait, ((end.waiting - start.waiting) * 1000) / seconds);
    share = Math.max(Number.isNaN(share) ? 0 : share, (end.running - start.running) / seconds);
  }
  return { loop_thread_wait_ms_per_s: wait, loop_thread_cpu_share: share };
}

/** What --trace-gc prints of one pause: `[pid:isolate]  1234 ms: Scavenge … MB, 0.84 / 0.00 ms …`. */
const GC_LINE = /^\[(\d+):(0x[0-9a-f]+)\]\s+\d+ ms: .*?MB, (?:pooled: [0-9.]+ MB, )?([0-9.]+) \//;

function readLog(file: string, from: number, end: number): string {
  const fd = openSync(file, 'r');
  const buffer = Buffer.alloc(end - from);
  readSync(fd, buffer, 0, buffer.length, from);
  closeSync(fd);
  return buffer.toString('utf8');
}

/** Per log file, each process's main isolate: the first it reports a pause of (its threads start later). */
const mainIsolates = new Map<string, Map<string, string>>();

function mainIsolateOf(file: string, pid: string, end: number): string | undefined {
  let known = mainIsolates.get(file);
  if (!known?.has(pid)) {
    known = new Map();
    for (const line of readLog(file, 0, end).split('\n')) {
      const gc = GC_LINE.exec(line);
      if (gc && !known.has(gc[1]!)) known.set(gc[1]!, gc[2]!);
    }
    mainIsolates.set(file, known);
  }
  return known.get(pid);
}

/**
 * The GC pauses the service's --trace-gc lines report after `from` bytes: the longest and the sum
 * over the main threads of the serving processes `serving` (those whose event loops answer
 * requests), and the longest elsewhere (their worker threads, the background process), which
 * holds up no request directly.
 */
function gcPauses(
  file: string,
  from: number,
  serving: ReadonlySet<string>,
): { max: number; total: number; count: number; threadsMax: number; end: number } {
  const end = statSync(file).size;
  let max = 0;
  let total = 0;
  let count = 0;
  let threadsMax = 0;
  for (const line of readLog(file, from, end).split('\n')) {
    const gc = GC_LINE.exec(line);
    if (!gc) continue;
    const ms = Number(gc[3]);
    // A service that names no pid: every process's main thread counts.
    const servingHere = serving.size === 0 || serving.has(gc[1]!);
    if (!servingHere || mainIsolateOf(file, gc[1]!, end) !== gc[2]) {
      threadsMax = Math.max(threadsMax, ms);
      continue;
    }
    max = Math.max(max, ms);
    total += ms;
    count += 1;
  }
  return { max, total, count, threadsMax, end };
}

const logSize = (file: string): number => statSync(file).size;

// ---- runs ----------------------------------------------------------------------------------

type Requests = { method: 'POST'; path: string; body: string }[];

interface FixedReading extends OpenLoopResult {
  rate: number;
  loop_max_ms: number;
  loop_p99_ms: number;
  /** How long the event-loop thread waited for a core, per second of the run (the most of any process). */
  loop_thread_wait_ms_per_s: number;
  /** The share of a core the event-loop thread ran. */
  loop_thread_cpu_share: number;
  /** The longest GC pause of an event-loop thread (with BENCH_TRACE_GC), and their sum. */
  gc_max_ms?: number;
  gc_total_ms?: number;
  /** The longest elsewhere (a worker thread, the background process): it holds up no request directly. */
  gc_threads_max_ms?: number;
}

/** A saturated run, with the CPU time each process named in `pids` spent per request answered. */
interface Saturated extends LoadResult {
  cpu_us_per_request: Record<string, number>;
}

function generatorOf(child: ChildProcess) {
  const send = <T>(message: GeneratorMessage): Promise<T> => ask<T>(child, message);
  /** An open-loop run of at most `seconds`; `stop` ends it early (its figures then follow). */
  const open = (
    url: string,
    requests: Requests,
    headers: Record<string, string>,
    rate: number,
    seconds: number,
  ): { result: Promise<OpenLoopResult>; stop: () => void } => {
    const result = send<OpenLoopResult>({
      kind: 'open',
      url,
      rate,
      seconds,
      connections: CONNECTIONS,
      maxConnections: MAX_CONNECTIONS,
      headers,
      requests,
    });
    const stop: GeneratorMessage = { kind: 'stop' };
    return { result, stop: () => void child.send(stop) };
  };
  return {
    saturate: async (
      url: string,
      requests: Requests,
      headers: Record<string, string>,
      options: { seconds?: number; pids?: Record<string, number> } = {},
    ): Promise<Saturated> => {
      const pids = { generator: child.pid!, ...options.pids };
      const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
      const result = await send<LoadResult>({
        kind: 'closed',
        url,
        connections: CONNECTIONS,
        seconds: options.seconds ?? SATURATION_S,
        headers,
        requests,
      });
      const answered = Math.max(1, result.total);
      return {
        ...result,
        cpu_us_per_request: Object.fromEntries(
          Object.entries(pids).map(([name, pid]) => [
            name,
            ((cpuSeconds(pid) - before[name]!) * 1e6) / answered,
          ]),
        ),
      };
    },
    fixed: (
      url: string,
      requests: Requests,
      headers: Record<string, string>,
      rate: number,
      seconds = FIXED_S,
    ) => open(url, requests, headers, rate, seconds).result,
    /** An open-loop run of at most `seconds`, which `stop` ends early (its figures then follow). */
    stoppable: open,
  };
}

async function fixedRun(
  generator: ReturnType<typeof generatorOf>,
  service: ServiceProcess | undefined,
  url: string,
  requests: Requests,
  headers: Record<string, string>,
  rate: number,
  seconds = FIXED_S,
): Promise<FixedReading> {
  const start = service ? await eventLoop(service.base) : undefined;
  const from = service && TRACE_GC ? logSize(service.logFile) : 0;
  const result = await generator.fixed(url, requests, headers, rate, seconds);
  const loop = service
    ? await eventLoop(service.base)
    : { max: NaN, p99: NaN, threads: new Map(), pids: new Set<string>() };
  const gcs = service && TRACE_GC ? gcPauses(service.logFile, from, loop.pids) : undefined;
  if (result.errors > 0 || result.non2xx > 0 || result.timeouts > 0) {
    throw new Error(
      `${url} at ${rate}/s: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return {
    ...result,
    rate,
    loop_max_ms: loop.max,
    loop_p99_ms: loop.p99,
    ...threadTime(start ?? loop, loop, result.seconds),
    ...(gcs ? { gc_max_ms: gcs.max, gc_total_ms: gcs.total, gc_threads_max_ms: gcs.threadsMax } : {}),
  };
}

/**
 * The pieces of the decision path one by one, in this process on the loaded graph, µs per call
 * (median over rounds of the mean over BENCH_COMPONENT_CALLS calls): what the HTTP figures are
 * made of besides Koa itself.
 */
async function components(
  runtime: Runtime,
  client: BenchClient,
  bodies: Requests,
  batchBodies: string[],
  chains: DelegationChain[],
): Promise<Record<string, number[]>> {
  const token = await client.token();
  const requests = bodies.map((b) => JSON.parse(b.body) as DecisionRequest);
  const validate = compile(inputAjv, DecisionRequestSchema);
  const sink = new Writable({ write: (_chunk, _enc, done) => done() });
  const access = createAccessLog(createLogger('info', sink));
  const redis = await createRedisLimiter();
  const decisions = requests.map((r) => runtime.services.decisions.evaluate(r));
  // The same requests made by a person, by an agent for that person, and by a sub-agent for the
  // agent for the person: what deciding along a delegation chain costs over a plain decision.
  // Only requests every principal of the chain is allowed are kept: a chain decided to the end
  // (every principal, every link) is its dearest case, and a refusal stops early.
  const index = runtime.engine.index;
  const byUser = new Map<string, DelegationChain[]>();
  for (const c of chains) byUser.set(c.user, [...(byUser.get(c.user) ?? []), c]);
  const alone: DecisionRequest[] = [];
  const forPerson: DecisionRequest[] = [];
  const forAgent: DecisionRequest[] = [];
  for (const r of requests) {
    for (const c of byUser.get(r.principal_id) ?? []) {
      const two: DecisionRequest = { ...r, principal_id: c.agent, on_behalf_of: c.user };
      if (!decide(index, two).allowed) continue;
      alone.push(r);
      forPerson.push(two);
      if (c.subAgent === null) continue;
      const three: DecisionRequest = { ...r, principal_id: c.subAgent, on_behalf_of: [c.user, c.agent] };
      if (decide(index, three).allowed) forAgent.push(three);
    }
  }
  const agentAlone = forPerson.map(({ on_behalf_of: _chain, ...r }) => r);
  log(
    `  ${forPerson.length} allowed requests of an agent for a person, ${forAgent.length} of a sub-agent for them`,
  );
  const pieces: Record<string, (i: number) => unknown> = {
    'token check (a token seen before)': () => runtime.services.verifier.verify(token),
    'rate limiter, in memory': (i) => runtime.rateLimiting.limiter.consume('decisions', `client:${i % 10}`),
    ...(redis
      ? {
          'rate limiter, Redis (round trip included)': (i: number) =>
            redis.limiter.consume('decisions', `client:${i % 10}`),
        }
      : {}),
    'JSON.parse of the request body': (i) => JSON.parse(bodies[i % bodies.length]!.body),
    'schema validation of the request': (i) => validate(JSON.parse(bodies[i % bodies.length]!.body)),
    'decide (the engine alone)': (i) => decide(runtime.engine.index, requests[i % requests.length]!),
    'decide, a person alone': (i) => decide(runtime.engine.index, alone[i % alone.length]!),
    'decide, the agent alone': (i) => decide(runtime.engine.index, agentAlone[i % agentAlone.length]!),
    'decide, an agent for the person (chain of 2)': (i) =>
      decide(runtime.engine.index, forPerson[i % forPerson.length]!),
    'decide, a sub-agent for the agent for the person (chain of 3)': (i) =>
      decide(runtime.engine.index, forAgent[i % forAgent.length]!),
    'evaluate (engine, id, time, record)': (i) =>
      runtime.services.decisions.evaluate(requests[i % requests.length]!),
    'JSON.stringify of the answer': (i) => JSON.stringify(decisions[i % decisions.length]),
    'access log line': (i) =>
      access({
        request_id: '3f1c0d7e-5a8b-4c2d-9e6f-0a1b2c3d4e5f',
        method: 'POST',
        path: '/v1/decisions/evaluate',
        route: '/v1/decisions/evaluate',
        ip: '127.0.0.1',
        user_agent: undefined,
        status: 200,
        length: 250 + (i % 50),
        client_id: ADMIN_ID,
        duration_ms: 0.412,
      }),
  };
  const out: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS + 1; round += 1) {
    for (const [name, call] of Object.entries(pieces)) {
      const t0 = performance.now();
      for (let i = 0; i < COMPONENT_CALLS; i += 1) {
        const result = call(i);
        if (result instanceof Promise) await result;
      }
      const us = ((performance.now() - t0) * 1000) / COMPONENT_CALLS;
      // The first round warms up.
      if (round > 0) (out[name] ??= []).push(us);
    }
    await runtime.engine.log.flush();
  }
  // A batch of 1,000 as its handler runs it, without HTTP: where its latency's spread comes from
  // when it is not the network's or the parsing's.
  const batches = batchBodies.map((b) => (JSON.parse(b) as { requests: DecisionRequest[] }).requests);
  const took: number[] = [];
  for (let i = 0; i < BATCHES + 5; i += 1) {
    const t0 = performance.now();
    await runtime.services.decisions.batch(batches[i % batches.length]!);
    if (i >= 5) took.push(performance.now() - t0);
  }
  await runtime.engine.log.flush();
  took.sort((a, b) => a - b);
  for (const p of [50, 90, 99]) out[`batch of 1,000 in-process, p${p} (ms)`] = [percentile(took, p)];
  await redis?.close();
  const ratio = (name: string): number[] => out[name]!.map((v, i) => v / out['decide, a person alone']![i]!);
  out['chain of 2 ÷ a person alone (x)'] = ratio('decide, an agent for the person (chain of 2)');
  out['chain of 3 ÷ a person alone (x)'] = ratio(
    'decide, a sub-agent for the agent for the person (chain of 3)',
  );
  return out;
}

/**
 * What an organisation that lets agents act for people grants its agents: everything, of every
 * type of resource, so that what an agent does for someone is bounded by that person's access and
 * the delegation, not by a policy of the agent's own.
 */
function agentPolicy(resources: readonly SeedResource[], now: number): SeedPolicy {
  const types = [...new Set(resources.map((r) => r.type))].sort();
  const createdAt = new Date(now).toISOString();
  return {
    id: seededId('pol', 999_999, now),
    createdAt,
    body: {
      name: 'agents-act-through-delegations',
      effect: 'allow',
      subjects: { match: { type: 'AI_AGENT' } },
      actions: ['*'],
      resources: types.map((type) => ({ type, identifier: '*' })),
    },
  };
}

/** A row of the in-process measurements: µs per call, or ms where the name says so. */
function pieceRow(name: string, values: number[]): Omit<Row, 'ratio'> {
  const ms = name.endsWith(' (ms)');
  if (name.endsWith(' (x)')) {
    return {
      scenario: `in-process: ${name.slice(0, -4)}`,
      unit: 'x',
      median: median(values),
      rounds: values,
      ...(name.startsWith('chain of 2')
        ? { target: 2, direction: 'max' as const, on: 'median' as const }
        : {}),
    };
  }
  return {
    scenario: `in-process: ${ms ? name.slice(0, -5) : name}`,
    unit: ms ? 'ms' : 'µs',
    median: median(values),
    rounds: values,
  };
}

/** A rate limiter counting in the local Redis, when one answers. */
async function createRedisLimiter(): Promise<RateLimiting | undefined> {
  const url = process.env['REDIS_URL'] || 'redis://127.0.0.1:6379';
  const limiting = createRateLimiting(
    benchConfig({ REDIS_URL: url, RATE_LIMIT_KEY_PREFIX: `bench-${process.pid}` }),
    createLogger('silent'),
  );
  try {
    await limiting.limiter.consume('decisions', 'probe');
    return limiting;
  } catch {
    await limiting.close();
    return undefined;
  }
}

async function main(): Promise<void> {
  const now = Date.UTC(2026, 10, 1);
  log(
    `generating ${PRINCIPALS} principals, ${GROUPS} groups, ${RESOURCES} resources and ${POLICIES} policies`,
  );
  const org = generateOrg({ principals: PRINCIPALS, groups: GROUPS, seed: 42, now });
  const membership = new Membership(org);
  const resources = generateResources(org, RESOURCES, 43, now);
  const set = generatePolicies(org, resources, membership, {
    policies: POLICIES,
    resources: RESOURCES,
    seed: 44,
    now,
    blastPrincipals: Math.floor(PRINCIPALS / 5),
  });
  const bodies: Requests = requestStream(org, set, membership, 2_000, 77).map((r) => ({
    method: 'POST',
    path: '/v1/decisions/evaluate',
    body: JSON.stringify(r),
  }));
  const { delegations, chains } = generateDelegations(org, 45, now);
  const batchBodies = Array.from({ length: 8 }, (_, k) =>
    JSON.stringify({ requests: requestStream(org, set, membership, 1_000, 500 + k) }),
  );

  log('building the service (tsc)');
  await compileService();

  const neo4j = await benchNeo4j();
  const generatorProcess = forkBench('load-generator.ts');
  const hello = await startHello();
  try {
    // The graph is loaded in bulk through the service's own loader, then served by a fresh process.
    const pieceTimes = await withBenchService(
      { neo4j, empty: 'MATCH (n:Principal) RETURN count(n) AS n' },
      async ({ runtime, client }) => {
        const loader = new BulkLoader(runtime.db);
        await loadPrincipals(loader, org.principals, { batch: 1_000, loaders: 2 });
        const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
        await loader.groups(org.groups);
        await loader.nesting(org.nesting, at);
        await loader.memberships(org.memberships, at);
        await loader.resources(set.resources);
        await loader.policies([...set.policies, agentPolicy(set.resources, now)]);
        await loader.delegations(delegations);
        await runtime.engine.sync.load();
        if (HEAVY_ONLY) return {};
        log(
          `measuring the pieces of the decision path in-process (${runtime.engine.index.delegations.size} delegations in the index)`,
        );
        return profiled(PROFILE_DIR ? 'pieces' : undefined, () =>
          components(runtime, client, bodies, batchBodies, chains),
        );
      },
    );
    if (PIECES_ONLY) {
      table.rows.length = 0;
      for (const [name, values] of Object.entries(pieceTimes)) table.add(pieceRow(name, values));
      table.print(64);
      return;
    }
    await run(
      { ...neo4j, pid: pidListening(Number(new URL(neo4j.uri).port)) },
      generatorOf(generatorProcess),
      hello,
      bodies,
      batchBodies,
      set.resources,
      pieceTimes,
    );
  } finally {
    hello.child.disconnect();
    generatorProcess.kill();
    await neo4j.stop();
  }
}

interface BatchReading {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

interface Round {
  hello_saturated: Saturated;
  recorded_saturated: Saturated;
  unrecorded_saturated: Saturated;
  recorded_fixed: FixedReading[];
  unrecorded_fixed: FixedReading[];
  hello_fixed: FixedReading[];
  /** At each of the RATES, the AFTER_BURST_S seconds right after a saturated burst. */
  recorded_after_burst: FixedReading[];
  hello_after_burst: FixedReading[];
  batch_ms: BatchReading;
  unrecorded_batch_ms: BatchReading;
  records: { answered: number; written: number };
  /** The service as WORKERS=2 runs it (two serving processes), saturated. */
  two_processes_saturated: Saturated;
  /** With BENCH_TRACED: the service exporting its spans over OTLP (recording on), saturated and at the rates. */
  traced_saturated?: Saturated;
  traced_fixed?: FixedReading[];
  /** Bytes of spans the OTLP receiver took while the traced service ran. */
  traced_bytes?: number;
}

/**
 * At each of `rates`: a saturated burst of SATURATION_S seconds, then, with no pause, the rate
 * for AFTER_BURST_S seconds, open loop: the tail a burst leaves behind.
 */
async function afterBursts(
  generator: ReturnType<typeof generatorOf>,
  service: ServiceProcess | undefined,
  url: string,
  requests: Requests,
  headers: Record<string, string>,
  rates: readonly number[],
): Promise<{ readings: FixedReading[]; answered: number }> {
  const readings: FixedReading[] = [];
  let answered = 0;
  for (const rate of rates) {
    answered += (await generator.saturate(url, requests, headers)).total;
    const reading = await fixedRun(generator, service, url, requests, headers, rate, AFTER_BURST_S);
    answered += reading.completed;
    readings.push(reading);
  }
  return { readings, answered };
}

// ---- heavy moments -------------------------------------------------------------------------

/** The single decisions measured while a heavy moment went on, and that moment's own figures. */
interface HeavyReading {
  /** The fixed rate of the single decisions: the highest of RATES times the bare app's rate. */
  rate: number;
  fraction: number;
  /** The bare app at that rate, open loop, FIXED_S seconds: the floor. */
  floor: FixedReading;
  /** The service at that rate with nothing else going on, FIXED_S seconds. */
  quiet: FixedReading;
  batches?: { singles: FixedReading; count: number; batch_ms: BatchReading };
  sync?: {
    singles: FixedReading;
    connector: string;
    users: number;
    groups: number;
    memberships: number;
    bytes: number;
    /** From the POST until the 202 arrived. */
    accepted_s: number;
    /** From the POST until the sync was seen completed. */
    seconds: number;
    users_per_s: number;
    counts: unknown;
    phases_s: Record<string, number>;
    polls: { answered: number; failed: number };
  };
  report?: {
    singles: FixedReading;
    type: ReportType;
    format: 'csv';
    status: string;
    /** From the request to completion, by the service's clock. */
    seconds: number;
    /** From the request until the job runner took it up. */
    queued_s: number;
    /** From the POST until this process saw it completed. */
    wall_s: number;
    rows: number;
  };
  policies?: {
    singles: FixedReading;
    created: number;
    /** Of them, those granting every action (`*`). */
    wildcard: number;
    groups: number;
    /** Members of the groups they name, as `GET /v1/groups` counts them. */
    principals: number;
    /** From the first create to the last answer. */
    create_s: number;
    create_ms: BatchReading;
    /** Each create's latency, in the order sent. */
    create_ms_each: number[];
    /** The privilege-risk refreshes the service logged in the window: seconds from the first create, principals written. */
    refreshes: { at_s: number; principals: number }[];
  };
}

/**
 * The users the heavy moments' sync provisions (all active, a manager tree as
 * bench/directory.ts draws it), in groups of HEAVY_GROUP_SIZE consecutive users, so that the
 * policies of the last moment can reach a known number of principals through a few groups.
 */
function heavyDirectory(): Directory {
  const { users } = generateDirectory(SYNC_USERS, 0, 303);
  const groups = Array.from({ length: Math.ceil(users.length / HEAVY_GROUP_SIZE) }, (_, k) => {
    const from = k * HEAVY_GROUP_SIZE;
    const to = Math.min(users.length, from + HEAVY_GROUP_SIZE);
    return {
      externalId: `heavy-group-${k}`,
      displayName: `Heavy moments ${String(k).padStart(4, '0')}`,
      members: Array.from({ length: to - from }, (_, i) => from + i),
    };
  });
  return {
    users: users.map((u) => ({ ...u, active: true })),
    groups,
    memberships: users.length,
  };
}

/**
 * The single decisions at `rate`, open loop, while `work` runs: for `seconds` when given (started
 * together with the work), else from the start of `work` until it settles. The service's
 * event-loop delay is read around the run. Failed decisions are counted, not thrown: a heavy
 * moment that makes decisions fail is a finding to show.
 */
async function besideRun<T>(
  generator: ReturnType<typeof generatorOf>,
  service: ServiceProcess,
  requests: Requests,
  headers: Record<string, string>,
  rate: number,
  work: () => Promise<T>,
  seconds: number | { atMost: number },
): Promise<{ singles: FixedReading; result: T }> {
  const start = await eventLoop(service.base);
  const from = TRACE_GC ? logSize(service.logFile) : 0;
  const fixed = typeof seconds === 'number';
  const run = generator.stoppable(service.base, requests, headers, rate, fixed ? seconds : seconds.atMost);
  let result: T;
  try {
    result = await work();
  } catch (err) {
    run.stop();
    await run.result.catch(() => undefined);
    throw err;
  }
  if (!fixed) run.stop();
  const reading = await run.result;
  const loop = await eventLoop(service.base);
  const gcs = TRACE_GC ? gcPauses(service.logFile, from, loop.pids) : undefined;
  if (reading.errors > 0 || reading.non2xx > 0 || reading.timeouts > 0) {
    log(
      `  ${reading.non2xx} non-2xx, ${reading.errors} errors, ${reading.timeouts} timeouts among ${reading.sent} decisions`,
    );
  }
  return {
    result,
    singles: {
      ...reading,
      rate,
      loop_max_ms: loop.max,
      loop_p99_ms: loop.p99,
      ...threadTime(start, loop, reading.seconds),
      ...(gcs ? { gc_max_ms: gcs.max, gc_total_ms: gcs.total, gc_threads_max_ms: gcs.threadsMax } : {}),
    },
  };
}

const describe = (f: FixedReading): string =>
  `p99 ${fmt(f.latency.p99)} p99.9 ${fmt(f.latency.p999)} max ${fmt(f.latency.max)} ms, ` +
  (Number.isNaN(f.loop_max_ms) ? '' : `loop max ${fmt(f.loop_max_ms)} ms, `) +
  (Number.isNaN(f.loop_thread_wait_ms_per_s)
    ? ''
    : `loop thread on a core ${fmt(f.loop_thread_cpu_share * 100, 0)}% and waiting for one ${fmt(f.loop_thread_wait_ms_per_s)} ms/s, `) +
  `${f.completed} decisions in ${fmt(f.seconds, 1)} s over at most ${f.connections_max} connections` +
  (f.queued > 0 ? ` (${f.queued} waited for one, at most ${fmt(f.queued_max_ms)} ms)` : '');

/** Batches of 1,000, one at a time and back to back, for `seconds`: each one's latency, ms. */
async function batchesFor(client: BenchClient, batchBodies: string[], seconds: number): Promise<number[]> {
  const samples: number[] = [];
  const until = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < until; i += 1) {
    samples.push(
      (await client.timed('POST', '/v1/decisions/batch', batchBodies[i % batchBodies.length]!)).ms,
    );
  }
  return samples;
}

/** The sync of `dir` through `POST /v1/connectors/{id}/sync`, followed by the poller until it completes. */
async function syncDirectory(
  admin: BenchClient,
  poller: ChildProcess,
  connectorId: string,
  body: Buffer,
): Promise<{ accepted_s: number; seconds: number; polled: PollResult }> {
  const t0 = performance.now();
  const { accepted_s, polled } = await runSync(admin, poller, connectorId, body, SYNC_TIMEOUT_S);
  return { accepted_s, seconds: (performance.now() - t0) / 1000, polled };
}

/** A report requested with `POST /v1/audit/reports` and polled until it is no longer pending or running. */
async function generateReport(admin: BenchClient): Promise<{ view: ReportView; wall_s: number }> {
  const t0 = performance.now();
  let view = await admin.json<ReportView>(
    'POST',
    '/v1/audit/reports',
    { type: HEAVY_REPORT, format: 'csv' },
    { expect: [202] },
  );
  const deadline = Date.now() + REPORT_TIMEOUT_S * 1000;
  while (view.status === 'pending' || view.status === 'running') {
    if (Date.now() > deadline) throw new Error(`the report did not finish within ${REPORT_TIMEOUT_S} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    view = await admin.json<ReportView>('GET', `/v1/audit/reports/${view.id}`);
  }
  if (view.status !== 'completed') throw new Error(`the report ${view.status}: ${view.error ?? ''}`);
  return { view, wall_s: (performance.now() - t0) / 1000 };
}

/**
 * The policies of the last moment: the synced groups holding the first HEAVY_REACH users,
 * spread over HEAVY_POLICIES policies (at most one a group), each allowing a few registered
 * resources of one type; every other one grants every action (`*`), so that the privilege-risk
 * refresh has factors to write.
 */
function planHeavyPolicies(
  groupIds: readonly string[],
  resources: readonly SeedResource[],
): { body: Record<string, unknown>; groups: number[] }[] {
  const reached = Math.min(groupIds.length, Math.ceil(Math.min(HEAVY_REACH, SYNC_USERS) / HEAVY_GROUP_SIZE));
  const count = Math.min(HEAVY_POLICIES, reached);
  const byType = new Map<string, SeedResource[]>();
  for (const r of resources) byType.set(r.type, [...(byType.get(r.type) ?? []), r]);
  const types = [...byType.keys()].sort();
  const stamp = Date.now().toString(36);
  return Array.from({ length: count }, (_, k) => {
    const groups = Array.from({ length: reached }, (_, g) => g).filter((g) => g % count === k);
    const type = types[k % types.length]!;
    const ofType = byType.get(type)!;
    const named = Array.from({ length: Math.min(3, ofType.length) }, (_, j) => {
      const r = ofType[(k * 3 + j) % ofType.length]!;
      return { type: r.type, identifier: r.identifier };
    });
    return {
      groups,
      body: {
        name: `heavy-moment-${stamp}-${k}`,
        effect: 'allow',
        subjects: { groups: groups.map((g) => groupIds[g]!) },
        actions: k % 2 === 0 ? ['*'] : [TYPE_ACTIONS[type]?.[0] ?? 'read'],
        resources: named,
      },
    };
  });
}

/** The privilege-risk refreshes the service logged after `from` bytes of its log: when, and principals written. */
function refreshesLogged(file: string, from: number, since: number): { at_s: number; principals: number }[] {
  const end = statSync(file).size;
  const fd = openSync(file, 'r');
  const buffer = Buffer.alloc(end - from);
  readSync(fd, buffer, 0, buffer.length, from);
  closeSync(fd);
  const out: { at_s: number; principals: number }[] = [];
  for (const line of buffer.toString('utf8').split('\n')) {
    if (!line.includes('privilege risk factors updated')) continue;
    try {
      const entry = JSON.parse(line) as { time?: string; principals?: number };
      out.push({ at_s: (Date.parse(entry.time ?? '') - since) / 1000, principals: entry.principals ?? NaN });
    } catch {
      // Not a line of the service's JSON log.
    }
  }
  return out;
}

/**
 * The single decisions at the highest of RATES, open loop, while each heavy moment happens in
 * turn, on a service of their own (the graph they leave behind is not the one the rounds
 * measure): batches of 1,000 beside them; a SCIM sync of SYNC_USERS users; the heaviest report
 * over the whole graph; policies reaching HEAVY_REACH of the synced users, for HEAVY_POLICY_S
 * seconds from the first create, the periodic privilege-risk refresh included. The bare app at
 * the same rate, measured just before, is the floor.
 */
async function heavyMoments(
  neo4j: { uri: string },
  generator: ReturnType<typeof generatorOf>,
  helloBase: string,
  bodies: Requests,
  batchBodies: string[],
  resources: readonly SeedResource[],
  rate: number,
  helloHeaders: Record<string, string>,
): Promise<HeavyReading> {
  const fraction = Math.max(...RATES);
  log(`heavy moments at ${rate}/s (${fraction * 100}% of the bare app): the bare app first`);
  const floor = await fixedRun(generator, undefined, helloBase, bodies, helloHeaders, rate);
  log(`  bare app: ${describe(floor)}`);
  const dir = heavyDirectory();
  const body = Buffer.from(snapshot(dir));
  const service = await startService(
    neo4j,
    body.length * 2 > DEFAULT_SYNC_MAX_BYTES ? { SYNC_MAX_BYTES: String(body.length * 2) } : {},
    PROFILE_DIR || HEAP_PROFILE_DIR ? 'service-heavy' : undefined,
  );
  const poller = forkBench('sync-poller.ts');
  try {
    const admin = adminClient(service.base);
    let headers = await admin.headers();
    // The service's JIT warms up at the rate itself, and on a few batches.
    await generator.fixed(service.base, bodies, headers, rate, 5);
    await batchesFor(admin, batchBodies, 1);
    const quiet = await fixedRun(generator, service, service.base, bodies, headers, rate);
    log(`  no heavy moment: ${describe(quiet)}`);

    const reading: HeavyReading = { rate, fraction, floor, quiet };
    if (HEAVY_MOMENTS.has('batches')) {
      log(`  batches of 1,000 beside, for ${FIXED_S} s`);
      headers = await admin.headers();
      const batches = await besideRun(
        generator,
        service,
        bodies,
        headers,
        rate,
        () => batchesFor(admin, batchBodies, FIXED_S),
        FIXED_S,
      );
      const batchMs = latencySummary(batches.result);
      log(
        `    singles ${describe(batches.singles)}; ${batches.result.length} batches, ` +
          `p50 ${fmt(batchMs.p50)} p99 ${fmt(batchMs.p99)} ms`,
      );

      reading.batches = { singles: batches.singles, count: batches.result.length, batch_ms: batchMs };
    }
    let connectorName = '';
    if (HEAVY_MOMENTS.has('sync')) {
      log(
        `  SCIM sync of ${SYNC_USERS} users in ${dir.groups.length} groups ` +
          `(${(body.length / 2 ** 20).toFixed(1)} MB snapshot, POST /v1/connectors/{id}/sync)`,
      );
      const connector = await createConnector(admin, 'heavy');
      headers = await admin.headers();
      const synced = await besideRun(
        generator,
        service,
        bodies,
        headers,
        rate,
        () => syncDirectory(admin, poller, connector.id, body),
        { atMost: SYNC_TIMEOUT_S + 60 },
      );
      const { polled } = synced.result;
      const phases = Object.fromEntries(
        polled.phases.map((p, i) => [
          p.phase,
          Number(((polled.phases[i + 1]?.at ?? polled.seconds) - p.at).toFixed(2)),
        ]),
      );
      log(
        `    singles ${describe(synced.singles)}; sync completed in ${fmt(synced.result.seconds, 1)} s ` +
          `(${Math.round(SYNC_USERS / synced.result.seconds)} users/s), counts ${JSON.stringify(polled.final?.counts ?? null)}`,
      );

      connectorName = connector.name;
      reading.sync = {
        singles: synced.singles,
        connector: connectorName,
        users: SYNC_USERS,
        groups: dir.groups.length,
        memberships: dir.memberships,
        bytes: body.length,
        accepted_s: synced.result.accepted_s,
        seconds: synced.result.seconds,
        users_per_s: SYNC_USERS / synced.result.seconds,
        counts: polled.final?.counts ?? null,
        phases_s: phases,
        polls: { answered: polled.latencies.length, failed: polled.failures },
      };
    }
    if (HEAVY_MOMENTS.has('report')) {
      log(`  report ${HEAVY_REPORT} (csv, POST /v1/audit/reports), polled until completed`);
      headers = await admin.headers();
      const reported = await besideRun(
        generator,
        service,
        bodies,
        headers,
        rate,
        () => generateReport(admin),
        {
          atMost: REPORT_TIMEOUT_S + 60,
        },
      );
      const { view } = reported.result;
      const requestedAt = Date.parse(view.requested_at);
      const reportSeconds = view.completed_at ? (Date.parse(view.completed_at) - requestedAt) / 1000 : NaN;
      log(
        `    singles ${describe(reported.singles)}; report ${view.status} after ${fmt(reportSeconds)} s, ` +
          `${view.row_count} rows`,
      );

      reading.report = {
        singles: reported.singles,
        type: HEAVY_REPORT,
        format: 'csv',
        status: view.status,
        seconds: reportSeconds,
        queued_s: view.started_at ? (Date.parse(view.started_at) - requestedAt) / 1000 : NaN,
        wall_s: reported.result.wall_s,
        rows: view.row_count,
      };
    }
    if (HEAVY_MOMENTS.has('policies')) {
      const listed = await listGroups(admin, connectorName);
      const groupIds = dir.groups.map((g) => {
        const found = listed.get(g.displayName);
        if (!found) throw new Error(`GET /v1/groups does not list the group ${g.displayName}`);
        return found.id;
      });
      const plans = planHeavyPolicies(groupIds, resources);
      const named = [...new Set(plans.flatMap((p) => p.groups))];
      const principals = named.reduce((n, g) => n + listed.get(dir.groups[g]!.displayName)!.member_count, 0);
      log(
        `  ${plans.length} policies (POST /v1/policies) naming ${named.length} groups of ${principals} principals, ` +
          `measured for ${HEAVY_POLICY_S} s from the first create`,
      );
      headers = await admin.headers();
      const logFrom = logSize(service.logFile);
      const windowStart = Date.now();
      const created = await besideRun(
        generator,
        service,
        bodies,
        headers,
        rate,
        async () => {
          const latencies: number[] = [];
          const t0 = performance.now();
          for (const plan of plans) latencies.push((await admin.timed('POST', '/v1/policies', plan.body)).ms);
          return { latencies, seconds: (performance.now() - t0) / 1000 };
        },
        HEAVY_POLICY_S,
      );
      // The log is written at least every 200 ms.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refreshes = refreshesLogged(service.logFile, logFrom, windowStart).filter(
        (r) => r.at_s <= HEAVY_POLICY_S,
      );
      const createMsEach = [...created.result.latencies];
      const createMs = latencySummary(created.result.latencies);
      log(
        `    singles ${describe(created.singles)}; created in ${fmt(created.result.seconds, 1)} s ` +
          `(p50 ${fmt(createMs.p50)} p99 ${fmt(createMs.p99)} ms); privilege-risk refreshes logged: ` +
          (refreshes.length > 0
            ? refreshes.map((r) => `${r.principals} principals at ${fmt(r.at_s, 1)} s`).join(', ')
            : 'none'),
      );

      reading.policies = {
        singles: created.singles,
        created: plans.length,
        wildcard: plans.filter((p) => (p.body['actions'] as string[]).includes('*')).length,
        groups: named.length,
        principals,
        create_s: created.result.seconds,
        create_ms: createMs,
        create_ms_each: createMsEach,
        refreshes,
      };
    }
    return reading;
  } finally {
    poller.kill();
    await service.stop();
  }
}

async function run(
  neo4j: { uri: string; user: string; password: string; pid: number },
  generator: ReturnType<typeof generatorOf>,
  hello: { base: string; pid: number },
  bodies: Requests,
  batchBodies: string[],
  resources: readonly SeedResource[],
  pieceTimes: Record<string, number[]>,
): Promise<void> {
  const helloBase = hello.base;
  const driver = neo4jDriver.driver(
    neo4j.uri,
    neo4j.password === '' ? undefined : neo4jDriver.auth.basic(neo4j.user, neo4j.password),
  );
  const countDecisions = async (): Promise<number> => {
    const { records } = await driver.executeQuery(
      `OPTIONAL MATCH (d:Decision) WITH count(d) AS nodes
       OPTIONAL MATCH (b:DecisionBatch) WITH nodes, coalesce(sum(b.count), 0) AS batched
       RETURN toInteger(nodes + batched) AS n`,
    );
    return (records[0]!.get('n') as { toNumber(): number }).toNumber();
  };

  // Calibration: the fixed rates are fractions of rates measured once here, then kept for every
  // round so that the rounds measure the same load.
  // The bare app gets the very requests the service gets, bearer token included, so that reading
  // them costs both the same.
  log('calibrating: saturated throughput of the bare app and of the service');
  let appRate: number;
  let headers: Record<string, string>;
  {
    const service = await startService(neo4j, {});
    headers = await adminClient(service.base).headers();
    // Neo4j's JIT takes a minute or two to settle on a small machine (the CPU of one write falls
    // tenfold meanwhile), and the service's own JIT a few seconds: both warm up before anything
    // is measured.
    log(`warming up for ${WARMUP_S} s`);
    await generator.saturate(service.base, bodies, headers, { seconds: WARMUP_S });
    appRate = (await generator.saturate(service.base, bodies, headers)).requests_per_s;
    await service.stop();
  }
  await generator.saturate(helloBase, bodies, headers, { seconds: 3 });
  // Pinned, the fixed rates are the same as another run's (to compare two commits back to back).
  const helloRate = BARE_RATE ?? (await generator.saturate(helloBase, bodies, headers)).requests_per_s;
  const rates = [...RATES.map((f) => Math.round(helloRate * f)), Math.round(appRate * 0.5)];
  log(
    `bare app ${Math.round(helloRate)}/s, service ${Math.round(appRate)}/s: fixed rates ${rates.join(', ')}/s ` +
      `(${RATES.map((f) => `${f * 100}%`).join(', ')} of the bare app, 50% of the service)`,
  );

  const rounds: Round[] = [];
  for (let r = 0; r < (HEAVY_ONLY ? 0 : ROUNDS); r += 1) {
    const round: Partial<Round> = {};
    const variants =
      r % 2 === 0 ? (['recorded', 'unrecorded'] as const) : (['unrecorded', 'recorded'] as const);
    for (const variant of variants) {
      const before = variant === 'recorded' ? await countDecisions() : 0;
      const service = await startService(
        neo4j,
        variant === 'recorded' ? {} : { DECISION_RECORDING: 'off-for-benchmark' },
        r === 0 ? `service-${variant}` : undefined,
      );
      const client = adminClient(service.base);
      headers = await client.headers();
      let answered = 0;
      await generator
        .saturate(service.base, bodies, headers, { seconds: 3 })
        .then((w) => (answered += w.total));
      const saturated = await generator.saturate(service.base, bodies, headers, {
        pids: { service: service.pid, neo4j: neo4j.pid },
      });
      answered += saturated.total;
      const fixed: FixedReading[] = [];
      for (const rate of rates) {
        const reading = await fixedRun(generator, service, service.base, bodies, headers, rate);
        answered += reading.completed;
        fixed.push(reading);
      }
      {
        const samples: number[] = [];
        for (let i = 0; i < BATCHES + 5; i += 1) {
          const { ms } = await client.timed(
            'POST',
            '/v1/decisions/batch',
            batchBodies[i % batchBodies.length]!,
          );
          if (i >= 5) samples.push(ms);
          answered += 1_000;
        }
        const reading = latencySummary(samples);
        if (variant === 'recorded') round.batch_ms = reading;
        else round.unrecorded_batch_ms = reading;
      }
      if (variant === 'recorded') {
        const bursts = await afterBursts(
          generator,
          service,
          service.base,
          bodies,
          headers,
          rates.slice(0, RATES.length),
        );
        answered += bursts.answered;
        round.recorded_after_burst = bursts.readings;
      }
      await service.stop();
      if (variant === 'recorded') {
        round.records = { answered, written: (await countDecisions()) - before };
        round.recorded_saturated = saturated;
        round.recorded_fixed = fixed;
      } else {
        round.unrecorded_saturated = saturated;
        round.unrecorded_fixed = fixed;
      }
    }
    {
      const service = await startService(neo4j, { WORKERS: '2' });
      headers = await adminClient(service.base).headers();
      await generator.saturate(service.base, bodies, headers, { seconds: 3 });
      round.two_processes_saturated = await generator.saturate(service.base, bodies, headers);
      await service.stop();
    }
    if (TRACED) {
      // Every request traced and exported, as OTEL_EXPORTER_OTLP_ENDPOINT turns it on; the spans
      // go to a receiver here that counts and drops them.
      const sink = await startOtlpSink();
      const service = await startService(
        neo4j,
        { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url },
        r === 0 ? 'service-traced' : undefined,
      );
      headers = await adminClient(service.base).headers();
      await generator.saturate(service.base, bodies, headers, { seconds: 3 });
      round.traced_saturated = await generator.saturate(service.base, bodies, headers, {
        pids: { service: service.pid, neo4j: neo4j.pid },
      });
      round.traced_fixed = [];
      for (const rate of rates)
        round.traced_fixed.push(await fixedRun(generator, service, service.base, bodies, headers, rate));
      await service.stop();
      round.traced_bytes = sink.bytes();
      await sink.close();
      if (round.traced_bytes === 0) throw new Error('the traced service exported no span');
    }
    round.hello_saturated = await generator.saturate(helloBase, bodies, headers, {
      pids: { hello: hello.pid },
    });
    round.hello_fixed = [];
    for (const rate of rates)
      round.hello_fixed.push(await fixedRun(generator, undefined, helloBase, bodies, headers, rate));
    round.hello_after_burst = (
      await afterBursts(generator, undefined, helloBase, bodies, headers, rates.slice(0, RATES.length))
    ).readings;
    rounds.push(round as Round);
    const rf = round.recorded_fixed!;
    log(
      `round ${r + 1}/${ROUNDS}: saturated ${Math.round(round.recorded_saturated!.requests_per_s)}/s ` +
        `(unrecorded ${Math.round(round.unrecorded_saturated!.requests_per_s)}/s, bare ${Math.round(round.hello_saturated.requests_per_s)}/s); ` +
        rf
          .map(
            (f) =>
              `at ${f.rate}/s p99 ${fmt(f.latency.p99)} max ${fmt(f.latency.max)} loop ${fmt(f.loop_max_ms)} ms`,
          )
          .join('; ') +
        `; batch p99 ${fmt(round.batch_ms!.p99)} ms; recorded ${round.records!.written}/${round.records!.answered}`,
    );
  }
  const heavy = HEAVY
    ? await heavyMoments(
        neo4j,
        generator,
        helloBase,
        bodies,
        batchBodies,
        resources,
        Math.round(helloRate * Math.max(...RATES)),
        headers,
      )
    : undefined;
  await driver.close();
  report(rounds, rates, helloRate, appRate, pieceTimes, heavy);
  const file = await writeResults('decision-path', {
    shape: {
      PRINCIPALS,
      GROUPS,
      POLICIES,
      RESOURCES,
      ROUNDS,
      CONNECTIONS,
      SATURATION_S,
      FIXED_S,
      BATCHES,
      RATES,
      HEAVY,
      HEAVY_ONLY,
      SYNC_USERS,
      HEAVY_GROUP_SIZE,
      HEAVY_REACH,
      HEAVY_POLICIES,
      HEAVY_POLICY_S,
      HEAVY_REPORT,
    },
    machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg() },
    calibration: { hello_per_s: helloRate, service_per_s: appRate, rates },
    rounds,
    ...(heavy ? { heavy } : {}),
    table: table.rows,
  });
  log(`results written to ${file}`);
}

function report(
  rounds: Round[],
  rates: number[],
  helloRate: number,
  appRate: number,
  pieceTimes: Record<string, number[]>,
  heavy: HeavyReading | undefined,
): void {
  if (rounds.length > 0) roundRows(rounds, rates);
  if (heavy) heavyRows(heavy);
  for (const [name, values] of Object.entries(pieceTimes)) {
    table.add(pieceRow(name, values));
  }
  table.print(64);
  log('');
  log(
    `calibration: bare app ${Math.round(helloRate)}/s, service ${Math.round(appRate)}/s; machine ${os.cpus().length} cores, ` +
      `node ${process.version}, load ${os
        .loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')}`,
  );
}

/** The rows of the rounds: saturation, the fixed rates, the bursts, the batches, the records. */
function roundRows(rounds: Round[], rates: number[]): void {
  const per = <T>(pick: (r: Round) => T): T[] => rounds.map(pick);
  const sat = per((r) => r.recorded_saturated.requests_per_s);
  const unrec = per((r) => r.unrecorded_saturated.requests_per_s);
  const bare = per((r) => r.hello_saturated.requests_per_s);
  table.add({
    scenario: 'bare Koa hello-world, saturated',
    unit: 'req/s',
    median: median(bare),
    rounds: bare,
  });
  table.add({ scenario: 'evaluate, saturated', unit: 'dec/s', median: median(sat), rounds: sat });
  const ratio = sat.map((v, i) => v / bare[i]!);
  table.add({
    scenario: 'evaluate ÷ bare Koa, saturated',
    unit: 'x',
    median: median(ratio),
    target: 0.45,
    direction: 'min',
    on: 'median',
    rounds: ratio,
  });
  const two = per((r) => r.two_processes_saturated.requests_per_s);
  table.add({ scenario: 'evaluate, saturated, WORKERS=2', unit: 'dec/s', median: median(two), rounds: two });
  const scaling = two.map((v, i) => v / sat[i]!);
  table.add({
    scenario: 'evaluate saturated, WORKERS=2 ÷ WORKERS=1',
    unit: 'x',
    median: median(scaling),
    target: 1.4,
    direction: 'min',
    on: 'median',
    rounds: scaling,
  });
  table.add({
    scenario: 'evaluate unrecorded, saturated',
    unit: 'dec/s',
    median: median(unrec),
    rounds: unrec,
  });
  if (rounds[0]!.traced_saturated) {
    const traced = per((r) => r.traced_saturated!.requests_per_s);
    table.add({
      scenario: 'evaluate traced (OTLP), saturated',
      unit: 'dec/s',
      median: median(traced),
      rounds: traced,
    });
    const kept = traced.map((v, i) => v / sat[i]!);
    table.add({
      scenario: 'evaluate traced ÷ untraced, saturated',
      unit: 'x',
      median: median(kept),
      rounds: kept,
      note: 'every request sampled and exported',
    });
    const cpuTraced = per((r) => r.traced_saturated!.cpu_us_per_request['service']!);
    table.add({
      scenario: 'CPU per request, saturated: evaluate traced: service process',
      unit: 'µs',
      median: median(cpuTraced),
      rounds: cpuTraced,
    });
    rates.forEach((rate, i) => {
      const traced99 = per((r) => r.traced_fixed![i]!.latency.p99);
      const untraced99 = per((r) => r.recorded_fixed[i]!.latency.p99);
      table.add({
        scenario: `evaluate at ${rate}/s: p99 traced / untraced`,
        unit: 'ms',
        median: median(traced99),
        p99: median(untraced99),
        rounds: traced99,
        note: 'the p99 column is the untraced p99',
      });
    });
  }
  const cpu = (process: string, pick: (r: Round) => Saturated): number[] =>
    per((r) => pick(r).cpu_us_per_request[process]!);
  for (const [scenario, values] of [
    ['bare Koa', cpu('hello', (r) => r.hello_saturated)],
    ['evaluate: service process', cpu('service', (r) => r.recorded_saturated)],
    ['evaluate unrecorded: service process', cpu('service', (r) => r.unrecorded_saturated)],
    ['evaluate: Neo4j', cpu('neo4j', (r) => r.recorded_saturated)],
    ['evaluate unrecorded: Neo4j', cpu('neo4j', (r) => r.unrecorded_saturated)],
    ['evaluate: load generator', cpu('generator', (r) => r.recorded_saturated)],
  ] as const) {
    table.add({
      scenario: `CPU per request, saturated: ${scenario}`,
      unit: 'µs',
      median: median(values),
      rounds: [...values],
    });
  }
  const cost = sat.map((v, i) => 1 - v / unrec[i]!);
  table.add({
    scenario: 'throughput lost to recording (1 - recorded ÷ unrecorded)',
    unit: 'share',
    median: median(cost),
    target: 0.1,
    direction: 'max',
    on: 'median',
    rounds: cost,
  });
  const labels = [...RATES.map((f) => `${f * 100}% of bare`), '50% of evaluate'];
  rates.forEach((rate, i) => {
    const readings = per((r) => r.recorded_fixed[i]!);
    const label = `${rate}/s (${labels[i]})`;
    const p = (pick: (f: FixedReading) => number) => readings.map(pick);
    table.add({
      scenario: `evaluate at ${label}: p50 / p99`,
      unit: 'ms',
      median: median(p((f) => f.latency.p50)),
      p99: median(p((f) => f.latency.p99)),
      ...(i < RATES.length ? { target: 5, direction: 'max' as const, on: 'p99' as const } : {}),
      rounds: p((f) => f.latency.p99),
    });
    table.add({
      scenario: `evaluate at ${label}: p90 / p99.9`,
      unit: 'ms',
      median: median(p((f) => f.latency.p90)),
      p99: median(p((f) => f.latency.p999)),
      ...(i === 1 ? { target: 15, direction: 'max' as const, on: 'p99' as const } : {}),
      rounds: p((f) => f.latency.p999),
      note: 'the p99 column is p99.9',
    });
    table.add({
      scenario: `evaluate at ${label}: max latency`,
      unit: 'ms',
      median: median(p((f) => f.latency.max)),
      rounds: p((f) => f.latency.max),
    });
    table.add({
      scenario: `evaluate at ${label}: event-loop delay max / p99`,
      unit: 'ms',
      median: median(p((f) => f.loop_max_ms)),
      p99: median(p((f) => f.loop_p99_ms)),
      target: 10,
      direction: 'max',
      on: 'median',
      rounds: p((f) => f.loop_max_ms),
      note: 'sampled every ms; p99 column is the delay p99',
    });
    if (readings[0]!.gc_max_ms !== undefined) {
      table.add({
        scenario: `evaluate at ${label}: longest GC pause`,
        unit: 'ms',
        median: median(p((f) => f.gc_max_ms!)),
        rounds: p((f) => f.gc_max_ms!),
        note: `GC total ${p((f) => f.gc_total_ms!)
          .map((v) => fmt(v))
          .join('/')} ms`,
      });
    }
    const unrecorded = per((r) => r.unrecorded_fixed[i]!);
    table.add({
      scenario: `evaluate unrecorded at ${label}: p99 / max`,
      unit: 'ms',
      median: median(unrecorded.map((f) => f.latency.p99)),
      p99: median(unrecorded.map((f) => f.latency.max)),
      rounds: unrecorded.map((f) => f.latency.p99),
      note: 'median column p99, p99 column max',
    });
    const control = per((r) => r.hello_fixed[i]!);
    table.add({
      scenario: `bare Koa at ${rate}/s: p99 / max (the generator's floor)`,
      unit: 'ms',
      median: median(control.map((f) => f.latency.p99)),
      p99: median(control.map((f) => f.latency.max)),
      rounds: control.map((f) => f.latency.p99),
      note: `generator lag max ${control.map((f) => fmt(f.generator_lag_max_ms)).join('/')} ms`,
    });
  });
  rates.slice(0, RATES.length).forEach((rate, i) => {
    const after = per((r) => r.recorded_after_burst[i]!);
    const floor = per((r) => r.hello_after_burst[i]!);
    const label = `${rate}/s (${labels[i]}), the ${AFTER_BURST_S} s after a ${SATURATION_S} s saturated burst`;
    table.add({
      scenario: `evaluate at ${label}: p99 / p99.9`,
      unit: 'ms',
      median: median(after.map((f) => f.latency.p99)),
      p99: median(after.map((f) => f.latency.p999)),
      rounds: after.map((f) => f.latency.p99),
      note: `the p99 column is p99.9; max ${after.map((f) => fmt(f.latency.max)).join('/')} ms; loop max ${after
        .map((f) => fmt(f.loop_max_ms))
        .join('/')} ms`,
    });
    table.add({
      scenario: `bare Koa the same way: p99 / p99.9`,
      unit: 'ms',
      median: median(floor.map((f) => f.latency.p99)),
      p99: median(floor.map((f) => f.latency.p999)),
      rounds: floor.map((f) => f.latency.p99),
      note: 'the p99 column is p99.9',
    });
    const p99Over = after.map((f, r) => f.latency.p99 - floor[r]!.latency.p99);
    table.add({
      scenario: `  after the burst, p99 − bare p99`,
      unit: 'ms',
      median: median(p99Over),
      target: 5,
      direction: 'max',
      on: 'median',
      rounds: p99Over,
    });
    const p999Over = after.map((f, r) => f.latency.p999 - floor[r]!.latency.p999);
    table.add({
      scenario: `  after the burst, p99.9 − bare p99.9`,
      unit: 'ms',
      median: median(p999Over),
      target: 15,
      direction: 'max',
      on: 'median',
      rounds: p999Over,
    });
  });
  const batch = per((r) => r.batch_ms);
  table.add({
    scenario: 'batch of 1,000, one at a time: p50 / p99',
    unit: 'ms',
    median: median(batch.map((b) => b.p50)),
    p99: median(batch.map((b) => b.p99)),
    target: 30,
    direction: 'max',
    on: 'p99',
    rounds: batch.map((b) => b.p99),
  });
  table.add({
    scenario: 'batch of 1,000: p90 / max',
    unit: 'ms',
    median: median(batch.map((b) => b.p90)),
    p99: median(batch.map((b) => b.max)),
    rounds: batch.map((b) => b.max),
    note: 'the p99 column is the max',
  });
  const unrecordedBatch = per((r) => r.unrecorded_batch_ms);
  table.add({
    scenario: 'batch of 1,000 unrecorded: p50 / p99',
    unit: 'ms',
    median: median(unrecordedBatch.map((b) => b.p50)),
    p99: median(unrecordedBatch.map((b) => b.p99)),
    rounds: unrecordedBatch.map((b) => b.p99),
  });
  const records = per((r) => r.records);
  table.add({
    scenario: 'decisions recorded ÷ answered (after a graceful stop)',
    unit: 'x',
    median: median(records.map((r) => r.written / r.answered)),
    target: 1,
    direction: 'min',
    on: 'median',
    rounds: records.map((r) => r.written / r.answered),
    note: records.map((r) => `${r.written}/${r.answered}`).join(', '),
  });
}

/**
 * The rows of the heavy moments: for each, the single decisions' p99 and p99.9 over the bare app's
 * p99 at the same rate (the floor), and the moment's own figures; the event-loop delay's max.
 */
function heavyRows(h: HeavyReading): void {
  const floor = h.floor.latency.p99;
  const tail = (f: FixedReading, detail = ''): string =>
    `the p99 column is p99.9; ${detail}max ${fmt(f.latency.max)} ms; ` +
    `event-loop delay max ${fmt(f.loop_max_ms)} ms; ` +
    (Number.isNaN(f.loop_thread_wait_ms_per_s)
      ? ''
      : `event-loop thread waited for a core ${fmt(f.loop_thread_wait_ms_per_s)} ms/s; `) +
    (f.gc_max_ms !== undefined
      ? `GC pause max ${fmt(f.gc_max_ms)} ms (elsewhere ${fmt(f.gc_threads_max_ms)} ms); `
      : '') +
    `${f.completed} decisions in ${fmt(f.seconds, 1)} s` +
    (f.non2xx + f.errors + f.timeouts > 0
      ? `; ${f.non2xx} non-2xx, ${f.errors} errors, ${f.timeouts} unanswered (not in the percentiles)`
      : '');
  table.add({
    scenario: `bare Koa at ${h.rate}/s: p99 / p99.9 (heavy moments' floor)`,
    unit: 'ms',
    median: floor,
    p99: h.floor.latency.p999,
    rounds: [floor],
    note: `the p99 column is p99.9; ${h.fraction * 100}% of the bare app's rate; max ${fmt(h.floor.latency.max)} ms`,
  });
  table.add({
    scenario: `evaluate at ${h.rate}/s, no heavy moment: p99 / p99.9`,
    unit: 'ms',
    median: h.quiet.latency.p99,
    p99: h.quiet.latency.p999,
    rounds: [h.quiet.latency.p99],
    note: tail(h.quiet),
  });
  const moments: { label: string; detail: string; singles: FixedReading; own: () => void }[] = [];
  const { batches, sync, report, policies } = h;
  if (batches)
    moments.push({
      label: 'batches beside',
      detail: 'batches of 1,000 one at a time',
      singles: batches.singles,
      own: () =>
        table.add({
          scenario: '  batch of 1,000 beside singles, p50 / p99',
          unit: 'ms',
          median: batches.batch_ms.p50,
          p99: batches.batch_ms.p99,
          target: 30,
          direction: 'max',
          on: 'p99',
          rounds: [batches.batch_ms.p99],
          note: `${batches.count} batches; max ${fmt(batches.batch_ms.max)} ms`,
        }),
    });
  if (sync)
    moments.push({
      label: 'SCIM sync',
      detail: `${sync.users} users, ${sync.groups} groups`,
      singles: sync.singles,
      own: () =>
        table.add({
          scenario: `  SCIM sync of ${sync.users} users: users/s`,
          unit: 'users/s',
          median: sync.users_per_s,
          rounds: [sync.users_per_s],
          note: `${fmt(sync.seconds, 1)} s from the POST to completed`,
        }),
    });
  if (report)
    moments.push({
      label: 'report',
      detail: `${report.type}, ${report.format}`,
      singles: report.singles,
      own: () =>
        table.add({
          scenario: `  report ${report.type}: seconds to completed`,
          unit: 's',
          median: report.seconds,
          rounds: [report.seconds],
          note: `${report.rows} rows; queued ${fmt(report.queued_s)} s; seen completed after ${fmt(report.wall_s)} s`,
        }),
    });
  if (policies)
    moments.push({
      label: 'policy changes',
      detail: `${policies.created} policies, ${policies.principals} principals`,
      singles: policies.singles,
      own: () =>
        table.add({
          scenario: '  privilege-risk refresh in the window: principals written',
          unit: 'count',
          median: policies.refreshes.reduce((n, r) => n + r.principals, 0),
          rounds: policies.refreshes.map((r) => r.principals),
          note:
            `${policies.wildcard} of ${policies.created} policies grant "*"; refreshes logged at ` +
            `${policies.refreshes.map((r) => `${fmt(r.at_s, 1)} s`).join(', ') || 'none'}; ` +
            `created in ${fmt(policies.create_s, 1)} s (p99 ${fmt(policies.create_ms.p99)} ms)`,
        }),
    });
  for (const m of moments) {
    const { p99, p999 } = m.singles.latency;
    table.add({
      scenario: `during ${m.label}: p99 / p99.9`,
      unit: 'ms',
      median: p99,
      p99: p999,
      rounds: [p99],
      note: tail(m.singles, `${m.detail}; `),
    });
    table.add({
      scenario: `  during ${m.label}: p99 − bare p99`,
      unit: 'ms',
      median: p99 - floor,
      target: 5,
      direction: 'max',
      on: 'median',
      rounds: [p99 - floor],
    });
    table.add({
      scenario: `  during ${m.label}: p99.9 − bare p99`,
      unit: 'ms',
      median: p999 - floor,
      target: 15,
      direction: 'max',
      on: 'median',
      rounds: [p999 - floor],
    });
    m.own();
  }
  if (moments.length === 0) return;
  const loops = moments.map((m) => m.singles.loop_max_ms);
  table.add({
    scenario: 'event-loop delay max, heavy moments',
    unit: 'ms',
    median: Math.max(...loops),
    target: 20,
    direction: 'max',
    on: 'median',
    rounds: loops,
    note: `per moment: ${moments.map((m) => m.label).join(' / ')}`,
  });
}

benchMain(main);
