import { Redis } from 'ioredis';
import { fromStored, type AuditEvent, type StoredEvent } from '../audit/audit.js';
import { defineQueries } from '../db/catalogue.js';
import type { Reader } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { within } from '../time.js';

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
  /**
   * The other processes of this host, which hear this one's committed changes at once through
   * the host's primary (src/cluster), and this one theirs: where Redis does not carry them. A
   * commit of more than a poll's page of changes is left to the poll.
   */
  relay?: ChangeRelay;
}

/** Carries committed changes, as the feed's messages (JSON), between the processes of a host. */
export interface ChangeRelay {
  send(text: string): void;
  listen(take: (text: string) => void): void;
}

/**
 * How many sequence numbers one statement of a poll reads at most; a backlog takes several, in
 * turn: the driver decodes each answer, and the events are converted, in one run of the event
 * loop, which this keeps to a few milliseconds when a sync commits thousands of changes at once.
 */
const POLL_SPAN = 100;

/** A place in the change feed: the shard of the event sequence and a number of it. */
export type FeedPosition = readonly [shard: number, seq: number];

/** An event delivered ahead of the poll (local or through Redis), and its delivery. */
interface EarlyEvent {
  shard: number;
  seq: number;
  delivered: Promise<void> | undefined;
}

interface Message {
  from: string;
  events: ChangeEvent[];
}

/**
 * Tells listeners of this instance about every committed change, wherever it was made: changes
 * committed here at once (before the write returns), changes of other instances through Redis
 * pub/sub when configured (and those of the other processes of this host through its primary
 * when not) and, always, through a poll of the event sequence shards in Neo4j, which misses
 * nothing because each shard hands its numbers out in commit order.
 */
export class ChangeFeed {
  private readonly listeners: ChangeListener[] = [];
  /** Per shard: every event up to this number has been delivered here. */
  private readonly heads = new Map<number, number>();
  /** Events delivered ahead of the poll (local or through Redis), by id, with their place. */
  private readonly early = new Map<string, EarlyEvent>();
  /** Per shard, numbers above its head whose events were delivered ahead of the poll. */
  private readonly deliveredEarly = new Map<number, Set<number>>();
  /** Where the feed started following, per shard: state loaded after `open` holds every change before. */
  private readonly opened: FeedPosition[] = [];
  /** Per shard, the last number this instance committed: where its writes stand in the feed. */
  private readonly committedHere = new Map<number, number>();
  /** Changes whenever `committedHere` does. */
  private positionVersion = 0;
  private lastPosition: { version: number; places: readonly FeedPosition[] } = { version: 0, places: [] };
  /** The poll running and the one queued behind it: polls never overlap. */
  private polling: Promise<void> | undefined;
  private queuedPoll: Promise<void> | undefined;
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
    for (const { shard, head } of await this.shardHeads()) {
      this.heads.set(shard, head);
      this.opened.push([shard, head]);
    }
    this.options.relay?.listen((text) => void this.receive(text));
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
    await within(this.subscriber.subscribe(this.options.channel), 2_000, () => {
      throw new Error('no answer from Redis');
    }).catch((err: unknown) => {
      this.options.logger.warn({ err }, 'not subscribed to change events in Redis yet; polling meanwhile');
    });
  }

  /**
   * Changes just committed on this instance: sent to the other instances first, so that they
   * apply them while this one does, then delivered to this instance's listeners.
   */
  async committed(events: ChangeEvent[]): Promise<void> {
    for (const event of events) {
      if (event.seq > (this.committedHere.get(event.shard) ?? 0)) {
        this.committedHere.set(event.shard, event.seq);
        this.positionVersion += 1;
      }
    }
    this.announce(events);
    await this.deliverEarly(events);
  }

  /** Tells the other instances of changes this one committed (through Redis, or the relay). */
  private announce(events: ChangeEvent[]): void {
    const ready = this.publisher?.status === 'ready';
    // A commit of many changes (a sync's batch) is left to the poll, which reads it a page at a
    // time: a serving process would otherwise parse it, and read back all it names, in one go.
    const relay = events.length <= POLL_SPAN ? this.options.relay : undefined;
    if (!ready && !relay) return;
    const message: Message = { from: this.options.instanceId, events };
    const text = JSON.stringify(message);
    if (ready) this.publisher!.publish(this.options.channel, text).catch(() => undefined);
    relay?.send(text);
  }

  /**
   * Where this instance's writes stand in the feed: per shard, the last number it committed. Every
   * change a write of this instance made, up to the moment of the call, is at or before it.
   */
  position(): { version: number; places: readonly FeedPosition[] } {
    if (this.lastPosition.version !== this.positionVersion) {
      const places: FeedPosition[] = [];
      for (const [shard, seq] of this.committedHere) places.push([shard, seq]);
      this.lastPosition = { version: this.positionVersion, places };
    }
    return this.lastPosition;
  }

  /** Where the feed started following, per shard. */
  openedAt(): FeedPosition[] {
    return [...this.opened];
  }

  /**
   * Per shard, the place up to which every change has been delivered to every listener (changes
   * delivered ahead of it may have been too): what state kept by the listeners holds at least.
   */
  delivered(): FeedPosition[] {
    return [...this.heads];
  }

  /**
   * The changes committed after `from` (places of the feed, as `delivered` gave them) and before
   * the feed was opened, a page at a time in commit order per shard: what state saved at `from`
   * lacks, which the feed itself does not deliver. Throws when some of them can no longer be read.
   */
  async *since(from: readonly FeedPosition[]): AsyncGenerator<ChangeEvent[]> {
    const start = new Map(from);
    for (const [shard, upTo] of this.opened) {
      for (let after = start.get(shard) ?? 0; after < upTo;) {
        const end = Math.min(upTo, after + POLL_SPAN);
        const rows = await this.db.run<{ event: StoredEvent & { seq: number; shard: number } }>(Q.range, {
          shard,
          after,
          upTo: end,
        });
        const seqs = new Set(rows.map(({ event }) => event.seq));
        if (seqs.size !== end - after) {
          throw new Error(`changes ${after + 1} to ${end} of shard ${shard} are no longer all stored`);
        }
        yield rows.map(({ event }) => ({ ...fromStored(event), shard, seq: event.seq }));
        after = end;
      }
    }
  }

  /** Whether every listener of this instance has had every change up to these places. */
  hasReached(places: readonly FeedPosition[]): boolean {
    for (const [shard, seq] of places) {
      if ((this.heads.get(shard) ?? 0) >= seq) continue;
      if (this.deliveredEarly.get(shard)?.has(seq) !== true) return false;
    }
    return true;
  }

  /**
   * Waits until this instance's listeners have had every change up to these places, polling the
   * sequence for what has not arrived: true once they have, false if `waitMs` passes first. The
   * places must be committed ones (from `position()` of some instance), and the statements this
   * instance runs must already see them (see `Database.catchUp`), or the poll cannot find them.
   */
  async reach(places: readonly FeedPosition[], waitMs: number): Promise<boolean> {
    if (this.hasReached(places)) return true;
    const deadline = Date.now() + waitMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await within(
        this.poll().catch(() => undefined),
        left,
        () => undefined,
      );
      if (this.hasReached(places)) return true;
      // A listener that failed leaves its place unreached until a later poll delivers it again.
      await new Promise((resolve) => setTimeout(resolve, Math.min(20, Math.max(0, deadline - Date.now()))));
    }
  }

  /**
   * Delivers every change committed since the last poll that has not reached this instance. A
   * call made while a poll runs waits for it and then polls again (once for all such calls), so
   * that what it asks for starts after the call.
   */
  poll(): Promise<void> {
    if (this.queuedPoll) return this.queuedPoll;
    const previous = this.polling ?? Promise.resolve();
    const next: Promise<void> = previous
      .catch(() => undefined)
      .then(() => {
        this.queuedPoll = undefined;
        this.polling = next;
        return this.pollOnce();
      })
      .finally(() => {
        if (this.polling === next) this.polling = undefined;
      });
    this.queuedPoll = next;
    return next;
  }

  private async pollOnce(): Promise<void> {
    for (const { shard, head } of await this.shardHeads()) {
      for (;;) {
        const known = this.heads.get(shard) ?? 0;
        if (head <= known) break;
        const upTo = Math.min(head, known + POLL_SPAN);
        if (this.allLocal(shard, known, upTo)) {
          // Every change numbered there reached this instance ahead of the poll.
          await this.earlyDeliveries(shard, upTo);
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
        // The head moves past changes that came ahead of the poll only once they are delivered.
        await this.earlyDeliveries(shard, upTo);
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

  /** Settles once every change of a shard up to `upTo` that came ahead of the poll is delivered. */
  private async earlyDeliveries(shard: number, upTo: number): Promise<void> {
    const pending = new Set<Promise<void>>();
    for (const place of this.early.values()) {
      if (place.shard === shard && place.seq <= upTo && place.delivered) pending.add(place.delivered);
    }
    if (pending.size > 0) await Promise.all(pending);
  }

  /** The shard is delivered up to `upTo`: what arrived early up to there need not be remembered. */
  private forgetEarly(shard: number, upTo: number): void {
    this.heads.set(shard, upTo);
    for (const [id, place] of this.early)
      if (place.shard === shard && place.seq <= upTo) this.early.delete(id);
    const delivered = this.deliveredEarly.get(shard);
    if (delivered) {
      for (const seq of delivered) if (seq <= upTo) delivered.delete(seq);
    }
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
    await this.deliverEarly(fresh);
  }

  /**
   * Delivers changes ahead of the poll, remembering their places (so the poll neither delivers
   * them again nor moves past them before they are delivered) and, once delivered, that they are.
   */
  private async deliverEarly(events: ChangeEvent[]): Promise<void> {
    const places: EarlyEvent[] = [];
    for (const event of events) {
      const place: EarlyEvent = { shard: event.shard, seq: event.seq, delivered: undefined };
      this.early.set(event.id, place);
      places.push(place);
    }
    const delivered = this.deliver(events);
    for (const place of places) place.delivered = delivered;
    await delivered;
    for (const { shard, seq } of places) {
      if (seq <= (this.heads.get(shard) ?? 0)) continue;
      let seqs = this.deliveredEarly.get(shard);
      if (!seqs) this.deliveredEarly.set(shard, (seqs = new Set()));
      seqs.add(seq);
    }
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
