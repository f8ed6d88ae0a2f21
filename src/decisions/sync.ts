import { availableParallelism } from 'node:os';
import type { Database } from '../db/database.js';
import type { ChangeEvent, ChangeFeed } from '../events/feed.js';
import { isId } from '../ids.js';
import type { Logger } from '../logging/logger.js';
import { resourceOf } from '../policies/model.js';
import { timeSlices } from '../time.js';
import {
  applyChanges,
  BUILD_SLICE_MS,
  isEmpty,
  nothing,
  putGroupRow,
  putPrincipalRow,
  type BatchObserver,
  type Dirty,
  type Fetched,
  type Pending,
} from './apply.js';
import type { DecisionReplicas } from './decision-thread.js';
import { compilePolicy, type IxPolicy } from './model.js';
import { PolicyIndex } from './policy-index.js';
import { decisionRepository as repo } from './repository.js';
import { readSnapshot, SectionsRefused, writeSnapshot } from './snapshot.js';

/**
 * Ranges of principals read side by side at a build, each by a worker thread decoding what the
 * database sends, where the machine has cores for them besides the database and the thread that
 * takes the rows in (on two cores, the workers only take time from that thread: one stream).
 */
const READ_RANGES = availableParallelism() >= 4 ? Math.min(4, availableParallelism() - 2) : 1;

export type { Dirty };

/**
 * Principals read per statement when a batch names many: the driver decodes a statement's answer,
 * and the rows are converted, in one run of the event loop, which this keeps to a few milliseconds.
 */
const READ_SLICE = 100;

async function inSlices<T>(ids: string[], read: (ids: string[]) => Promise<T[]>): Promise<T[]> {
  if (ids.length <= READ_SLICE) return read(ids);
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += READ_SLICE) out.push(...(await read(ids.slice(i, i + READ_SLICE))));
  return out;
}

/** Where a snapshot of the index is kept, and the feed that says what it lacks. */
export interface SnapshotPlace {
  file: string;
  feed: ChangeFeed;
}

/** Snapshots held back in a row, at most, while the observer has changes not stored yet. */
const SNAPSHOTS_HELD_AT_MOST = 5;

/** How the index started: from a snapshot (and how many changes it caught up with), or built. */
export type IndexStart =
  | { from: 'snapshot'; counts: IndexCounts; writtenAt: string; replayed: number }
  | { from: 'database'; counts: IndexCounts; refused?: string };

/** How many of each the index holds after a build. */
export type IndexCounts = {
  principals: number;
  groups: number;
  policies: number;
  resources: number;
};

/**
 * Builds the decision index from Neo4j and keeps it current from the change feed. Each change
 * event names what changed; the index reads it again as it now is (so events may come twice or
 * out of order), in batches: changes that arrive while a batch is read wait for the next one,
 * which then reads them all together. The promise a listener call returns settles once its
 * change is in the index, so a write on this instance returns only after decisions see it.
 */
export class IndexSync {
  private pending = nothing();
  /** The latest event that named each key of `pending`. */
  private causes = new Map<string, ChangeEvent>();
  /** Watches each batch applied to the index in use. */
  private observer: BatchObserver | undefined;
  private queued: Promise<void> | null = null;
  private tail: Promise<void> = Promise.resolve();
  /** A batch failed to read: its keys wait for the next change or the periodic retry. */
  private failed = false;
  /** When the oldest change of `pending` was committed (ISO text, which orders as time does). */
  private oldestPending: string | null = null;
  /**
   * How far behind the store the index was when it last applied a batch: from the commit of the
   * batch's oldest change until the index held it (`decision_index_lag_seconds`).
   */
  lagMs = 0;
  private dirty: Dirty = { all: true, principals: new Set(), policies: [] };
  /** The version of the index last written as a snapshot, or read from one. */
  private snapshotVersion = -1;
  /** While a full build runs beside the index in use: every key noted since it started. */
  private noted: Pending | null = null;
  /** The latest event that named each key of `noted`. */
  private notedCauses = new Map<string, ChangeEvent>();
  /** Snapshots skipped in a row because the observer had changes not yet stored. */
  private snapshotsHeld = 0;
  /** Set once the index has started (built, or read from its snapshot and caught up). */
  private started = false;

  private readonly followsPrivileges: boolean;
  /** Replicas of the index on decision threads, sent each change it applies. */
  private replicas: DecisionReplicas | undefined;

  constructor(
    private readonly db: Database,
    private readonly index: PolicyIndex,
    private readonly logger: Logger,
    /** followsPrivileges: whether to note what the privilege risk must look at (default true). */
    options: { followsPrivileges?: boolean } = {},
  ) {
    this.followsPrivileges = options.followsPrivileges ?? true;
  }

  /**
   * Builds the index from the database beside the one in use, then swaps it in: decisions see
   * the old contents until then, never a partial build. Changes that arrive meanwhile are applied
   * to the index in use as always, and their keys noted; once the build has read everything,
   * those keys are read again into the new index (and any that arrive while they are), and the
   * new index replaces the old one between two batches. Call it after the feed has opened.
   */
  async load(): Promise<IndexCounts> {
    const built = new PolicyIndex();
    this.noted = nothing();
    try {
      await this.build(built);
      const counts = await this.swapIn(built, null);
      this.dirty = { all: true, principals: new Set(), policies: [] };
      return counts;
    } finally {
      this.noted = null;
    }
  }

  /**
   * Starts the index: from the snapshot `from` names when there is one this database can use
   * (the index as it was written, then every change committed since, read from the change feed),
   * else built from the database (`load`). A snapshot that is missing, damaged, of another
   * format, of another database, or ahead of the database (restored from an older copy) is
   * refused, and the reason logged. Call it after the feed has opened.
   */
  async start(from?: SnapshotPlace): Promise<IndexStart> {
    let refused: string | undefined;
    if (from) {
      this.noted = nothing();
      try {
        const started = await this.startFrom(from);
        this.started = true;
        return started;
      } catch (err) {
        refused = err instanceof Error ? err.message : String(err);
        this.logger.warn(
          { file: from.file, reason: refused },
          'the decision index snapshot is not used; building the index from the database',
        );
      } finally {
        this.noted = null;
      }
    }
    const counts = await this.load();
    this.started = true;
    return { from: 'database', counts, ...(refused !== undefined ? { refused } : {}) };
  }

  private async startFrom(from: SnapshotPlace): Promise<IndexStart> {
    const database = await repo.databaseId(this.db);
    const { index, meta } = await readSnapshot(from.file, database);
    const opened = new Map(from.feed.openedAt());
    for (const [shard, seq] of meta.feed) {
      if (seq > (opened.get(shard) ?? 0))
        throw new SectionsRefused('it is ahead of the database, which holds fewer changes');
    }
    // What was committed between the snapshot and the feed's opening; what came after, the feed
    // delivers, and the noting of keys catches both.
    let replayed = 0;
    for await (const page of from.feed.since(meta.feed)) {
      for (const event of page) this.noteIn(this.noted!, event, this.notedCauses);
      replayed += page.length;
    }
    // Only principals and policies that changed since are looked at again by the privilege risk,
    // when the factors of the others were up to date as the snapshot was written.
    this.dirty.all = meta.privilegesPending;
    // The observer watches the catch-up as it would have watched those batches: what they moved
    // and was not stored before a crash is computed again (a cause stored already is skipped).
    const counts = await this.swapIn(index, this.followsPrivileges ? this.dirty : null, true);
    // What it caught up with since is read again at the next start; the next periodic snapshot
    // (once something changes) holds it.
    this.snapshotVersion = this.index.version;
    return { from: 'snapshot', counts, writtenAt: meta.writtenAt, replayed };
  }

  /**
   * Reads the keys noted since the build began into the index built, until none is left, then
   * swaps it in: in one turn of the event loop, between two batches of changes.
   */
  private swapIn(built: PolicyIndex, dirty: Dirty | null, observed = false): Promise<IndexCounts> {
    return this.serialized(async () => {
      for (let work = this.noted!; !isEmpty(work); work = this.noted!) {
        const causes = this.notedCauses;
        this.noted = nothing();
        this.notedCauses = new Map();
        const fetched = await this.read(built, work);
        const after = observed ? await this.observer?.before(built, work, causes) : undefined;
        await applyChanges(built, work, fetched, dirty);
        await after?.();
      }
      this.noted = null;
      this.notedCauses = new Map();
      const counts = {
        principals: built.principals.size,
        groups: built.groups.size,
        policies: built.policies.size,
        resources: built.resourceTable.size,
      };
      this.index.replaceWith(built);
      this.replicas?.seed(this.index, this.between);
      return counts;
    });
  }

  /**
   * Writes the index to `file` between two batches of changes, with the place in the feed up to
   * which it holds every change; nothing changes the index until it is written. Skipped (answers
   * undefined) while a batch that failed waits for its retry (the feed has moved past it), and
   * while the observer holds changes it computed and has not stored.
   */
  writeSnapshot(file: string, feed: ChangeFeed): Promise<number | undefined> {
    return this.serialized(async () => {
      if (this.failed) return undefined;
      // Nothing changed since the snapshot last written or read.
      if (this.index.version === this.snapshotVersion) return 0;
      // A start from this snapshot would not see again what the observer computed and has not
      // stored yet: held back while it has (a few rounds at most, so that one is written).
      if (this.observer?.unstored() && this.snapshotsHeld < SNAPSHOTS_HELD_AT_MOST) {
        this.snapshotsHeld += 1;
        return undefined;
      }
      this.snapshotsHeld = 0;
      const database = await repo.databaseId(this.db);
      const { all, principals, policies } = this.dirty;
      const version = this.index.version;
      const bytes = await writeSnapshot(this.index, file, {
        database,
        feed: feed.delivered(),
        privilegesPending: all || principals.size > 0 || policies.length > 0,
      });
      this.snapshotVersion = version;
      return bytes;
    });
  }

  /** Sets principals' privilege risk factors as now stored, between two batches of changes. */
  setPrivileges(rows: readonly { id: string; privileges: string }[]): Promise<void> {
    return this.serialized(async () => {
      for (const { id, privileges } of rows) this.index.setPrivileges(id, privileges);
      this.replicas?.privileges(rows);
    });
  }

  /**
   * Keeps replicas of the index (on decision threads) following it: seeded from it as it stands
   * between two batches of changes, then sent every batch applied after.
   */
  replicate(replicas: DecisionReplicas): Promise<void> {
    return this.serialized(async () => {
      replicas.seed(this.index, this.between);
      this.replicas = replicas;
    });
  }

  /** Has `observer` watch every batch applied to the index in use from now on. */
  observe(observer: BatchObserver): void {
    this.observer = observer;
  }

  /** Runs work between two batches of changes. */
  private readonly between = (work: () => Promise<void>): Promise<void> => this.serialized(work);

  /** Reads everything into an empty index, letting the event loop turn every few milliseconds. */
  private async build(index: PolicyIndex): Promise<void> {
    const { db } = this;
    const turn = timeSlices(BUILD_SLICE_MS);
    for (const g of await repo.groups(db)) putGroupRow(index, g);
    await repo.principals(
      db,
      async (page) => {
        for (const row of page) putPrincipalRow(index, row);
        await turn();
      },
      { ranges: READ_RANGES },
    );
    const compiled: IxPolicy[] = [];
    for (const { policy, since } of await repo.policies(db)) {
      try {
        compiled.push(compilePolicy(policy, since));
      } catch (err) {
        this.logger.error(
          { err, policy: policy.id },
          'a stored policy could not be compiled; it takes no effect',
        );
      }
    }
    await index.prepareMatches(compiled, turn);
    for (const policy of compiled) index.putPolicy(policy);
    for (const r of await repo.resources(db)) index.putResource(r.type, r.identifier, r);
    for (const d of await repo.delegations(db)) index.putDelegation(d.id, d);
  }

  /** Runs work after every batch queued before it, and before any queued after it. */
  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** What changed since the last call (everything, after a load). */
  takeDirty(): Dirty {
    const dirty = this.dirty;
    this.dirty = { all: false, principals: new Set(), policies: [] };
    return dirty;
  }

  /** Makes the next `takeDirty` say everything changed (a run that used the last one failed). */
  markAllDirty(): void {
    this.dirty.all = true;
  }

  /** The change listener: settles once the change is in the index. */
  readonly onChange = (event: ChangeEvent): Promise<void> => {
    if (!this.note(event)) return Promise.resolve();
    if (this.oldestPending === null || event.occurred_at < this.oldestPending) {
      this.oldestPending = event.occurred_at;
    }
    return this.schedule();
  };

  /** Retries a batch that failed to read (the periodic task calls this). */
  retry(): Promise<void> {
    if (!this.failed) return Promise.resolve();
    this.failed = false;
    return this.schedule();
  }

  private note(event: ChangeEvent): boolean {
    const noted = this.noteIn(this.pending, event, this.causes);
    if (noted && this.noted) this.noteIn(this.noted, event, this.notedCauses);
    return noted;
  }

  /** Adds the keys `event` names to `p`, and, given `causes`, the event as the latest to name each. */
  private noteIn(p: Pending, event: ChangeEvent, causes?: Map<string, ChangeEvent>): boolean {
    const add = (set: keyof Pending, id: string): void => {
      p[set].add(id);
      if (!causes) return;
      const key = `${set}:${id}`;
      const known = causes.get(key);
      if (!known || known.occurred_at <= event.occurred_at) causes.set(key, event);
    };
    const id = event.target.id;
    switch (event.type.slice(0, event.type.indexOf('.'))) {
      case 'principal':
        add('principals', id);
        return true;
      case 'policy':
        add('policies', id);
        return true;
      case 'resource':
        add('resources', id);
        return true;
      case 'delegation':
        add('delegations', id);
        return true;
      case 'group': {
        if (event.type === 'group.deleted') {
          add('removedGroups', id);
          return true;
        }
        const member = (m: string): void => add(isId('group', m) ? 'groups' : 'memberships', m);
        if (event.type === 'group.member_added' || event.type === 'group.member_removed') {
          const change = event.changes?.['members'];
          const named = (change?.to ?? change?.from) as string | undefined;
          if (typeof named !== 'string') return false;
          member(named);
          return true;
        }
        add('groups', id);
        // A group created with its members names them all (a connector's bulk reconciliation).
        const members = event.changes?.['members']?.to;
        if (Array.isArray(members)) for (const m of members) if (typeof m === 'string') member(m);
        return true;
      }
      default:
        return false;
    }
  }

  private schedule(): Promise<void> {
    if (this.queued) return this.queued;
    const run = this.tail.then(() => {
      this.queued = null;
      return this.apply();
    });
    this.queued = run;
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async apply(): Promise<void> {
    const work = this.pending;
    const causes = this.causes;
    const oldest = this.oldestPending;
    this.pending = nothing();
    this.causes = new Map();
    this.oldestPending = null;
    try {
      const fetched = await this.read(this.index, work);
      // Until the index has started, it is caught up with (and watched) beside the index in use.
      const observer = this.started ? this.observer : undefined;
      // Where a decision thread watches, it computes what the batch moved on its replica, off
      // the event loop; otherwise the observer does here.
      const onThread = observer !== undefined && this.replicas?.watching === true;
      const observed = onThread ? undefined : await observer?.before(this.index, work, causes);
      // The decision threads are sent the batch first, and apply it (and compute what it moved)
      // while the index in use does: neither waits for the other's evaluation of a new `match`.
      // Applying a batch is idempotent, so one sent again after a failure here changes nothing
      // more on a replica (and moves no access twice).
      const sent = await this.replicas?.apply(
        work,
        fetched,
        this.index.version + 1,
        onThread ? causes : undefined,
      );
      await applyChanges(this.index, work, fetched, this.followsPrivileges ? this.dirty : null);
      if (onThread && !sent) {
        this.logger.warn(
          'the decision thread watching batches stopped; the access changes of one batch are lost',
        );
      }
      await observed?.();
      if (oldest !== null) this.lagMs = Math.max(0, Date.now() - Date.parse(oldest));
    } catch (err) {
      // Nothing is lost: the keys go back to wait for the next batch, with what named them.
      // (Changes noted meanwhile may have set it again: the older of the two stands.)
      const since = this.oldestPending as string | null;
      if (oldest !== null && (since === null || oldest < since)) this.oldestPending = oldest;
      for (const key of Object.keys(work) as (keyof Pending)[]) {
        for (const value of work[key]) this.pending[key].add(value);
      }
      for (const [key, event] of causes) if (!this.causes.has(key)) this.causes.set(key, event);
      this.failed = true;
      this.logger.warn({ err }, 'could not bring the decision index up to date; retrying');
      throw err;
    }
  }

  /**
   * Reads what a batch names, as it now is. A principal whose memberships alone changed is read
   * whole only when `index` does not hold it yet.
   */
  private async read(index: PolicyIndex, work: Pending): Promise<Fetched> {
    const { db } = this;
    const whole = [...work.principals];
    const memberships: string[] = [];
    for (const id of work.memberships) {
      if (work.principals.has(id)) continue;
      if (index.table.rowOf(id) < 0) whole.push(id);
      else memberships.push(id);
    }
    const [policies, groups, principals, joined, resources, delegations] = await Promise.all([
      work.policies.size > 0 ? repo.policiesById(db, [...work.policies]) : [],
      work.groups.size > 0 ? repo.groupsById(db, [...work.groups]) : [],
      whole.length > 0 ? inSlices(whole, (ids) => repo.principalsById(db, ids)) : [],
      memberships.length > 0 ? inSlices(memberships, (ids) => repo.membershipsById(db, ids)) : [],
      work.resources.size > 0 ? repo.resourcesByKey(db, [...work.resources].map(resourceOf)) : [],
      work.delegations.size > 0 ? repo.delegationsById(db, [...work.delegations]) : [],
    ]);
    return { policies, groups, principals, memberships: joined, resources, delegations };
  }
}
