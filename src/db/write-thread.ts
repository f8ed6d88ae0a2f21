import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { unavailable } from '../errors/errors.js';
import { workerThread } from '../threads/thread.js';
import type { DriverOptions } from './driver.js';
import type { Connection } from './range-reader.js';

/** What a write thread is started with. */
export interface WriteThreadData {
  connection: Connection;
  driver: Partial<DriverOptions>;
  txTimeoutMs: number;
  statement: { name: string; text: string };
}

/**
 * A write sent to the thread: plain parameters, parameters sent as bytes to be compressed
 * (`packed`), and parameters sent as JSON text to be parsed there (`json`); bytes are moved, not
 * shared.
 */
export interface WriteThreadTask {
  seq: number;
  params: Record<string, unknown>;
  packed: Record<string, Uint8Array>;
  json: Record<string, Uint8Array>;
}

/** The first row a statement answered, as plain values (`fromNeo4j`). */
export type WriteThreadRow = Record<string, unknown>;

export type WriteThreadReply =
  | { seq: number; ok: true; bookmarks: string[]; row: WriteThreadRow | undefined }
  | { seq: number; ok: false; away: boolean; message: string };

/** How long a closing thread may take to finish its writes and close its driver. */
const CLOSE_WAIT_MS = 10_000;

/**
 * One write statement run on a worker thread with a driver of its own
 * (src/db/write-thread-worker.ts): parameters given as bytes are gzip-compressed and sent as
 * base64 text, parameters given as JSON text are parsed, the compression, the parsing and the
 * driver's packing done there, never on the thread that
 * answers requests. The thread starts with the first write, and again with the write after it
 * stops for any reason (the writes it held then fail). A write that cannot reach the database
 * rejects with an `UNAVAILABLE` error; any other failure with what the database said. What it
 * commits is handed to `committed` (the instance's bookmarks), so that a read after it sees it; a
 * write answers the statement's first row.
 */
export class WriteThread {
  private worker: Worker | undefined;
  private seq = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (row: WriteThreadRow | undefined) => void; reject: (err: Error) => void }
  >();

  constructor(
    private readonly data: WriteThreadData,
    private readonly committed: (bookmarks: string[]) => Promise<void>,
  ) {}

  async write(
    params: Record<string, unknown>,
    packed: Record<string, Uint8Array>,
    json: Record<string, Uint8Array> = {},
  ): Promise<WriteThreadRow | undefined> {
    const worker = this.start();
    const seq = (this.seq += 1);
    // A copy of just the bytes, whose memory then moves to the thread without another copy.
    const move = (values: Record<string, Uint8Array>): Record<string, Uint8Array> =>
      Object.fromEntries(Object.entries(values).map(([name, bytes]) => [name, new Uint8Array(bytes)]));
    const task: WriteThreadTask = { seq, params, packed: move(packed), json: move(json) };
    const written = new Promise<WriteThreadRow | undefined>((resolve, reject) =>
      this.waiting.set(seq, { resolve, reject }),
    );
    worker.ref();
    worker.postMessage(
      task,
      [...Object.values(task.packed), ...Object.values(task.json)].map(
        (bytes) => bytes.buffer as ArrayBuffer,
      ),
    );
    return written;
  }

  /** Stops the thread once the writes under way are done. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    worker.ref();
    worker.postMessage('close');
    const timer = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
    try {
      await once(worker, 'exit');
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Starts the thread and its connection now rather than with the first write, so that the first
   * write is as prompt as the next ones (a list of recorded decisions trusts them to be).
   */
  warm(): void {
    this.start().postMessage('warm');
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = workerThread(import.meta.url, 'write-thread-worker', this.data);
    worker.on('message', (reply: WriteThreadReply) => void this.settle(reply));
    // An error also ends the thread: what it held fails on `exit`.
    worker.on('error', () => undefined);
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      const stopped = new Error(`the write thread of ${this.data.statement.name} stopped (code ${code})`);
      for (const { reject } of this.waiting.values()) reject(stopped);
      this.waiting.clear();
    });
    this.worker = worker;
    return worker;
  }

  private async settle(reply: WriteThreadReply): Promise<void> {
    const waiter = this.waiting.get(reply.seq);
    if (!waiter) return;
    this.waiting.delete(reply.seq);
    // An idle thread does not keep the process running.
    if (this.waiting.size === 0) this.worker?.unref();
    if (reply.ok) {
      await this.committed(reply.bookmarks).catch(() => undefined);
      waiter.resolve(reply.row);
    } else if (reply.away) {
      waiter.reject(unavailable('the database is unreachable; retry shortly', 5, new Error(reply.message)));
    } else waiter.reject(new Error(reply.message));
  }
}
