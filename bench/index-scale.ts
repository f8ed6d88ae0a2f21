/**
 * The decision index at enterprise sizes, up to ten million principals, in the service as it runs,
 * without loading Neo4j: at ten million a store would take hours to load and some 60 GB of disk,
 * where what is measured here is the index. For each size:
 *
 * 1. an organisation (bench/org.ts `OrgStream`, its manager tree and group forest in proportion)
 *    with the resources, policies and delegations of bench/policy-set.ts is generated in a process
 *    of its own (bench/index-generator.ts) and put straight into a `PolicyIndex`: the build, in
 *    process, without the database's reads (bench:scale measures those at a million); the heap it
 *    holds, what it holds outside the heap, the process's RSS; the snapshot written from it (size,
 *    seconds);
 * 2. the service starts on an empty Neo4j whose identity and change-feed place the snapshot carries,
 *    so that it reads the index from the snapshot: seconds to ready (Neo4j already up), then its
 *    heap after a forced collection, the index outside the heap, RSS;
 * 3. `POST /v1/decisions/evaluate` at a fixed BENCH_RATE per second, open loop (latency counted from
 *    each request's due time), BENCH_ROUNDS rounds of BENCH_FIXED_S seconds after a warm-up: p50,
 *    p99, p99.9, max, the service's event-loop delay and its GC pauses;
 * 4. `GET /v1/resources/access` (any registered resource, and the 2% of a sample reaching the most
 *    principals) and `GET /v1/principals/{id}/access` (anyone, and the 2% of a sample reached by
 *    the most policies), BENCH_REQUESTS calls each, one at a time: p50 and p99.
 *
 * Neo4j holds none of these principals, so only what the index answers is asked. The policies,
 * resources and groups keep the proportions of bench:scale by default (a tenth, a fifth and a
 * twentieth of the principals) up to a million, and stay at a million's counts beyond: an
 * organisation's non-human identities multiply its principals, not its policies.
 *
 *   npm run bench:index                                   # 1,000,000 and 10,000,000
 *   BENCH_INDEX_SIZES=100000,1000000 npm run bench:index   # smaller
 *
 * Knobs: BENCH_INDEX_SIZES (1000000,10000000), BENCH_INDEX_POLICIES, BENCH_INDEX_RESOURCES and
 * BENCH_INDEX_GROUPS (the proportions above when unset), BENCH_RATE (1000), BENCH_FIXED_S (15),
 * BENCH_WARMUP_S (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10), BENCH_REQUESTS (200),
 * BENCH_GENERATOR_HEAP (MB for the generator process: 4096 per million principals, from 8192 to 16384).
 * Results also go to bench/results/index-scale-*.json.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { decisionRepository } from '../src/decisions/repository.js';
import { startServer } from '../src/http/server.js';
import { createLogger } from '../src/logging/logger.js';
import { createRuntime } from '../src/runtime.js';
import {
  adminClient,
  ask,
  benchConfig,
  benchMain,
  benchNeo4j,
  env,
  fmt,
  forkBench,
  gc,
  LatencyRounds,
  log,
  median,
  observed,
  type Observation,
  ResultTable,
  writeResults,
} from './harness.js';
import type { GenerateResult, GenerateRun } from './index-generator.js';
import type { GeneratorMessage } from './load-generator.js';
import type { OpenLoopResult } from './open-loop.js';

const MB = 1024 * 1024;
const SIZES = (process.env['BENCH_INDEX_SIZES'] || '1000000,10000000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);
const RATE = env('BENCH_RATE', 1_000);
const FIXED_S = env('BENCH_FIXED_S', 15);
const WARMUP_S = env('BENCH_WARMUP_S', 10);
const ROUNDS = Math.max(1, env('BENCH_ROUNDS', 3));
const CONNECTIONS = env('BENCH_CONNECTIONS', 10);
const REQUESTS = env('BENCH_REQUESTS', 200);
const TARGET_LOOKUP_P99_MS = 50;

const label = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

/** The counts of an organisation of `principals`. */
function shapeOf(principals: number): { groups: number; policies: number; resources: number } {
  const upTo = Math.min(principals, 1_000_000);
  return {
    groups: env('BENCH_INDEX_GROUPS', Math.round(upTo / 20)),
    policies: env('BENCH_INDEX_POLICIES', Math.round(upTo / 10)),
    resources: env('BENCH_INDEX_RESOURCES', Math.round(upTo / 5)),
  };
}

interface SizeFigures {
  principals: number;
  generated: Omit<GenerateResult, 'requests' | 'connected' | 'anyone' | 'popular' | 'registered'>;
  start_s: number;
  heap_mb: number;
  off_heap_mb: number;
  rss_mb: number;
  fixed: (OpenLoopResult & Observation)[];
  lookups: Record<string, { median: number; p99: number }>;
}

/** Generates the organisation's index in a process of its own and writes its snapshot. */
async function generated(run: GenerateRun): Promise<GenerateResult> {
  const heap = env(
    'BENCH_GENERATOR_HEAP',
    Math.min(16_384, Math.max(8_192, Math.ceil(run.principals / 1e6) * 4_096)),
  );
  const child = fork(path.join(path.dirname(new URL(import.meta.url).pathname), 'index-generator.ts'), [], {
    execArgv: ['--import', 'tsx', '--expose-gc', `--max-old-space-size=${heap}`],
    stdio: 'inherit',
  });
  try {
    return await ask<GenerateResult>(child, run);
  } finally {
    child.kill();
  }
}

async function measure(size: number, neo4j: Awaited<ReturnType<typeof benchNeo4j>>): Promise<SizeFigures> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pas-index-scale-'));
  const logger = createLogger('warn');
  const settings = {
    NEO4J_DATA_DIR: dir,
    // The snapshot is read at start; none is written during the measurements.
    INDEX_SNAPSHOT: 'on',
    INDEX_SNAPSHOT_INTERVAL_S: '86400',
    PRIVILEGE_RISK_INTERVAL_S: '86400',
    RISK_REFRESH_INTERVAL_S: '86400',
    DECISION_MAX_PENDING: '2000000',
  };
  try {
    // What the snapshot must say to be read: this database, and where its change feed stands.
    const first = await createRuntime({
      config: benchConfig({ ...settings, INDEX_SNAPSHOT: 'off' }),
      logger,
      neo4j,
    });
    const database = await decisionRepository.databaseId(first.db);
    const feed = first.feed.delivered();
    await first.close(1_000);

    const shape = shapeOf(size);
    log(
      `${label(size)}: generating ${size} principals, ${shape.groups} groups, ${shape.resources} resources, ${shape.policies} policies`,
    );
    const file = path.join(dir, 'index', 'decision-index.snapshot');
    const made = await generated({ principals: size, ...shape, file, database, feed });
    const { requests, connected, anyone, popular, registered, ...generatedFigures } = made;
    log(
      `  built in ${fmt(made.build_s)} s (generating ${fmt(made.generate_s)} s besides): heap ${fmt(made.heap_mb)} MB, ` +
        `outside the heap ${fmt(made.off_heap_mb)} MB, RSS ${fmt(made.rss_mb)} MB; snapshot ${fmt(made.snapshot_mb)} MB ` +
        `in ${fmt(made.snapshot_write_s)} s; ${JSON.stringify(made.counts)}`,
    );

    gc();
    const t0 = performance.now();
    const runtime = await createRuntime({ config: benchConfig(settings), logger, neo4j });
    const startS = (performance.now() - t0) / 1000;
    const { index } = runtime.engine;
    if (index.principals.size !== made.counts.principals) {
      throw new Error(
        `the service holds ${index.principals.size} principals, not the snapshot's ${made.counts.principals}`,
      );
    }
    const server = await startServer(runtime, {
      port: 0,
      host: '127.0.0.1',
      shutdownTimeoutMs: 5_000,
      logger,
    });
    server.http.keepAliveTimeout = 120_000;
    const base = `http://127.0.0.1:${server.address.port}`;
    const client = adminClient(base);
    const loadGenerator = forkBench('load-generator.ts');
    try {
      gc();
      const heapMb = process.memoryUsage().heapUsed / MB;
      const offHeapMb = index.offHeapBytes / MB;
      const rssMb = process.memoryUsage().rss / MB;
      log(
        `  the service read it in ${fmt(startS)} s to ready: heap ${fmt(heapMb)} MB, outside the heap ${fmt(offHeapMb)} MB, RSS ${fmt(rssMb)} MB`,
      );
      const headers = await client.headers();
      const bodies = requests.map((r) => ({
        method: 'POST' as const,
        path: '/v1/decisions/evaluate',
        body: JSON.stringify(r),
      }));
      const send = <T>(message: GeneratorMessage): Promise<T> => ask<T>(loadGenerator, message);
      if (WARMUP_S > 0) {
        await send({
          kind: 'closed',
          url: base,
          connections: CONNECTIONS,
          seconds: WARMUP_S,
          headers,
          requests: bodies,
        });
      }
      const fixed: (OpenLoopResult & Observation)[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        await runtime.engine.log.flush();
        const { result, seen } = await observed(() =>
          send<OpenLoopResult>({
            kind: 'open',
            url: base,
            rate: RATE,
            seconds: FIXED_S,
            connections: CONNECTIONS,
            headers,
            requests: bodies,
          }),
        );
        if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
          throw new Error(
            `evaluate at ${RATE}/s: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
          );
        }
        fixed.push({ ...result, ...seen });
        log(
          `  decisions at ${RATE}/s, round ${round + 1}/${ROUNDS}: p50 ${fmt(result.latency.p50)} p99 ${fmt(result.latency.p99)} ` +
            `max ${fmt(result.latency.max)} ms; loop max ${fmt(seen.loop_max_ms)} ms; GC ${seen.gc.count}× ` +
            `(mark-compact ${seen.gc.major}), longest ${fmt(seen.gc.max_ms)} ms`,
        );
      }
      await runtime.engine.log.flush();

      const series: Record<string, string[]> = {
        'GET /v1/resources/access (any registered resource)': registered.map(
          (r) => `/v1/resources/access?type=${r.type}&identifier=${encodeURIComponent(r.identifier)}`,
        ),
        'GET /v1/resources/access (well-connected, top 2%)': popular.map(
          (r) => `/v1/resources/access?type=${r.type}&identifier=${encodeURIComponent(r.identifier)}`,
        ),
        'GET /v1/principals/{id}/access (anyone)': anyone.map((id) => `/v1/principals/${id}/access`),
        'GET /v1/principals/{id}/access (well-connected, top 2%)': connected.map(
          (id) => `/v1/principals/${id}/access`,
        ),
      };
      const lookups: SizeFigures['lookups'] = {};
      for (const [name, paths] of Object.entries(series)) {
        const rounds = new LatencyRounds();
        for (let round = 0; round < ROUNDS; round += 1) {
          const samples: number[] = [];
          for (let i = 0; i < REQUESTS; i += 1) {
            const t = performance.now();
            await client.json('GET', paths[(round * REQUESTS + i) % paths.length]!, undefined, {
              expect: [200],
            });
            samples.push(performance.now() - t);
          }
          rounds.add(samples);
        }
        lookups[name] = { median: rounds.median, p99: rounds.p99 };
        log(`  ${name}: median ${fmt(rounds.median)} ms, p99 ${fmt(rounds.p99)} ms`);
      }
      return {
        principals: size,
        generated: generatedFigures,
        start_s: startS,
        heap_mb: heapMb,
        off_heap_mb: offHeapMb,
        rss_mb: rssMb,
        fixed,
        lookups,
      };
    } finally {
      loadGenerator.kill();
      await server.shutdown();
      await runtime.close(1_000);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) log('note: run node with --expose-gc for the heap figures');
  const neo4j = await benchNeo4j(log);
  const figures: SizeFigures[] = [];
  try {
    for (const size of SIZES) figures.push(await measure(size, neo4j));
  } finally {
    await neo4j.stop();
  }
  const table = new ResultTable();
  for (const f of figures) {
    const n = label(f.principals);
    table.add({
      scenario: `${n}: index build in process (no database reads)`,
      unit: 's',
      median: f.generated.build_s,
      rounds: [f.generated.build_s],
      note: `generating ${fmt(f.generated.generate_s)} s besides`,
    });
    table.add({
      scenario: `${n}: generator heap / outside the heap / RSS`,
      unit: 'MB',
      median: f.generated.heap_mb,
      p99: f.generated.off_heap_mb,
      rounds: [f.generated.rss_mb],
      note: 'p99 column: outside the heap; per round: RSS',
    });
    table.add({
      scenario: `${n}: snapshot size / seconds to write`,
      unit: 'MB',
      median: f.generated.snapshot_mb,
      p99: f.generated.snapshot_write_s,
      rounds: [],
      note: 'p99 column: seconds',
    });
    table.add({
      scenario: `${n}: service start, index read from the snapshot, to ready`,
      unit: 's',
      median: f.start_s,
      rounds: [f.start_s],
      note: 'Neo4j already up',
    });
    table.add({
      scenario: `${n}: service heap after gc / outside the heap / RSS`,
      unit: 'MB',
      median: f.heap_mb,
      p99: f.off_heap_mb,
      rounds: [f.rss_mb],
      note: 'p99 column: outside the heap; per round: RSS',
    });
    const p99s = f.fixed.map((r) => r.latency.p99);
    table.add({
      scenario: `${n}: evaluate at ${RATE}/s, p50 / p99`,
      unit: 'ms',
      median: median(f.fixed.map((r) => r.latency.p50)),
      p99: median(p99s),
      rounds: p99s,
    });
    table.add({
      scenario: `${n}: evaluate at ${RATE}/s, p99.9 / max`,
      unit: 'ms',
      median: median(f.fixed.map((r) => r.latency.p999)),
      p99: median(f.fixed.map((r) => r.latency.max)),
      rounds: f.fixed.map((r) => r.latency.max),
      note: 'median column p99.9, p99 column max',
    });
    table.add({
      scenario: `${n}: longest GC pause at ${RATE}/s; event-loop delay max`,
      unit: 'ms',
      median: median(f.fixed.map((r) => r.gc.max_ms)),
      p99: median(f.fixed.map((r) => r.loop_max_ms)),
      rounds: f.fixed.map((r) => r.gc.max_ms),
      note: `mark-compact collections ${f.fixed.map((r) => r.gc.major).join(' / ')}; p99 column: loop max`,
    });
    for (const [name, l] of Object.entries(f.lookups)) {
      table.add({
        scenario: `${n}: ${name}`,
        unit: 'ms',
        median: l.median,
        p99: l.p99,
        target: TARGET_LOOKUP_P99_MS,
        direction: 'max',
        on: 'p99',
        rounds: [l.p99],
      });
    }
  }
  if (figures.length >= 2) {
    const [small, large] = [figures[0]!, figures[figures.length - 1]!];
    const ratio =
      median(large.fixed.map((r) => r.latency.p99)) / median(small.fixed.map((r) => r.latency.p99));
    table.add({
      scenario: `evaluate p99 at ${RATE}/s, ${label(large.principals)} ÷ ${label(small.principals)}`,
      unit: 'ratio',
      median: ratio,
      rounds: [ratio],
    });
  }
  table.print(70);
  log(
    `machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
  );
  log(
    `results written to ${await writeResults('index-scale', { sizes: SIZES, figures, table: table.rows })}`,
  );
}

benchMain(main);
