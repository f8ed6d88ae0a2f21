import neo4j from 'neo4j-driver';
import { parentPort, workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { runInBackground } from '../threads/thread.js';
import { createDriver, fromNeo4j, isConnectivityError, toNeo4jParams } from './driver.js';
import type { WriteThreadData, WriteThreadReply, WriteThreadTask } from './write-thread.js';

/**
 * A thread that runs one write statement (src/db/write-thread.ts) with a driver of its own: it
 * takes each task's parameters, encodes the ones sent as bytes (gzip, then base64), parses the ones
 * sent as JSON text, and runs the statement in a write transaction, so that neither the
 * compression, the parsing nor the driver's packing of large values runs on the thread that sent
 * them. One task at a time, in the order sent; each
 * answered alone.
 */
const data = workerData as WriteThreadData;
const decoder = new TextDecoder();
const port = parentPort!;
runInBackground();
const driver = createDriver(data.connection.uri, data.connection.user, data.connection.password, {
  ...data.driver,
  maxPoolSize: 2,
});

async function write(task: WriteThreadTask): Promise<WriteThreadReply> {
  const session = driver.session({
    database: data.connection.database,
    defaultAccessMode: neo4j.session.WRITE,
  });
  try {
    const params: Record<string, unknown> = { ...task.params };
    for (const [name, bytes] of Object.entries(task.packed)) {
      params[name] = gzipSync(bytes, { level: 1 }).toString('base64');
    }
    for (const [name, bytes] of Object.entries(task.json)) params[name] = JSON.parse(decoder.decode(bytes));
    const result = await session.executeWrite((tx) => tx.run(data.statement.text, toNeo4jParams(params)), {
      timeout: data.txTimeoutMs,
      metadata: { app: 'principals-access-service', unit: data.statement.name },
    });
    const first = result.records[0];
    const row = first
      ? Object.fromEntries(first.keys.map((key) => [key, fromNeo4j(first.get(key))]))
      : undefined;
    return { seq: task.seq, ok: true, bookmarks: session.lastBookmarks(), row };
  } catch (err) {
    return {
      seq: task.seq,
      ok: false,
      away: isConnectivityError(err),
      message: err instanceof Error ? err.message : String(err),
    };
  } finally {
    await session.close().catch(() => undefined);
  }
}

let queue = Promise.resolve();
port.on('message', (task: WriteThreadTask | 'close' | 'warm') => {
  if (task === 'warm') {
    // A connection opened now is in the pool for the first write; one that fails is opened then.
    queue = queue.then(() =>
      driver.verifyConnectivity().then(
        () => undefined,
        () => undefined,
      ),
    );
    return;
  }
  if (task === 'close') {
    void queue.then(() => driver.close()).finally(() => process.exit(0));
    return;
  }
  queue = queue.then(async () => port.postMessage(await write(task)));
});
