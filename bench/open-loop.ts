/**
 * A fixed-rate HTTP load of its own, for tail latencies that mean what they say. Requests are
 * sent on a schedule (one every 1/rate seconds) whatever the server does, and each latency counts
 * from the moment its request was due, not from when a connection was free to send it: a server
 * that stalls for 100 ms at 1,000 requests/s is charged for the hundred requests that waited, not
 * for the one that was in flight (closed-loop generators such as autocannon, which wait for an
 * answer before sending the next request, leave those out).
 *
 * It speaks HTTP/1.1 over keep-alive sockets with each request's bytes prepared beforehand and a
 * minimal response reader (status line, Content-Length, body), so that its own cost per request
 * stays a few microseconds. Its event-loop delay is measured too: a generator that stalls would
 * show up as server latency, and this figure says whether it did.
 *
 * A connection carries one request at a time. A request due while every connection is busy waits
 * for one, or, with `maxConnections` above `connections`, opens another, as a growing population
 * of clients would. A fixed pool adds the generator's own queue to the latency once every
 * connection is busy (at 2,000 requests/s, ten connections are as soon as a round trip takes
 * 5 ms); a growing one moves that queue into the server. How many requests waited, for how long,
 * and how many connections were open at most, are reported.
 *
 * A run can be ended early through `stop` (for a load that lasts as long as something else does:
 * a sync, a report): no request is scheduled after it, and those already due are still answered
 * and counted.
 */
import net from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface OpenLoopRun {
  url: string;
  /** Requests per second, for all connections together. */
  rate: number;
  seconds: number;
  /** Connections opened at the start. */
  connections: number;
  /**
   * The most open at once (`connections` unless set: a fixed pool); a request due while all of
   * them are busy waits for one to be free.
   */
  maxConnections?: number;
  headers: Record<string, string>;
  requests: { method: 'POST' | 'GET'; path: string; body?: string }[];
}

export interface OpenLoopResult {
  /** For how long requests were scheduled: `seconds`, or less when the run was stopped. */
  seconds: number;
  sent: number;
  completed: number;
  requests_per_s: number;
  /** Latencies in ms, from when each request was due until its answer's last byte. */
  latency: { p50: number; p90: number; p99: number; p999: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  /** Requests still unanswered this long after the last was due. */
  timeouts: number;
  /** The generator's own longest event-loop delay, ms (its share of any latency). */
  generator_lag_max_ms: number;
  /** The most connections open at once. */
  connections_max: number;
  /** Requests that waited for a free connection (every one was busy, at `maxConnections`). */
  queued: number;
  /** The longest such wait, from the request's due time until it was sent, ms. */
  queued_max_ms: number;
}

const DRAIN_MS = 5_000;

function encode(run: OpenLoopRun, host: string): Buffer[] {
  const common = Object.entries({ 'content-type': 'application/json', ...run.headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return run.requests.map((r) => {
    const body = r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body, 'utf8');
    const head =
      `${r.method} ${r.path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n${common}` +
      `content-length: ${body.length}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), body]);
  });
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection carrying one request at a time. */
class Connection {
  private readonly socket: net.Socket;
  private buffer: Buffer | undefined;
  private dueAt = 0;
  busy = false;
  closed = false;

  constructor(
    port: number,
    host: string,
    private readonly onAnswer: (conn: Connection, dueAt: number, status: number) => void,
    private readonly onFailure: (conn: Connection, dueAt: number | undefined) => void,
  ) {
    this.socket = net.connect({ port, host, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    const fail = (): void => {
      if (this.closed) return;
      this.closed = true;
      this.onFailure(this, this.busy ? this.dueAt : undefined);
    };
    this.socket.on('error', fail);
    this.socket.on('close', fail);
  }

  send(bytes: Buffer, dueAt: number): void {
    this.busy = true;
    this.dueAt = dueAt;
    this.buffer = undefined;
    this.socket.write(bytes);
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    const data = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    const end = data.indexOf(HEADER_END);
    if (end < 0) {
      this.buffer = data;
      return;
    }
    const head = data.toString('latin1', 0, end);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      // Every answer measured here has a length; anything else is a failure of the run.
      this.destroy();
      this.onFailure(this, this.dueAt);
      return;
    }
    if (data.length < end + 4 + Number(length[1])) {
      this.buffer = data;
      return;
    }
    this.buffer = undefined;
    this.busy = false;
    const status = Number(head.slice(9, 12));
    if (/\r\nconnection:\s*close/i.test(head)) this.destroy();
    this.onAnswer(this, this.dueAt, status);
  }
}

const nowMs = (): number => performance.now();

export async function openLoop(run: OpenLoopRun, stop?: AbortSignal): Promise<OpenLoopResult> {
  const target = new URL(run.url);
  const host = target.hostname;
  const port = Number(target.port);
  const bytes = encode(run, target.host);
  /** Requests the run sends: all it plans, or those scheduled before it was stopped. */
  let total = Math.round(run.rate * run.seconds);
  let stopped = false;
  const interval = 1000 / run.rate;
  const latencies = new Float64Array(total);
  let completed = 0;
  let lastAnswerAt = 0;
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  /** Due times of requests waiting for a free connection, oldest first. */
  const waiting: number[] = [];
  let waitingHead = 0;
  let queuedMax = 0;
  const idle: Connection[] = [];
  const connections = new Set<Connection>();
  const most = Math.max(run.connections, run.maxConnections ?? run.connections);
  let connectionsMax = 0;
  let finish: (() => void) | undefined;
  const lag = monitorEventLoopDelay({ resolution: 1 });

  const next = (conn: Connection): void => {
    if (conn.closed) return;
    if (waitingHead < waiting.length) {
      const dueAt = waiting[waitingHead++]!;
      queuedMax = Math.max(queuedMax, nowMs() - dueAt);
      conn.send(bytes[sent++ % bytes.length]!, dueAt);
    } else idle.push(conn);
  };
  const settled = (): void => {
    if (completed + errors === total) finish?.();
  };
  const open = (): Connection => {
    const conn = new Connection(
      port,
      host,
      (c, dueAt, status) => {
        lastAnswerAt = nowMs();
        latencies[completed++] = lastAnswerAt - dueAt;
        if (status < 200 || status > 299) non2xx += 1;
        if (c.closed) replace(c);
        else next(c);
        settled();
      },
      (c, dueAt) => {
        if (dueAt !== undefined) errors += 1;
        replace(c);
        settled();
      },
    );
    connections.add(conn);
    connectionsMax = Math.max(connectionsMax, connections.size);
    return conn;
  };
  /** A connection that closed: another takes its place while the pool is below its first size. */
  const replace = (gone: Connection): void => {
    connections.delete(gone);
    const at = idle.indexOf(gone);
    if (at >= 0) idle.splice(at, 1);
    if (connections.size < run.connections && (finish === undefined || completed + errors < total)) {
      next(open());
    }
  };
  for (let i = 0; i < run.connections; i += 1) idle.push(open());

  lag.enable();
  const started = nowMs();
  let scheduled = 0;
  await new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const end = (): void => {
      clearTimeout(timer);
      stopped = true;
      total = scheduled;
      resolve();
    };
    if (stop?.aborted) {
      end();
      return;
    }
    stop?.addEventListener('abort', end, { once: true });
    const tick = (): void => {
      const now = nowMs();
      while (scheduled < total && started + scheduled * interval <= now) {
        const dueAt = started + scheduled * interval;
        scheduled += 1;
        const conn = idle.pop() ?? (connections.size < most ? open() : undefined);
        if (conn) conn.send(bytes[sent++ % bytes.length]!, dueAt);
        else waiting.push(dueAt);
      }
      if (scheduled < total) {
        timer = setTimeout(tick, Math.max(0, started + scheduled * interval - nowMs()));
        return;
      }
      stop?.removeEventListener('abort', end);
      resolve();
    };
    tick();
  });
  const seconds = stopped ? (total * interval) / 1000 : run.seconds;
  const lastDue = started + (total - 1) * interval;
  await new Promise<void>((resolve) => {
    finish = resolve;
    settled();
    setTimeout(resolve, Math.max(0, lastDue + DRAIN_MS - nowMs()));
  });
  lag.disable();
  for (const conn of connections) conn.destroy();

  const sorted = latencies.slice(0, completed).sort();
  const at = (p: number): number =>
    sorted.length === 0
      ? NaN
      : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    seconds,
    sent: scheduled,
    completed,
    requests_per_s: completed / Math.max(seconds, (lastAnswerAt - started) / 1000),
    latency: {
      p50: at(50),
      p90: at(90),
      p99: at(99),
      p999: at(99.9),
      max: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
      mean: sorted.length > 0 ? sum / sorted.length : NaN,
    },
    non2xx,
    errors,
    timeouts: total - completed - errors,
    generator_lag_max_ms: lag.max / 1e6,
    connections_max: connectionsMax,
    queued: waiting.length,
    queued_max_ms: queuedMax,
  };
}
