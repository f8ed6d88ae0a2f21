/**
 * An enterprise through the API: the service measured from outside, as a customer meets it. The
 * compiled service is started as `npm start` runs it (`node` with the flags of its start script and
 * `dist/src/main.js`, built once with `npm run build`), in a process of its own, without NEO4J_URI,
 * so that it starts its own embedded Neo4j (tools/neo4j) on a fresh data directory. Everything
 * goes through the public API on 127.0.0.1; nothing is read from the service's insides:
 *
 * 1. the start on an empty store, until `GET /readyz` answers 200;
 * 2. one SCIM snapshot of BENCH_ENT_USERS users in BENCH_ENT_GROUPS groups, each user in exactly
 *    two groups (bench/directory.ts, the directory bench:scim syncs), through
 *    `POST /v1/connectors/{id}/sync` into a connector created through the API, followed by a
 *    status poller in a process of its own (bench/sync-poller.ts): seconds from the POST to
 *    completion and users/s, with the service's heap used and event-loop lag max (its
 *    `/metrics`, sampled every 250 ms) and the RSS of the service and of its Neo4j (from /proc)
 *    at their peaks;
 * 3. BENCH_ENT_RESOURCES resources registered with `PUT /v1/resources/{type}/{identifier}`, and
 *    BENCH_ENT_POLICIES policies created with `POST /v1/policies`: most on the snapshot's groups
 *    (found with `GET /v1/groups`, a share of them on the largest), some on `match` queries over
 *    the department and title the connector maps, some naming principals; allow and deny, exact
 *    resources and globs, a few conditions and time-bound windows;
 * 4. `POST /v1/principals/search` for part of an email (`$contains`) over the whole graph;
 * 5. `POST /v1/decisions/evaluate` at a fixed BENCH_RATE for BENCH_FIXED_S seconds, open loop
 *    (bench/open-loop.ts: each latency counts from when its request was due), requests over the
 *    loaded principals and the policies' resources, beside the bare Koa app of
 *    bench/hello-server.ts (a process of its own) given the same requests the same way: p50, p99,
 *    p99.9 and max of both, and the service's p99 less the bare app's (target ≤ 5 ms), with the CPU
 *    seconds the service and its Neo4j used during the run (from /proc); the service's run is
 *    repeated once the load has settled (after 7), to tell the heavy moment after a load from the
 *    steady state;
 * 6. `GET /v1/principals/{id}/access` and the reverse lookup `GET /v1/resources/access`, one call
 *    at a time, BENCH_REQUESTS calls a series: principals the policies reach and members of the
 *    largest groups; resources the policies name and those of the policies on the largest groups
 *    (target p99 ≤ 50 ms);
 * 7. the service's heap used (`nodejs_heap_size_used_bytes`) once the load has settled: the
 *    lowest reading over a few seconds after BENCH_SETTLE_S (target ≤ 400 MB);
 * 8. stop-to-ready: SIGTERM, the seconds until the process exits (its Neo4j stopped and its
 *    decision index written to its snapshot), then the same start on the same data directory and
 *    the seconds from spawning the new process until `/readyz` answers 200, the embedded Neo4j's
 *    own start included (target ≤ 45 s); the decisions that were allowed before must still be.
 *
 *   npm run bench:enterprise
 *   BENCH_ENT_USERS=3000 BENCH_ENT_GROUPS=40 BENCH_ENT_POLICIES=50 BENCH_FIXED_S=5 \
 *     BENCH_REQUESTS=30 npm run bench:enterprise          # the same shape, small
 *
 * Knobs: BENCH_ENT_USERS (200000), BENCH_ENT_GROUPS (2000), BENCH_ENT_POLICIES (500),
 * BENCH_ENT_RESOURCES (2000 registered resources), BENCH_ENT_LARGEST (10: the largest groups,
 * on which a fifth of the group policies fall), BENCH_RATE (1000 decisions/s), BENCH_FIXED_S (15),
 * BENCH_WARMUP_S (5 s at the same rate before each fixed-rate run, not counted),
 * BENCH_CONNECTIONS (10), BENCH_REQUESTS (200 lookups a series), BENCH_SEARCHES (10 searches),
 * BENCH_SETTLE_S (5), BENCH_NEO4J_HEAP and BENCH_NEO4J_PAGECACHE (the embedded Neo4j's memory,
 * NEO4J_LOCAL_HEAP and NEO4J_LOCAL_PAGECACHE: 2g and 2g from 100,000 users, 1g and 512m below),
 * BENCH_SYNC_TIMEOUT_S (1800), BENCH_START_TIMEOUT_S (300 per start), BENCH_ENT_TIMEOUT_S (7200:
 * the whole run, after which it stops everything and fails), BENCH_BUILD (1; 0 runs the dist/
 * already built), BENCH_KEEP_DATA (1 keeps the data directory and the service's logs;
 * they are kept anyway when the run fails), BENCH_SERVICE_PROFILE (a directory: each service
 * process writes a CPU profile of its whole life there as it exits). Results also go to bench/results/enterprise-*.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ConfigSchema } from '../src/config/config.js';
import { freePort } from '../src/dev/local-neo4j.js';
import { actionMatches, compileGlob, globMatches, isGlob } from '../src/policies/patterns.js';
import type { PolicyBody } from '../src/policies/model.js';
import type { BenchClient } from './client.js';
import {
  createConnector,
  type Directory,
  emailOf,
  generateDirectory,
  snapshot,
  capitalised,
} from './directory.js';
import {
  ADMIN_ID,
  ADMIN_SECRET,
  adminClient,
  ask,
  benchMain,
  BENCH_KEY_ENCRYPTION_KEY,
  env,
  fmt,
  forkBench,
  latencySummary,
  log,
  measureRounds,
  ResultTable,
  ROOT,
  START_FLAGS,
  writeResults,
  listGroups,
  runSync,
  childProcesses,
  cpuSeconds,
} from './harness.js';
import type { GeneratorMessage } from './load-generator.js';
import type { OpenLoopResult } from './open-loop.js';
import { DEPARTMENTS, rng, ROLES } from './org.js';
import {
  drawActions,
  registeredMatching,
  RESOURCE_TYPES,
  sourceAddress,
  SYSTEMS,
  TYPE_ACTIONS,
} from './policy-set.js';

const USERS = env('BENCH_ENT_USERS', 200_000);
const GROUPS = env('BENCH_ENT_GROUPS', 2_000);
const POLICIES = env('BENCH_ENT_POLICIES', 500);
const RESOURCES = env('BENCH_ENT_RESOURCES', 2_000);
const LARGEST = Math.max(1, env('BENCH_ENT_LARGEST', 10));
const RATE = env('BENCH_RATE', 1_000);
const FIXED_S = env('BENCH_FIXED_S', 15);
const WARMUP_S = env('BENCH_WARMUP_S', 5);
const CONNECTIONS = env('BENCH_CONNECTIONS', 10);
const REQUESTS = env('BENCH_REQUESTS', 200);
const SEARCHES = Math.max(1, env('BENCH_SEARCHES', 10));
const SETTLE_S = env('BENCH_SETTLE_S', 5);
const NEO4J_HEAP = process.env['BENCH_NEO4J_HEAP'] || (USERS >= 100_000 ? '2g' : '1g');
const NEO4J_PAGECACHE = process.env['BENCH_NEO4J_PAGECACHE'] || (USERS >= 100_000 ? '2g' : '512m');
const SYNC_TIMEOUT_S = env('BENCH_SYNC_TIMEOUT_S', 1_800);
const START_TIMEOUT_S = env('BENCH_START_TIMEOUT_S', 300);
const TIMEOUT_S = env('BENCH_ENT_TIMEOUT_S', 7_200);
const BUILD = process.env['BENCH_BUILD'] !== '0';
const KEEP_DATA = process.env['BENCH_KEEP_DATA'] === '1';

/** Each user of the snapshot is in exactly this many groups. */
const GROUPS_PER_USER = 2;
/** Decision requests the fixed-rate runs cycle through. */
const REQUEST_STREAM = 2_000;
/** Members of each policy's groups, and of each of the largest groups, looked up to be subjects of requests. */
const MEMBERS_PER_GROUP = 4;
const MEMBERS_PER_LARGEST_GROUP = 40;
/** Users drawn at random besides: requests for anyone, principals named by policies, `match` subjects. */
const RANDOM_USERS = 400;
/** Requests evaluated one at a time before the load: which are allowed, to ask again after the restart. */
const PROBES = 200;
const LOOKUP_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_S = 120;
/** The SYNC_MAX_BYTES the service takes unless told: a larger snapshot raises it. */
const DEFAULT_SYNC_MAX_BYTES = 256 * 1024 * 1024;

const TARGET_FLOOR_DIFF_MS = 5;
const TARGET_LOOKUP_P99_MS = 50;
const TARGET_HEAP_MB = 400;
const TARGET_STOP_TO_READY_S = 45;

const MB = 2 ** 20;
const table = new ResultTable();

// ---- processes -------------------------------------------------------------------------------

/**
 * Every child process started here and not yet exited, with how to stop it: none outlives the
 * run, whatever happens.
 */
const children = new Map<ChildProcess, () => void>();

function own(child: ChildProcess, stop = (): void => void child.kill('SIGTERM')): ChildProcess {
  children.set(child, stop);
  child.once('exit', () => children.delete(child));
  return child;
}

process.on('exit', () => {
  // A service killed outright still takes its Neo4j along: the JVM ends when its stdin closes.
  for (const child of children.keys()) child.kill('SIGKILL');
});

/**
 * Ends the run from outside its steps (a signal, the overall time limit), stopping the children
 * as the run would itself: the service gets SIGTERM and the time to stop its Neo4j.
 */
function abandon(reason: string, code: number): void {
  log(`${reason}: stopping the service and the other child processes`);
  const exits = [...children.keys()].map((child) => new Promise((resolve) => child.once('exit', resolve)));
  for (const stop of children.values()) stop();
  const timeout = new Promise((resolve) => setTimeout(resolve, STOP_TIMEOUT_S * 1000));
  void Promise.race([Promise.all(exits), timeout]).then(() => process.exit(code));
}

process.once('SIGINT', () => abandon('SIGINT', 130));
process.once('SIGTERM', () => abandon('SIGTERM', 143));
setTimeout(
  () => abandon(`the run has taken ${TIMEOUT_S} s (BENCH_ENT_TIMEOUT_S)`, 1),
  TIMEOUT_S * 1000,
).unref();

const seconds = (fromMs: number): number => (performance.now() - fromMs) / 1000;

/** The resident memory of a process, MB (0 once it is gone). */
function rssMb(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const found = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return found ? Number(found[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = own(spawn(command, args, { cwd: ROOT, stdio: 'inherit' }));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

interface Service {
  base: string;
  pid: number;
  /** The embedded Neo4j's JVM, the service's child. */
  neo4jPid: number | undefined;
  logFile: string;
  /** From spawning the process until `/readyz` answered 200. */
  readyS: number;
  /** SIGTERM, then SIGKILL after STOP_TIMEOUT_S: the seconds until the process exited, and how. */
  stop(): Promise<{ seconds: number; code: number | null; signal: string | null }>;
}

/** The last lines of a log, for an error message. */
function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * The compiled service as `npm start` runs it, without NEO4J_URI, on its own free ports: it
 * starts its embedded Neo4j on `dataDir` (NEO4J_PROVIDER=maven: the one of tools/neo4j, even
 * where a Docker engine answers). The benchmark's environment goes along, less every setting of
 * the service (a NEO4J_URI of the shell would otherwise be used).
 */
async function startService(dataDir: string, logFile: string, snapshotBytes: number): Promise<Service> {
  const port = await freePort();
  let boltPort = await freePort();
  while (boltPort === port) boltPort = await freePort();
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !(name in ConfigSchema.properties)),
  );
  const out = openSync(logFile, 'w');
  const began = performance.now();
  const profile = process.env['BENCH_SERVICE_PROFILE'];
  const flags = profile ? [...START_FLAGS, '--cpu-prof', `--cpu-prof-dir=${profile}`] : START_FLAGS;
  const child = spawn(process.execPath, [...flags, path.join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: {
      ...inherited,
      LOG_LEVEL: 'warn',
      // One serving process, as measured here (BENCH_WORKERS for more).
      WORKERS: process.env['BENCH_WORKERS'] || '1',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      NEO4J_PROVIDER: 'maven',
      NEO4J_DATA_DIR: dataDir,
      NEO4J_LOCAL_PORT: String(boltPort),
      NEO4J_LOCAL_HTTP_PORT: '0',
      NEO4J_LOCAL_HEAP: NEO4J_HEAP,
      NEO4J_LOCAL_PAGECACHE: NEO4J_PAGECACHE,
      KEY_ENCRYPTION_KEY: BENCH_KEY_ENCRYPTION_KEY,
      BOOTSTRAP_CLIENT_ID: ADMIN_ID,
      BOOTSTRAP_CLIENT_SECRET: ADMIN_SECRET,
      CLIENT_SECRET_HASH_COST: '12',
      // The limiter still counts every request; the quotas are set where this load never meets them.
      RATE_LIMIT_STANDARD: '100000000',
      RATE_LIMIT_DECISIONS: '100000000',
      RATE_LIMIT_BULK: '100000000',
      RATE_LIMIT_SCIM: '100000000',
      ...(snapshotBytes > DEFAULT_SYNC_MAX_BYTES ? { SYNC_MAX_BYTES: String(snapshotBytes) } : {}),
    },
    stdio: ['ignore', out, out],
  });
  closeSync(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // One stop, however many ask for it: a second SIGTERM would make the service exit at once,
  // without stopping its Neo4j.
  let stopping: ReturnType<Service['stop']> | undefined;
  const stop: Service['stop'] = () =>
    (stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null)
        return { seconds: 0, code: child.exitCode, signal: child.signalCode };
      const t0 = performance.now();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_S * 1000);
      await exited;
      clearTimeout(timer);
      return { seconds: seconds(t0), code: child.exitCode, signal: child.signalCode };
    })());
  own(child, () => void stop());
  const base = `http://127.0.0.1:${port}`;
  const deadline = began + START_TIMEOUT_S * 1000;
  for (;;) {
    const status = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (child.exitCode !== null || child.signalCode !== null || performance.now() > deadline) {
      child.kill('SIGKILL');
      await exited;
      throw new Error(
        `the service did not become ready within ${START_TIMEOUT_S} s (its log is ${logFile}):\n${tail(logFile)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const readyS = seconds(began);
  return {
    base,
    pid: child.pid!,
    neo4jPid: childProcesses(child.pid!).find((c) => c.comm === 'java')?.pid,
    logFile,
    readyS,
    stop,
  };
}

/** The bare Koa app, as its own process. */
async function startHello(): Promise<{ base: string; child: ChildProcess }> {
  const child = own(forkBench('hello-server.ts'));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`the bare app stopped (${code})`)));
  });
  return { base: `http://127.0.0.1:${port}`, child };
}

// ---- readings from outside -------------------------------------------------------------------

/** The service's heap used (MB) and its event-loop lag max since the last scrape (ms), from /metrics. */
async function readMetrics(base: string): Promise<{ heapMb: number; loopMaxMs: number }> {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  const read = (name: string): number => {
    const found = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
    return found ? Number(found[1]) : NaN;
  };
  return {
    heapMb: read('nodejs_heap_size_used_bytes') / MB,
    loopMaxMs: read('nodejs_eventloop_lag_max_seconds') * 1000,
  };
}

interface Peaks {
  heap_mb: number;
  loop_max_ms: number;
  rss_mb: number;
  neo4j_rss_mb: number;
  /** Scrapes of /metrics answered, and those that failed or were skipped (the last still running). */
  scrapes: number;
  missed: number;
}

/** The service's heap, event-loop lag and RSS, and its Neo4j's RSS, sampled every 250 ms until stopped. */
function samplePeaks(service: Service): () => Promise<Peaks> {
  const peaks: Peaks = { heap_mb: 0, loop_max_ms: 0, rss_mb: 0, neo4j_rss_mb: 0, scrapes: 0, missed: 0 };
  let scraping: Promise<void> | undefined;
  const tick = (): void => {
    peaks.rss_mb = Math.max(peaks.rss_mb, rssMb(service.pid));
    peaks.neo4j_rss_mb = Math.max(peaks.neo4j_rss_mb, rssMb(service.neo4jPid));
    if (scraping) {
      peaks.missed += 1;
      return;
    }
    scraping = readMetrics(service.base)
      .then(
        (m) => {
          peaks.scrapes += 1;
          if (!Number.isNaN(m.heapMb)) peaks.heap_mb = Math.max(peaks.heap_mb, m.heapMb);
          if (!Number.isNaN(m.loopMaxMs)) peaks.loop_max_ms = Math.max(peaks.loop_max_ms, m.loopMaxMs);
        },
        () => {
          peaks.missed += 1;
        },
      )
      .finally(() => (scraping = undefined));
  };
  tick();
  const timer = setInterval(tick, 250);
  // Stopping again answers the same peaks.
  return async () => {
    clearInterval(timer);
    await scraping;
    return peaks;
  };
}

// ---- 2. the snapshot ---------------------------------------------------------------------------

interface SyncFigures {
  connector: string;
  /** From the POST until the 202 arrived (upload and acceptance). */
  accepted_s: number;
  /** From the POST until the sync was seen completed. */
  seconds: number;
  users_per_s: number;
  counts: unknown;
  errors: unknown[];
  phases_s: Record<string, number>;
  polls: { answered: number; failed: number };
  peaks: Peaks;
}

async function syncDirectory(
  admin: BenchClient,
  service: Service,
  body: Buffer,
): Promise<{ figures: SyncFigures; connector: string }> {
  const connector = await createConnector(admin, 'enterprise');
  const poller = own(forkBench('sync-poller.ts'));
  const stopSampling = samplePeaks(service);
  try {
    const { accepted_s: accepted, polled } = await runSync(admin, poller, connector.id, body, SYNC_TIMEOUT_S);
    const peaks = await stopSampling();
    const state = polled.final!;
    const total = accepted + polled.seconds;
    const phases = Object.fromEntries(
      polled.phases.map((p, i) => [
        p.phase,
        Number(((polled.phases[i + 1]?.at ?? polled.seconds) - p.at).toFixed(2)),
      ]),
    );
    return {
      connector: connector.name,
      figures: {
        connector: connector.name,
        accepted_s: accepted,
        seconds: total,
        users_per_s: USERS / total,
        counts: state.counts ?? null,
        errors: (state.errors ?? []).slice(0, 10),
        phases_s: phases,
        polls: { answered: polled.latencies.length, failed: polled.failures },
        peaks,
      },
    };
  } finally {
    await stopSampling();
    poller.kill();
  }
}

// ---- resources and policies, generated ----------------------------------------------------------

interface Resource {
  type: string;
  identifier: string;
  attributes: Record<string, string>;
}

const ENVIRONMENTS = ['prod', 'staging', 'dev', 'test', 'restricted'];
const ENVIRONMENT_WEIGHTS = [0.35, 0.25, 0.2, 0.15, 0.05];

/** Resources to register: `<system>-<environment>-<n>` of every type, and thirty tools. */
function generateResources(count: number, seed: number): Resource[] {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const environment = (): string => {
    let roll = random();
    for (let i = 0; i < ENVIRONMENT_WEIGHTS.length; i += 1) {
      roll -= ENVIRONMENT_WEIGHTS[i]!;
      if (roll < 0) return ENVIRONMENTS[i]!;
    }
    return 'prod';
  };
  const out: Resource[] = [];
  for (let i = 0; i < Math.min(30, count); i += 1)
    out.push({ type: 'tool', identifier: `tool-${i}`, attributes: { environment: 'prod' } });
  const types = RESOURCE_TYPES.filter((t) => t !== 'tool');
  const counters = new Map<string, number>();
  while (out.length < count) {
    const type = types[out.length % types.length]!;
    const system = pick(SYSTEMS);
    const env = environment();
    const key = `${type}:${system}-${env}`;
    const n = (counters.get(key) ?? 0) + 1;
    counters.set(key, n);
    out.push({
      type,
      identifier: `${system}-${env}-${n}`,
      attributes: {
        environment: env,
        classification: pick(['public', 'internal', 'confidential', 'restricted']),
        region: pick(['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1']),
      },
    });
  }
  return out;
}

function resourcesByType(resources: readonly Resource[]): Map<string, Resource[]> {
  const byType = new Map<string, Resource[]>();
  for (const r of resources) {
    const list = byType.get(r.type);
    if (list) list.push(r);
    else byType.set(r.type, [r]);
  }
  return byType;
}

/** A policy as planned, its subjects by position in the directory until their ids are known. */
interface PlannedPolicy {
  body: Omit<PolicyBody, 'subjects'>;
  groups: number[];
  principals: number[];
  match?: { department: string; role?: string };
}

/**
 * Policies of the shape bench/policy-set.ts gives (80% allow; exact identifiers and globs; a few
 * conditions), on this directory: 70% on groups (a fifth of those picks among the `largest`),
 * 10% on a `match` of department (and title), 13% naming users, the rest groups and users.
 */
function planPolicies(
  dir: Directory,
  resources: readonly Resource[],
  largest: readonly number[],
  randomUsers: readonly number[],
  count: number,
  seed: number,
): PlannedPolicy[] {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const byType = resourcesByType(resources);
  const types = RESOURCE_TYPES.filter((t) => (byType.get(t)?.length ?? 0) > 0);
  const pickGroup = (): number => (random() < 0.2 ? pick(largest) : Math.floor(random() * dir.groups.length));
  const resourcesFor = (type: string, effect: string): PolicyBody['resources'] => {
    const pool = byType.get(type)!;
    const n = effect === 'deny' ? 1 : 1 + Math.floor(random() * random() * 4);
    const out: PolicyBody['resources'] = [];
    for (let i = 0; i < n; i += 1) {
      const base = pick(pool);
      const [system, environment] = base.identifier.split('-') as [string, string];
      const roll = random();
      if (type === 'tool') out.push({ type, identifier: roll < 0.1 ? 'tool-*' : base.identifier });
      else if (roll < 0.72) out.push({ type, identifier: base.identifier });
      else if (roll < 0.8) out.push({ type, identifier: `${system}-legacy-${Math.floor(random() * 50)}` });
      else if (roll < 0.92) out.push({ type, identifier: `${system}-${environment}-*` });
      else out.push({ type, identifier: `${system}-*` });
    }
    return out;
  };
  const actionsFor = (type: string): string[] => drawActions(type, random);
  const conditionsFor = (type: string): Record<string, unknown> | undefined => {
    if (type === 'tool') return undefined;
    const roll = random();
    const cidr = { 'context.ip': { $cidr: random() < 0.7 ? '10.0.0.0/8' : '192.168.0.0/16' } };
    const environment = { 'resource.attributes.environment': { $ne: 'restricted' } };
    if (roll < 0.1) return cidr;
    if (roll < 0.18) return environment;
    if (roll < 0.2) return { ...cidr, ...environment };
    return undefined;
  };
  const plans: PlannedPolicy[] = [];
  for (let i = 0; i < count; i += 1) {
    const effect = random() < 0.8 ? ('allow' as const) : ('deny' as const);
    const type = pick(types);
    const plan: PlannedPolicy = {
      body: {
        name: `ent-${effect}-${type}-${i}`,
        effect,
        actions: actionsFor(type),
        resources: resourcesFor(type, effect),
        status: random() < 0.03 ? 'disabled' : 'active',
      },
      groups: [],
      principals: [],
    };
    const roll = random();
    if (roll < 0.7) plan.groups = [...new Set([pickGroup(), ...(random() < 0.2 ? [pickGroup()] : [])])];
    else if (roll < 0.8) {
      plan.match = {
        department: capitalised(pick(DEPARTMENTS)),
        ...(random() < 0.4 ? { role: capitalised(pick(ROLES)) } : {}),
      };
    } else if (roll < 0.93) {
      plan.principals = [
        ...new Set(Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(randomUsers))),
      ];
    } else {
      plan.groups = [pickGroup()];
      plan.principals = [pick(randomUsers)];
    }
    const conditions = conditionsFor(type);
    if (conditions) plan.body.conditions = conditions;
    // A few time-bound grants, open for the next month.
    if (effect === 'allow' && random() < 0.03)
      plan.body.valid_until = new Date(Date.now() + 30 * 86_400_000).toISOString();
    plans.push(plan);
  }
  return plans;
}

/** The service's ids of the directory's users at `positions`, looked up by email 100 at a time. */
async function resolveUsers(
  admin: BenchClient,
  dir: Directory,
  positions: readonly number[],
): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  const byEmail = new Map(positions.map((p) => [emailOf(dir.users[p]!), p]));
  const emails = [...byEmail.keys()];
  for (let from = 0; from < emails.length; from += 100) {
    const batch = emails.slice(from, from + 100);
    const found = await admin.json<{ data: { id: string; email?: string | null }[] }>(
      'POST',
      '/v1/principals/search',
      { query: { type: 'USER', email: { $in: batch } }, limit: 100 },
    );
    for (const p of found.data) {
      const position = p.email ? byEmail.get(p.email.toLowerCase()) : undefined;
      if (position !== undefined) ids.set(position, p.id);
    }
  }
  return ids;
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function inParallel<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

// ---- decision requests over what was loaded -----------------------------------------------------

interface DecisionRequest {
  principal_id: string;
  action: string;
  resource: { type: string; identifier: string; attributes?: Record<string, string> };
  context?: { ip: string };
}

interface World {
  dir: Directory;
  resources: Resource[];
  plans: PlannedPolicy[];
  groupIds: string[];
  userIds: Map<number, string>;
  /** Looked-up members of each group, by group position. */
  members: Map<number, number[]>;
  /** Looked-up users drawn at random. */
  randomUsers: number[];
  largest: number[];
}

/**
 * Requests as bench/policy-set.ts makes them: 60% drawn from a policy (a principal it selects,
 * one of its resources or a registered one its glob matches, one of its actions), the rest any
 * looked-up user, registered resource and action; a tenth give resource attributes, three in four
 * a source address.
 */
function requestStream(world: World, count: number, seed: number): DecisionRequest[] {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const anyone = world.randomUsers;
  const active = world.plans.filter((p) => p.body.status === 'active');
  const byType = resourcesByType(world.resources);
  const matching = registeredMatching(byType);
  const ip = (): string => sourceAddress(random);
  const out: DecisionRequest[] = [];
  for (let i = 0; i < count; i += 1) {
    let position: number;
    let type: string;
    let identifier: string;
    let action: string;
    if (random() < 0.6 && active.length > 0) {
      const plan = pick(active);
      const choices: (() => number)[] = [];
      for (const g of plan.groups) {
        const members = world.members.get(g) ?? [];
        if (members.length > 0) choices.push(() => pick(members));
      }
      for (const p of plan.principals) choices.push(() => p);
      if (plan.match) {
        const { department } = plan.match;
        const selected = anyone.filter((p) => world.dir.users[p]!.department === department);
        choices.push(() => pick(selected.length > 0 ? selected : anyone));
      }
      position = choices.length > 0 ? pick(choices)() : pick(anyone);
      const resource = pick(plan.body.resources);
      type = resource.type;
      if (isGlob(resource.identifier)) {
        const found = matching(type, resource.identifier);
        identifier = found.length > 0 ? pick(found) : resource.identifier.replace(/\*/g, 'x');
      } else identifier = resource.identifier;
      const pattern = pick(plan.body.actions);
      const concrete = TYPE_ACTIONS[type]!.filter((a) => actionMatches(pattern, a));
      action = concrete.length > 0 ? pick(concrete) : pattern.replace('*', 'read');
    } else {
      position = pick(anyone);
      const resource = pick(world.resources);
      type = resource.type;
      identifier = resource.identifier;
      action = pick(TYPE_ACTIONS[type]!);
    }
    const request: DecisionRequest = {
      principal_id: world.userIds.get(position)!,
      action,
      resource: { type, identifier },
    };
    if (random() < 0.1) request.resource.attributes = { environment: pick(ENVIRONMENTS) };
    if (random() < 0.75) request.context = { ip: ip() };
    out.push(request);
  }
  return out;
}

// ---- 3. groups, users, resources and policies through the API -------------------------------------

interface PolicyCreation {
  seconds: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * The snapshot's groups found with `GET /v1/groups` (the largest by the member count it gives),
 * the users the policies and the requests need looked up by email, the resources registered and
 * the policies created, one at a time as an administrator's script would.
 */
async function loadPolicies(
  admin: BenchClient,
  dir: Directory,
  connector: string,
): Promise<{ world: World; creation: PolicyCreation }> {
  const listed = await listGroups(admin, connector);
  const groupIds = dir.groups.map((g) => {
    const found = listed.get(g.displayName);
    if (!found) throw new Error(`GET /v1/groups does not list the group ${g.displayName}`);
    return found.id;
  });
  const bySize = dir.groups
    .map((g, position) => ({ position, size: listed.get(g.displayName)!.member_count }))
    .sort((a, b) => b.size - a.size);
  const largest = bySize.slice(0, Math.min(LARGEST, bySize.length)).map((g) => g.position);
  log(
    `groups: ${listed.size} listed; the largest ${largest.length} hold ${bySize[largest.length - 1]!.size}-` +
      `${bySize[0]!.size} members (the median group ${bySize[Math.floor(bySize.length / 2)]!.size})`,
  );

  const random = rng(404);
  const drawn = new Set<number>();
  while (drawn.size < Math.min(RANDOM_USERS, dir.users.length))
    drawn.add(Math.floor(random() * dir.users.length));
  const randomUsers = [...drawn];
  const resources = generateResources(RESOURCES, 505);
  const plans = planPolicies(dir, resources, largest, randomUsers, POLICIES, 606);
  // Some members of every group a policy names, and more of the largest groups.
  const wanted = new Map<number, Set<number>>();
  const want = (g: number, n: number): void => {
    const members = dir.groups[g]!.members;
    const picked = wanted.get(g) ?? new Set<number>();
    for (let tries = 0; picked.size < Math.min(n, members.length) && tries < n * 10; tries += 1)
      picked.add(members[Math.floor(random() * members.length)]!);
    wanted.set(g, picked);
  };
  for (const g of largest) want(g, MEMBERS_PER_LARGEST_GROUP);
  for (const plan of plans) for (const g of plan.groups) want(g, MEMBERS_PER_GROUP);
  const positions = new Set<number>(randomUsers);
  for (const members of wanted.values()) for (const m of members) positions.add(m);
  const t0 = performance.now();
  const userIds = await resolveUsers(admin, dir, [...positions]);
  log(
    `looked up ${userIds.size} of ${positions.size} users by email (POST /v1/principals/search, $in) ` +
      `in ${seconds(t0).toFixed(1)} s`,
  );
  if (userIds.size < positions.size) throw new Error(`${positions.size - userIds.size} users were not found`);
  const members = new Map([...wanted].map(([g, picked]) => [g, [...picked]]));

  const t1 = performance.now();
  await inParallel(resources, 4, async (r) => {
    await admin.json(
      'PUT',
      `/v1/resources/${encodeURIComponent(r.type)}/${encodeURIComponent(r.identifier)}`,
      { attributes: r.attributes },
      { expect: [200, 201] },
    );
  });
  log(`registered ${resources.length} resources (PUT /v1/resources) in ${seconds(t1).toFixed(1)} s`);

  const t2 = performance.now();
  const latencies: number[] = [];
  for (const plan of plans) {
    const subjects: PolicyBody['subjects'] = {};
    if (plan.groups.length > 0) subjects.groups = plan.groups.map((g) => groupIds[g]!);
    if (plan.principals.length > 0) subjects.principals = plan.principals.map((p) => userIds.get(p)!);
    if (plan.match) {
      const { department, role } = plan.match;
      subjects.match = { type: 'USER', attributes: { department, ...(role ? { role } : {}) } };
    }
    latencies.push((await admin.timed('POST', '/v1/policies', { ...plan.body, subjects })).ms);
  }
  const creation = { seconds: seconds(t2), ...latencySummary(latencies) };
  log(
    `created ${plans.length} policies (POST /v1/policies) in ${creation.seconds.toFixed(1)} s ` +
      `(p50 ${fmt(creation.p50)} ms, p99 ${fmt(creation.p99)} ms)`,
  );
  return { world: { dir, resources, plans, groupIds, userIds, members, randomUsers, largest }, creation };
}

// ---- 4. search --------------------------------------------------------------------------------------

interface SearchFigures {
  calls: { part: string; total: number; ms: number }[];
  p50: number;
  p99: number;
  max: number;
}

/** `POST /v1/principals/search` for part of an email, over every principal, with different parts. */
async function searchEmails(admin: BenchClient, dir: Directory): Promise<SearchFigures> {
  const random = rng(707);
  const calls: SearchFigures['calls'] = [];
  for (let i = 0; i < SEARCHES; i += 1) {
    const position = Math.floor(random() * dir.users.length);
    const u = dir.users[position]!;
    const family = u.familyName.replace(/\s+/g, '').toLowerCase();
    const part = [
      family.slice(0, 4),
      `${position}@`,
      `${u.givenName.toLowerCase()}.`,
      `.${family}${String(position).slice(0, 2)}`,
    ][i % 4]!;
    const answer = await admin.timed(
      'POST',
      '/v1/principals/search',
      { query: { email: { $contains: part } }, limit: 50 },
      { timeoutMs: 120_000 },
    );
    calls.push({
      part,
      total: answer.json<{ pagination: { total: number } }>().pagination.total,
      ms: answer.ms,
    });
  }
  log(`search, email $contains: ${calls.map((c) => `"${c.part}" ${c.total} in ${fmt(c.ms)} ms`).join('; ')}`);
  return { calls, ...latencySummary(calls.map((c) => c.ms)) };
}

// ---- 5. decisions at a fixed rate ---------------------------------------------------------------------

/** Requests evaluated one at a time: how many are allowed, and the first few allowed. */
async function probe(
  admin: BenchClient,
  requests: readonly DecisionRequest[],
): Promise<{ asked: number; allowed: number; kept: DecisionRequest[] }> {
  const kept: DecisionRequest[] = [];
  let allowed = 0;
  for (const request of requests) {
    const decision = await admin.json<{ allowed: boolean }>('POST', '/v1/decisions/evaluate', request);
    if (decision.allowed) {
      allowed += 1;
      if (kept.length < 10) kept.push(request);
    }
  }
  return { asked: requests.length, allowed, kept };
}

interface DecisionFigures {
  evaluate: OpenLoopResult;
  floor: OpenLoopResult;
  /** The service's event-loop lag max over its measured run. */
  loop_max_ms: number;
  /** CPU seconds the service and its Neo4j used during that run. */
  service_cpu_s: number;
  neo4j_cpu_s: number;
  /** The same run again once the load has settled (after the lookups and BENCH_SETTLE_S). */
  settled?: { evaluate: OpenLoopResult; loop_max_ms: number; service_cpu_s: number; neo4j_cpu_s: number };
}

/**
 * The service and the bare app, one after the other, each given the same requests at the same
 * rate by the load generator: a warm-up, then the run measured.
 */
async function decisionsAtRate(
  admin: BenchClient,
  service: Service,
  hello: string,
  generator: ChildProcess,
  requests: readonly DecisionRequest[],
): Promise<DecisionFigures & { again: () => Promise<NonNullable<DecisionFigures['settled']>> }> {
  const headers = await admin.headers();
  const bodies = requests.map((r) => ({
    method: 'POST' as const,
    path: '/v1/decisions/evaluate',
    body: JSON.stringify(r),
  }));
  const fixed = async (url: string, runS: number): Promise<OpenLoopResult> => {
    const message: GeneratorMessage = {
      kind: 'open',
      url,
      rate: RATE,
      seconds: runS,
      connections: CONNECTIONS,
      headers,
      requests: bodies,
    };
    const result = await ask<OpenLoopResult>(generator, message);
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `${url} at ${RATE}/s: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
      );
    }
    return result;
  };
  const measured = async () => {
    if (WARMUP_S > 0) await fixed(service.base, WARMUP_S);
    // A scrape resets the lag max: the next one reads the run's.
    await readMetrics(service.base);
    const cpu = [cpuSeconds(service.pid), cpuSeconds(service.neo4jPid)] as const;
    const evaluate = await fixed(service.base, FIXED_S);
    const service_cpu_s = cpuSeconds(service.pid) - cpu[0];
    const neo4j_cpu_s = cpuSeconds(service.neo4jPid) - cpu[1];
    const loop = await readMetrics(service.base);
    log(
      `evaluate at ${RATE}/s: ${line(evaluate)}; event-loop lag max ${fmt(loop.loopMaxMs)} ms; CPU seconds ` +
        `over the ${FIXED_S} s: service ${fmt(service_cpu_s)}, its Neo4j ${fmt(neo4j_cpu_s)}`,
    );
    return { evaluate, loop_max_ms: loop.loopMaxMs, service_cpu_s, neo4j_cpu_s };
  };
  const first = await measured();
  if (WARMUP_S > 0) await fixed(hello, WARMUP_S);
  const floor = await fixed(hello, FIXED_S);
  log(`bare Koa at ${RATE}/s: ${line(floor)}`);
  return { ...first, floor, again: measured };
}

const line = (r: OpenLoopResult): string =>
  `p50 ${fmt(r.latency.p50)} p99 ${fmt(r.latency.p99)} p99.9 ${fmt(r.latency.p999)} max ${fmt(r.latency.max)} ms`;

// ---- 6. lookups -------------------------------------------------------------------------------------

interface LookupFigures {
  name: string;
  p50: number;
  p99: number;
  failed: number;
}

/**
 * A principal's access and who can reach a resource, one call at a time: principals the
 * policies reach and members of the largest groups; resources the policies name (exactly or
 * through a glob) and those of the allow policies on the largest groups.
 */
async function lookups(admin: BenchClient, world: World): Promise<LookupFigures[]> {
  const random = rng(909);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const active = world.plans.filter((p) => p.body.status === 'active');
  const reached = new Set<number>();
  for (const plan of active) {
    for (const g of plan.groups) for (const m of world.members.get(g) ?? []) reached.add(m);
    for (const p of plan.principals) reached.add(p);
    const department = plan.match?.department;
    if (department)
      for (const p of world.randomUsers) if (world.dir.users[p]!.department === department) reached.add(p);
  }
  const reachedIds = [...reached].map((p) => world.userIds.get(p)!);
  const connectedIds = world.largest.flatMap((g) =>
    (world.members.get(g) ?? []).map((m) => world.userIds.get(m)!),
  );
  type Ref = { type: string; identifier: string };
  const named = new Map<string, Ref>();
  const onLargest = new Map<string, Ref>();
  const largest = new Set(world.largest);
  for (const plan of active) {
    const big = plan.body.effect === 'allow' && plan.groups.some((g) => largest.has(g));
    for (const r of plan.body.resources) {
      const glob = isGlob(r.identifier) ? compileGlob(r.identifier) : undefined;
      const found: Ref[] = glob
        ? world.resources.filter((x) => x.type === r.type && globMatches(glob, x.identifier))
        : [r];
      for (const x of found.slice(0, 20)) {
        const ref = { type: x.type, identifier: x.identifier };
        named.set(`${x.type}:${x.identifier}`, ref);
        if (big) onLargest.set(`${x.type}:${x.identifier}`, ref);
      }
    }
  }
  const namedList = [...named.values()];
  const onLargestList = onLargest.size > 0 ? [...onLargest.values()] : namedList;
  log(
    `lookups: ${reachedIds.length} principals the policies reach, ${connectedIds.length} members of the ` +
      `largest groups; ${namedList.length} resources the policies name, ${onLargestList.length} of ` +
      `policies on the largest groups`,
  );
  const resourceAccess = (r: Ref): string =>
    `/v1/resources/access?type=${encodeURIComponent(r.type)}&identifier=${encodeURIComponent(r.identifier)}`;
  // A lookup that fails or outlasts LOOKUP_TIMEOUT_MS is counted, not fatal: the time it failed
  // after stays in the latencies, and the first failure of a series is shown.
  const failures = new Map<string, number>();
  const get = (name: string, next: () => string) => async (): Promise<number> => {
    const started = performance.now();
    const url = next();
    try {
      return (await admin.timed('GET', url, undefined, { timeoutMs: LOOKUP_TIMEOUT_MS })).ms;
    } catch (err) {
      const seen = failures.get(name) ?? 0;
      failures.set(name, seen + 1);
      if (seen === 0) log(`  ${name}: ${url} failed: ${(err as Error).message}`);
      return performance.now() - started;
    }
  };
  const series = [
    {
      name: '/v1/principals/{id}/access (principals the policies reach)',
      next: () => `/v1/principals/${pick(reachedIds)}/access`,
    },
    {
      name: '/v1/principals/{id}/access (members of the largest groups)',
      next: () => `/v1/principals/${pick(connectedIds)}/access`,
    },
    {
      name: '/v1/resources/access (resources the policies name)',
      next: () => resourceAccess(pick(namedList)),
    },
    {
      name: '/v1/resources/access (of policies on the largest groups)',
      next: () => resourceAccess(pick(onLargestList)),
    },
  ];
  const measured = await measureRounds(
    series.map((s) => ({ name: s.name, count: REQUESTS, warmup: 10, next: get(s.name, s.next) })),
    { rounds: 1 },
  );
  return series.map((s) => {
    const r = measured[s.name]!;
    const failed = failures.get(s.name) ?? 0;
    log(
      `GET ${s.name}: p50 ${fmt(r.median)} ms, p99 ${fmt(r.p99)} ms${failed > 0 ? `, ${failed} failed` : ''}`,
    );
    return { name: s.name, p50: r.median, p99: r.p99, failed };
  });
}

// ---- 7. the heap after the load -----------------------------------------------------------------------

interface SettledFigures {
  /** The lowest of the readings: the nearest to what the heap holds, short of a collection. */
  heap_mb: number;
  heap_last_mb: number;
  rss_mb: number;
  neo4j_rss_mb: number;
}

const SETTLE_READINGS = 12;

/** The service's heap used once the load has settled: SETTLE_S seconds, then readings 250 ms apart. */
async function settle(service: Service): Promise<SettledFigures> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_S * 1000));
  const heaps: number[] = [];
  for (let i = 0; i < SETTLE_READINGS; i += 1) {
    heaps.push((await readMetrics(service.base)).heapMb);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    heap_mb: Math.min(...heaps),
    heap_last_mb: heaps.at(-1)!,
    rss_mb: rssMb(service.pid),
    neo4j_rss_mb: rssMb(service.neo4jPid),
  };
}

// ---- 8. stop and start again ---------------------------------------------------------------------------

interface RestartFigures {
  stop_s: number;
  exit: number | string | null;
  ready_s: number;
  snapshot_mb: number;
  /** The lines of the new service's log about the index snapshot (at LOG_LEVEL=warn: a refusal). */
  snapshot_notes: string[];
  allowed_before: number;
  allowed_again: number;
}

/** Asks again, of the service started anew, the decisions that were allowed before. */
async function stillAllowed(service: Service, requests: readonly DecisionRequest[]): Promise<number> {
  const client = adminClient(service.base);
  let allowed = 0;
  for (const request of requests) {
    const decision = await client.json<{ allowed: boolean }>('POST', '/v1/decisions/evaluate', request);
    if (decision.allowed) allowed += 1;
  }
  return allowed;
}

// ---- main ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const began = performance.now();
  const phases: Record<string, number> = {};
  const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const result = await work();
    phases[name] = Number(seconds(t0).toFixed(1));
    return result;
  };

  if (BUILD) {
    log('building the service (npm run build)');
    await phase('build', () => run('npm', ['run', 'build', '--silent']));
  }
  if (!existsSync(path.join(ROOT, 'dist/src/main.js')))
    throw new Error('dist/src/main.js is missing: build first');

  if (USERS < 1 || GROUPS < 1) throw new Error('BENCH_ENT_USERS and BENCH_ENT_GROUPS must be at least 1');
  log(`generating a directory of ${USERS} users in ${GROUPS} groups, ${GROUPS_PER_USER} groups each`);
  const dir = generateDirectory(USERS, GROUPS, 303, GROUPS_PER_USER);
  const body = Buffer.from(snapshot(dir));
  log(
    `snapshot: ${USERS + GROUPS} lines, ${(body.length / MB).toFixed(1)} MB, ${dir.memberships} memberships`,
  );

  const workDir = await mkdtemp(path.join(os.tmpdir(), 'pas-enterprise-'));
  const dataDir = path.join(workDir, 'data');
  let service: Service | undefined;
  let hello: { base: string; child: ChildProcess } | undefined;
  let generator: ChildProcess | undefined;
  let failed = true;
  try {
    // --- 1 ---
    log(`starting the service on an empty store (data in ${dataDir})`);
    const first = await phase('first start', () =>
      startService(dataDir, path.join(workDir, 'service-1.log'), body.length),
    );
    service = first;
    log(
      `ready after ${first.readyS.toFixed(1)} s at ${first.base} (its Neo4j: pid ${first.neo4jPid ?? '?'})`,
    );
    const admin = adminClient(first.base);

    // --- 2 ---
    log(`sync: POST /v1/connectors/{id}/sync of ${(body.length / MB).toFixed(1)} MB`);
    const synced = await phase('sync', () => syncDirectory(admin, first, body));
    const sync = synced.figures;
    log(
      `  completed in ${sync.seconds.toFixed(1)} s (accepted after ${sync.accepted_s.toFixed(1)} s), ` +
        `${Math.round(sync.users_per_s)} users/s; counts ${JSON.stringify(sync.counts)}`,
    );
    log(`  seconds per phase: ${JSON.stringify(sync.phases_s)}`);
    log(
      `  peaks: heap used ${fmt(sync.peaks.heap_mb)} MB, event-loop lag max ${fmt(sync.peaks.loop_max_ms)} ms, ` +
        `RSS ${fmt(sync.peaks.rss_mb)} MB (its Neo4j ${fmt(sync.peaks.neo4j_rss_mb)} MB); ` +
        `${sync.peaks.scrapes} scrapes, ${sync.peaks.missed} missed; status polls failed: ${sync.polls.failed}`,
    );
    for (const e of sync.errors.slice(0, 3)) log(`  error: ${JSON.stringify(e)}`);

    // --- 3, 4 ---
    const { world, creation } = await phase('policies', () => loadPolicies(admin, dir, synced.connector));
    const search = await phase('search', () => searchEmails(admin, dir));

    // --- 5 ---
    const requests = requestStream(world, REQUEST_STREAM, 808);
    const probed = await probe(admin, requests.slice(0, PROBES));
    log(`of the first ${probed.asked} requests, ${probed.allowed} are allowed`);
    const loadGenerator = own(forkBench('load-generator.ts'));
    generator = loadGenerator;
    const helloApp = await startHello();
    hello = helloApp;
    const decisions = await phase('decisions', () =>
      decisionsAtRate(admin, first, helloApp.base, loadGenerator, requests),
    );

    // --- 6, 7 ---
    const looked = await phase('lookups', () => lookups(admin, world));
    const settled = await phase('settle', () => settle(first));
    decisions.settled = await phase('decisions settled', () => decisions.again());
    log(
      `after the load: heap used ${fmt(settled.heap_mb)} MB (the lowest of ${SETTLE_READINGS} readings), RSS ` +
        `${fmt(settled.rss_mb)} MB, its Neo4j ${fmt(settled.neo4j_rss_mb)} MB`,
    );

    // --- 8 ---
    const stopped = await phase('stop', () => first.stop());
    log(`stopped in ${stopped.seconds.toFixed(1)} s (exit ${stopped.code ?? stopped.signal})`);
    const snapshotFile = path.join(dataDir, 'index', 'decision-index.snapshot');
    const snapshotMb = existsSync(snapshotFile) ? statSync(snapshotFile).size / MB : 0;
    const second = await phase('start again', () =>
      startService(dataDir, path.join(workDir, 'service-2.log'), body.length),
    );
    service = second;
    log(`ready again after ${second.readyS.toFixed(1)} s (the index snapshot: ${fmt(snapshotMb)} MB)`);
    const notes = readFileSync(second.logFile, 'utf8')
      .split('\n')
      .filter((l) => /snapshot/i.test(l));
    for (const l of notes) log(`  service: ${l.slice(0, 300)}`);
    const allowedAgain = await stillAllowed(second, probed.kept);
    log(
      `after the restart, ${allowedAgain} of the ${probed.kept.length} decisions allowed before are allowed`,
    );
    const restart: RestartFigures = {
      stop_s: stopped.seconds,
      exit: stopped.code ?? stopped.signal,
      ready_s: second.readyS,
      snapshot_mb: snapshotMb,
      snapshot_notes: notes,
      allowed_before: probed.kept.length,
      allowed_again: allowedAgain,
    };

    // --- 9 ---
    report({
      firstStart: first.readyS,
      sync,
      creation,
      search,
      decisions,
      probed,
      lookups: looked,
      settled,
      restart,
    });
    log('');
    log(
      `${USERS} users in ${GROUPS} groups, ${POLICIES} policies, ${RESOURCES} resources; Neo4j heap ${NEO4J_HEAP}, ` +
        `page cache ${NEO4J_PAGECACHE}; machine ${os.cpus().length} cores, node ${process.version}, load ` +
        `${os
          .loadavg()
          .map((v) => v.toFixed(2))
          .join(' ')}`,
    );
    log(`seconds per phase: ${JSON.stringify(phases)}; ${seconds(began).toFixed(0)} s in all`);
    const file = await writeResults('enterprise', {
      shape: {
        USERS,
        GROUPS,
        GROUPS_PER_USER,
        POLICIES,
        RESOURCES,
        LARGEST,
        RATE,
        FIXED_S,
        WARMUP_S,
        CONNECTIONS,
        REQUESTS,
        SEARCHES,
        NEO4J_HEAP,
        NEO4J_PAGECACHE,
        snapshot_bytes: body.length,
        memberships: dir.memberships,
      },
      machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg() },
      first_start_s: first.readyS,
      sync,
      policy_creation: creation,
      search,
      decisions: { ...decisions, probed: { asked: probed.asked, allowed: probed.allowed } },
      lookups: looked,
      settled,
      restart,
      phases_s: phases,
      table: table.rows,
    });
    log(`results written to ${file}`);
    failed = false;
  } finally {
    hello?.child.disconnect();
    generator?.kill();
    if (service) await service.stop();
    if (failed || KEEP_DATA) log(`the data directory and the service's logs are kept in ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
}

// ---- 9. the table -------------------------------------------------------------------------------------

function report(r: {
  firstStart: number;
  sync: SyncFigures;
  creation: PolicyCreation;
  search: SearchFigures;
  decisions: DecisionFigures;
  probed: { asked: number; allowed: number };
  lookups: LookupFigures[];
  settled: SettledFigures;
  restart: RestartFigures;
}): void {
  const { sync, decisions, restart } = r;
  table.add({
    scenario: 'start on an empty store, until /readyz',
    unit: 's',
    median: r.firstStart,
    rounds: [],
  });
  table.add({
    scenario: `sync of ${USERS} users + ${GROUPS} groups, POST to completed`,
    unit: 's',
    median: sync.seconds,
    rounds: [],
    note: `${USERS * Math.min(GROUPS_PER_USER, GROUPS)} memberships; ${sync.polls.failed} status polls failed`,
  });
  table.add({ scenario: '  sync rate', unit: 'users/s', median: sync.users_per_s, rounds: [] });
  table.add({ scenario: '  service heap used, peak', unit: 'MB', median: sync.peaks.heap_mb, rounds: [] });
  table.add({
    scenario: '  service event-loop lag max, peak',
    unit: 'ms',
    median: sync.peaks.loop_max_ms,
    rounds: [],
    note: `/metrics every 250 ms: ${sync.peaks.scrapes} read, ${sync.peaks.missed} missed`,
  });
  table.add({
    scenario: '  service RSS, peak',
    unit: 'MB',
    median: sync.peaks.rss_mb,
    rounds: [],
    note: `its Neo4j ${fmt(sync.peaks.neo4j_rss_mb)} MB`,
  });
  table.add({
    scenario: 'POST /v1/policies, one at a time: p50 / p99',
    unit: 'ms',
    median: r.creation.p50,
    p99: r.creation.p99,
    rounds: [],
    note: `${POLICIES} in ${fmt(r.creation.seconds)} s`,
  });
  table.add({
    scenario: 'POST /v1/principals/search, email $contains',
    unit: 'ms',
    median: r.search.p50,
    p99: r.search.p99,
    rounds: [],
    note: `${r.search.calls.length} calls; found ${r.search.calls.map((c) => c.total).join('/')}`,
  });
  const { evaluate, floor } = decisions;
  table.add({
    scenario: `evaluate at ${RATE}/s, open loop: p50 / p99`,
    unit: 'ms',
    median: evaluate.latency.p50,
    p99: evaluate.latency.p99,
    rounds: [],
    note: `${evaluate.completed} answered; ${r.probed.allowed} of ${r.probed.asked} probed allowed`,
  });
  table.add({
    scenario: '  p99.9 / max',
    unit: 'ms',
    median: evaluate.latency.p999,
    p99: evaluate.latency.max,
    rounds: [],
    note: 'median column p99.9, p99 column max',
  });
  table.add({
    scenario: `bare Koa at ${RATE}/s (the floor): p50 / p99`,
    unit: 'ms',
    median: floor.latency.p50,
    p99: floor.latency.p99,
    rounds: [],
    note: `generator lag max ${fmt(floor.generator_lag_max_ms)} ms`,
  });
  table.add({
    scenario: '  p99.9 / max',
    unit: 'ms',
    median: floor.latency.p999,
    p99: floor.latency.max,
    rounds: [],
    note: 'median column p99.9, p99 column max',
  });
  table.add({
    scenario: 'evaluate p99 − floor p99',
    unit: 'ms',
    median: evaluate.latency.p99 - floor.latency.p99,
    target: TARGET_FLOOR_DIFF_MS,
    direction: 'max',
    on: 'median',
    rounds: [],
  });
  table.add({
    scenario: '  service event-loop lag max during the run',
    unit: 'ms',
    median: decisions.loop_max_ms,
    rounds: [],
    note: `CPU seconds over the run: service ${fmt(decisions.service_cpu_s)}, its Neo4j ${fmt(decisions.neo4j_cpu_s)}`,
  });
  const calm = decisions.settled;
  if (calm) {
    table.add({
      scenario: 'evaluate again once settled: p50 / p99',
      unit: 'ms',
      median: calm.evaluate.latency.p50,
      p99: calm.evaluate.latency.p99,
      rounds: [],
      note: `max ${fmt(calm.evaluate.latency.max)} ms; lag max ${fmt(calm.loop_max_ms)} ms; CPU seconds: service ${fmt(calm.service_cpu_s)}, its Neo4j ${fmt(calm.neo4j_cpu_s)}`,
    });
    table.add({
      scenario: '  settled p99 − floor p99',
      unit: 'ms',
      median: calm.evaluate.latency.p99 - floor.latency.p99,
      target: TARGET_FLOOR_DIFF_MS,
      direction: 'max',
      on: 'median',
      rounds: [],
    });
  }
  for (const l of r.lookups) {
    table.add({
      scenario: l.name,
      unit: 'ms',
      median: l.p50,
      p99: l.p99,
      target: TARGET_LOOKUP_P99_MS,
      direction: 'max',
      on: 'p99',
      rounds: [],
      note: `${REQUESTS} calls${l.failed > 0 ? `; ${l.failed} failed` : ''}`,
    });
  }
  table.add({
    scenario: 'service heap used after the load settled',
    unit: 'MB',
    median: r.settled.heap_mb,
    target: TARGET_HEAP_MB,
    direction: 'max',
    on: 'median',
    rounds: [],
    note: `lowest of ${SETTLE_READINGS} readings, the last ${fmt(r.settled.heap_last_mb)}; RSS ${fmt(r.settled.rss_mb)} MB, its Neo4j ${fmt(r.settled.neo4j_rss_mb)} MB`,
  });
  table.add({
    scenario: 'stop: SIGTERM until the process exited',
    unit: 's',
    median: restart.stop_s,
    rounds: [],
    note: `exit ${restart.exit}`,
  });
  const refused = restart.snapshot_notes.some((l) => /not used/.test(l));
  table.add({
    scenario: 'stop-to-ready: new process until /readyz',
    unit: 's',
    median: restart.ready_s,
    target: TARGET_STOP_TO_READY_S,
    direction: 'max',
    on: 'median',
    rounds: [],
    note: `index snapshot ${fmt(restart.snapshot_mb)} MB${refused ? ', not used: see the log' : ''}`,
  });
  table.add({
    scenario: 'allowed before the restart, allowed after',
    unit: 'share',
    median: restart.allowed_before > 0 ? restart.allowed_again / restart.allowed_before : NaN,
    target: 1,
    direction: 'min',
    on: 'median',
    rounds: [],
    note: `${restart.allowed_again}/${restart.allowed_before}`,
  });
  table.print(66);
}

benchMain(main);
