import {
  fromStored,
  toStored,
  type AuditEventInput,
  type OperationContext,
  type StoredEvent,
} from '../audit/audit.js';
import { defineQueries } from '../db/catalogue.js';
import type { Tx } from '../db/database.js';
import { newId } from '../ids.js';
import { nowIso } from '../time.js';
import type { ChangeFeed } from './feed.js';

const Q = defineQueries('events', ['append']);

/**
 * Where every change is recorded: each mutation calls `record` inside its own transaction. The
 * audit events of a transaction are written as its last statement (with their place in the
 * commit order), so a change and its events commit together or not at all; once committed they
 * go to the change feed, which tells this instance's listeners before the write returns and the
 * other instances right after.
 */
export class EventSink {
  private readonly pending = new WeakMap<Tx, StoredEvent[]>();

  constructor(private readonly feed: ChangeFeed) {}

  record(tx: Tx, op: OperationContext, input: AuditEventInput): string {
    const event = toStored(newId('event'), op, input, nowIso());
    let events = this.pending.get(tx);
    if (!events) {
      const batch: StoredEvent[] = [];
      events = batch;
      this.pending.set(tx, batch);
      let seq = 0;
      tx.beforeCommit(async () => {
        const row = await tx.first<{ seq: number }>(Q.append, { events: batch });
        seq = row!.seq;
      });
      tx.afterCommit(() => this.feed.committed(batch.map((e) => ({ ...fromStored(e), seq }))));
    }
    events.push(event);
    return event.id;
  }
}
