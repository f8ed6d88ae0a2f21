/**
 * The HTTP load generator of the benchmarks, in a process of its own so that it never shares an
 * event loop with the servers it measures. It takes one run at a time over IPC: a closed-loop
 * run with autocannon (each connection sends its next request when the last is answered: the
 * saturated throughput, or autocannon's own pacing with `rate`), or an open-loop run at a fixed
 * rate (bench/open-loop.ts: latencies counted from when each request was due). `{ kind: 'stop' }`
 * ends the open-loop run under way early (it answers that run's figures as usual, and nothing of
 * its own).
 */
import autocannon from 'autocannon';
import { openLoop, type OpenLoopResult, type OpenLoopRun } from './open-loop.js';

export interface LoadRun {
  url: string;
  connections: number;
  seconds: number;
  /** Requests per second for all connections together; unset: as fast as they answer. */
  rate?: number;
  headers: Record<string, string>;
  /** Sent in turn by each connection. */
  requests: { method: 'POST' | 'GET'; path: string; body?: string }[];
}

export interface LoadResult {
  requests_per_s: number;
  total: number;
  /** Latencies in ms (autocannon records whole milliseconds). */
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

export type GeneratorMessage =
  ({ kind: 'closed' } & LoadRun) | ({ kind: 'open' } & OpenLoopRun) | { kind: 'stop' };

async function closedLoop(spec: LoadRun): Promise<LoadResult> {
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    headers: { 'content-type': 'application/json', ...spec.headers },
    requests: spec.requests,
  });
  return {
    requests_per_s: result.requests.average,
    total: result.requests.total,
    latency: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.average,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** The open-loop run under way, which a stop message ends. */
let running: AbortController | undefined;

process.on('message', (message: GeneratorMessage | LoadRun) => {
  if ('kind' in message && message.kind === 'stop') {
    running?.abort();
    return;
  }
  let work: Promise<LoadResult | OpenLoopResult>;
  if ('kind' in message && message.kind === 'open') {
    const controller = new AbortController();
    running = controller;
    work = openLoop(message, controller.signal).finally(() => {
      if (running === controller) running = undefined;
    });
  } else work = closedLoop(message);
  work.then(
    (result) => process.send!({ ok: true, result }),
    (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
