import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { decodeTime, encodeTime } from 'ulid';
import type { Static } from '@sinclair/typebox';
import type { Database } from '../db/database.js';
import { AppError } from '../errors/errors.js';
import { ID_PREFIXES } from '../ids.js';
import type { Logger } from '../logging/logger.js';
import type {
  Decision,
  DecisionListRequest,
  DecisionRecordList,
  DecisionRecordSchema,
} from '../schemas/decisions.js';
import { listRecords } from './record-list.js';
import { InThreadRecordWriter, type BatchToWrite, type RecordWriter } from './record-writer.js';
import { decisionRepository as repo } from './repository.js';

export type DecisionRecord = Static<typeof DecisionRecordSchema>;

const gunzipAsync = promisify(gunzip);

export interface DecisionLogOptions {
  logger: Logger;
  retentionDays: number;
  /** Records held while the database cannot take them; the oldest are dropped beyond. */
  maxPending: number;
  /** Off only for measuring what recording costs: every decision then goes unrecorded. */
  enabled?: boolean;
  /** Bytes of JSON a batch holds before the next record starts another (default 1 MiB). */
  batchBytes?: number;
  /** Where sealed batches are written (default: on this thread, through `db`). */
  writer?: RecordWriter;
}

/**
 * A batch never spans more than this much decision time, so that finding a decision by id looks
 * at batches that started at most this long before it (see `cypher/decisions/get.cypher`).
 */
export const MAX_BATCH_SPAN_MS = 60_000;
const MIB = 1024 * 1024;
const NEWLINE = 0x0a;
/** A batch that fails this many times for a reason other than an absent database is given up. */
const MAX_ATTEMPTS = 5;

/**
 * Records as JSON lines, filled into a buffer outside the JavaScript heap: a record costs one
 * serialisation and a copy when the decision is made, and nothing for the garbage collector while
 * it waits to be written. A batch is one such buffer, sealed when full, too long in time, or due.
 */
class Batch {
  private buffer: Buffer;
  length = 0;
  count = 0;
  allowed = 0;
  firstId = '';
  lastId = '';
  firstAt = '';
  lastAt = '';
  attempts = 0;

  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafe(capacity);
  }

  /** When the first record was added (epoch ms). */
  startedAt = 0;

  /**
   * Whether a record made now still fits this batch's time span. Ids are made just before their
   * records, so the records' span bounds the ids' span; half the span a lookup allows for leaves
   * a wide margin.
   */
  spans(now: number): boolean {
    return this.count === 0 || now - this.startedAt <= MAX_BATCH_SPAN_MS / 2;
  }

  room(): number {
    return this.buffer.length - this.length;
  }

  /** Adds a record: its line as text, or as UTF-8 bytes made already (`bytes` long either way). */
  append(
    line: string | Uint8Array,
    bytes: number,
    record: { id: string; allowed: boolean; evaluated_at: string },
  ): void {
    if (bytes + 1 > this.room()) {
      // Only the first record of a batch can be larger than the batch: make room for it alone.
      const grown = Buffer.allocUnsafe(this.length + bytes + 1);
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    if (typeof line === 'string') this.length += this.buffer.write(line, this.length, 'utf8');
    else {
      this.buffer.set(line, this.length);
      this.length += bytes;
    }
    this.buffer[this.length++] = NEWLINE;
    if (this.count === 0) {
      this.firstId = record.id;
      this.firstAt = record.evaluated_at;
      this.startedAt = Date.now();
    }
    this.lastId = record.id;
    this.lastAt = record.evaluated_at;
    this.count += 1;
    if (record.allowed) this.allowed += 1;
  }

  /** The record of `id`, if this batch holds it. */
  find(id: string): DecisionRecord | undefined {
    if (this.count === 0 || id < this.firstId || id > this.lastId) return undefined;
    return findLine(this.buffer.subarray(0, this.length), id);
  }

  content(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** The line of `id` among JSON lines that each begin with their record's id. */
function findLine(lines: Buffer, id: string): DecisionRecord | undefined {
  const needle = `{"id":${JSON.stringify(id)}`;
  for (let at = lines.indexOf(needle); at >= 0; at = lines.indexOf(needle, at + 1)) {
    // A record's own text (its context, say) may quote another decision's id: only a line's start counts.
    if (at > 0 && lines[at - 1] !== NEWLINE) continue;
    const end = lines.indexOf(NEWLINE, at);
    return JSON.parse(lines.toString('utf8', at, end < 0 ? lines.length : end)) as DecisionRecord;
  }
  return undefined;
}

/**
 * Records every decision without delaying its answer. `record` serialises the decision into the
 * open batch; `flush` (run by the job runner every few hundred milliseconds, and at shutdown)
 * seals it and hands the sealed batches to its writer, each to be one gzip-compressed
 * `(:DecisionBatch)` node; the service's writer compresses and writes them on a thread of its
 * own (src/decisions/record-writer.ts), so the thread that answers requests only copies bytes.
 * A batch is one node and one statement, not a node per decision: per decision, the database's work and the driver's shrink
 * to a few percent of what they were. Until written, a record is served from memory on this
 * instance. If the database is away, batches wait (up to `maxPending` records) and are written
 * when it returns; a batch the database keeps refusing for another reason is given up alone,
 * never holding up the rest.
 */
export class DecisionLog {
  private sealed: Batch[] = [];
  private open: Batch;
  /** Batches being written: still served from here until the write returns. */
  private writing: Batch[] = [];
  private pendingCount = 0;
  private flushing: Promise<void> | undefined;
  private nextFlush: Promise<void> | undefined;
  private dropped = 0;
  private warnedAt = 0;
  private readonly batchBytes: number;
  private readonly enabled: boolean;
  private readonly writer: RecordWriter;

  constructor(
    private readonly db: Database,
    private readonly options: DecisionLogOptions,
  ) {
    this.batchBytes = options.batchBytes ?? MIB;
    this.enabled = options.enabled ?? true;
    this.open = new Batch(this.batchBytes);
    this.writer = options.writer ?? new InThreadRecordWriter(db);
  }

  /**
   * Queues the record of a decision: the answer (`answer` is its JSON, when made already), and
   * what the request sent beyond it.
   */
  record(decision: Decision, details?: RequestDetails, answer?: string): void {
    if (!this.enabled) return;
    const line = recordLine(decision, details, answer, (err) => this.lostDetails(decision.id, err));
    this.add(line, Buffer.byteLength(line, 'utf8'), decision);
  }

  /** Logs records made elsewhere that lost their request details (see `recordLine`). */
  detailsLost(ids: readonly string[]): void {
    for (const id of ids) this.lostDetails(id);
  }

  private lostDetails(id: string, err?: unknown): void {
    this.options.logger.error(
      { err, id },
      'a decision record could not be serialised whole; recorded without its request details',
    );
  }

  /** Queues records made elsewhere as lines (a decision thread's), in their order. */
  recordLines(lines: RecordLines): void {
    if (!this.enabled) return;
    const { bytes, ends, ids, at, allowed } = lines;
    for (let i = 0, start = 0; i < ids.length; start = ends[i]!, i += 1) {
      this.add(bytes.subarray(start, ends[i]), ends[i]! - start, {
        id: ids[i]!,
        allowed: allowed[i] === 1,
        evaluated_at: at[i]!,
      });
    }
  }

  private add(
    line: string | Uint8Array,
    bytes: number,
    record: { id: string; allowed: boolean; evaluated_at: string },
  ): void {
    const open = this.open;
    if (open.count > 0 && (bytes + 1 > open.room() || !open.spans(Date.now()))) {
      this.seal();
    }
    this.open.append(line, bytes, record);
    this.pendingCount += 1;
    if (this.pendingCount > this.options.maxPending) this.dropOldest();
  }

  /** Records not written yet. */
  get pending(): number {
    return this.pendingCount;
  }

  /**
   * Writes every record made so far. A run takes what was made when it began: a call while one
   * is under way waits for it and then for one more run, which takes what was made since; calls
   * in the meantime share that next run.
   */
  flush(): Promise<void> {
    if (!this.flushing) {
      this.flushing = this.writeAll().finally(() => {
        this.flushing = undefined;
      });
      return this.flushing;
    }
    this.nextFlush ??= this.flushing
      .catch(() => undefined)
      .then(() => {
        this.nextFlush = undefined;
        return this.flush();
      });
    return this.nextFlush;
  }

  async get(id: string): Promise<DecisionRecord | undefined> {
    for (const batch of [this.open, ...this.sealed, ...this.writing]) {
      const found = batch.find(id);
      if (found) return found;
    }
    const from = `${ID_PREFIXES.decision}_${encodeTime(Math.max(0, decodeTime(id.slice(4)) - MAX_BATCH_SPAN_MS), 10)}`;
    const stored = await repo.get(this.db, id, from);
    let record: DecisionRecord | undefined;
    if (stored.record !== undefined) record = JSON.parse(stored.record) as DecisionRecord;
    for (const body of stored.bodies) {
      if (record) break;
      record = findLine(await gunzipAsync(body), id);
    }
    if (!record) return undefined;
    return Date.parse(record.evaluated_at) < this.cutoff() ? undefined : record;
  }

  /**
   * Recorded decisions in the order they were made, after a cursor, once older than the settle
   * window (`settleMs`); read from the database alone (src/decisions/record-list.ts says why).
   */
  list(query: DecisionListRequest, settleMs: number): Promise<DecisionRecordList> {
    return listRecords(this.db, query, {
      now: Date.now(),
      settleMs,
      cutoffMs: this.cutoff(),
      spanMs: MAX_BATCH_SPAN_MS,
    });
  }

  /** Writes every record made so far, then stops the writer. */
  async close(): Promise<void> {
    await this.flush();
    await this.writer.close();
  }

  /** Removes records past retention, a batch of nodes at a time. */
  async purge(batch = 1_000): Promise<number> {
    const before = `${ID_PREFIXES.decision}_${encodeTime(this.cutoff(), 10)}`;
    let total = 0;
    for (;;) {
      const removed = await repo.purge(this.db, before, batch);
      total += removed;
      if (removed < batch) return total;
    }
  }

  private cutoff(): number {
    return Date.now() - this.options.retentionDays * 86_400_000;
  }

  private seal(): void {
    if (this.open.count === 0) return;
    this.sealed.push(this.open);
    this.open = new Batch(this.batchBytes);
  }

  private dropOldest(): void {
    // Whole batches go, oldest first; the open batch is the newest and stays.
    while (this.pendingCount > this.options.maxPending && this.sealed.length > 0) {
      const gone = this.sealed.shift()!;
      this.pendingCount -= gone.count;
      this.dropped += gone.count;
    }
    if (this.pendingCount > this.options.maxPending) {
      // Everything pending is in the open batch: let it go whole rather than record by record.
      this.dropped += this.open.count;
      this.pendingCount -= this.open.count;
      this.open = new Batch(this.batchBytes);
    }
    this.warn('decision records are being dropped: the database has not taken them for too long');
  }

  private async writeAll(): Promise<void> {
    this.seal();
    while (this.sealed.length > 0) {
      const batch = this.sealed.shift()!;
      this.writing.push(batch);
      try {
        await this.writer.write(toWrite(batch));
        this.pendingCount -= batch.count;
      } catch (err) {
        batch.attempts += 1;
        const away = err instanceof AppError && err.code === 'UNAVAILABLE';
        if (!away && batch.attempts >= MAX_ATTEMPTS) {
          this.pendingCount -= batch.count;
          this.dropped += batch.count;
          this.options.logger.error(
            { err, first_id: batch.firstId, last_id: batch.lastId, count: batch.count },
            'a batch of decision records could not be written and was given up',
          );
          continue;
        }
        // Back to the front, in order: the next flush tries again.
        this.sealed.unshift(batch);
        this.warn('decision records wait: the database did not take them', err);
        return;
      } finally {
        this.writing.splice(this.writing.indexOf(batch), 1);
      }
    }
  }

  private warn(message: string, err?: unknown): void {
    const now = Date.now();
    if (now - this.warnedAt < 60_000) return;
    this.warnedAt = now;
    this.options.logger.warn({ err, pending: this.pendingCount, dropped: this.dropped }, message);
  }
}

/** What a record keeps of its request beyond the answer: free-form values the client sent. */
export interface RequestDetails {
  context?: unknown;
  resource_attributes?: unknown;
  action_properties?: unknown;
  subject_properties?: unknown;
}

const DETAIL_KEYS = ['context', 'resource_attributes', 'action_properties', 'subject_properties'] as const;

/**
 * A record as one JSON line beginning with its id: the answer as serialised, its closing brace
 * followed by each request detail. A detail that cannot be serialised (which the request bounds
 * should make impossible) costs the record its request details, never the record: `failed` hears
 * of it.
 */
export function recordLine(
  decision: Decision,
  details: RequestDetails | undefined,
  made: string | undefined,
  failed: (err: unknown) => void,
): string {
  let answer = made ?? JSON.stringify(decision);
  // Lookups find a record by the id its line begins with.
  if (!answer.startsWith('{"id":')) {
    const { id, ...rest } = decision;
    answer = JSON.stringify({ id, ...rest });
  }
  if (!details) return answer;
  let extra = '';
  try {
    for (const key of DETAIL_KEYS) {
      const value = details[key];
      if (value !== undefined) extra += `,"${key}":${JSON.stringify(value)}`;
    }
  } catch (err) {
    failed(err);
    return answer;
  }
  return extra === '' ? answer : `${answer.slice(0, -1)}${extra}}`;
}

/**
 * Records made as lines away from the log (on a decision thread), to be queued by
 * `DecisionLog.recordLines`: their UTF-8 text end to end, where each ends, and what a batch
 * notes of each.
 */
export interface RecordLines {
  bytes: Uint8Array;
  ends: Uint32Array;
  ids: string[];
  at: string[];
  allowed: Uint8Array;
}

/** Gathers record lines, then makes them one `RecordLines` whose memory can move to another thread. */
export class RecordLinesBuilder {
  private readonly lines: string[] = [];
  private readonly ids: string[] = [];
  private readonly at: string[] = [];
  private readonly allowed: number[] = [];

  add(line: string, decision: { id: string; allowed: boolean; evaluated_at: string }): void {
    this.lines.push(line);
    this.ids.push(decision.id);
    this.at.push(decision.evaluated_at);
    this.allowed.push(decision.allowed ? 1 : 0);
  }

  build(): RecordLines {
    const ends = new Uint32Array(this.lines.length);
    let total = 0;
    for (const [i, line] of this.lines.entries()) ends[i] = total += Buffer.byteLength(line, 'utf8');
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const line of this.lines) at += Buffer.from(bytes.buffer, at).write(line, 'utf8');
    return { bytes, ends, ids: this.ids, at: this.at, allowed: Uint8Array.from(this.allowed) };
  }
}

function toWrite(batch: Batch): BatchToWrite {
  return {
    lines: batch.content(),
    batch: {
      first_id: batch.firstId,
      last_id: batch.lastId,
      first_at: batch.firstAt,
      last_at: batch.lastAt,
      count: batch.count,
      allowed: batch.allowed,
    },
  };
}
