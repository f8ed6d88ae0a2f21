import neo4j from 'neo4j-driver';
import { parentPort, workerData } from 'node:worker_threads';
import { createDriver } from './driver.js';
import type { RangeWorkerData, RangeWorkerMessage } from './range-reader.js';

/**
 * A worker thread reading one range of a paged statement (src/db/range-reader.ts): its own driver,
 * a page at a time in key order, each page's records sent to the main thread as plain rows. The
 * next page is read while the main thread takes in the last one, never further ahead: the main
 * thread asks for each page after the first.
 */
const data = workerData as RangeWorkerData;
const port = parentPort!;

const driver = createDriver(data.connection.uri, data.connection.user, data.connection.password);

async function page(after: string): Promise<Record<string, unknown>[]> {
  const session = driver.session({
    database: data.connection.database,
    defaultAccessMode: neo4j.session.READ,
    bookmarks: data.bookmarks,
  });
  try {
    const result = await session.run(
      data.text,
      { after, upTo: data.upTo, batch: neo4j.int(data.batch) },
      { timeout: data.timeoutMs, metadata: { app: 'principals-access-service', unit: data.name } },
    );
    return result.records.map((r) => r.toObject());
  } finally {
    await session.close();
  }
}

/** Pages the main thread has asked for and not been sent yet, and who waits for the next ask. */
let asks = 0;
let waiting: (() => void) | undefined;
port.on('message', () => {
  asks += 1;
  waiting?.();
});
async function more(): Promise<void> {
  while (asks === 0) await new Promise<void>((resolve) => (waiting = resolve));
  waiting = undefined;
  asks -= 1;
}

async function run(): Promise<void> {
  let next: Promise<Record<string, unknown>[]> | undefined = page(data.after);
  let first = true;
  while (next) {
    const rows: Record<string, unknown>[] = await next;
    const last = rows.length === data.batch ? keyOf(rows[rows.length - 1]!) : undefined;
    next = last === undefined ? undefined : page(last);
    if (!first) await more();
    first = false;
    port.postMessage({ rows } satisfies RangeWorkerMessage);
  }
  if (!first) await more();
  port.postMessage({ done: true } satisfies RangeWorkerMessage);
}

function keyOf(row: Record<string, unknown>): string {
  const [column, property] = data.key;
  const value = row[column];
  return String(property === undefined ? value : (value as Record<string, unknown>)[property]);
}

run()
  .catch((err: unknown) => {
    port.postMessage({
      error: err instanceof Error ? err.message : String(err),
    } satisfies RangeWorkerMessage);
  })
  .finally(() => {
    void driver.close();
  });
