import type { BatchCauses, BatchObserver, Pending } from '../decisions/apply.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { Database } from '../db/database.js';
import type { WriteThread } from '../db/write-thread.js';
import type { Logger } from '../logging/logger.js';
import { unpaced, type Pacer } from '../pacing/pacer.js';
import { watchBatch } from './compute.js';
import { accessHistoryRepository as repo, type ReadyPart } from './repository.js';

/**
 * Rows stored per statement, about (whole parts at a time): each transaction costs a few
 * milliseconds whatever it holds (its log flush), so ten parts go in one.
 */
const ROWS_PER_WRITE = 5_000;
/** Rows per statement while the pacer slows the store down, at least. */
const ROWS_PER_WRITE_PACED = 500;
/** What the pacer calls the store's steps. */
const PACED_AS = 'access-history.store';

/**
 * Parts stored unkeyed (cypher/access-history/key.cypher) are keyed once what waits is stored,
 * when at least this many are; and while parts keep coming, once this many wait (reads by
 * principal or resource go through the unkeyed ones one by one).
 */
const KEY_AFTER_PARTS = 32;
const KEY_AT_MOST_PARTS = 200;
/**
 * Parts keyed per transaction, at most. The full-text index is eventually consistent (schema
 * 019): a keying commits in 5–30 ms and holds no other write up, where applying its updates as
 * it committed held every commit after it (100 parts at once held a policy's create 0.3–0.7 s).
 * The keying runs beside the stores (`keyBeside`): the wait for the index to hold what it keyed
 * (a second or so for a policy reaching 50,000 principals) holds no store up.
 */
const KEY_PARTS_PER_TX = 20;

/** A store that failed is tried again after this long, not by every batch meanwhile. */
const RETRY_MS = 1_000;

export interface AccessHistoryOptions {
  logger: Logger;
  /** Names this instance in the recorder's lease. */
  instanceId: string;
  /** The lease lasts this long unless renewed (`renew` is called at a third of it). */
  leaseMs: number;
  /** Changes kept waiting to be stored, at most; past it the oldest are given up, logged. */
  maxPending: number;
  /**
   * Paces the store so that it gives way to requests (src/pacing), while fewer than a quarter of
   * `maxPending` changes wait; past that, and when a read or a stop waits for it, it stores at
   * full speed: nothing computed is given up for the sake of pacing.
   */
  pacer?: Pacer;
}

/** Where changes are computed away from the recorder: a decision thread (`take` gets them). */
export interface ComputedElsewhere {
  /** Settles once the changes of every batch applied until now have been taken, or are lost. */
  watched(): Promise<void>;
  /** Whether batches applied until now still wait to be computed there. */
  readonly computing: boolean;
}

/** A part of one cause's changes waiting to be stored. */
interface Waiting {
  part: ReadyPart;
  /** When it was computed (epoch ms): an instance that does not hold the lease keeps it a while. */
  computedAt: number;
}

/**
 * Records access changes (docs/access-history.md). What every batch of changes the decision
 * index applies moved (`watchBatch`: the access of the principals it can reach before and after,
 * each change named after the event that caused it) is computed on the first decision thread's
 * replica and handed to `take`, or, where no thread is up, here as an observer of the batch; it
 * stores the parts with their `access.changed` webhook messages.
 *
 * Every leading instance computes them, but one stores them: the holder of a lease in Neo4j.
 * The others keep what they computed for twice the lease, so that one taking the lease over
 * stores what the previous holder may not have (the causes it finds stored already are skipped).
 * A holder that stalled past its lease stores nothing once another took it (each store checks the
 * lease), and the one that took it over replaces a cause the stalled one stored in part with its
 * own whole computation of it, where none of its messages went out yet.
 */
export class AccessHistoryRecorder implements BatchObserver {
  private queue: Waiting[] = [];
  private queued = 0;
  /** Batches whose changes were computed on the event loop, and on a decision thread (/metrics). */
  readonly batches = { event_loop: 0, decision_thread: 0 };
  private holds = false;
  /** Whether the lease was tried once (a renewal claimed it or found another holder). */
  private tried = false;
  /** The try of the lease under way, which a read's first try and the periodic one share. */
  private claiming: Promise<void> | undefined;
  private writing: Promise<void> | undefined;
  /** The thread and the statements made ready when the lease is taken (`prepare`). */
  private preparing: Promise<void> | undefined;
  /** Parts this instance stored since it last keyed them. */
  private unkeyed = 0;
  /** Parts this instance stored since it started (a keying tells those stored while it ran). */
  private storedParts = 0;
  /** The keying under way beside the stores (`keyBeside`), one at a time. */
  private keying: Promise<void> | undefined;
  private failedAt = 0;
  /** A second try of a store that failed, when no renewal or batch comes first. */
  private retry: NodeJS.Timeout | undefined;
  private warnedAt = 0;
  private stopped = false;
  /** Stores on a thread of its own where the database's address is known. */
  private readonly thread: WriteThread | undefined;
  private elsewhere: ComputedElsewhere | undefined;
  /** The causes of the batch whose changes are being handed on: not all of its parts came yet. */
  private readonly computing = new Set<string>();
  private readonly pacer: Pacer;
  /**
   * Aborted once someone waits for the store (a read that must see it, a stop): a pause under way
   * ends, and none follows until the store is done.
   */
  private hurried = new AbortController();

  constructor(
    private readonly db: Database,
    private readonly options: AccessHistoryOptions,
  ) {
    this.thread = repo.recordThread(db);
    this.pacer = options.pacer ?? unpaced();
  }

  async before(index: PolicyIndex, work: Pending, causes: BatchCauses): Promise<() => Promise<void>> {
    if (this.stopped) return async () => undefined;
    const after = await watchBatch(index, work, causes);
    this.batches.event_loop += 1;
    return async () => this.enqueue(await after((parts) => this.enqueue(parts, false)), true);
  }

  /**
   * Parts of a batch's changes computed on a decision thread, in batch order: `last` with the
   * batch's last parts (those before come as they are made).
   */
  take(parts: readonly ReadyPart[], last: boolean): void {
    if (last) this.batches.decision_thread += 1;
    this.enqueue(parts, last);
  }

  /** Changes computed and not stored yet. */
  get pending(): number {
    return this.queued;
  }

  /** Has batches computed on a decision thread too, from now on. */
  computeOn(elsewhere: ComputedElsewhere): void {
    this.elsewhere = elsewhere;
  }

  /**
   * Stores what the batches applied so far moved (a read that must see them waits on it). Before
   * the lease was first tried (a read just after a start, whose catch-up computed changes), it is
   * tried now, so that what this instance will store is stored before the read answers.
   */
  async settle(): Promise<void> {
    await this.elsewhere?.watched();
    // A try that fails (the periodic renewal logs it) leaves the read to answer what is stored.
    if (!this.tried) await this.claim().catch(() => undefined);
    await this.flush(true);
  }

  unstored(): boolean {
    // What an instance that does not hold the lease computes, the holder stores.
    const mine = this.holds || this.stopped;
    return (mine && this.queue.length > 0) || this.elsewhere?.computing === true;
  }

  /** Takes or renews the lease, and stores what waits once it holds it (a periodic task). */
  async renew(): Promise<void> {
    await this.claim();
    await this.flush();
  }

  /** Takes or renews the lease, one try at a time. */
  private claim(): Promise<void> {
    this.claiming ??= this.tryLease().finally(() => {
      this.claiming = undefined;
    });
    return this.claiming;
  }

  private async tryLease(): Promise<void> {
    if (this.stopped) return;
    const held = this.holds;
    this.holds = await repo.claim(this.db, this.options.instanceId, this.options.leaseMs);
    this.tried = true;
    if (this.holds && !held) {
      this.preparing = this.takeOver().then(() => this.prepare());
      this.options.logger.info({ waiting: this.queued }, 'recording access changes');
    }
    if (!this.holds) this.keep((w) => Date.now() - w.computedAt < 2 * this.options.leaseMs);
  }

  /**
   * Stores what waits, when this instance holds the lease; settles once everything queued before
   * the call is stored (or has failed to be, to be tried again).
   */
  flush(waited = false): Promise<void> {
    if (!this.holds) return Promise.resolve();
    if (waited) this.hurried.abort();
    this.writing ??= this.write().finally(() => {
      this.writing = undefined;
      this.hurried = new AbortController();
    });
    return this.writing;
  }

  /** Stores what waits and gives the lease up (a graceful stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.preparing;
    await this.flush(true);
    await this.keying;
    if (this.holds) await repo.release(this.db, this.options.instanceId).catch(() => undefined);
    this.holds = false;
    await this.thread?.close();
  }

  /** Queues parts to store; `done` with the last of their batch. */
  private enqueue(parts: readonly ReadyPart[], done: boolean): void {
    for (const part of parts) this.computing.add(part.cause_id);
    if (done) this.computing.clear();
    if (parts.length === 0 || this.stopped) return;
    const computedAt = Date.now();
    for (const part of parts) {
      this.queue.push({ part, computedAt });
      this.queued += part.rows;
    }
    let dropped = 0;
    while (this.queued > this.options.maxPending && this.queue.length > 1) {
      const oldest = this.queue.shift()!;
      this.queued -= oldest.part.rows;
      dropped += oldest.part.rows;
    }
    if (dropped > 0 && Date.now() - this.warnedAt > 10_000) {
      this.warnedAt = Date.now();
      this.options.logger.warn(
        { dropped, waiting: this.queued },
        'access changes waiting to be stored went past ACCESS_HISTORY_MAX_PENDING; the oldest were given up',
      );
    }
    if (Date.now() - this.failedAt > RETRY_MS) void this.flush();
  }

  private keep(wanted: (w: Waiting) => boolean): void {
    this.queue = this.queue.filter(wanted);
    this.queued = this.queue.reduce((n, w) => n + w.part.rows, 0);
  }

  private async write(): Promise<void> {
    // What the lease's taking prepares comes first (a cause left open is closed before any other).
    await this.preparing;
    while (this.holds && this.queue.length > 0) {
      // Whole parts, up to about a statement's rows, each with its webhook messages.
      const paced = !this.hurried.signal.aborted && this.queued < this.options.maxPending / 4;
      const most = paced ? this.pacer.size(ROWS_PER_WRITE, ROWS_PER_WRITE_PACED) : ROWS_PER_WRITE;
      let rows = 0;
      let n = 0;
      while (n < this.queue.length && (n === 0 || rows + this.queue[n]!.part.rows <= most)) {
        rows += this.queue[n]!.part.rows;
        n += 1;
      }
      const taken = this.queue.slice(0, n);
      try {
        const parts = taken.map((w) => w.part);
        const { instanceId } = this.options;
        const store = (): Promise<boolean> =>
          this.thread
            ? repo.recordOn(this.thread, parts, instanceId)
            : repo.record(this.db, parts, instanceId);
        const held = await (paced ? this.pacer.step(PACED_AS, store, this.hurried.signal) : store());
        if (!held) {
          // Another instance took the lease (this one stalled past it): it stores from here, and
          // this one keeps what it computed as any instance that does not hold the lease does.
          this.holds = false;
          this.options.logger.warn(
            { waiting: this.queued },
            'another instance took the access-history lease; this one stores no more',
          );
          return;
        }
      } catch (err) {
        // They stay in front, in order; tried again in a second (or by a renewal or batch first).
        this.failedAt = Date.now();
        this.options.logger.warn({ err, waiting: this.queued }, 'could not store access changes; retrying');
        if (!this.stopped && this.retry === undefined) {
          this.retry = setTimeout(() => {
            this.retry = undefined;
            void this.flush();
          }, RETRY_MS);
          this.retry.unref();
        }
        return;
      }
      // By identity: while the statement ran, the queue may have been cut (past its bound).
      const stored = new Set(taken);
      this.keep((w) => !stored.has(w));
      this.unkeyed += taken.length;
      this.storedParts += taken.length;
      this.keyWhenDue();
    }
  }

  /** Settles once the keying under way, if one is, is done: what was keyed is read through the index. */
  async indexed(): Promise<void> {
    await this.keying;
  }

  /**
   * Starts a keying beside the stores when enough parts wait unkeyed: KEY_AFTER_PARTS once
   * nothing is left to store, KEY_AT_MOST_PARTS while parts keep coming.
   */
  private keyWhenDue(): void {
    if (this.stopped || !this.holds) return;
    if (this.unkeyed >= (this.queue.length > 0 ? KEY_AT_MOST_PARTS : KEY_AFTER_PARTS)) void this.keyBeside();
  }

  /**
   * Keys the parts stored unkeyed, beside the stores: one keying at a time, and, once one is done,
   * another if enough parts were stored meanwhile (not after a failure: the next store tries).
   */
  private keyBeside(): Promise<void> {
    this.keying ??= this.key().then((done) => {
      this.keying = undefined;
      if (done) this.keyWhenDue();
    });
    return this.keying;
  }

  /**
   * What taking the lease over does before anything is stored: the causes this instance computed
   * whole that a recorder before it stored in part are taken over (their parts replaced by these),
   * and those stored already otherwise are dropped from the queue. Should either fail, the queue
   * stays as it is: a store skips what another recorder stored.
   */
  private async takeOver(): Promise<void> {
    const { instanceId, logger } = this.options;
    try {
      const whole = new Map<string, number>();
      for (const { part } of this.queue) {
        if (!this.computing.has(part.cause_id))
          whole.set(part.cause_id, (whole.get(part.cause_id) ?? 0) + part.rows);
      }
      const adopted = await repo.adopt(
        this.db,
        instanceId,
        [...whole].map(([id, rows]) => ({ id, rows })),
      );
      if (adopted.size > 0) {
        logger.warn(
          { causes: adopted.size },
          'took over causes a previous recorder stored in part; storing them whole',
        );
      }
      const stored = await repo.recordedCauses(this.db, [...new Set(this.queue.map((w) => w.part.cause_id))]);
      this.keep((w) => adopted.has(w.part.cause_id) || !stored.has(w.part.cause_id));
    } catch (err) {
      logger.warn({ err }, 'could not check what a previous recorder stored; storing what waits');
    }
  }

  /**
   * Has the thread that stores start, with its connection, and Neo4j plan the statements that
   * store and key, now rather than at the first store (which the first large change would wait
   * on): a store of nothing, and a keying of what a previous holder left unkeyed. Before them,
   * the causes a previous holder left without their last part are announced as far as they were
   * stored (their messages would otherwise wait for a count no one will give).
   */
  private async prepare(): Promise<void> {
    const { instanceId, logger } = this.options;
    this.thread?.warm();
    await repo.closeOpen(this.db).then(
      (closed) => {
        if (closed > 0)
          logger.warn(
            { closed },
            'announced causes whose recording was cut short, as far as they were stored',
          );
      },
      (err: unknown) => logger.warn({ err }, 'could not announce the causes whose recording was cut short'),
    );
    await (
      this.thread ? repo.recordOn(this.thread, [], instanceId) : repo.record(this.db, [], instanceId)
    ).catch(() => undefined);
    await this.keyBeside();
  }

  /**
   * Keys every part stored unkeyed, KEY_PARTS_PER_TX a transaction, then settles them
   * (`settleKeys`: once the index holds them, they are read through it alone); those a keying
   * before left unsettled (it failed, or a recorder before this one stopped) are settled first.
   * Answers whether it got through; a failure leaves the rest to the next time (reads find
   * them). Settles and keyings are never under way at once: a settle takes only what was keyed
   * before its wait began.
   */
  private async key(): Promise<boolean> {
    try {
      await repo.settleKeys(this.db);
      while (!this.stopped && this.holds) {
        const storedBefore = this.storedParts;
        const keyed = await repo.key(this.db, KEY_PARTS_PER_TX);
        this.unkeyed = Math.max(0, this.unkeyed - keyed);
        if (keyed < KEY_PARTS_PER_TX) {
          // All keyed but those stored while the keying ran, which it may have missed.
          this.unkeyed = Math.min(this.unkeyed, this.storedParts - storedBefore);
          break;
        }
      }
      if (!this.stopped && this.holds) await repo.settleKeys(this.db);
      return true;
    } catch (err) {
      this.options.logger.warn({ err }, 'could not key the stored access changes; trying again later');
      return false;
    }
  }
}
