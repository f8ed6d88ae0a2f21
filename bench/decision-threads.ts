/**
 * What a batch of decisions costs the event loop that answers single decisions, decided in place
 * (in slices of a few milliseconds) against decided on a decision thread over a replica of the
 * index (src/decisions/decision-thread.ts), in one process, without HTTP: the organisation's index
 * of bench/index-generator.ts (generated in a process of its own, read back from its snapshot)
 * and its request stream, `DecisionService.batch` of BENCH_BATCH requests, BENCH_BATCHES times
 * one after another, each way in turn, in BENCH_ROUNDS rounds. Per batch: the event loop's busy
 * time (its utilisation, which counts what the batch costs the loop whatever the other cores do),
 * the wall time, and the longest the loop was held at once (an interval timer's lateness). Medians
 * over the rounds, and the thread's ÷ in place. The records are made and queued as the service
 * makes them, and flushed every ten batches to a writer that takes them at once (the service's
 * recording thread writes them elsewhere).
 *
 *   npm run bench:decision-threads
 *
 * Knobs: BENCH_PRINCIPALS (20000), BENCH_BATCH (1000), BENCH_BATCHES (100), BENCH_ROUNDS (5).
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DecisionThreads } from '../src/decisions/decision-thread.js';
import { DecisionLog } from '../src/decisions/records.js';
import type { RecordWriter } from '../src/decisions/record-writer.js';
import { DecisionService } from '../src/decisions/service.js';
import { readSnapshot } from '../src/decisions/snapshot.js';
import type { Database } from '../src/db/database.js';
import { createLogger } from '../src/logging/logger.js';
import type { DecisionRequest } from '../src/schemas/decisions.js';
import { ask, env, log, median } from './harness.js';
import type { GenerateResult, GenerateRun } from './index-generator.js';

const PRINCIPALS = env('BENCH_PRINCIPALS', 20_000);
const BATCH = env('BENCH_BATCH', 1_000);
const BATCHES = env('BENCH_BATCHES', 100);
const ROUNDS = env('BENCH_ROUNDS', 5);

/** A writer that takes every batch at once: what the recording thread costs this one is a hand-over. */
const handedOver: RecordWriter = {
  write: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

interface Figures {
  busyMs: number;
  wallMs: number;
  heldMs: number;
}

async function measure(
  service: DecisionService,
  decisionLog: DecisionLog,
  requests: DecisionRequest[][],
): Promise<Figures> {
  const held = monitorEventLoopDelay({ resolution: 1 });
  const before = performance.eventLoopUtilization();
  const started = performance.now();
  held.enable();
  for (let i = 0; i < BATCHES; i += 1) {
    await service.batch(requests[i % requests.length]!);
    if (i % 10 === 9) await decisionLog.flush();
  }
  held.disable();
  const wall = performance.now() - started;
  const { active } = performance.eventLoopUtilization(before);
  return { busyMs: active / BATCHES, wallMs: wall / BATCHES, heldMs: held.max / 1e6 };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pas-decision-threads-'));
  const file = path.join(dir, 'index.snapshot');
  const run: GenerateRun = {
    principals: PRINCIPALS,
    groups: Math.max(120, Math.round(PRINCIPALS / 20)),
    policies: Math.max(300, Math.round(PRINCIPALS / 10)),
    resources: Math.max(1_500, Math.round(PRINCIPALS / 5)),
    file,
    database: 'bench-decision-threads',
    feed: [],
  };
  log(`generating an organisation of ${PRINCIPALS} principals`);
  const child = fork(path.join(path.dirname(new URL(import.meta.url).pathname), 'index-generator.ts'), [], {
    execArgv: ['--import', 'tsx', '--expose-gc', '--max-old-space-size=8192'],
    stdio: 'inherit',
  });
  let generated: GenerateResult;
  try {
    generated = await ask<GenerateResult>(child, run);
  } finally {
    child.kill();
  }
  const { index } = await readSnapshot(file, run.database);
  await rm(dir, { recursive: true, force: true });
  const logger = createLogger('warn');
  const decisionLog = new DecisionLog({} as Database, {
    logger,
    retentionDays: 30,
    maxPending: 1e9,
    writer: handedOver,
  });
  const threads = new DecisionThreads(1, logger);
  threads.seed(index, (work) => work());
  const inPlace = new DecisionService(index, decisionLog);
  const onThread = new DecisionService(index, decisionLog, threads);
  const stream = generated.requests as DecisionRequest[];
  const requests: DecisionRequest[][] = [];
  for (let at = 0; at + BATCH <= stream.length && requests.length < 20; at += BATCH)
    requests.push(stream.slice(at, at + BATCH));
  if (requests.length === 0) throw new Error(`the request stream holds fewer than ${BATCH} requests`);
  // Both ways warmed up before anything counts.
  for (const service of [inPlace, onThread])
    for (let i = 0; i < 20; i += 1) await service.batch(requests[0]!);

  const rounds: { inPlace: Figures; thread: Figures }[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const a = await measure(inPlace, decisionLog, requests);
    const b = await measure(onThread, decisionLog, requests);
    rounds.push({ inPlace: a, thread: b });
    log(
      `round ${round}: in place busy ${a.busyMs.toFixed(2)} wall ${a.wallMs.toFixed(2)} held ${a.heldMs.toFixed(1)} ms; ` +
        `thread busy ${b.busyMs.toFixed(2)} wall ${b.wallMs.toFixed(2)} held ${b.heldMs.toFixed(1)} ms`,
    );
  }
  await threads.close();
  const of = (way: 'inPlace' | 'thread', key: keyof Figures): number =>
    median(rounds.map((r) => r[way][key]));
  console.log(`\nbatch of ${BATCH} over ${PRINCIPALS} principals, medians of ${ROUNDS} rounds of ${BATCHES}`);
  console.log('measure                                   in place    thread   thread ÷ in place');
  for (const [label, key] of [
    ['event-loop busy per batch (ms)', 'busyMs'],
    ['wall per batch (ms)', 'wallMs'],
    ['longest hold of the loop (ms)', 'heldMs'],
  ] as const) {
    const a = of('inPlace', key);
    const b = of('thread', key);
    console.log(
      `${label.padEnd(40)} ${a.toFixed(2).padStart(9)} ${b.toFixed(2).padStart(9)} ${(b / a).toFixed(2).padStart(12)}`,
    );
  }
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
