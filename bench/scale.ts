/**
 * Scale benchmark: the service at a million principals on one machine. An organisation of
 * BENCH_SCALE_PRINCIPALS principals (bench/org.ts, its manager tree and group forest growing in
 * proportion), BENCH_SCALE_GROUPS nested groups, BENCH_SCALE_RESOURCES registered resources,
 * BENCH_SCALE_POLICIES policies (bench/policy-set.ts, the shape bench:decisions uses) and the
 * delegations of its agents (bench/org.ts `generateDelegations`) is generated a batch at a time
 * and bulk-loaded into a fresh Neo4j while it is generated, then measured:
 *
 * 1. the load: seconds for each part, and principals/s;
 * 2. the decision index built from the graph as at start-up (`IndexSync.load()`): seconds, the
 *    heap it holds (heap used after a forced collection, before and after), the peak on the way,
 *    what it holds outside the heap, the process's RSS; its snapshot written and read back (the
 *    index part of a start from it); and, when asked (BENCH_PRIVILEGES=1), the privilege risk
 *    refresh the service runs over everyone after a build;
 * 3. `POST /v1/decisions/evaluate` over HTTP: decisions/s at saturation (autocannon), and latency
 *    at a fixed rate, open loop (bench/open-loop.ts: each latency counts from when its request was
 *    due) with p50, p99, p99.9 and max, the service's event-loop delay and its GC pauses;
 * 4. `GET /v1/principals/{id}/access`, `GET /v1/principals/{id}/relationships` and the reverse
 *    lookup `GET /v1/resources/access`, one call at a time;
 * 5. audit reports through `POST /v1/audit/reports`, followed until completed.
 *
 * Before all that, the same shape at a tenth of the size (BENCH_SCALE_BASELINE principals, every
 * other count in proportion) is loaded into the same Neo4j and measured the same way for 2 and 3,
 * then removed: the table gives the ratio of the decision p99 at the full size to the one at the
 * baseline. Figures are medians over BENCH_ROUNDS rounds; targets (index build ≤ 45 s, index heap
 * ≤ 400 MB, start from the snapshot ≤ 5 s, longest GC pause at the fixed rate ≤ 10 ms, access,
 * relationships and reverse lookup p99 ≤ 50 ms, decision p99 at full size ≤ 1.2 × baseline, the
 * reports the index answers ≤ 60 s and ≤ 200 MB of heap growth) are set for 1,000,000 principals.
 * With BENCH_SCALE_STORE the embedded Neo4j keeps its store in that directory: a run that finds
 * the organisation there already (the same size) draws it again without loading it, and measures.
 *
 *   npm run bench:scale                                # embedded Neo4j in a throwaway directory
 *   BENCH_SCALE_PRINCIPALS=20000 npm run bench:scale   # the same shape, small
 *   NEO4J_URI=bolt://... npm run bench:scale           # an existing (empty) Neo4j, sized by its owner
 *
 * Knobs: BENCH_SCALE_PRINCIPALS (1000000), BENCH_SCALE_GROUPS (a twentieth of the principals),
 * BENCH_SCALE_POLICIES (a tenth), BENCH_SCALE_RESOURCES (a fifth), BENCH_SCALE_BASELINE (a tenth
 * of the principals; 0: no baseline), BENCH_ROUNDS (3: HTTP rounds and lookup rounds),
 * BENCH_INDEX_ROUNDS (BENCH_ROUNDS: index builds of each size), BENCH_WARMUP_S (60: saturated
 * decisions before the rounds of each size, so that the JIT of Neo4j and of the service have
 * settled), BENCH_HTTP_S (10 s per saturated round), BENCH_FIXED_S (15 s per fixed-rate round), BENCH_RATE
 * (1000 decisions/s, the fixed rate), BENCH_CONNECTIONS (10), BENCH_REQUESTS (200 lookups per
 * series and round), BENCH_BATCH (1000 rows per load transaction), BENCH_LOADERS (2 concurrent
 * principal transactions), BENCH_REPORT_TYPES (access_review,orphaned_principals: any of the
 * report types, comma-separated; `none` for none), BENCH_REPORT_FORMAT (csv),
 * BENCH_REPORT_TIMEOUT_S (900 per report), BENCH_SCALE_STORE (a directory for the embedded Neo4j's
 * store, kept after the run), BENCH_PRIVILEGES (1: also time the privilege risk
 * refresh a start runs over every principal, after the full-size index build; off unless set), BENCH_NEO4J_HEAP and BENCH_NEO4J_PAGECACHE (the
 * embedded Neo4j's memory: 4g and 6g at a million principals, less below), BENCH_CPU_PROFILE (a
 * directory: CPU profiles of the first index build of each size, the first saturated HTTP round
 * of each size, the first round of each lookup series and each report). Node needs --expose-gc
 * for the heap figures and room for the index (the npm script passes both). Results also go to
 * bench/results/scale-*.json.
 */
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { decisionRepository } from '../src/decisions/repository.js';
import { readSnapshot } from '../src/decisions/snapshot.js';
import type { IxPolicy } from '../src/decisions/model.js';
import type { Runtime } from '../src/runtime.js';
import { BulkLoader, type SeedPrincipal } from '../src/seed/bulk.js';
import { REPORT_TYPES, type ReportType } from '../src/vocabulary/report-types.js';
import type { BenchClient } from './client.js';
import {
  ask,
  benchConfig,
  benchMain,
  benchNeo4j,
  cypher,
  env,
  fmt,
  forkBench,
  gc,
  type LatencyRounds,
  loadPrincipalBatches,
  log,
  measureRounds,
  median,
  type GcPauses,
  observed,
  type Observation,
  profiled,
  ResultTable,
  withBenchService,
  writeResults,
  type ReportView,
} from './harness.js';
import type { GeneratorMessage, LoadResult } from './load-generator.js';
import type { OpenLoopResult } from './open-loop.js';
import { generateDelegations, OrgStream, rng } from './org.js';
import {
  generatePolicies,
  generateResources,
  Membership,
  requestStream,
  type BenchRequest,
  type PolicySet,
} from './policy-set.js';

/** The size the targets are set for. */
const FULL_SIZE = 1_000_000;
const TARGET_INDEX_S = 45;
/** The JS heap the index holds (what lives outside it is shown beside). */
const TARGET_INDEX_MB = 400;
/** A start from the index's snapshot, its index part: reading it back. */
const TARGET_SNAPSHOT_S = 5;
const TARGET_GC_PAUSE_MS = 10;
const TARGET_REPORT_S = 60;
const TARGET_REPORT_HEAP_MB = 200;
/** A lookup taking longer than this is given up on and counted as failed. */
const LOOKUP_TIMEOUT_MS = env('BENCH_LOOKUP_TIMEOUT_MS', 30_000);
const TARGET_LOOKUP_P99_MS = 50;
const TARGET_P99_RATIO = 1.2;

const MB = 1024 * 1024;

/** The counts of one organisation. */
interface Scale {
  label: string;
  principals: number;
  groups: number;
  policies: number;
  resources: number;
}

/** 1,000,000 → 1M, 100,000 → 100k, 2,500 → 2.5k. */
const countLabel = (n: number): string =>
  n >= 1e6 && n % 1e5 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 100 === 0 ? `${n / 1e3}k` : String(n);

/** The knobs of the header, read once from the environment. */
function readOptions() {
  const principals = env('BENCH_SCALE_PRINCIPALS', FULL_SIZE);
  const full: Scale = {
    label: countLabel(principals),
    principals,
    groups: env('BENCH_SCALE_GROUPS', Math.round(principals / 20)),
    policies: env('BENCH_SCALE_POLICIES', Math.round(principals / 10)),
    resources: env('BENCH_SCALE_RESOURCES', Math.round(principals / 5)),
  };
  const baselinePrincipals = Math.min(principals, env('BENCH_SCALE_BASELINE', Math.round(principals / 10)));
  const share = baselinePrincipals / principals;
  const baseline: Scale | undefined =
    baselinePrincipals > 0
      ? {
          label: countLabel(baselinePrincipals),
          principals: baselinePrincipals,
          groups: Math.max(1, Math.round(full.groups * share)),
          policies: Math.max(1, Math.round(full.policies * share)),
          resources: Math.max(1, Math.round(full.resources * share)),
        }
      : undefined;
  const reportTypes = (process.env['BENCH_REPORT_TYPES'] || 'access_review,orphaned_principals')
    .split(',')
    .map((t) => t.trim())
    .filter((t): t is ReportType => (REPORT_TYPES as readonly string[]).includes(t));
  return {
    full,
    baseline,
    rounds: Math.max(1, env('BENCH_ROUNDS', 3)),
    indexRounds: Math.max(1, env('BENCH_INDEX_ROUNDS', env('BENCH_ROUNDS', 3))),
    warmupS: env('BENCH_WARMUP_S', 60),
    httpS: env('BENCH_HTTP_S', 10),
    fixedS: env('BENCH_FIXED_S', 15),
    rate: env('BENCH_RATE', 1_000),
    connections: env('BENCH_CONNECTIONS', 10),
    requests: env('BENCH_REQUESTS', 200),
    batch: env('BENCH_BATCH', 1_000),
    loaders: env('BENCH_LOADERS', 2),
    reportTypes,
    reportFormat: process.env['BENCH_REPORT_FORMAT'] === 'json' ? ('json' as const) : ('csv' as const),
    reportTimeoutS: env('BENCH_REPORT_TIMEOUT_S', 900),
    privileges: process.env['BENCH_PRIVILEGES'] === '1',
    store: process.env['BENCH_SCALE_STORE'] || undefined,
    neo4j: {
      heap: process.env['BENCH_NEO4J_HEAP'] || (principals >= 500_000 ? '4g' : '2g'),
      pageCache:
        process.env['BENCH_NEO4J_PAGECACHE'] || `${Math.max(1, Math.ceil((principals / FULL_SIZE) * 6))}g`,
    },
  };
}

type Options = ReturnType<typeof readOptions>;

/** What every phase is given. */
interface Context {
  runtime: Runtime;
  base: string;
  client: BenchClient;
  options: Options;
  /** bench/load-generator.ts, a process of its own. */
  loadGenerator: ChildProcess;
  table: ResultTable;
  /** A random element, from one stream shared by the lookups in the order they run. */
  pick: <T>(list: readonly T[]) => T;
}

/** An organisation loaded into Neo4j, with what the requests are drawn from. */
/**
 * An organisation loaded into Neo4j: what the requests and lookups are drawn from, kept small. The
 * organisation as generated (its outline of every principal, the memberships, the policy set) is
 * dropped once these are drawn, so that the benchmark's own heap, which the service shares in this
 * process, takes no part in the collections measured.
 */
interface World {
  scale: Scale;
  load: LoadFigures;
  /** Decision requests of the organisation's shape. */
  requests: BenchRequest[];
  /** A sample of the principals' ids, people with reports below them, the registered resources. */
  ids: string[];
  managers: string[];
  registered: { type: string; identifier: string }[];
  blastPolicy: string;
}

/** A sample of the organisation as `World` keeps it, drawn before the organisation is dropped. */
function sampled(
  scale: Scale,
  load: LoadFigures,
  org: OrgStream,
  membership: Membership,
  set: PolicySet,
): World {
  const random = rng(7);
  const ids = org.principals.map((p) => p.id);
  return {
    scale,
    load,
    requests: requestStream(org, set, membership, 2_000, 77),
    ids: Array.from({ length: Math.min(20_000, ids.length) }, () => ids[Math.floor(random() * ids.length)]!),
    managers: [...org.managers],
    registered: set.resources.map((r) => ({ type: r.type, identifier: r.identifier })),
    blastPolicy: set.blastPolicy,
  };
}

const heapMb = (): number => process.memoryUsage().heapUsed / MB;
const rssMb = (): number => process.memoryUsage().rss / MB;
const since = (t0: number): number => (performance.now() - t0) / 1000;

// ---- main ----------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) log('note: run node with --expose-gc for the heap figures');
  const options = readOptions();
  const { full, baseline } = options;
  log(
    `scale ${full.label}: ${full.principals} principals, ${full.groups} groups, ${full.resources} resources, ` +
      `${full.policies} policies` +
      (baseline
        ? `; baseline ${baseline.label}: ${baseline.principals}, ${baseline.groups}, ${baseline.resources}, ${baseline.policies}`
        : '; no baseline') +
      `; embedded Neo4j (if started) with heap ${options.neo4j.heap}, page cache ${options.neo4j.pageCache}`,
  );
  const neo4j = await benchNeo4j(log, options.neo4j, options.store);
  try {
    await withBenchService(
      {
        neo4j,
        config: benchConfig({
          DECISION_MAX_PENDING: '2000000',
          // The refreshes that look at every principal run when the benchmark says, not in the
          // middle of a measurement: the privilege refresh after the load when asked, the
          // dormancy one not.
          PRIVILEGE_RISK_INTERVAL_S: '86400',
          RISK_REFRESH_INTERVAL_S: '86400',
          // The snapshot is written and read back when the benchmark says (`snapshotRound`).
          INDEX_SNAPSHOT_INTERVAL_S: '86400',
        }),
        // A kept store may already hold the organisation (`run` checks that it is this one).
        ...(options.store ? {} : { empty: 'MATCH (n) WHERE n:Principal OR n:Policy RETURN count(n) AS n' }),
      },
      async ({ runtime, base, client }) => {
        const loadGenerator = forkBench('load-generator.ts');
        const random = rng(99);
        try {
          await run({
            runtime,
            base,
            client,
            options,
            loadGenerator,
            table: new ResultTable(),
            pick: (list) => list[Math.floor(random() * list.length)]!,
          });
        } finally {
          loadGenerator.kill();
        }
      },
    );
  } finally {
    await neo4j.stop();
  }
}

/** The baseline first (loaded, measured, removed), then the full size, then the report. */
async function run(ctx: Context): Promise<void> {
  const { full, baseline } = ctx.options;
  const phases: Record<string, number> = {};
  const timed = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      const seconds = since(t0);
      phases[name] = seconds;
      log(`[phase] ${name}: ${seconds.toFixed(1)} s`);
    }
  };
  let small: { index: IndexBuild; http: HttpFigures; load: LoadFigures } | undefined;
  const [held] = await cypher(ctx.runtime.db, 'MATCH (p:Principal) RETURN count(p) AS n');
  const loaded = (held?.['n'] as number) ?? 0;
  if (loaded > 0 && loaded !== full.principals) {
    throw new Error(`the store holds ${loaded} principals, not ${full.principals}: empty it or pick another`);
  }
  if (baseline && loaded === 0) {
    const world = await timed(`load ${baseline.label}`, () => loadWorld(ctx, baseline));
    const index = await timed(`index ${baseline.label}`, () => buildIndex(ctx, baseline));
    const http = await timed(`decisions ${baseline.label}`, () => decisions(ctx, world));
    await timed(`remove ${baseline.label}`, () => emptyGraph(ctx.runtime));
    small = { index, http, load: world.load };
  }
  const world = await timed(`load ${full.label}`, () => loadWorld(ctx, full, loaded === 0));
  const index = await timed(`index ${full.label}`, () => buildIndex(ctx, full));
  const snapshot = await timed(`snapshot ${full.label}`, () => snapshotRound(ctx));
  const privileges = ctx.options.privileges
    ? await timed(`privilege refresh ${full.label}`, () => privilegeRefresh(ctx))
    : undefined;
  const http = await timed(`decisions ${full.label}`, () => decisions(ctx, world));
  const looked = await timed(`lookups ${full.label}`, () => lookups(ctx, world));
  const reports = await timed(`reports ${full.label}`, () => runReports(ctx));
  await report(ctx, { world, index, snapshot, privileges, http, small, lookups: looked, reports, phases });
}

// ---- 1. the load ---------------------------------------------------------------------------

interface LoadFigures {
  principals: number;
  groups: number;
  memberships: number;
  resources: number;
  policies: number;
  delegations: number;
  /** Time spent drawing the principals (inside the principals' load, which waits for it). */
  generate_s: number;
  principals_s: number;
  principals_per_s: number;
  deferred_managers_s: number;
  groups_s: number;
  memberships_s: number;
  resources_s: number;
  policies_s: number;
  delegations_s: number;
  total_s: number;
}

/**
 * An organisation of `scale`, generated and bulk-loaded the way the other benchmarks load theirs
 * (src/seed/bulk.ts; principals `loaders` transactions at a time, the rest one at a time): the
 * groups first, then the principals as they are drawn (their memberships kept aside), the
 * memberships, the resources, the policies and the delegations.
 */
async function loadWorld(ctx: Context, scale: Scale, write = true): Promise<World> {
  const { batch, loaders } = ctx.options;
  const now = Date.UTC(2026, 10, 1);
  const at = new Date(now - 30 * 86_400_000).toISOString();
  log(
    `loading ${scale.label}: ${scale.principals} principals, ${scale.groups} groups, ${scale.resources} resources, ${scale.policies} policies`,
  );
  // A kept store that holds the organisation already: it is only drawn again, nothing written.
  const loader = write ? new BulkLoader(ctx.runtime.db) : nothingWritten();
  const started = performance.now();
  const org = new OrgStream({
    principals: scale.principals,
    groups: scale.groups,
    seed: 42,
    now,
    proportional: true,
  });
  const membership = new Membership();
  for (const n of org.nesting) membership.nest(n.groupId, n.memberId);

  let t0 = performance.now();
  for (let i = 0; i < org.groups.length; i += batch) await loader.groups(org.groups.slice(i, i + batch));
  for (let i = 0; i < org.nesting.length; i += batch * 5)
    await loader.nesting(org.nesting.slice(i, i + batch * 5), at);
  const groupsS = since(t0);

  t0 = performance.now();
  let generateMs = 0;
  let reported = performance.now();
  const drawn = org.batches(batch);
  const batches: Iterator<SeedPrincipal[]> = {
    next: () => {
      const t = performance.now();
      const next = drawn.next();
      generateMs += performance.now() - t;
      if (next.done) return { done: true, value: undefined };
      for (const m of next.value.memberships) membership.add(m.groupId, m.memberId);
      if (performance.now() - reported > 30_000) {
        reported = performance.now();
        const n = org.principals.length;
        log(`  ${n} principals drawn, ${Math.round(n / since(t0))}/s`);
      }
      return { done: false, value: next.value.principals };
    },
  };
  const { managersMs } = await loadPrincipalBatches(loader, batches, { loaders });
  const principalsS = since(t0);
  log(`  principals: ${principalsS.toFixed(1)} s, ${Math.round(scale.principals / principalsS)}/s`);

  t0 = performance.now();
  let memberships = 0;
  let chunk: { groupId: string; memberId: string }[] = [];
  for (const m of membership.memberships()) {
    chunk.push(m);
    if (chunk.length >= batch * 5) {
      await loader.memberships(chunk, at);
      memberships += chunk.length;
      chunk = [];
    }
  }
  if (chunk.length > 0) await loader.memberships(chunk, at);
  memberships += chunk.length;
  const membershipsS = since(t0);

  t0 = performance.now();
  const resources = generateResources(org, scale.resources, 43, now);
  for (let i = 0; i < resources.length; i += batch) await loader.resources(resources.slice(i, i + batch));
  const resourcesS = since(t0);

  t0 = performance.now();
  const set = generatePolicies(org, resources, membership, {
    policies: scale.policies,
    resources: scale.resources,
    seed: 44,
    now,
    blastPrincipals: Math.floor(scale.principals / 10),
  });
  // One transaction at a time: batches may name the same new resource.
  for (let i = 0; i < set.policies.length; i += batch)
    await loader.policies(set.policies.slice(i, i + batch));
  const policiesS = since(t0);

  t0 = performance.now();
  const { delegations } = generateDelegations(org, 45, now);
  for (let i = 0; i < delegations.length; i += batch)
    await loader.delegations(delegations.slice(i, i + batch));
  const delegationsS = since(t0);

  const load: LoadFigures = {
    principals: scale.principals,
    groups: org.groups.length,
    memberships: memberships + org.nesting.length,
    resources: resources.length,
    policies: set.policies.length,
    delegations: delegations.length,
    generate_s: generateMs / 1000,
    principals_s: principalsS,
    principals_per_s: scale.principals / principalsS,
    deferred_managers_s: managersMs / 1000,
    groups_s: groupsS,
    memberships_s: membershipsS,
    resources_s: resourcesS,
    policies_s: policiesS,
    delegations_s: delegationsS,
    total_s: since(started),
  };
  log(`loaded ${scale.label}: ${JSON.stringify(load)}`);
  return sampled(scale, load, org, membership, set);
}

/** A loader that writes nothing: the organisation is drawn again over a store that holds it. */
function nothingWritten(): BulkLoader {
  const none = async (): Promise<void> => {};
  return {
    groups: none,
    nesting: none,
    principals: async () => [],
    managers: none,
    memberships: none,
    resources: none,
    policies: none,
    delegations: none,
  } as unknown as BulkLoader;
}

/**
 * The organisation goes again (what the service keeps of its own stays), and the index with it:
 * label by label, in statements of their own (the embedded Neo4j ends any transaction after 60 s).
 */
async function emptyGraph(runtime: Runtime): Promise<void> {
  for (const label of [
    'Principal',
    'Attribute',
    'Group',
    'Policy',
    'PolicyVersion',
    'Resource',
    'DecisionBatch',
    'Decision',
  ]) {
    for (;;) {
      const [row] = await cypher(
        runtime.db,
        `MATCH (n:${label}) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS n`,
      );
      if (!((row?.['n'] as number) > 0)) break;
    }
  }
  runtime.engine.index.clear();
  gc();
}

// ---- 2. the decision index -----------------------------------------------------------------

interface IndexBuild {
  seconds: number[];
  /** Heap used after a forced collection, before the load (the index emptied) and after it. */
  heap_before_mb: number[];
  heap_after_mb: number[];
  heap_mb: number[];
  peak_mb: number[];
  rss_mb: number[];
  /** What the index holds outside the JavaScript heap (typed arrays), MB. */
  off_heap_mb: number[];
  gc: GcPauses[];
  counts: Record<string, number>;
}

/** `IndexSync.load()` from an empty index, as at start-up, `rounds` times. */
async function buildIndex(ctx: Context, scale: Scale): Promise<IndexBuild> {
  const { runtime } = ctx;
  const rounds = ctx.options.indexRounds;
  const build: IndexBuild = {
    seconds: [],
    heap_before_mb: [],
    heap_after_mb: [],
    heap_mb: [],
    peak_mb: [],
    rss_mb: [],
    off_heap_mb: [],
    gc: [],
    counts: {},
  };
  for (let round = 0; round < rounds; round += 1) {
    runtime.engine.index.clear();
    gc();
    const before = heapMb();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, heapMb());
    }, 20);
    const t0 = performance.now();
    const { result, seen } = await observed(() =>
      profiled(round === 0 ? `index-build-${scale.label}` : undefined, () => runtime.engine.sync.load()),
    );
    const seconds = since(t0);
    clearInterval(sampler);
    peak = Math.max(peak, heapMb());
    gc();
    const after = heapMb();
    build.counts = result;
    build.seconds.push(seconds);
    build.heap_before_mb.push(before);
    build.heap_after_mb.push(after);
    build.heap_mb.push(after - before);
    build.peak_mb.push(peak - before);
    build.rss_mb.push(rssMb());
    build.off_heap_mb.push(runtime.engine.index.offHeapBytes / MB);
    build.gc.push(seen.gc);
    log(
      `index build ${scale.label} ${round + 1}/${rounds}: ${seconds.toFixed(2)} s, heap ${before.toFixed(0)} → ` +
        `${after.toFixed(0)} MB (+${(after - before).toFixed(0)}, peak +${(peak - before).toFixed(0)}), RSS ` +
        `${rssMb().toFixed(0)} MB, GC ${seen.gc.count}× (longest ${fmt(seen.gc.max_ms)} ms) for ${JSON.stringify(result)}`,
    );
  }
  return build;
}

interface SnapshotFigures {
  mb: number;
  write_s: number;
  /** Reading it back into an index: the index part of a start from the snapshot. */
  read_s: number;
  read_heap_mb: number;
}

/**
 * The index written as the service writes its snapshot, and read back as a start reads it: the
 * size, the seconds each way, and the heap the read takes (the index read is dropped after).
 */
async function snapshotRound(ctx: Context): Promise<SnapshotFigures> {
  const { runtime } = ctx;
  const file = path.join(os.tmpdir(), `pas-scale-${process.pid}`, 'decision-index.snapshot');
  try {
    const database = await decisionRepository.databaseId(runtime.db);
    let t0 = performance.now();
    // Between two batches of changes, as the service writes it (the privilege upkeep may be
    // writing factors in the background).
    const bytes = await runtime.engine.sync.writeSnapshot(file, runtime.feed);
    if (!bytes) throw new Error('the index was not written: nothing changed since its last snapshot');
    const writeS = since(t0);
    gc();
    const before = heapMb();
    t0 = performance.now();
    const read = await readSnapshot(file, database);
    const readS = since(t0);
    gc();
    const readHeap = heapMb() - before;
    if (read.index.principals.size !== runtime.engine.index.principals.size) {
      throw new Error('the snapshot read back holds other principals than the index written');
    }
    const figures = { mb: bytes / MB, write_s: writeS, read_s: readS, read_heap_mb: readHeap };
    log(`snapshot: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await rm(path.dirname(file), { recursive: true, force: true });
  }
}

/**
 * The privilege factors of the risk, brought up to date for everyone as the service does after
 * its index is built (the bulk load wrote none): seconds, and how many principals it wrote.
 */
async function privilegeRefresh(ctx: Context): Promise<{ seconds: number; written: number }> {
  const t0 = performance.now();
  const written = await ctx.runtime.risk.privileges.refresh();
  const seconds = since(t0);
  log(`privilege risk refresh: ${seconds.toFixed(1)} s, ${written} principals written`);
  return { seconds, written };
}

// ---- 3. decisions over HTTP ----------------------------------------------------------------

interface FixedReading extends OpenLoopResult, Observation {}

interface HttpFigures {
  saturated: LoadResult[];
  fixed: FixedReading[];
}

/**
 * `POST /v1/decisions/evaluate` over HTTP with requests of the organisation's shape: a warm-up,
 * then in each round a saturated run (autocannon) and a fixed-rate one (open loop), the decision
 * records they queued written between runs.
 */
async function decisions(ctx: Context, world: World): Promise<HttpFigures> {
  const { runtime, loadGenerator } = ctx;
  const { rounds, connections, httpS, fixedS, rate, warmupS } = ctx.options;
  const label = world.scale.label;
  const requests = world.requests.map((r) => ({
    method: 'POST' as const,
    path: '/v1/decisions/evaluate',
    body: JSON.stringify(r),
  }));
  const headers = await ctx.client.headers();
  const send = <T>(message: GeneratorMessage): Promise<T> => ask<T>(loadGenerator, message);
  const saturate = async (seconds: number): Promise<LoadResult> => {
    const result = await send<LoadResult>({
      kind: 'closed',
      url: ctx.base,
      connections,
      seconds,
      headers,
      requests,
    });
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `evaluate ${label}, saturated: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
      );
    }
    return result;
  };
  if (warmupS > 0) await saturate(warmupS);
  await runtime.engine.log.flush();
  const figures: HttpFigures = { saturated: [], fixed: [] };
  for (let round = 0; round < rounds; round += 1) {
    const saturated = await profiled(round === 0 ? `http-evaluate-${label}` : undefined, () =>
      saturate(httpS),
    );
    figures.saturated.push(saturated);
    await runtime.engine.log.flush();
    const { result, seen } = await observed(() =>
      send<OpenLoopResult>({
        kind: 'open',
        url: ctx.base,
        rate,
        seconds: fixedS,
        connections,
        headers,
        requests,
      }),
    );
    if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
      throw new Error(
        `evaluate ${label} at ${rate}/s: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
      );
    }
    figures.fixed.push({ ...result, ...seen });
    await runtime.engine.log.flush();
    log(
      `decisions ${label} ${round + 1}/${rounds}: saturated ${Math.round(saturated.requests_per_s)}/s; at ${rate}/s ` +
        `p50 ${fmt(result.latency.p50)} p99 ${fmt(result.latency.p99)} max ${fmt(result.latency.max)} ms, ` +
        `loop max ${fmt(seen.loop_max_ms)} ms, GC ${seen.gc.count}× longest ${fmt(seen.gc.max_ms)} ms`,
    );
  }
  return figures;
}

// ---- 4. lookups ----------------------------------------------------------------------------

/** One series of lookups: its rounds, and its p99 target where it has one. */
interface Lookup {
  name: string;
  target?: number;
  rounds: LatencyRounds;
}

/**
 * A principal's access, its relationships and who can reach a resource, one call at a time over
 * HTTP, in rounds: for anyone, and for the well-connected (the 2% of a sample reached by the
 * most policies), and the relationships of people with reports below them.
 */
async function lookups(ctx: Context, world: World): Promise<Lookup[]> {
  const { pick, client } = ctx;
  const { requests, rounds } = ctx.options;
  const index = ctx.runtime.engine.index;
  const { ids } = world;
  const reach = Array.from({ length: Math.min(3_000, ids.length) }, () => pick(ids))
    .map((id) => ({ id, policies: index.policiesOf(index.principals.get(id)!).size }))
    .sort((a, b) => b.policies - a.policies);
  const connected = reach.slice(0, Math.max(10, Math.floor(reach.length * 0.02))).map((r) => r.id);
  const { registered } = world;
  const estimate = (policy: IxPolicy): number => index.subjectRows(policy).size;
  const popular = Array.from({ length: Math.min(3_000, registered.length) }, () => pick(registered))
    .map((r) => ({
      ...r,
      reach: index
        .candidates(r.type, r.identifier)
        .filter((p) => p.effect === 'allow' && p.id !== world.blastPolicy)
        .reduce((n, p) => n + estimate(p), 0),
    }))
    .sort((a, b) => b.reach - a.reach)
    .slice(0, Math.max(10, Math.floor(Math.min(3_000, registered.length) * 0.02)));
  log(
    `lookups: well-connected principals reached by ${reach[connected.length - 1]?.policies}-${reach[0]?.policies} policies ` +
      `(median of the sample ${reach[Math.floor(reach.length / 2)]?.policies}); well-connected resources reach ` +
      `${popular.at(-1)?.reach}-${popular[0]?.reach} principals`,
  );
  const resourceAccess = (r: { type: string; identifier: string }): string =>
    `/v1/resources/access?type=${encodeURIComponent(r.type)}&identifier=${encodeURIComponent(r.identifier)}`;
  // A lookup that fails or takes longer than LOOKUP_TIMEOUT_MS is counted, not fatal: its time
  // (the time it failed after) stays in the latencies, and the first failure of a series is shown.
  const failures = new Map<string, number>();
  const get = (name: string, path: () => string) => async (): Promise<number> => {
    const started = performance.now();
    const url = path();
    try {
      return (await client.timed('GET', url, undefined, { timeoutMs: LOOKUP_TIMEOUT_MS })).ms;
    } catch (err) {
      const seen = failures.get(name) ?? 0;
      failures.set(name, seen + 1);
      if (seen === 0) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        log(
          `  ${name}: ${url} failed: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`,
        );
      }
      return performance.now() - started;
    }
  };
  const series: { name: string; target?: number; path: () => string; profileAs: string }[] = [
    {
      name: 'GET /v1/principals/{id}/access (any principal)',
      target: TARGET_LOOKUP_P99_MS,
      path: () => `/v1/principals/${pick(ids)}/access`,
      profileAs: 'access-any',
    },
    {
      name: 'GET /v1/principals/{id}/access (well-connected, top 2%)',
      target: TARGET_LOOKUP_P99_MS,
      path: () => `/v1/principals/${pick(connected)}/access`,
      profileAs: 'access-well-connected',
    },
    {
      name: 'GET /v1/principals/{id}/relationships (anyone, depth 1)',
      target: TARGET_LOOKUP_P99_MS,
      path: () => `/v1/principals/${pick(ids)}/relationships`,
      profileAs: 'relationships-depth-1',
    },
    {
      name: 'GET /v1/principals/{id}/relationships?depth=3 (anyone)',
      target: TARGET_LOOKUP_P99_MS,
      path: () => `/v1/principals/${pick(ids)}/relationships?depth=3`,
      profileAs: 'relationships-depth-3',
    },
    {
      name: 'GET /v1/principals/{id}/relationships?depth=3 (director)',
      target: TARGET_LOOKUP_P99_MS,
      path: () => `/v1/principals/${pick(world.managers)}/relationships?depth=3`,
      profileAs: 'relationships-director',
    },
    {
      name: 'GET /v1/resources/access (any registered resource)',
      target: TARGET_LOOKUP_P99_MS,
      path: () => resourceAccess(pick(registered)),
      profileAs: 'resource-access-any',
    },
    {
      name: 'GET /v1/resources/access (well-connected, top 2%)',
      target: TARGET_LOOKUP_P99_MS,
      path: () => resourceAccess(pick(popular)),
      profileAs: 'resource-access-well-connected',
    },
  ];
  const measured = await measureRounds(
    series.map((s) => ({
      name: s.name,
      count: requests,
      warmup: 50,
      next: get(s.name, s.path),
      profileAs: s.profileAs,
    })),
    {
      rounds,
      afterRound: async (round) => {
        await ctx.runtime.engine.log.flush();
        log(`lookups round ${round + 1}/${rounds} done`);
      },
    },
  );
  return series.map(({ name, target }) => {
    const rounds = measured[name]!;
    const failed = failures.get(name) ?? 0;
    log(
      `${name}: median ${fmt(rounds.median)} ms, p99 ${fmt(rounds.p99)} ms${failed > 0 ? `, ${failed} failed` : ''}`,
    );
    return { name, ...(target !== undefined ? { target } : {}), rounds };
  });
}

// ---- 5. reports ----------------------------------------------------------------------------

interface ReportRun {
  type: ReportType;
  format: 'csv' | 'json';
  status: string;
  /** From the request to completion, by the service's clock; NaN if it did not complete in time. */
  seconds: number;
  /** From the request until the job runner took it up. */
  queued_s: number;
  /** From the request until this process saw it done (or gave up). */
  wall_s: number;
  progress: number;
  rows: number;
  bytes: number;
  /** Highest heap used while it ran, over the heap after a forced collection before the request. */
  heap_growth_mb: number;
}

/** Each report type asked for, requested through the API and followed until completed. */
async function runReports(ctx: Context): Promise<ReportRun[]> {
  const { client, runtime } = ctx;
  const { reportTypes, reportFormat: format, reportTimeoutS } = ctx.options;
  const runs: ReportRun[] = [];
  for (const type of reportTypes) {
    gc();
    const baseline = heapMb();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, heapMb());
    }, 100);
    const t0 = performance.now();
    let view: ReportView;
    try {
      view = await profiled(`report-${type}`, async () => {
        let current = await client.json<ReportView>(
          'POST',
          '/v1/audit/reports',
          { type, format },
          { expect: [202] },
        );
        const deadline = Date.now() + reportTimeoutS * 1000;
        while ((current.status === 'pending' || current.status === 'running') && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          current = await client.json<ReportView>('GET', `/v1/audit/reports/${current.id}`);
        }
        return current;
      });
    } finally {
      clearInterval(sampler);
    }
    const wall = since(t0);
    const [stored] = await cypher(runtime.db, 'MATCH (r:Report {id: $id}) RETURN r.bytes AS bytes', {
      id: view.id,
    });
    const requested = Date.parse(view.requested_at);
    const run: ReportRun = {
      type,
      format,
      status: view.status,
      seconds: view.completed_at ? (Date.parse(view.completed_at) - requested) / 1000 : NaN,
      queued_s: view.started_at ? (Date.parse(view.started_at) - requested) / 1000 : NaN,
      wall_s: wall,
      progress: view.progress,
      rows: view.row_count,
      bytes: Number(stored?.['bytes'] ?? 0),
      heap_growth_mb: peak - baseline,
    };
    runs.push(run);
    log(
      `report ${type} (${format}): ${view.status} after ${fmt(run.seconds)} s (queued ${fmt(run.queued_s)} s), ` +
        `${run.rows} rows, ${(run.bytes / MB).toFixed(1)} MB, heap +${run.heap_growth_mb.toFixed(0)} MB at most` +
        (view.error ? `; error: ${view.error}` : ''),
    );
    if (view.status === 'pending' || view.status === 'running') {
      log(
        `  not completed within ${reportTimeoutS} s (at ${view.progress}%): the reports after it share the runner`,
      );
    }
  }
  return runs;
}

// ---- the report ----------------------------------------------------------------------------

/** The table, the targets met or missed, the circumstances of the run, and the results file. */
async function report(
  ctx: Context,
  figures: {
    world: World;
    index: IndexBuild;
    snapshot: SnapshotFigures;
    privileges: { seconds: number; written: number } | undefined;
    http: HttpFigures;
    small: { index: IndexBuild; http: HttpFigures; load: LoadFigures } | undefined;
    lookups: Lookup[];
    reports: ReportRun[];
    phases: Record<string, number>;
  },
): Promise<void> {
  const { table, options } = ctx;
  const { full, baseline, rate } = options;
  const { world, index, http, small } = figures;
  const L = full.label;
  const load = world.load;

  table.add({
    scenario: `${L}: load into Neo4j, everything`,
    unit: 's',
    median: load.total_s,
    rounds: [load.total_s],
    note: `${load.principals} principals, ${load.groups} groups, ${load.memberships} memberships, ${load.resources} resources, ${load.policies} policies, ${load.delegations} delegations`,
  });
  table.add({
    scenario: `${L}: load, principals (${options.loaders} transactions at a time)`,
    unit: 's',
    median: load.principals_s,
    rounds: [load.principals_s],
    note: `generating ${fmt(load.generate_s)} s of it; deferred manager links ${fmt(load.deferred_managers_s)} s`,
  });
  table.add({
    scenario: `${L}: load rate, principals`,
    unit: '/s',
    median: load.principals_per_s,
    rounds: [load.principals_per_s],
  });
  for (const [name, seconds, count] of [
    ['groups and nesting', load.groups_s, load.groups],
    ['memberships', load.memberships_s, load.memberships],
    ['resources', load.resources_s, load.resources],
    ['policies', load.policies_s, load.policies],
    ['delegations', load.delegations_s, load.delegations],
  ] as const) {
    table.add({
      scenario: `${L}: load, ${name}`,
      unit: 's',
      median: seconds,
      rounds: [seconds],
      note: `${count}, ${Math.round(count / seconds)}/s`,
    });
  }
  if (small) {
    table.add({
      scenario: `${baseline?.label ?? 'baseline'}: load into Neo4j, everything`,
      unit: 's',
      median: small.load.total_s,
      rounds: [small.load.total_s],
      note: `principals ${Math.round(small.load.principals_per_s)}/s`,
    });
  }

  const indexRows = (label: string, build: IndexBuild, targets: boolean): void => {
    table.add({
      scenario: `${label}: index build, IndexSync.load()`,
      unit: 's',
      median: median(build.seconds),
      ...(targets ? { target: TARGET_INDEX_S, direction: 'max' as const, on: 'median' as const } : {}),
      rounds: build.seconds,
      note: `GC ${build.gc.map((g) => `${g.count}× ${fmt(g.total_ms, 0)} ms`).join(' / ')}`,
    });
    table.add({
      scenario: `${label}: index heap (heap used after gc, after - before)`,
      unit: 'MB',
      median: median(build.heap_mb),
      ...(targets ? { target: TARGET_INDEX_MB, direction: 'max' as const, on: 'median' as const } : {}),
      rounds: build.heap_mb,
      note: `before ${build.heap_before_mb.map((v) => fmt(v, 0)).join('/')}, after ${build.heap_after_mb.map((v) => fmt(v, 0)).join('/')} MB`,
    });
    table.add({
      scenario: `${label}: index build, heap peak over before`,
      unit: 'MB',
      median: median(build.peak_mb),
      rounds: build.peak_mb,
      note: 'sampled every 20 ms, garbage included',
    });
    table.add({
      scenario: `${label}: process RSS after the index build`,
      unit: 'MB',
      median: median(build.rss_mb),
      rounds: build.rss_mb,
    });
    table.add({
      scenario: `${label}: the index outside the JS heap (typed arrays)`,
      unit: 'MB',
      median: median(build.off_heap_mb),
      rounds: build.off_heap_mb,
    });
  };
  if (small && baseline) indexRows(baseline.label, small.index, false);
  indexRows(L, index, true);
  const { snapshot } = figures;
  table.add({
    scenario: `${L}: index snapshot, size / seconds to write`,
    unit: 'MB',
    median: snapshot.mb,
    p99: snapshot.write_s,
    rounds: [snapshot.write_s],
    note: 'p99 column: seconds',
  });
  table.add({
    scenario: `${L}: start from the snapshot, index part (read back)`,
    unit: 's',
    median: snapshot.read_s,
    target: TARGET_SNAPSHOT_S,
    direction: 'max',
    on: 'median',
    rounds: [snapshot.read_s],
    note: `heap +${fmt(snapshot.read_heap_mb, 0)} MB for the index read`,
  });
  if (small && baseline) {
    table.add({
      scenario: `index build time, ${L} ÷ ${baseline.label}`,
      unit: 'x',
      median: median(index.seconds) / median(small.index.seconds),
      rounds: index.seconds.map((v, i) => v / (small.index.seconds[i] ?? NaN)),
      note: `${fmt(full.principals / baseline.principals)}× the principals`,
    });
    table.add({
      scenario: `index heap, ${L} ÷ ${baseline.label}`,
      unit: 'x',
      median: median(index.heap_mb) / median(small.index.heap_mb),
      rounds: index.heap_mb.map((v, i) => v / (small.index.heap_mb[i] ?? NaN)),
    });
  }
  if (figures.privileges) {
    table.add({
      scenario: `${L}: privilege risk refresh after the load (everyone)`,
      unit: 's',
      median: figures.privileges.seconds,
      rounds: [figures.privileges.seconds],
      note: `${figures.privileges.written} principals written`,
    });
  }

  const httpRows = (label: string, h: HttpFigures): void => {
    const sat = h.saturated.map((r) => r.requests_per_s);
    table.add({
      scenario: `${label}: evaluate, saturated (${options.connections} connections)`,
      unit: 'dec/s',
      median: median(sat),
      p99: median(h.saturated.map((r) => r.latency.p99)),
      rounds: sat,
      note: 'p99 in whole ms',
    });
    const p = (pick: (f: FixedReading) => number): number[] => h.fixed.map(pick);
    table.add({
      scenario: `${label}: evaluate at ${rate}/s, p50 / p99`,
      unit: 'ms',
      median: median(p((f) => f.latency.p50)),
      p99: median(p((f) => f.latency.p99)),
      rounds: p((f) => f.latency.p99),
      note: `achieved ${p((f) => Math.round(f.requests_per_s)).join('/')}/s; load generator's own delay at most ${p(
        (f) => f.generator_lag_max_ms,
      )
        .map((v) => fmt(v))
        .join('/')} ms`,
    });
    table.add({
      scenario: `${label}: evaluate at ${rate}/s, p99.9 / max`,
      unit: 'ms',
      median: median(p((f) => f.latency.p999)),
      p99: median(p((f) => f.latency.max)),
      rounds: p((f) => f.latency.max),
      note: 'the median column is p99.9, the p99 column the max',
    });
    table.add({
      scenario: `${label}: event-loop delay at ${rate}/s, max / p99`,
      unit: 'ms',
      median: median(p((f) => f.loop_max_ms)),
      p99: median(p((f) => f.loop_p99_ms)),
      rounds: p((f) => f.loop_max_ms),
      note: 'sampled every ms; the p99 column is the delay p99',
    });
    table.add({
      scenario: `${label}: GC at ${rate}/s, longest pause`,
      unit: 'ms',
      median: median(p((f) => f.gc.max_ms)),
      ...(label === L
        ? { target: TARGET_GC_PAUSE_MS, direction: 'max' as const, on: 'median' as const }
        : {}),
      rounds: p((f) => f.gc.max_ms),
      note: `pauses ${p((f) => f.gc.count).join('/')} (mark-compact ${p((f) => f.gc.major).join('/')}), total ${p(
        (f) => f.gc.total_ms,
      )
        .map((v) => fmt(v, 0))
        .join('/')} ms`,
    });
  };
  if (small && baseline) httpRows(baseline.label, small.http);
  httpRows(L, http);
  if (small && baseline) {
    const big = http.fixed.map((f) => f.latency.p99);
    const little = small.http.fixed.map((f) => f.latency.p99);
    table.add({
      scenario: `decision p99 at ${rate}/s, ${L} ÷ ${baseline.label}`,
      unit: 'x',
      median: median(big) / median(little),
      target: TARGET_P99_RATIO,
      direction: 'max',
      on: 'median',
      rounds: big.map((v, i) => v / (little[i] ?? NaN)),
      note: `p99 per round ${little.map((v) => fmt(v)).join('/')} ms at ${baseline.label}, ${big.map((v) => fmt(v)).join('/')} ms at ${L}`,
    });
    const bigSat = http.saturated.map((r) => r.requests_per_s);
    const littleSat = small.http.saturated.map((r) => r.requests_per_s);
    table.add({
      scenario: `evaluate saturated, ${L} ÷ ${baseline.label}`,
      unit: 'x',
      median: median(bigSat) / median(littleSat),
      rounds: bigSat.map((v, i) => v / (littleSat[i] ?? NaN)),
    });
  }

  for (const { name, target, rounds } of figures.lookups) {
    table.add({
      scenario: `${L}: ${name}`,
      unit: 'ms',
      median: rounds.median,
      p99: rounds.p99,
      ...(target !== undefined ? { target, direction: 'max' as const, on: 'p99' as const } : {}),
      rounds: rounds.p99s,
    });
  }

  // The reports the index answers have targets; the access review (a row per principal and
  // resource) and the audit log do not.
  const indexed = ['principal_inventory', 'dormant_principals', 'orphaned_principals'];
  for (const r of figures.reports) {
    const aimed = indexed.includes(r.type);
    table.add({
      scenario: `${L}: report ${r.type} (${r.format}), until completed`,
      unit: 's',
      median: r.seconds,
      ...(aimed ? { target: TARGET_REPORT_S, direction: 'max' as const, on: 'median' as const } : {}),
      rounds: [r.seconds],
      note:
        `${r.rows} rows, ${(r.bytes / MB).toFixed(1)} MB, queued ${fmt(r.queued_s)} s, heap +${fmt(r.heap_growth_mb, 0)} MB` +
        (r.status === 'completed' ? '' : `; ${r.status} at ${r.progress}% after ${fmt(r.wall_s)} s`),
    });
    if (aimed) {
      table.add({
        scenario: `${L}:   report ${r.type}, heap growth while it ran`,
        unit: 'MB',
        median: r.heap_growth_mb,
        target: TARGET_REPORT_HEAP_MB,
        direction: 'max',
        on: 'median',
        rounds: [r.heap_growth_mb],
      });
    }
  }
  gc();
  table.add({
    scenario: `${L}: process at the end, RSS / heap used after gc`,
    unit: 'MB',
    median: rssMb(),
    p99: heapMb(),
    rounds: [rssMb()],
    note: 'the p99 column is the heap',
  });

  table.print(72);
  log('');
  const targets = table.rows.filter((r) => r.ratio !== undefined);
  log(
    `targets${full.principals === FULL_SIZE ? '' : ` (set for ${FULL_SIZE} principals; this run has ${full.principals})`}:`,
  );
  for (const r of targets) {
    const met = r.direction === 'min' ? r.ratio! >= 1 : r.ratio! <= 1;
    log(
      `  ${met ? 'met ' : 'miss'}  ${r.scenario}: ${fmt(r.on === 'p99' ? r.p99 : r.median)} ${r.unit} ` +
        `(${r.on === 'p99' ? 'p99 ' : ''}${r.direction === 'min' ? '≥' : '≤'} ${r.target})`,
    );
  }
  log('');
  log(
    `machine: ${os.cpus().length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, node ${process.version}, ` +
      `load ${os
        .loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')}; phases: ${Object.entries(figures.phases)
        .map(([name, s]) => `${name} ${s.toFixed(0)} s`)
        .join(', ')}`,
  );

  const file = await writeResults('scale', {
    shape: {
      full,
      baseline,
      ROUNDS: options.rounds,
      INDEX_ROUNDS: options.indexRounds,
      HTTP_S: options.httpS,
      FIXED_S: options.fixedS,
      RATE: rate,
      CONNECTIONS: options.connections,
      REQUESTS: options.requests,
      BATCH: options.batch,
      LOADERS: options.loaders,
      REPORT_TYPES: options.reportTypes,
      REPORT_FORMAT: options.reportFormat,
      NEO4J: options.neo4j,
    },
    machine: {
      cpus: os.cpus().length,
      memory_gib: os.totalmem() / 1024 ** 3,
      node: process.version,
      load: os.loadavg(),
    },
    phases_s: figures.phases,
    load: load,
    index_build: index,
    privileges: figures.privileges,
    http,
    baseline: small,
    lookups: figures.lookups.map(({ name, rounds }) => ({
      name,
      medians: rounds.medians,
      p99s: rounds.p99s,
    })),
    reports: figures.reports,
    targets: targets.map((r) => ({
      scenario: r.scenario,
      figure: r.on === 'p99' ? r.p99 : r.median,
      target: r.target,
      met: r.direction === 'min' ? r.ratio! >= 1 : r.ratio! <= 1,
    })),
    table: table.rows,
  } satisfies Record<string, unknown>);
  log(`results written to ${file}`);
}

benchMain(main);
