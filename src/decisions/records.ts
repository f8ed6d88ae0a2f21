import { encodeTime } from 'ulid';
import type { Database } from '../db/database.js';
import { ID_PREFIXES } from '../ids.js';
import type { Logger } from '../logging/logger.js';
import type { Static } from '@sinclair/typebox';
import type { DecisionRecordSchema } from '../schemas/decisions.js';
import { decisionRepository as repo, type StoredDecision } from './repository.js';

export type DecisionRecord = Static<typeof DecisionRecordSchema>;

export interface DecisionLogOptions {
  logger: Logger;
  retentionDays: number;
  /** Records held while the database cannot take them; the oldest are dropped beyond. */
  maxPending: number;
  /** Records written per transaction. */
  batch?: number;
}

/**
 * Records every decision without delaying its answer: `record` only queues it, and `flush`
 * (run by the job runner every few hundred milliseconds, and at shutdown) writes what is queued
 * in batches. Until written, a record is served from the queue on this instance. If the database
 * is away, records wait (up to `maxPending`) and are written when it returns.
 */
export class DecisionLog {
  private queue: DecisionRecord[] = [];
  private readonly queued = new Map<string, DecisionRecord>();
  private flushing: Promise<void> | undefined;
  private dropped = 0;
  private warnedAt = 0;

  constructor(
    private readonly db: Database,
    private readonly options: DecisionLogOptions,
  ) {}

  record(decision: DecisionRecord): void {
    this.queue.push(decision);
    this.queued.set(decision.id, decision);
    const excess = this.queue.length - this.options.maxPending;
    if (excess > 0) {
      for (const gone of this.queue.splice(0, excess)) this.queued.delete(gone.id);
      this.dropped += excess;
      this.warn('decision records are being dropped: the database has not taken them for too long');
    }
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Writes every queued record; concurrent calls share one run. */
  flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  async get(id: string): Promise<DecisionRecord | undefined> {
    const queued = this.queued.get(id);
    if (queued) return queued;
    const text = await repo.get(this.db, id);
    if (text === undefined) return undefined;
    const record = JSON.parse(text) as DecisionRecord;
    return Date.parse(record.evaluated_at) < this.cutoff() ? undefined : record;
  }

  /** Removes records past retention, a batch at a time. */
  async purge(batch = 10_000): Promise<number> {
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

  private async writeAll(): Promise<void> {
    const size = this.options.batch ?? 2_000;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, size);
      const rows: StoredDecision[] = batch.map((d) => ({
        id: d.id,
        principal_id: d.principal_id,
        decision: d.decision,
        evaluated_at: d.evaluated_at,
        record: JSON.stringify(d),
      }));
      try {
        await repo.record(this.db, rows);
      } catch (err) {
        this.warn('decision records wait: the database did not take them', err);
        return;
      }
      // Records dropped meanwhile (the queue overflowed) left from the front: remove by identity.
      const written = new Set(batch);
      this.queue = this.queue.filter((d) => !written.has(d));
      for (const d of batch) this.queued.delete(d.id);
    }
  }

  private warn(message: string, err?: unknown): void {
    const now = Date.now();
    if (now - this.warnedAt < 60_000) return;
    this.warnedAt = now;
    this.options.logger.warn({ err, pending: this.queue.length, dropped: this.dropped }, message);
  }
}
