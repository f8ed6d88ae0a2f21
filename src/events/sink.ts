import {
  fromStored,
  toStored,
  type AuditEventInput,
  type OperationContext,
  type StoredEvent,
} from '../audit/audit.js';
import { defineQueries } from '../db/catalogue.js';
import type { Database, Tx } from '../db/database.js';
import { newId } from '../ids.js';
import { nowIso } from '../time.js';
import type { ChangeFeed } from './feed.js';

const Q = defineQueries('events', ['append', 'shards']);

/**
 * Shards of the event sequence. Each committing transaction holds its shard's lock through the
 * commit; with one sequence every write in the service would queue there, one disk flush at a
 * time.
 */
export const EVENT_SHARDS = 16;

/** The sequence node of a shard: `events` (the one sequence of earlier releases) is shard 0. */
export const sequenceName = (shard: number): string => (shard === 0 ? 'events' : `events.${shard}`);

/**
 * Where every change is recorded: each mutation calls `record` inside its own transaction. The
 * audit events of a transaction are written as its last statement (with their place in the
 * commit order of a shard of the event sequence, drawn at random), so a change and its events
 * commit together or not at all; once committed they go to the change feed, which tells this
 * instance's listeners before the write returns and the other instances right after.
 */
/** What a service needs of the sink: recording its changes in their transaction. */
export type EventRecorder = Pick<EventSink, 'record'>;

export class EventSink {
  private readonly pending = new WeakMap<Tx, StoredEvent[]>();

  constructor(private readonly feed: ChangeFeed) {}

  /**
   * Creates the sequence shards that are missing (instances starting together may race to
   * create one; the loser finds it on its second try).
   */
  async prepare(db: Database): Promise<void> {
    const shards = Array.from({ length: EVENT_SHARDS }, (_, i) => i);
    for (let attempt = 1; ; attempt += 1) {
      try {
        await db.write(Q.shards, (tx) => tx.run(Q.shards, { shards }));
        return;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  }

  record(tx: Tx, op: OperationContext, input: AuditEventInput): string {
    const event = toStored(newId('event'), op, input, nowIso());
    let events = this.pending.get(tx);
    if (!events) {
      const batch: StoredEvent[] = [];
      events = batch;
      this.pending.set(tx, batch);
      let seq = 0;
      const shard = Math.floor(Math.random() * EVENT_SHARDS);
      tx.beforeCommit(async () => {
        const row = await tx.first<{ seq: number }>(Q.append, {
          events: batch,
          shard,
          sequence: sequenceName(shard),
        });
        seq = row!.seq;
      });
      tx.afterCommit(() => this.feed.committed(batch.map((e) => ({ ...fromStored(e), shard, seq }))));
    }
    events.push(event);
    return event.id;
  }
}
