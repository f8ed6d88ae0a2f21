/**
 * Access-engine benchmark: generates the organisation of bench/principals.ts (100,000 principals,
 * 5,000 nested groups), 20,000 registered resources and 10,000 policies of realistic shape
 * (bench/policy-set.ts), loads them in bulk into a fresh Neo4j, rebuilds the decision index, then
 * measures:
 *
 * 1. in-process decisions: `decide` on the index, and `DecisionService.evaluate` (id and record
 *    queued), beside casbin and cedar-wasm on the same policies translated (bench/engines.ts),
 *    asked the same request stream, with the rate at which the three agree;
 * 2. `POST /v1/decisions/evaluate` over HTTP (token check, rate limiter, decision record) with
 *    autocannon, against a bare Koa app measured the same way in the same run;
 * 3. `POST /v1/decisions/batch` of 1,000 requests;
 * 4. the index build at start-up: time and heap;
 * 5. `GET /v1/principals/{id}/access` and `GET /v1/resources/access`;
 * 6. the blast radius of a policy reaching ~10,000 principals (`POST /v1/policies/{id}/simulate`).
 *
 * Before those, and without a database, the engine's table cases (test/cases/engine, the cases
 * of test/unit/engine.test.ts): each file's world is built, every case is decided and checked
 * against the answer the file expects (the benchmark fails if one differs: what is measured is
 * what is tested), then decisions/s over each file's cases are measured.
 *
 *   npm run bench:decisions                      # embedded Neo4j in a throwaway directory
 *   NEO4J_URI=bolt://... npm run bench:decisions # an existing (empty) Neo4j
 *   BENCH_PARTS=cases npm run bench:decisions    # the table cases alone, no database
 *
 * Knobs: BENCH_PRINCIPALS (100000), BENCH_GROUPS (5000), BENCH_POLICIES (10000),
 * BENCH_RESOURCES (20000), BENCH_ROUNDS (3), BENCH_STREAM (20000 requests per in-process round),
 * BENCH_COMPARE_S (3: seconds per round at most for casbin and Cedar), BENCH_COMPARE_POLICIES
 * (1000: smaller policy sets compared as well, comma-separated), BENCH_AGREEMENT (1000 requests
 * checked for agreement per set, within BENCH_AGREEMENT_S, 60), BENCH_HTTP_S (10 s per HTTP
 * round), BENCH_CONNECTIONS (10), BENCH_RATE (5000: the fixed-rate HTTP run), BENCH_BATCHES
 * (20 per round), BENCH_REQUESTS (200 lookups per scenario and round), BENCH_SIMULATIONS (5 per
 * kind and round), BENCH_BLAST_PRINCIPALS (10000, at most a fifth of the principals),
 * BENCH_BATCH (1000 rows per load transaction), BENCH_LOADERS (2), BENCH_PARTS (cases,service:
 * the table cases, and everything on the service), BENCH_CASES_RUNS (5 runs, the median reported,
 * after one not counted), BENCH_CASES_MS (300 ms of decisions per file and run). Node needs
 * --expose-gc for the heap figures (the npm script passes it). Results also go to
 * bench/results/*.json.
 *
 * Each of those is a scenario below, a function given the started service, the administrator's
 * client, the generated organisation and the knobs; `run` runs them in order, then reports.
 */

import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { basename } from 'node:path';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { decide, type AccessRequest } from '../src/decisions/engine.js';
import { PolicyIndex } from '../src/decisions/policy-index.js';
import type { IxPolicy } from '../src/decisions/model.js';
import { DecisionService } from '../src/decisions/service.js';
import type { Runtime } from '../src/runtime.js';
import { BulkLoader } from '../src/seed/bulk.js';
import {
  answerProblem,
  buildIndex as buildCaseIndex,
  loadEngineSuites,
  requestOf,
} from '../test/helpers/engine-cases.js';
import type { BenchClient } from './client.js';
import { buildCasbin, buildCedar, cedarVersion, type OtherEngine } from './engines.js';
import {
  ask,
  benchConfig,
  benchMain,
  fmt,
  forkBench,
  gc,
  type LatencyRounds,
  loadPrincipals,
  log,
  measureRounds,
  median,
  env,
  percentile,
  ResultTable,
  profiled,
  type Row,
  withBenchService,
  writeResults,
} from './harness.js';
import type { LoadResult, LoadRun } from './load-generator.js';
import { generateOrg, rng, type Org } from './org.js';
import {
  generatePolicies,
  generateResources,
  Membership,
  requestStream,
  type PolicySet,
} from './policy-set.js';

const PARTS = ['cases', 'service'] as const;

/** The knobs of the header, read once from the environment. */
function readOptions() {
  const principals = env('BENCH_PRINCIPALS', 100_000);
  const policies = env('BENCH_POLICIES', 10_000);
  const parts = new Set((process.env['BENCH_PARTS'] || PARTS.join(',')).split(',').map((p) => p.trim()));
  // A misspelt part would otherwise measure nothing and say so nowhere.
  for (const part of parts) {
    if (!(PARTS as readonly string[]).includes(part)) {
      throw new Error(`BENCH_PARTS: no part '${part}' (there are ${PARTS.join(', ')})`);
    }
  }
  return {
    parts,
    /** Runs over the table cases, after one not counted. */
    casesRuns: Math.max(1, env('BENCH_CASES_RUNS', 5)),
    /** Milliseconds of decisions per case file and run. */
    casesMs: env('BENCH_CASES_MS', 300),
    principals,
    groups: env('BENCH_GROUPS', 5_000),
    policies,
    resources: env('BENCH_RESOURCES', 20_000),
    rounds: Math.max(1, env('BENCH_ROUNDS', 3)),
    /** Requests per in-process round. */
    stream: env('BENCH_STREAM', 20_000),
    /** Seconds per round at most for casbin and Cedar. */
    compareS: env('BENCH_COMPARE_S', 3),
    /** The smaller policy sets compared as well. */
    comparePolicies: (process.env['BENCH_COMPARE_POLICIES'] ?? '1000')
      .split(',')
      .map(Number)
      .filter((n) => n > 0 && n < policies),
    /** Requests checked for agreement per set, within `agreementS`. */
    agreementRequests: env('BENCH_AGREEMENT', 1_000),
    agreementS: env('BENCH_AGREEMENT_S', 60),
    httpS: env('BENCH_HTTP_S', 10),
    connections: env('BENCH_CONNECTIONS', 10),
    /** The fixed-rate HTTP run. */
    rate: env('BENCH_RATE', 5_000),
    batches: env('BENCH_BATCHES', 20),
    /** Lookups per scenario and round. */
    requests: env('BENCH_REQUESTS', 200),
    simulations: env('BENCH_SIMULATIONS', 5),
    blast: Math.min(env('BENCH_BLAST_PRINCIPALS', 10_000), Math.floor(principals / 5)),
    /** Rows per load transaction. */
    batch: env('BENCH_BATCH', 1_000),
    loaders: env('BENCH_LOADERS', 2),
  };
}

type Options = ReturnType<typeof readOptions>;

const MB = 1024 * 1024;

const heapMb = (): number => process.memoryUsage().heapUsed / MB;

/** What every scenario is given. */
interface Context {
  /** The service in this process: its engine, index and database besides its HTTP server. */
  runtime: Runtime;
  /** Where the service's HTTP server listens. */
  base: string;
  /** The administrator's client; its token is taken when the first request needs it. */
  client: BenchClient;
  org: Org;
  membership: Membership;
  set: PolicySet;
  options: Options;
  /** bench/load-generator.ts, a process of its own. */
  loadGenerator: ChildProcess;
  table: ResultTable;
  /**
   * A random element, from one stream shared by the lookup scenarios in the order they run, so
   * that each asks for what it always asked for.
   */
  pick: <T>(list: readonly T[]) => T;
  /** The table cases' figures, when that part ran (before the service started). */
  cases: CaseFigures[] | undefined;
}

// ---- main ----------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = readOptions();
  const table = new ResultTable();
  const cases = options.parts.has('cases') ? decideCases(options, table) : undefined;
  if (cases) table.print();
  if (!options.parts.has('service')) {
    const file = await writeResults('decisions', {
      shape: { PARTS: [...options.parts], CASES_RUNS: options.casesRuns, CASES_MS: options.casesMs },
      machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg() },
      cases,
      table: table.rows,
    });
    log(`results written to ${file}`);
    return;
  }
  if (!(globalThis as { gc?: unknown }).gc) log('note: run node with --expose-gc for the heap figures');
  const now = Date.UTC(2026, 10, 1);
  log(
    `generating ${options.principals} principals, ${options.groups} groups, ${options.resources} resources and ${options.policies} policies`,
  );
  const org = generateOrg({ principals: options.principals, groups: options.groups, seed: 42, now });
  const membership = new Membership(org);
  const resources = generateResources(org, options.resources, 43, now);
  const set = generatePolicies(org, resources, membership, {
    policies: options.policies,
    resources: options.resources,
    seed: 44,
    now,
    blastPrincipals: options.blast,
  });

  await withBenchService(
    {
      config: benchConfig({ DECISION_MAX_PENDING: '2000000' }),
      empty: 'MATCH (n) WHERE n:Principal OR n:Policy RETURN count(n) AS n',
    },
    async ({ runtime, base, client }) => {
      const loadGenerator = forkBench('load-generator.ts');
      const random = rng(99);
      try {
        await run({
          runtime,
          base,
          client,
          org,
          membership,
          set,
          options,
          loadGenerator,
          table,
          pick: (list) => list[Math.floor(random() * list.length)]!,
          cases,
        });
      } finally {
        loadGenerator.kill();
      }
    },
  );
}

/** The scenarios, in the order they always ran (numbered as in the header), then the report. */
async function run(ctx: Context): Promise<void> {
  const load = await loadGraph(ctx);
  const indexBuild = await buildIndex(ctx);
  const inProcess = await decideInProcess(ctx);
  const http = await evaluateSingle(ctx);
  await evaluateBatch(ctx);
  await access(ctx);
  await reverseLookup(ctx);
  await blastRadius(ctx);
  await report(ctx, { load, indexBuild, inProcess, http });
}

// ---- the scenarios -------------------------------------------------------------------------

interface CaseFigures {
  file: string;
  cases: number;
  skipped: number;
  /** Decisions per second of each run. */
  per_s: number[];
}

/**
 * The engine's table cases (test/cases/engine): each file's world built into an index of its
 * own, each case decided once and checked against the answer the file expects (skipped cases
 * are neither checked nor measured), then decisions/s over the file's cases, looped for
 * `casesMs` in each run. The files take turns within a run, so that whatever drifts during the
 * run falls on all of them alike.
 */
function decideCases(options: Options, table: ResultTable): CaseFigures[] {
  const now = Date.now();
  const files = loadEngineSuites(now).map((suite) => {
    const index = buildCaseIndex(suite.world, now);
    const cases = suite.cases.filter((c) => c.skip === undefined);
    const problems = cases.flatMap((c) => {
      const problem = answerProblem(c, decide(index, requestOf(c)));
      return problem === undefined ? [] : [`${suite.file}: ${c.name}: ${problem}`];
    });
    if (problems.length > 0) {
      throw new Error(`cases that do not give the answer expected:\n  ${problems.join('\n  ')}`);
    }
    const figures: CaseFigures = {
      file: suite.file,
      cases: cases.length,
      skipped: suite.cases.length - cases.length,
      per_s: [],
    };
    return {
      file: suite.file,
      index,
      requests: cases.map(requestOf),
      allowed: cases.filter((c) => c.allowed).length,
      figures,
    };
  });
  const checked = files.reduce((n, f) => n + f.requests.length, 0);
  log(`engine cases: the ${checked} cases of ${files.length} files give the answers expected`);
  for (let run = 0; run <= options.casesRuns; run += 1) {
    for (const f of files) {
      const { perS, allowed, rounds } = decideLoop(f.index, f.requests, options.casesMs);
      // Every pass over the cases allows as many as the file expects: the answers measured are
      // the answers checked.
      if (allowed !== rounds * f.allowed) throw new Error(`${f.file}: the answers changed while measured`);
      // The first run warms the engine up and is not counted.
      if (run > 0) f.figures.per_s.push(perS);
    }
  }
  for (const { figures } of files) {
    table.add({
      scenario: `engine cases: ${basename(figures.file)} (${figures.cases})`,
      unit: 'dec/s',
      median: median(figures.per_s),
      rounds: figures.per_s,
      ...(figures.skipped > 0 ? { note: `${figures.skipped} skipped` } : {}),
    });
  }
  return files.map((f) => f.figures);
}

/** Decides `requests` in turn, over and over, for at least `ms`: decisions/s, and how many allowed. */
function decideLoop(
  index: PolicyIndex,
  requests: readonly AccessRequest[],
  ms: number,
): { perS: number; allowed: number; rounds: number } {
  const t0 = process.hrtime.bigint();
  const deadline = t0 + BigInt(Math.round(ms * 1e6));
  let allowed = 0;
  let rounds = 0;
  let t: bigint;
  do {
    for (const request of requests) if (decide(index, request).allowed) allowed += 1;
    rounds += 1;
    t = process.hrtime.bigint();
  } while (t < deadline);
  return { perS: (rounds * requests.length) / (Number(t - t0) / 1e9), allowed, rounds };
}

/** The organisation, resources and policies written with the bulk loader: seconds for each. */
async function loadGraph(ctx: Context): Promise<Record<string, number>> {
  const { org, set } = ctx;
  const { batch, loaders } = ctx.options;
  const loader = new BulkLoader(ctx.runtime.db);
  const timed = async (work: () => Promise<void>): Promise<number> => {
    const t0 = Date.now();
    await work();
    return (Date.now() - t0) / 1000;
  };
  const principalsS = await timed(async () => {
    await loadPrincipals(loader, org.principals, { batch, loaders });
  });
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  const groupsS = await timed(async () => {
    for (let i = 0; i < org.groups.length; i += batch) await loader.groups(org.groups.slice(i, i + batch));
    for (let i = 0; i < org.nesting.length; i += batch * 5)
      await loader.nesting(org.nesting.slice(i, i + batch * 5), at);
    for (let i = 0; i < org.memberships.length; i += batch * 5)
      await loader.memberships(org.memberships.slice(i, i + batch * 5), at);
  });
  const resourcesS = await timed(async () => {
    for (let i = 0; i < set.resources.length; i += batch)
      await loader.resources(set.resources.slice(i, i + batch));
  });
  // One transaction at a time: batches may name the same new resource.
  const policiesS = await timed(async () => {
    for (let i = 0; i < set.policies.length; i += batch)
      await loader.policies(set.policies.slice(i, i + batch));
  });
  const loaded = {
    principals_s: principalsS,
    groups_and_memberships_s: groupsS,
    resources_s: resourcesS,
    policies_s: policiesS,
    policies_per_s: Math.round(set.policies.length / policiesS),
  };
  log(`loaded: ${JSON.stringify(loaded)}`);
  return loaded;
}

interface IndexBuild {
  seconds: number[];
  heap_mb: number[];
  peak_mb: number[];
  counts: Record<string, number>;
}

/** 4. `IndexSync.load()` from an empty index, as at start-up: time, retained heap, and the peak on the way. */
async function buildIndex(ctx: Context): Promise<IndexBuild> {
  const { runtime, table } = ctx;
  const { rounds } = ctx.options;
  const build: IndexBuild = { seconds: [], heap_mb: [], peak_mb: [], counts: {} };
  for (let round = 0; round < rounds; round += 1) {
    runtime.engine.index.clear();
    gc();
    const before = heapMb();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, heapMb());
    }, 20);
    const t0 = process.hrtime.bigint();
    build.counts = await profiled(round === 0 ? 'index-build' : undefined, () => runtime.engine.sync.load());
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    clearInterval(sampler);
    peak = Math.max(peak, heapMb());
    gc();
    build.seconds.push(seconds);
    build.heap_mb.push(heapMb() - before);
    build.peak_mb.push(peak - before);
    log(
      `index build ${round + 1}/${rounds}: ${seconds.toFixed(2)} s, +${(heapMb() - before).toFixed(0)} MB heap retained ` +
        `(peak +${(peak - before).toFixed(0)} MB) for ${JSON.stringify(build.counts)}`,
    );
  }
  table.add({
    scenario: 'index build: IndexSync.load()',
    unit: 's',
    median: median(build.seconds),
    target: 10,
    direction: 'max',
    on: 'median',
    rounds: build.seconds,
  });
  table.add({
    scenario: 'index build: heap retained (after gc)',
    unit: 'MB',
    median: median(build.heap_mb),
    target: 300,
    direction: 'max',
    on: 'median',
    rounds: build.heap_mb,
  });
  table.add({
    scenario: 'index build: heap peak while loading',
    unit: 'MB',
    median: median(build.peak_mb),
    rounds: build.peak_mb,
    note: 'sampled every 20 ms, garbage included',
  });
  return build;
}

/**
 * 1. In-process decisions of the three engines on the smaller policy sets and the full one, and
 * the heap of the process afterwards (generated data, index and its caches).
 */
async function decideInProcess(ctx: Context): Promise<{ comparisons: Comparison[]; heapMb: number }> {
  const { set, table } = ctx;
  const comparisons: Comparison[] = [];
  for (const size of [...ctx.options.comparePolicies, set.policies.length]) {
    log(
      `in-process decisions, ${size} policies (${size === set.policies.length ? 'the full set' : 'a subset'}):`,
    );
    comparisons.push(await compare(ctx, size));
    gc();
  }
  for (const c of comparisons) {
    const t = c.timings;
    const label = `${c.policies} policies`;
    const ours = median(t['decide']!.p50);
    table.add({
      scenario: `in-process decide p50 (${label})`,
      unit: 'µs',
      median: ours,
      p99: median(t['decide']!.p99),
      target: 10,
      direction: 'max',
      on: 'median',
      rounds: t['decide']!.p50,
    });
    table.add({
      scenario: `in-process evaluate p50, id + record queued (${label})`,
      unit: 'µs',
      median: median(t['evaluate']!.p50),
      p99: median(t['evaluate']!.p99),
      target: 10,
      direction: 'max',
      on: 'median',
      rounds: t['evaluate']!.p50,
    });
    table.add({
      scenario: `in-process decide throughput (${label})`,
      unit: 'dec/s',
      median: median(t['decide']!.throughput),
      rounds: t['decide']!.throughput,
    });
    for (const [name, factor] of [
      ['casbin', 10],
      ['cedar', 30],
    ] as const) {
      const other = t[name]!;
      table.add({
        scenario: `${name} p50 (${label})`,
        unit: 'µs',
        median: median(other.p50),
        p99: median(other.p99),
        rounds: other.p50,
        note: `${other.calls.join('/')} calls`,
      });
      table.add({
        scenario: `speed-up of decide over ${name}, p50 (${label})`,
        unit: 'x',
        median: median(other.p50) / ours,
        target: factor,
        direction: 'min',
        on: 'median',
        rounds: other.p50.map((v, i) => v / t['decide']!.p50[i]!),
      });
      table.add({
        scenario: `speed-up of decide over ${name}, throughput (${label})`,
        unit: 'x',
        median: median(t['decide']!.throughput) / median(other.throughput),
        target: factor,
        direction: 'min',
        on: 'median',
        rounds: other.throughput.map((v, i) => t['decide']!.throughput[i]! / v),
      });
    }
    table.add({
      scenario: `agreement of the three engines (${label})`,
      unit: '%',
      median: c.agreement.rate * 100,
      rounds: [c.agreement.rate * 100],
      note: `${c.agreement.checked} requests, ${(c.agreement.allowed_share * 100).toFixed(0)}% allowed`,
    });
  }
  gc();
  return { comparisons, heapMb: heapMb() };
}

interface HttpFigures {
  app: LoadResult[];
  bare: LoadResult[];
  fixed: LoadResult[];
  /** Decision records still queued after each round of the service. */
  pending: number[];
}

/**
 * 2. `POST /v1/decisions/evaluate` over HTTP (token check, rate limiter, decision record) with
 * autocannon, saturated and at a fixed rate, against a bare Koa app measured the same way in the
 * same run.
 */
async function evaluateSingle(ctx: Context): Promise<HttpFigures> {
  const { runtime, table, loadGenerator } = ctx;
  const { rounds, connections, httpS, rate } = ctx.options;
  const headers = await ctx.client.headers();
  const httpRequests = requestStream(ctx.org, ctx.set, ctx.membership, 2_000, 77);
  const bodies = httpRequests.map((r) => JSON.stringify(r));
  const hello = await startHelloWorld();
  const evaluate = (fixedRate?: number): LoadRun => ({
    url: ctx.base,
    connections,
    seconds: httpS,
    ...(fixedRate ? { rate: fixedRate } : {}),
    headers,
    requests: bodies.map((body) => ({ method: 'POST', path: '/v1/decisions/evaluate', body })),
  });
  const bare: LoadRun = {
    url: hello.url,
    connections,
    seconds: httpS,
    headers,
    requests: bodies.map((body) => ({ method: 'POST', path: '/v1/decisions/evaluate', body })),
  };
  const http: HttpFigures = { app: [], bare: [], fixed: [], pending: [] };
  try {
    // Short runs of each first, so that both start warm.
    await loadRun(loadGenerator, { ...evaluate(), seconds: 2 });
    await loadRun(loadGenerator, { ...bare, seconds: 2 });
    await runtime.engine.log.flush();
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? (['app', 'bare'] as const) : (['bare', 'app'] as const);
      for (const which of order) {
        const result = await profiled(round === 0 && which === 'app' ? 'http-evaluate' : undefined, () =>
          loadRun(loadGenerator, which === 'app' ? evaluate() : bare),
        );
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(`${which}: ${result.non2xx} non-2xx answers and ${result.errors} errors`);
        }
        http[which].push(result);
        if (which === 'app') http.pending.push(runtime.engine.log.pending);
        await runtime.engine.log.flush();
      }
      const fixed = await loadRun(loadGenerator, evaluate(rate));
      http.fixed.push(fixed);
      await runtime.engine.log.flush();
      log(
        `HTTP round ${round + 1}/${rounds}: evaluate ${Math.round(http.app.at(-1)!.requests_per_s)}/s ` +
          `(p99 ${http.app.at(-1)!.latency.p99} ms), bare Koa ${Math.round(http.bare.at(-1)!.requests_per_s)}/s, ` +
          `at ${rate}/s: ${Math.round(fixed.requests_per_s)}/s with p99 ${fixed.latency.p99} ms`,
      );
    }
  } finally {
    await hello.close();
  }
  const appRps = http.app.map((r) => r.requests_per_s);
  const bareRps = http.bare.map((r) => r.requests_per_s);
  table.add({
    scenario: `HTTP evaluate throughput, ${connections} connections`,
    unit: 'dec/s',
    median: median(appRps),
    p99: median(http.app.map((r) => r.latency.p99)),
    target: 5000,
    direction: 'min',
    on: 'median',
    rounds: appRps,
    note: 'p99 in ms',
  });
  table.add({
    scenario: `HTTP evaluate p99 at ${rate}/s`,
    unit: 'ms',
    median: median(http.fixed.map((r) => r.latency.p50)),
    p99: median(http.fixed.map((r) => r.latency.p99)),
    target: 10,
    direction: 'max',
    on: 'p99',
    rounds: http.fixed.map((r) => r.latency.p99),
    note: `achieved ${http.fixed.map((r) => Math.round(r.requests_per_s)).join('/')}/s; whole ms`,
  });
  table.add({
    scenario: `bare Koa (same process, same load) throughput`,
    unit: 'req/s',
    median: median(bareRps),
    p99: median(http.bare.map((r) => r.latency.p99)),
    rounds: bareRps,
  });
  table.add({
    scenario: 'HTTP evaluate / bare Koa throughput',
    unit: 'x',
    median: median(appRps) / median(bareRps),
    target: 0.3,
    direction: 'min',
    on: 'median',
    rounds: appRps.map((v, i) => v / bareRps[i]!),
  });
  return http;
}

/** 3. `POST /v1/decisions/batch` of 1,000 requests, one at a time. */
async function evaluateBatch(ctx: Context): Promise<LatencyRounds> {
  const batchBodies = Array.from({ length: 8 }, (_, k) =>
    JSON.stringify({ requests: requestStream(ctx.org, ctx.set, ctx.membership, 1_000, 500 + k) }),
  );
  return series(
    ctx,
    'HTTP batch of 1,000 decisions',
    ctx.options.batches,
    (i) => call(ctx, 'POST', '/v1/decisions/batch', batchBodies[i % batchBodies.length]),
    p99Under(50),
    'http-batch',
  );
}

/** 5. `GET /v1/principals/{id}/access`: any principal, and the well-connected ones. */
async function access(ctx: Context): Promise<Record<string, LatencyRounds>> {
  const { pick } = ctx;
  const { requests } = ctx.options;
  const index = ctx.runtime.engine.index;
  const ids = ctx.org.principals.map((p) => p.id);
  // Well-connected principals: the 2% of a sample reached by the most policies.
  const sample = Array.from({ length: Math.min(3_000, ids.length) }, () => pick(ids));
  const reach = sample
    .map((id) => ({ id, policies: index.policiesOf(index.principals.get(id)!).size }))
    .sort((a, b) => b.policies - a.policies);
  const connected = reach.slice(0, Math.max(10, Math.floor(reach.length * 0.02)));
  log(
    `well-connected principals: ${connected.length}, reached by ${connected.at(-1)!.policies}-${connected[0]!.policies} ` +
      `policies (median of the sample: ${reach[Math.floor(reach.length / 2)]!.policies})`,
  );
  const any = await series(
    ctx,
    'GET /v1/principals/{id}/access (any principal)',
    requests,
    () => call(ctx, 'GET', `/v1/principals/${pick(ids)}/access`),
    p99Under(30),
  );
  const wellConnected = await series(
    ctx,
    'GET /v1/principals/{id}/access (well-connected, top 2%)',
    requests,
    () => call(ctx, 'GET', `/v1/principals/${pick(connected).id}/access`),
    p99Under(30),
    'principal-access-well-connected',
  );
  return { any, connected: wellConnected };
}

/**
 * 5. `GET /v1/resources/access`, who can reach a resource: registered ones at random; the 2% of a
 * sample whose allow policies reach the most principals; and the exact resources of the
 * blast-radius policy (about BENCH_BLAST_PRINCIPALS principals each).
 */
async function reverseLookup(ctx: Context): Promise<Record<string, LatencyRounds>> {
  const { pick, set, membership } = ctx;
  const { requests } = ctx.options;
  const index = ctx.runtime.engine.index;
  const registered = set.resources.map((r) => ({ type: r.type, identifier: r.identifier }));
  const estimate = (policy: IxPolicy): number =>
    policy.principals.size +
    policy.groups.reduce((n, g) => n + membership.members(g).length, 0) +
    (policy.match ? 1_000 : 0);
  const resourceSample = Array.from({ length: Math.min(3_000, registered.length) }, () => pick(registered))
    .map((r) => ({
      ...r,
      reach: index
        .candidates(r.type, r.identifier)
        .filter((p) => p.effect === 'allow' && p.id !== set.blastPolicy)
        .reduce((n, p) => n + estimate(p), 0),
    }))
    .sort((a, b) => b.reach - a.reach);
  const popular = resourceSample.slice(0, Math.max(10, Math.floor(resourceSample.length * 0.02)));
  const blast = index.policies.get(set.blastPolicy)!;
  const blastResources = blast.resources.filter((r) => !r.glob);
  log(
    `well-connected resources: ${popular.length}, estimated reach ${popular.at(-1)!.reach}-${popular[0]!.reach} principals`,
  );
  const resourceAccess = (r: { type: string; identifier: string }) =>
    call(
      ctx,
      'GET',
      `/v1/resources/access?type=${encodeURIComponent(r.type)}&identifier=${encodeURIComponent(r.identifier)}`,
    );
  const any = await series(
    ctx,
    'GET /v1/resources/access (any registered resource)',
    requests,
    () => resourceAccess(pick(registered)),
    p99Under(30),
  );
  const connected = await series(
    ctx,
    'GET /v1/resources/access (well-connected, top 2%)',
    requests,
    () => resourceAccess(pick(popular)),
    p99Under(30),
    'resource-access-well-connected',
  );
  const reachedByBlast = index.subjectsOf(blast).size;
  const blastResource = await series(
    ctx,
    `GET /v1/resources/access (blast policy's resource, ${reachedByBlast} principals)`,
    Math.max(20, Math.floor(requests / 4)),
    (i) => resourceAccess(blastResources[i % blastResources.length]!),
    p99Under(30),
    'resource-access-blast',
  );
  return { any, connected, blast: blastResource };
}

/**
 * 6. The blast radius of the policy reaching ~BENCH_BLAST_PRINCIPALS principals, through
 * `POST /v1/policies/{id}/simulate`: deleting it, and widening it.
 */
async function blastRadius(ctx: Context): Promise<Record<string, LatencyRounds>> {
  const { set } = ctx;
  const { simulations } = ctx.options;
  const blast = ctx.runtime.engine.index.policies.get(set.blastPolicy)!;
  const reachedByBlast = ctx.runtime.engine.index.subjectsOf(blast).size;
  const body = set.policies.find((p) => p.id === set.blastPolicy)!.body;
  const widened = {
    ...body,
    actions: [...body.actions, 'write'],
    resources: [...body.resources, { type: 'database', identifier: 'analytics-staging-*' }],
  };
  let summary: unknown;
  const deleted = await series(
    ctx,
    `simulate deleting the blast policy (${reachedByBlast} principals)`,
    simulations,
    async () => {
      const res = await call(ctx, 'POST', `/v1/policies/${set.blastPolicy}/simulate`, { delete: true });
      summary = res.json.summary;
      return res;
    },
    { unit: 'ms', target: 2000, direction: 'max', on: 'median' },
    'simulate-delete',
  );
  log(`  summary: ${JSON.stringify(summary)}`);
  const widening = await series(
    ctx,
    `simulate widening the blast policy (${reachedByBlast} principals)`,
    simulations,
    async () => {
      const res = await call(ctx, 'POST', `/v1/policies/${set.blastPolicy}/simulate`, { policy: widened });
      summary = res.json.summary;
      return res;
    },
    { unit: 'ms', target: 2000, direction: 'max', on: 'median' },
  );
  log(`  summary: ${JSON.stringify(summary)}`);
  return { delete: deleted, widen: widening };
}

// ---- the report ----------------------------------------------------------------------------

/** The table, the circumstances of the run, and the results file. */
async function report(
  ctx: Context,
  figures: {
    load: Record<string, number>;
    indexBuild: IndexBuild;
    inProcess: { comparisons: Comparison[]; heapMb: number };
    http: HttpFigures;
  },
): Promise<void> {
  const o = ctx.options;
  ctx.table.print();
  log('');
  log(
    `machine: ${os.cpus().length} cores, node ${process.version}, cedar ${cedarVersion()}; process heap after the ` +
      `in-process phase (generated data, index and its caches): ${figures.inProcess.heapMb.toFixed(0)} MB; decision records pending ` +
      `after each HTTP round: ${figures.http.pending.join(' / ')}`,
  );

  const file = await writeResults('decisions', {
    shape: {
      PARTS: [...o.parts],
      CASES_RUNS: o.casesRuns,
      CASES_MS: o.casesMs,
      PRINCIPALS: o.principals,
      GROUPS: o.groups,
      POLICIES: o.policies,
      RESOURCES: o.resources,
      ROUNDS: o.rounds,
      STREAM: o.stream,
      COMPARE_S: o.compareS,
      COMPARE_POLICIES: o.comparePolicies,
      HTTP_S: o.httpS,
      CONNECTIONS: o.connections,
      RATE: o.rate,
      BATCHES: o.batches,
      REQUESTS: o.requests,
      SIMULATIONS: o.simulations,
      BLAST: o.blast,
    },
    machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg(), cedar: cedarVersion() },
    cases: ctx.cases,
    load: figures.load,
    index_build: figures.indexBuild,
    in_process: figures.inProcess.comparisons,
    http: figures.http,
    table: ctx.table.rows,
  });
  log(`results written to ${file}`);
}

// ---- calls one at a time over HTTP -----------------------------------------------------------

/**
 * A call of a measured series: timed from sending until the last byte of the answer, the body
 * serialised before and the answer parsed after, as a client in a process of its own would.
 */
async function call(
  ctx: Context,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ ms: number; json: any }> {
  const answer = await ctx.client.timed(method, path, body);
  return { ms: answer.ms, json: answer.json() };
}

/**
 * A series of calls in rounds (a few warm-up calls first), the decision records they queued
 * written after each round; its row holds the median over the rounds of each round's median and
 * p99.
 */
async function series(
  ctx: Context,
  name: string,
  count: number,
  next: (i: number) => Promise<{ ms: number }>,
  row: Omit<Row, 'median' | 'p99' | 'rounds' | 'ratio' | 'scenario'>,
  profileAs?: string,
): Promise<LatencyRounds> {
  const measured = await measureRounds(
    [{ name, count, warmup: Math.min(5, count), next: async (i) => (await next(i)).ms, profileAs }],
    { rounds: ctx.options.rounds, afterRound: () => ctx.runtime.engine.log.flush() },
  );
  const rounds = measured[name]!;
  ctx.table.add({
    scenario: name,
    median: rounds.median,
    p99: rounds.p99,
    rounds: row.on === 'p99' ? rounds.p99s : rounds.medians,
    ...row,
  });
  log(`${name}: median ${fmt(rounds.median)} ms, p99 ${fmt(rounds.p99)} ms`);
  return rounds;
}

const p99Under = (target: number) => ({
  unit: 'ms',
  target,
  direction: 'max' as const,
  on: 'p99' as const,
});

// ---- in-process decisions ----------------------------------------------------------------

/** A copy of the index holding only some of its policies, for the smaller comparison sets. */
function subsetIndex(index: PolicyIndex, policies: readonly IxPolicy[]): PolicyIndex {
  const copy = new PolicyIndex();
  for (const g of index.groups.values()) copy.putGroup(g.id, g.name, [...g.parents]);
  for (const p of index.principals.values()) copy.putPrincipal(p.id, { ...p, groups: [...p.groups] });
  for (const r of index.resourceTable.all()) copy.putResource(r.type, r.identifier, r);
  for (const p of policies) copy.putPolicy(p);
  return copy;
}

interface Timing {
  /** Per-call latencies of each round, µs. */
  p50: number[];
  p99: number[];
  /** Calls per second of each round, timed as one loop. */
  throughput: number[];
  calls: number[];
}

/**
 * Times `call` over the stream: once call by call (latencies), once as one loop (throughput),
 * stopping at the end of the stream or after `budgetS` seconds.
 */
function time(call: (i: number) => unknown, count: number, budgetS: number, into: Timing): void {
  const samples: number[] = [];
  const deadline = process.hrtime.bigint() + BigInt(Math.round(budgetS * 1e9));
  let n = 0;
  for (; n < count; n += 1) {
    const t0 = process.hrtime.bigint();
    call(n);
    const t1 = process.hrtime.bigint();
    samples.push(Number(t1 - t0) / 1000);
    if (t1 > deadline) {
      n += 1;
      break;
    }
  }
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) call(i);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  samples.sort((a, b) => a - b);
  into.p50.push(percentile(samples, 50));
  into.p99.push(percentile(samples, 99));
  into.throughput.push(n / seconds);
  into.calls.push(n);
}

const emptyTiming = (): Timing => ({ p50: [], p99: [], throughput: [], calls: [] });

interface Comparison {
  policies: number;
  translated: Record<string, { policies: number; rules: number; load_s: number }>;
  agreement: {
    checked: number;
    all_three: number;
    rate: number;
    casbin_disagrees: number;
    cedar_disagrees: number;
    allowed_share: number;
    /** Our engine's first reason, counted: which paths the sample went through. */
    reasons: Record<string, number>;
    examples: unknown[];
  };
  timings: Record<string, Timing>;
}

/** In-process decisions of the three engines on one policy set and one request stream. */
async function compare(ctx: Context, size: number): Promise<Comparison> {
  const { runtime, org, membership, set } = ctx;
  const { stream, agreementRequests, agreementS, rounds, compareS } = ctx.options;
  const full = runtime.engine.index;
  const seeds = set.policies.slice(0, size);
  const policies = seeds.map((p) => full.policies.get(p.id)).filter((p): p is IxPolicy => p !== undefined);
  const index = size >= set.policies.length ? full : subsetIndex(full, policies);
  const requests = requestStream(
    org,
    { resources: set.resources, policies: seeds },
    membership,
    stream,
    1000 + size,
  );
  const service = new DecisionService(index, runtime.engine.log);
  const translated: Comparison['translated'] = {};
  const build = async <T extends OtherEngine>(make: () => T | Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const engine = await make();
    translated[engine.name] = { ...engine.size, load_s: (Date.now() - t0) / 1000 };
    log(
      `  ${engine.name}: ${engine.size.policies} policies as ${engine.size.rules} rules, loaded in ${translated[engine.name]!.load_s.toFixed(1)} s`,
    );
    return engine;
  };
  const bodies = new Map(seeds.map((p) => [p.id, p.body]));
  const casbin = await build(() => buildCasbin(index, policies, bodies));
  const cedar = await build(() => buildCedar(index, policies, bodies));
  const preparedCasbin = requests.map((r) => casbin.prepare(r));
  const preparedCedar = requests.map((r) => cedar.prepare(r));

  // Agreement, on the start of the stream.
  const examples: unknown[] = [];
  let checked = 0;
  let same = 0;
  let casbinOff = 0;
  let cedarOff = 0;
  let allowed = 0;
  const reasons: Record<string, number> = {};
  const until = Date.now() + agreementS * 1000;
  for (; checked < Math.min(agreementRequests, requests.length) && Date.now() < until; checked += 1) {
    const request = requests[checked]!;
    const ours = decide(index, request);
    const a = casbin.decide(preparedCasbin[checked]);
    const b = cedar.decide(preparedCedar[checked]);
    if (ours.allowed) allowed += 1;
    const code = ours.reasons[0]?.code ?? 'none';
    reasons[code] = (reasons[code] ?? 0) + 1;
    if (a === ours.allowed && b === ours.allowed) same += 1;
    if (a !== ours.allowed) casbinOff += 1;
    if (b !== ours.allowed) cedarOff += 1;
    if ((a !== ours.allowed || b !== ours.allowed) && examples.length < 10) {
      examples.push({ request, ours: ours.allowed, reasons: ours.reasons, casbin: a, cedar: b });
    }
  }
  const agreement = {
    checked,
    all_three: same,
    rate: same / checked,
    casbin_disagrees: casbinOff,
    cedar_disagrees: cedarOff,
    allowed_share: allowed / checked,
    reasons,
    examples,
  };
  log(
    `  agreement on ${checked} requests (${(agreement.allowed_share * 100).toFixed(0)}% allowed): ` +
      `${(agreement.rate * 100).toFixed(2)}% all three; casbin differs on ${casbinOff}, Cedar on ${cedarOff}; ` +
      `our reasons: ${JSON.stringify(reasons)}`,
  );
  for (const e of examples.slice(0, 3)) log(`    differs: ${JSON.stringify(e)}`);

  // Warm-up, then rounds with the engines interleaved.
  const timings: Record<string, Timing> = {
    decide: emptyTiming(),
    evaluate: emptyTiming(),
    casbin: emptyTiming(),
    cedar: emptyTiming(),
  };
  const calls: Record<string, (i: number) => unknown> = {
    decide: (i) => decide(index, requests[i]!),
    evaluate: (i) => service.evaluate(requests[i]!),
    casbin: (i) => casbin.decide(preparedCasbin[i]),
    cedar: (i) => cedar.decide(preparedCedar[i]),
  };
  for (const name of Object.keys(calls)) time(calls[name]!, stream, 1, emptyTiming());
  await runtime.engine.log.flush();
  for (let round = 0; round < rounds; round += 1) {
    for (const name of Object.keys(calls)) {
      const ours = name === 'decide' || name === 'evaluate';
      time(calls[name]!, stream, ours ? 60 : compareS, timings[name]!);
      // The records queued by `evaluate` are written between measurements.
      await runtime.engine.log.flush();
    }
    log(
      `  round ${round + 1}/${rounds}: p50 decide ${fmt(timings['decide']!.p50.at(-1))} µs, evaluate ${fmt(
        timings['evaluate']!.p50.at(-1),
      )} µs, casbin ${fmt(timings['casbin']!.p50.at(-1))} µs (${timings['casbin']!.calls.at(-1)} calls), ` +
        `cedar ${fmt(timings['cedar']!.p50.at(-1))} µs (${timings['cedar']!.calls.at(-1)} calls)`,
    );
  }
  return { policies: policies.length, translated, agreement, timings };
}

const loadRun = (child: ChildProcess, spec: LoadRun): Promise<LoadResult> => ask<LoadResult>(child, spec);

/** A minimal Koa app: reads and parses a JSON body, answers a small JSON. */
async function startHelloWorld(): Promise<{ url: string; close: () => Promise<void> }> {
  const app = new Koa();
  app.use(bodyParser());
  app.use((ctx) => {
    ctx.body = { ok: true, received: ctx.request.body !== undefined };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

benchMain(main);
