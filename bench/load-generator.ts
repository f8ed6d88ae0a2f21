/**
 * The HTTP load generator of bench/decisions.ts, in a process of its own so that it never shares
 * an event loop (or a core) with the servers it measures. It takes one run at a time over IPC
 * and answers with autocannon's figures.
 */
import autocannon from 'autocannon';

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

async function run(spec: LoadRun): Promise<LoadResult> {
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

process.on('message', (spec: LoadRun) => {
  run(spec).then(
    (result) => process.send!({ ok: true, result }),
    (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
