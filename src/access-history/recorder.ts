import type { BatchCauses, BatchObserver, Pending } from '../decisions/apply.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { Database } from '../db/database.js';
import type { WriteThread } from '../db/write-thread.js';
import type { ChangeEvent } from '../events/feed.js';
import { newId } from '../ids.js';
import type { Logger } from '../logging/logger.js';
import { timeSlices } from '../time.js';
import { AccessChangeTracker, type AccessDelta } from './changes.js';
import {
  accessHistoryRepository as repo,
  toStored,
  type AccessChange,
  type StoredAccessChange,
  type StoredPart,
} from './repository.js';

/** The longest the event loop waits while the access a batch moved is computed. */
const SLICE_MS = 5;

/** Rows stored per statement, about (whole parts at a time). */
const ROWS_PER_WRITE = 1_000;

/** Changes per `access.changed` message, at most. */
export const CHANGES_PER_PART = 500;

export interface AccessHistoryOptions {
  logger: Logger;
  /** Names this instance in the recorder's lease. */
  instanceId: string;
  /** The lease lasts this long unless renewed (`renew` is called at a third of it). */
  leaseMs: number;
  /** Changes kept waiting to be stored, at most; past it the oldest are given up, logged. */
  maxPending: number;
}

/** A part of one cause's changes waiting to be stored. */
interface Waiting {
  cause: ChangeEvent;
  part: StoredPart;
  /** When it was computed (epoch ms): an instance that does not hold the lease keeps it a while. */
  computedAt: number;
}

/**
 * Records access changes (docs/access-history.md). It watches every batch of changes the
 * decision index applies: it takes the access of the principals the batch can reach before and
 * after (`AccessChangeTracker`), names for each change the event that caused it, and stores them
 * with their `access.changed` webhook messages.
 *
 * Every leading instance computes them, but one stores them: the holder of a lease in Neo4j.
 * The others keep what they computed for twice the lease, so that one taking the lease over
 * stores what the previous holder may not have (the causes it finds stored already are skipped).
 */
export class AccessHistoryRecorder implements BatchObserver {
  private queue: Waiting[] = [];
  private queued = 0;
  private holds = false;
  private writing: Promise<void> | undefined;
  private failedAt = 0;
  private warnedAt = 0;
  private stopped = false;
  /** Stores on a thread of its own where the database's address is known. */
  private readonly thread: WriteThread | undefined;

  constructor(
    private readonly db: Database,
    private readonly options: AccessHistoryOptions,
  ) {
    this.thread = repo.recordThread(db);
  }

  async before(index: PolicyIndex, work: Pending, causes: BatchCauses): Promise<() => Promise<void>> {
    if (this.stopped) return async () => undefined;
    const edges = windowEdges(index, causes);
    const beforeAt = edges.size > 0 ? Math.min(...edges.values()) - 1 : undefined;
    const tracker = new AccessChangeTracker(index, work, timeSlices(SLICE_MS), beforeAt);
    await tracker.before();
    return async () => {
      const deltas = await tracker.after();
      if (deltas.length > 0) this.enqueue(await waiting(deltas, causes, edges, timeSlices(SLICE_MS)));
    };
  }

  /** Takes or renews the lease, and stores what waits once it holds it (a periodic task). */
  async renew(): Promise<void> {
    if (this.stopped) return;
    const held = this.holds;
    this.holds = await repo.claim(this.db, this.options.instanceId, this.options.leaseMs);
    if (this.holds && !held) {
      // Taken over: what this instance computed meanwhile and no one stored goes in now.
      const stored = await repo.recordedCauses(this.db, [...new Set(this.queue.map((w) => w.cause.id))]);
      this.keep((w) => !stored.has(w.cause.id));
      this.options.logger.info({ waiting: this.queued }, 'recording access changes');
    }
    if (!this.holds) this.keep((w) => Date.now() - w.computedAt < 2 * this.options.leaseMs);
    await this.flush();
  }

  /**
   * Stores what waits, when this instance holds the lease; settles once everything queued before
   * the call is stored (or has failed to be, to be tried again).
   */
  flush(): Promise<void> {
    if (!this.holds) return Promise.resolve();
    this.writing ??= this.write().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  /** Stores what waits and gives the lease up (a graceful stop). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.flush();
    if (this.holds) await repo.release(this.db, this.options.instanceId).catch(() => undefined);
    this.holds = false;
    await this.thread?.close();
  }

  private enqueue(parts: Waiting[]): void {
    for (const w of parts) {
      this.queue.push(w);
      this.queued += w.part.rows.length;
    }
    let dropped = 0;
    while (this.queued > this.options.maxPending && this.queue.length > 1) {
      const oldest = this.queue.shift()!;
      this.queued -= oldest.part.rows.length;
      dropped += oldest.part.rows.length;
    }
    if (dropped > 0 && Date.now() - this.warnedAt > 10_000) {
      this.warnedAt = Date.now();
      this.options.logger.warn(
        { dropped, waiting: this.queued },
        'access changes waiting to be stored went past ACCESS_HISTORY_MAX_PENDING; the oldest were given up',
      );
    }
    if (Date.now() - this.failedAt > 1_000) void this.flush();
  }

  private keep(wanted: (w: Waiting) => boolean): void {
    this.queue = this.queue.filter(wanted);
    this.queued = this.queue.reduce((n, w) => n + w.part.rows.length, 0);
  }

  private async write(): Promise<void> {
    while (this.holds && this.queue.length > 0) {
      // Whole parts, up to about a statement's rows, each with its webhook messages.
      let rows = 0;
      let n = 0;
      while (n < this.queue.length && (n === 0 || rows + this.queue[n]!.part.rows.length <= ROWS_PER_WRITE)) {
        rows += this.queue[n]!.part.rows.length;
        n += 1;
      }
      const taken = this.queue.slice(0, n);
      try {
        const parts = taken.map((w) => w.part);
        const { instanceId } = this.options;
        await (this.thread
          ? repo.recordOn(this.thread, parts, instanceId)
          : repo.record(this.db, parts, instanceId));
      } catch (err) {
        // They stay in front, in order; the next renewal or batch tries again.
        this.failedAt = Date.now();
        this.options.logger.warn({ err, waiting: this.queued }, 'could not store access changes; retrying');
        return;
      }
      // By identity: while the statement ran, the queue may have been cut (past its bound).
      const stored = new Set(taken);
      this.keep((w) => !stored.has(w));
    }
  }
}

/** A cause's changes as parts of at most `CHANGES_PER_PART`, each with its `access.changed` data. */
function partsOf(
  cause: ChangeEvent,
  changes: readonly AccessChange[],
  rows: readonly StoredAccessChange[],
): StoredPart[] {
  const parts: StoredPart[] = [];
  const loud: number[] = [];
  const quiet: number[] = [];
  changes.forEach((c, i) => (c.actions_gained.length + c.actions_lost.length > 0 ? loud : quiet).push(i));
  const count = Math.ceil(loud.length / CHANGES_PER_PART);
  for (let n = 0; n < count; n += 1) {
    const some = loud.slice(n * CHANGES_PER_PART, (n + 1) * CHANGES_PER_PART);
    const listed = some.map((i) => changes[i]!);
    parts.push({
      id: listed[0]!.id,
      cause_id: cause.id,
      at: cause.occurred_at,
      rows: some.map((i) => rows[i]!),
      body: JSON.stringify({ cause: listed[0]!.cause, changes: listed, part: n + 1, parts: count }),
    });
  }
  // Entries held otherwise with the same actions: kept for `as_of`, announced to no one.
  for (let n = 0; n < quiet.length; n += CHANGES_PER_PART) {
    const some = quiet.slice(n, n + CHANGES_PER_PART);
    parts.push({
      id: changes[some[0]!]!.id,
      cause_id: cause.id,
      at: cause.occurred_at,
      rows: some.map((i) => rows[i]!),
      body: null,
    });
  }
  return parts;
}

/**
 * The changes of one batch, grouped by the event that caused each and cut in parts, in the order
 * of those events; the event loop turns between slices of them (a cause may have 50,000).
 */
async function waiting(
  deltas: readonly AccessDelta[],
  causes: BatchCauses,
  edges: ReadonlyMap<string, number>,
  turn: () => Promise<void> | undefined,
): Promise<Waiting[]> {
  const latest = latestOf(causes.values());
  const groups = new Map<string, { cause: ChangeEvent; deltas: AccessDelta[] }>();
  for (const delta of deltas) {
    const cause = causeOf(delta, causes) ?? latest;
    if (!cause) continue;
    let g = groups.get(cause.id);
    if (!g) {
      g = { cause, deltas: [] };
      groups.set(cause.id, g);
    }
    g.deltas.push(delta);
  }
  const computedAt = Date.now();
  const out: Waiting[] = [];
  // Ids are handed out in the order of the causes: the order the list reads them in.
  for (const { cause, deltas: some } of [...groups.values()].sort((a, b) =>
    compareEvents(a.cause, b.cause),
  )) {
    const changes: AccessChange[] = [];
    const rows: StoredAccessChange[] = [];
    for (const delta of some) {
      const edge = edges.get(cause.id);
      const change: AccessChange = {
        id: newId('access_change'),
        at: edge === undefined ? cause.occurred_at : new Date(edge).toISOString(),
        principal: delta.principal,
        resource: delta.resource,
        actions_gained: delta.actions_gained,
        actions_lost: delta.actions_lost,
        via: delta.via,
        cause: { event_id: cause.id, event_type: cause.type, actor: cause.actor },
      };
      changes.push(change);
      rows.push(toStored(change, delta.before));
      await turn();
    }
    for (const part of partsOf(cause, changes, rows)) {
      out.push({ cause, part, computedAt });
      await turn();
    }
  }
  return out;
}

/**
 * The instants (epoch ms) of the windows a batch records opening or closing, by the id of the
 * event recording it: what the access moved at is that instant, not when the sweep noticed it.
 */
function windowEdges(index: PolicyIndex, causes: BatchCauses): Map<string, number> {
  const edges = new Map<string, number>();
  for (const [key, event] of causes) {
    if (!key.startsWith('policies:')) continue;
    const policy = index.policies.get(key.slice('policies:'.length));
    const edge =
      event.type === 'policy.expired'
        ? policy?.validUntil
        : event.type === 'policy.window_opened'
          ? policy?.validFrom
          : null;
    if (edge !== null && edge !== undefined && edge <= Date.now()) edges.set(event.id, edge);
  }
  return edges;
}

const compareEvents = (a: ChangeEvent, b: ChangeEvent): number =>
  a.occurred_at < b.occurred_at
    ? -1
    : a.occurred_at > b.occurred_at
      ? 1
      : a.id < b.id
        ? -1
        : a.id > b.id
          ? 1
          : 0;

function latestOf(events: Iterable<ChangeEvent | undefined>): ChangeEvent | undefined {
  let latest: ChangeEvent | undefined;
  for (const e of events) if (e && (!latest || compareEvents(latest, e) < 0)) latest = e;
  return latest;
}

/**
 * The event of a batch that moved one principal's access to one resource: of those naming the
 * principal itself, a policy behind the change, a group on the path of its grant, or the
 * resource, the latest. Undefined when none does (the batch's latest event is named then).
 */
function causeOf(delta: AccessDelta, causes: BatchCauses): ChangeEvent | undefined {
  const id = delta.principal_id;
  const named: (ChangeEvent | undefined)[] = [
    causes.get(`principals:${id}`),
    causes.get(`memberships:${id}`),
  ];
  for (const v of delta.via) {
    named.push(causes.get(`policies:${v.policy_id}`));
    for (const step of v.path ?? []) {
      named.push(causes.get(`groups:${step.id}`), causes.get(`removedGroups:${step.id}`));
    }
  }
  named.push(causes.get(`resources:${delta.resource.type}:${delta.resource.identifier}`));
  return latestOf(named);
}
