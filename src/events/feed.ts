import { Redis } from 'ioredis';
import { fromStored, type AuditEvent, type StoredEvent } from '../audit/audit.js';
import { defineQueries } from '../db/catalogue.js';
import type { Reader } from '../db/database.js';
import type { Logger } from '../logging/logger.js';

const Q = defineQueries('events', ['head', 'range']);

/** A committed change: its audit event, with its place in the commit order of its shard. */
export interface ChangeEvent extends AuditEvent {
  shard: number;
  seq: number;
}

/**
 * Follows committed changes. A listener may see an event more than once and, across instances,
 * not always in commit order: it must be idempotent, and update from what the event names
 * rather than assume what came before.
 */
export type ChangeListener = (event: ChangeEvent) => void | Promise<void>;

export interface ChangeFeedOptions {
  logger: Logger;
  /** Names this instance in what it publishes, so it can ignore its own messages. */
  instanceId: string;
  /** With Redis, instances hear of each other's changes at once; without, by polling. */
  redisUrl: string | undefined;
  channel: string;
}

/** How many sequence numbers one poll reads at most; a backlog takes several polls. */
const POLL_SPAN = 1_000;

interface Message {
  from: string;
  events: ChangeEvent[];
}

/**
 * Tells listeners of this instance about every committed change, wherever it was made: changes
 * committed here at once (before the write returns), changes of other instances through Redis
 * pub/sub when configured and, always, through a poll of the event sequence shards in Neo4j,
 * which misses nothing because each shard hands its numbers out in commit order.
 */
export class ChangeFeed {
  private readonly listeners: ChangeListener[] = [];
  /** Per shard: every event up to this number has been delivered here. */
  private readonly heads = new Map<number, number>();
  /** Events delivered ahead of the poll (local or through Redis), by id, with their place. */
  private readonly early = new Map<string, { shard: number; seq: number }>();
  private publisher: Redis | undefined;
  private subscriber: Redis | undefined;

  constructor(
    private readonly db: Reader,
    private readonly options: ChangeFeedOptions,
  ) {}

  subscribe(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /**
   * Starts following from the current end of the sequence. Call it before loading the state
   * that listeners keep current, so that no change falls between the two.
   */
  async open(): Promise<void> {
    for (const { shard, head } of await this.shardHeads()) this.heads.set(shard, head);
    const url = this.options.redisUrl;
    if (!url) return;
    const connection = {
      lazyConnect: false,
      connectTimeout: 2_000,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
    };
    this.publisher = new Redis(url, { ...connection, enableOfflineQueue: false });
    this.subscriber = new Redis(url, connection);
    // Errors are logged by the rate limiter's client already; the poll covers any gap.
    this.publisher.on('error', () => undefined);
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel: string, text: string) => {
      void this.receive(text);
    });
    // Subscribed before serving, when Redis answers; otherwise the poll alone keeps this instance
    // current until the subscription (which ioredis renews on every reconnection) succeeds.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.subscriber.subscribe(this.options.channel),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer from Redis')), 2_000);
      }),
    ])
      .catch((err: unknown) => {
        this.options.logger.warn({ err }, 'not subscribed to change events in Redis yet; polling meanwhile');
      })
      .finally(() => clearTimeout(timer));
  }

  /** Changes just committed on this instance: listeners first, then the other instances. */
  async committed(events: ChangeEvent[]): Promise<void> {
    for (const event of events) this.early.set(event.id, { shard: event.shard, seq: event.seq });
    await this.deliver(events);
    if (this.publisher?.status === 'ready') {
      const message: Message = { from: this.options.instanceId, events };
      this.publisher.publish(this.options.channel, JSON.stringify(message)).catch(() => undefined);
    }
  }

  /** Delivers every change committed since the last poll that has not reached this instance. */
  async poll(): Promise<void> {
    for (const { shard, head } of await this.shardHeads()) {
      for (;;) {
        const known = this.heads.get(shard) ?? 0;
        if (head <= known) break;
        const upTo = Math.min(head, known + POLL_SPAN);
        if (this.allLocal(shard, known, upTo)) {
          // Every change numbered there was committed here and delivered already.
          this.forgetEarly(shard, upTo);
          continue;
        }
        const rows = await this.db.run<{ event: StoredEvent & { seq: number; shard: number } }>(Q.range, {
          shard,
          after: known,
          upTo,
        });
        const missed = rows
          .map(({ event }) => ({ ...fromStored(event), shard, seq: event.seq }))
          .filter((event) => !this.early.has(event.id));
        await this.deliver(missed);
        this.forgetEarly(shard, upTo);
      }
    }
  }

  /** Whether every number of a shard after `after`, up to `upTo`, was delivered ahead of the poll. */
  private allLocal(shard: number, after: number, upTo: number): boolean {
    const seqs = new Set<number>();
    for (const place of this.early.values()) {
      if (place.shard === shard && place.seq > after && place.seq <= upTo) seqs.add(place.seq);
    }
    return seqs.size === upTo - after;
  }

  /** The shard is delivered up to `upTo`: what arrived early up to there need not be remembered. */
  private forgetEarly(shard: number, upTo: number): void {
    this.heads.set(shard, upTo);
    for (const [id, place] of this.early)
      if (place.shard === shard && place.seq <= upTo) this.early.delete(id);
  }

  private async shardHeads(): Promise<{ shard: number; head: number }[]> {
    return this.db.run<{ shard: number; head: number }>(Q.head);
  }

  async close(): Promise<void> {
    await Promise.all(
      [this.publisher, this.subscriber].map(async (client) => {
        if (!client) return;
        if (client.status === 'ready') {
          await client.quit().catch(() => client.disconnect());
        } else {
          client.disconnect();
        }
      }),
    );
  }

  private async receive(text: string): Promise<void> {
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (message.from === this.options.instanceId || !Array.isArray(message.events)) return;
    const fresh = message.events.filter(
      (event) => event.seq > (this.heads.get(event.shard) ?? 0) && !this.early.has(event.id),
    );
    for (const event of fresh) this.early.set(event.id, { shard: event.shard, seq: event.seq });
    await this.deliver(fresh);
  }

  /**
   * Hands each event to each listener in order, then waits for all of them together: a listener
   * that settles once it has caught up (the decision index) then catches up once per batch of
   * events rather than once per event.
   */
  private async deliver(events: ChangeEvent[]): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const event of events) {
      for (const listener of this.listeners) {
        pending.push(
          (async () => listener(event))().catch((err: unknown) => {
            this.options.logger.error({ err, event: event.id, type: event.type }, 'change listener failed');
          }),
        );
      }
    }
    await Promise.all(pending);
  }
}
