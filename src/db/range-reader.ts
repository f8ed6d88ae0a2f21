import { workerThread } from '../threads/thread.js';

/** How a worker reaches the database. */
export interface Connection {
  uri: string;
  user: string;
  password: string;
  database: string;
}

/** What a worker of `readRanges` is given. */
export interface RangeWorkerData {
  connection: Connection;
  /** The statement's name (for the server's transaction metadata) and text. */
  name: string;
  text: string;
  /** Rows after this key, up to this one (included). */
  after: string;
  upTo: string;
  batch: number;
  /** Where a row's paging key is: a column, and a property of it when the column is a map. */
  key: [column: string, property?: string];
  bookmarks: string[];
  timeoutMs: number;
}

/** What a worker sends: a page of rows, the end of its range, or why it stopped. */
export type RangeWorkerMessage = { rows: Record<string, unknown>[] } | { done: true } | { error: string };

/**
 * Reads a paged statement over key ranges side by side, one worker thread each, with a driver of
 * its own: what the database sends is decoded off the main thread, which only takes in the rows.
 * The statement pages by a key (`$after` exclusive, `$upTo` inclusive, `$batch` rows, in key
 * order). `take` is called with every page as it comes, one at a time, on the main thread; a
 * worker reads at most one page ahead of what `take` has had. Rejects with the first worker's
 * failure (the others are stopped).
 */
export async function readRanges(
  read: Omit<RangeWorkerData, 'after' | 'upTo'> & { ranges: readonly [after: string, upTo: string][] },
  take: (rows: Record<string, unknown>[]) => void | Promise<void>,
): Promise<void> {
  const { ranges, ...common } = read;
  const workers = ranges.map(([after, upTo]) =>
    workerThread(import.meta.url, 'range-reader-worker', {
      ...common,
      after,
      upTo,
    } satisfies RangeWorkerData),
  );
  // Pages are taken in turn, whichever worker sent them: `take` never runs twice at once.
  let queue: Promise<void> = Promise.resolve();
  try {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            worker.on('message', (message: RangeWorkerMessage) => {
              if ('rows' in message) {
                queue = queue.then(async () => {
                  await take(message.rows);
                  worker.postMessage('more');
                });
                queue.catch(reject);
              } else if ('done' in message) void queue.then(resolve, reject);
              else reject(new Error(`reading ${read.name}: ${message.error}`));
            });
            worker.on('error', reject);
            worker.on('exit', (code) => {
              if (code !== 0) reject(new Error(`reading ${read.name}: a worker stopped with code ${code}`));
            });
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}
