import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Database } from '../db/database.js';
import type { WriteThread } from '../db/write-thread.js';
import { decisionRepository as repo, type StoredBatch } from './repository.js';

const gzipAsync = promisify(gzip);

/** A sealed batch of decision records: its JSON lines, and what the stored node says of them. */
export interface BatchToWrite {
  lines: Uint8Array;
  batch: Omit<StoredBatch, 'body'>;
}

/**
 * Writes sealed batches of decision records, one `(:DecisionBatch)` node each. A write that fails
 * because the database cannot be reached rejects with an `UNAVAILABLE` error (the batch waits);
 * any other failure rejects with what the database said.
 */
export interface RecordWriter {
  write(batch: BatchToWrite): Promise<void>;
  /** Stops taking writes; those under way finish first. */
  close(): Promise<void>;
}

/**
 * Writes on this thread through the service's own driver, compressing on the thread pool: for a
 * database whose address is not known (so no other driver can be opened).
 */
export class InThreadRecordWriter implements RecordWriter {
  constructor(private readonly db: Database) {}

  async write({ lines, batch }: BatchToWrite): Promise<void> {
    const body = await gzipAsync(lines, { level: 1 });
    // As base64 text: the driver packs a byte array one byte at a time; a string goes out as one copy.
    await repo.record(this.db, { ...batch, body: body.toString('base64') });
  }

  async close(): Promise<void> {}
}

/**
 * Writes on a worker thread with a driver of its own (src/db/write-thread.ts): the compression and
 * the driver's packing of each batch run there, never on the thread that answers requests. A
 * thread that stops fails the batch it held, which waits for the next flush, when another starts.
 */
export class ThreadRecordWriter implements RecordWriter {
  constructor(readonly thread: WriteThread) {}

  /** A writer on a thread when the database's address is known, on this thread otherwise. */
  static for(db: Database): RecordWriter {
    const thread = repo.recordThread(db);
    // Started now: records are listed once they are older than the flush interval and a margin
    // (src/decisions/record-list.ts), which a thread started by the first write could miss.
    thread?.warm();
    return thread ? new ThreadRecordWriter(thread) : new InThreadRecordWriter(db);
  }

  write({ lines, batch }: BatchToWrite): Promise<void> {
    return repo.recordOn(this.thread, lines, batch);
  }

  close(): Promise<void> {
    return this.thread.close();
  }
}
