import { setImmediate } from 'node:timers/promises';
import type { Static } from '@sinclair/typebox';
import type { SyncCountsSchema } from '../schemas/connectors.js';
import type { OperationContext } from '../audit/audit.js';
import type { ScimCaller } from '../connectors/model.js';
import type { Database } from '../db/database.js';
import type { EventSink } from '../events/sink.js';
import { AppError } from '../errors/errors.js';
import { newId } from '../ids.js';
import type { PrincipalBatchWriter, PrincipalWriter } from '../principals/writes.js';
import type { GroupWriter } from '../groups/writes.js';
import { unpaced, type Pacer } from '../pacing/pacer.js';
import { nowIso } from '../time.js';
import { ScimError } from './errors.js';
import type { ScimGroupService } from './groups-service.js';
import { storedGroup } from './groups.js';
import type { ScimObject } from './resource.js';
import { scimRepository, scimSyncRepository as repo, type ExistingUser } from './repository.js';
import type { ManagerLink } from '../principals/model.js';
import {
  planGroupsSteps,
  planUsersSteps,
  SnapshotReader,
  type Snapshot,
  resolveMembers,
  type CurrentGroup,
  type LineError,
  type PlannedGroup,
  type SnapshotGroup,
  type Steps,
  type UserCreate,
  type UserMatch,
  type UsersPlan,
} from './sync-plan.js';
import {
  createdChanges,
  mappedAttributes,
  mappedMetadata,
  mergePatch,
  updatedChanges,
  withMapped,
} from './users.js';

/** Users written per transaction, at full speed; while paced, down to USER_BATCH_PACED. */
const BATCH = 1_000;
const USER_BATCH_PACED = 100;
/** New groups written per transaction, at full speed; while paced, down to GROUP_BATCH_PACED. */
const GROUP_BATCH = 100;
const GROUP_BATCH_PACED = 10;
const USER_BATCHES = [BATCH, USER_BATCH_PACED] as const;
const GROUP_BATCHES = [GROUP_BATCH, GROUP_BATCH_PACED] as const;
/** What the pacer calls a sync's steps. */
const PACED_AS = 'scim.sync';
/** Line errors reported back (all are counted). */
const MAX_ERRORS = 100;

/** A member of a planned group, resolved to an id, with the display its line gives it. */
interface PlannedMember {
  value: string;
  display?: string;
}

/** Snapshot lines read between two turns of the event loop. */
const LINES_PER_TURN = 250;

/**
 * Reads a snapshot piece by piece, letting the event loop turn every few hundred lines: a
 * snapshot of a hundred thousand users takes seconds to read, and requests are served meanwhile.
 */
async function readPieces(pieces: AsyncIterable<string>, signal: AbortSignal): Promise<Snapshot> {
  const reader = new SnapshotReader();
  const drain = async (): Promise<void> => {
    while (reader.read(LINES_PER_TURN)) {
      signal.throwIfAborted();
      await setImmediate();
    }
  };
  for await (const piece of pieces) {
    reader.push(piece);
    await drain();
  }
  reader.end();
  await drain();
  return reader.snapshot;
}

/** The longest a step of planning holds the event loop before it lets it turn. */
const TURN_MS = 10;

/** Computes a stepped plan, letting the event loop turn whenever a step has taken `TURN_MS`. */
async function inTurns<T>(steps: Steps<T>, signal: AbortSignal): Promise<T> {
  let turn = performance.now();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    if (performance.now() - turn >= TURN_MS) {
      signal.throwIfAborted();
      await setImmediate();
      turn = performance.now();
    }
  }
}

export type SyncCounts = Static<typeof SyncCountsSchema>;

export interface SyncProgress {
  phase: 'reading' | 'users' | 'deprovisioning' | 'managers' | 'groups' | 'done';
  processed: number;
  total: number;
  counts: SyncCounts;
  errors: LineError[];
}

const emptyCounts = (): SyncCounts => ({
  lines: 0,
  invalid: 0,
  users_created: 0,
  users_updated: 0,
  users_unchanged: 0,
  users_deprovisioned: 0,
  groups_created: 0,
  groups_updated: 0,
  groups_unchanged: 0,
  groups_deleted: 0,
});

/** A reconciliation under way: for whom it writes, what it has counted, how it stops. */
interface Run {
  caller: ScimCaller;
  op: OperationContext;
  signal: AbortSignal;
  counts: SyncCounts;
  /** Counts a line that cannot be taken, and keeps its error while there is room. */
  fail: (error: LineError) => void;
}

/**
 * Reconciles a connector with a snapshot of its identity provider (JSON lines, each a SCIM User
 * or Group): creates what is new, updates what changed, deprovisions the users and deletes the
 * groups the snapshot no longer has. What to do is planned without writing (src/scim/sync-plan.ts);
 * this writes it. Users are written in batches of a thousand per transaction, new groups with
 * their members in batches of a hundred (each change still an audit event in its transaction);
 * changed groups through the SCIM group service. Each transaction is a step of paced work
 * (src/pacing): while serving processes are held up, the batches shrink and pauses follow them.
 * It compares before it writes, so running it again, or resuming it after an interruption,
 * changes only what still differs. A line that cannot be read is reported and skipped; a
 * snapshot with unreadable lines deprovisions nobody, since a missing user might be one of them.
 */
export class ScimSync {
  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
    private readonly groups: ScimGroupService,
    /** Users are written by the principals' owner, which scores risk and records the events. */
    private readonly writer: PrincipalWriter & PrincipalBatchWriter,
    /** New groups are written by the groups' owner. */
    private readonly groupWriter: GroupWriter,
    /** Each transaction is a step of background work that gives way to decisions. */
    private readonly pacer: Pacer = unpaced(),
  ) {}

  /**
   * Writes `items` in slices of at most `most` per transaction (fewer, down to `least`, while
   * the pacer slows the work down), each slice a paced step.
   */
  private async inSlices<T>(
    items: readonly T[],
    [most, least]: readonly [number, number],
    signal: AbortSignal,
    write: (slice: T[]) => Promise<void>,
  ): Promise<void> {
    for (let i = 0; i < items.length;) {
      signal.throwIfAborted();
      const slice = items.slice(i, i + this.pacer.size(most, least));
      await this.pacer.step(PACED_AS, () => write(slice), signal);
      i += slice.length;
    }
  }

  /** One write of a sync as a paced step. */
  private paced<T>(write: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.pacer.step(PACED_AS, write, signal);
  }

  async reconcile(
    caller: ScimCaller,
    pieces: AsyncIterable<string>,
    op: OperationContext,
    report: (progress: SyncProgress) => Promise<void>,
    signal: AbortSignal,
  ): Promise<SyncProgress> {
    const counts = emptyCounts();
    const errors: LineError[] = [];
    const run: Run = {
      caller,
      op,
      signal,
      counts,
      fail: ({ line, detail }) => {
        counts.invalid += 1;
        if (errors.length < MAX_ERRORS) errors.push({ line, detail });
      },
    };
    const snapshot = await readPieces(pieces, signal);
    counts.lines = snapshot.lines;
    snapshot.errors.forEach(run.fail);
    const { users, groups } = snapshot;
    const progress = (phase: SyncProgress['phase'], processed: number, total: number): SyncProgress => ({
      phase,
      processed,
      total,
      counts: { ...counts },
      errors: [...errors],
    });
    await report(progress('users', 0, users.length));

    const stored = await repo.users(this.db, caller.id);
    const plan = await inTurns(
      planUsersSteps(snapshot, stored, () => newId('principal')),
      signal,
    );
    plan.errors.forEach(run.fail);

    let processed = 0;
    const unlinked: string[] = [];
    await this.inSlices(plan.creates, USER_BATCHES, signal, async (batch) => {
      unlinked.push(...(await this.createBatch(caller, batch, op)));
      counts.users_created += batch.length;
      processed += batch.length;
      await report(progress('users', processed, users.length));
    });
    // Unchanged users share the batches of the changed ones, so that progress moves over both.
    await this.inSlices(plan.matches, USER_BATCHES, signal, async (batch) => {
      const changed = batch.filter((m) => m.differs);
      if (changed.length > 0) await this.updateBatch(changed, op);
      counts.users_updated += changed.length;
      counts.users_unchanged += batch.length - changed.length;
      processed += batch.length;
      await report(progress('users', processed, users.length));
    });

    if (plan.removes) {
      const missing = plan.deprovisions;
      await report(progress('deprovisioning', 0, missing.length));
      await this.inSlices(missing, USER_BATCHES, signal, async (batch) => {
        await this.deprovisionBatch(batch, op);
        counts.users_deprovisioned += batch.length;
        await report(progress('deprovisioning', counts.users_deprovisioned, missing.length));
      });
    }

    signal.throwIfAborted();
    await report(progress('managers', 0, users.length));
    const createdManager = new Map(plan.creates.map((c) => [c.id, c.managerId]));
    await this.linkManagers(
      [
        // New users whose manager was written after them: the link only (their event has it).
        ...unlinked.map((id) => ({
          id,
          managerId: createdManager.get(id) ?? null,
          ref: null,
          from: null,
          recorded: true,
        })),
        ...plan.managers.map((change) => ({ ...change, recorded: false })),
      ],
      op,
      signal,
    );

    await report(progress('groups', 0, groups.length));
    await this.reconcileGroups(run, groups, plan);
    const done = progress('done', users.length + groups.length, users.length + groups.length);
    await report(done);
    return done;
  }

  /** Creates a batch of users; answers those whose manager was not written yet. */
  private async createBatch(
    caller: ScimCaller,
    batch: UserCreate[],
    op: OperationContext,
  ): Promise<string[]> {
    const now = nowIso();
    const rows = batch.map(({ id, user, managerId, managerRef }) => {
      const f = user.fields;
      return {
        id,
        type: 'USER' as const,
        name: f.name,
        ...(f.email ? { email: f.email } : {}),
        attributes: mappedAttributes(f, managerId),
        metadata: mappedMetadata(f),
        connectorSource: caller.name,
        ...(f.externalId ? { connectorId: f.externalId } : {}),
        createdAt: now,
        status: f.active ? ('active' as const) : ('suspended' as const),
        extra: {
          connector_ref: caller.id,
          user_name: f.userName.toLowerCase(),
          scim: JSON.stringify(user.scim),
          ...(managerRef ? { manager_ref: managerRef } : {}),
        },
      };
    });
    return this.db.write('scim/sync/create', async (tx) => {
      return this.writer.createMany(tx, rows, caller.id, {
        op,
        changesOf: (r) =>
          createdChanges(caller.name, { ...r, status: r.status ?? 'active', externalId: r.connectorId }, r),
      });
    });
  }

  /** Writes users whose snapshot differs from what is stored. */
  private async updateBatch(changed: UserMatch[], op: OperationContext): Promise<void> {
    await this.db.write('scim/sync/update', async (tx) => {
      for (const { user, current } of changed) {
        const p = current.principal;
        const f = user.fields;
        // The manager is left to the managers pass.
        const { attributes, metadata } = withMapped(p, f, undefined);
        const status = f.active ? 'active' : 'suspended';
        const changes = updatedChanges(
          {
            principal: p,
            scim: current.scim ? (JSON.parse(current.scim) as ScimObject) : {},
          },
          { fields: f, scim: user.scim, attributes, metadata },
        );
        await this.writer.update(
          tx,
          p,
          {
            name: f.name,
            email: f.email,
            status,
            attributes: mergePatch(p.attributes, attributes),
            metadata: mergePatch(p.metadata, metadata),
            extra: {
              connector_id: f.externalId,
              user_name: f.userName.toLowerCase(),
              scim: JSON.stringify(user.scim),
            },
          },
          { op, changes },
        );
      }
    });
  }

  private async deprovisionBatch(batch: ExistingUser[], op: OperationContext): Promise<void> {
    await this.db.write('scim/sync/deprovision', (tx) =>
      this.writer.deprovisionMany(
        tx,
        batch.map(({ principal }) => principal),
        op,
      ),
    );
  }

  /**
   * Links each user to the manager its snapshot names, among the connector's users; a manager
   * that is not there (or would close a cycle) is waited for, as over SCIM. Only links that
   * change are written.
   */
  private async linkManagers(
    rows: (ManagerLink & { from: string | null; recorded: boolean })[],
    op: OperationContext,
    signal: AbortSignal,
  ): Promise<void> {
    await this.inSlices(rows, USER_BATCHES, signal, async (batch) => {
      await this.db.write('scim/sync/managers', (tx) => this.writer.setManagers(tx, batch, op));
    });
  }

  /** New groups and their memberships, a batch in one transaction, an audit event per group. */
  private async createGroups(
    caller: ScimCaller,
    batch: { id: string; group: SnapshotGroup; members: PlannedMember[] }[],
    op: OperationContext,
  ): Promise<void> {
    const rows = batch.map(({ id, group, members }) => {
      // Each member once, with the last display its line gives it.
      const displays = new Map<string, string | null>();
      for (const m of members) displays.set(m.value, m.display ?? displays.get(m.value) ?? null);
      return {
        id,
        name: group.fields.displayName,
        externalId: group.fields.externalId,
        extra: { scim: JSON.stringify(storedGroup(group.scim)) },
        members: [...displays].map(([memberId, display]) => ({
          id: memberId,
          props: { scim_display: display },
        })),
      };
    });
    // A group created with its members is one event that names them all.
    await this.db.write('scim/sync/groups', (tx) =>
      this.groupWriter.createMany(tx, caller, caller.id, rows, op, (row) => ({
        name: { to: row.name },
        connector_source: { to: caller.name },
        ...(row.externalId ? { connector_id: { to: row.externalId } } : {}),
        ...(row.members.length > 0 ? { members: { to: row.members.map((m) => m.id) } } : {}),
      })),
    );
  }

  /**
   * Writes the groups' plan: new groups in batches, those a batch could not take (the name
   * constraint refused it) and the rest one by one, so that the line at fault is reported; then
   * the stored groups and the new ones naming groups are given their members, once every new
   * group has an id; last, the groups the snapshot lacks are deleted.
   */
  private async reconcileGroups(run: Run, snapshot: SnapshotGroup[], users: UsersPlan): Promise<void> {
    const { caller, op, signal, counts, fail } = run;
    const rows = await scimRepository.allGroups(this.db, caller.id, false);
    const stored = rows.map((row): CurrentGroup => ({
      id: row.props['id'] as string,
      name: String(row.props['name']),
      externalId: typeof row.props['connector_id'] === 'string' ? row.props['connector_id'] : null,
    }));
    const updatedAt = new Map(rows.map((row) => [row.props['id'] as string, row.props['updated_at']]));
    const plan = await inTurns(planGroupsSteps(snapshot, stored, users), signal);
    plan.errors.forEach(fail);

    // The id each planned group has so far: stored ones have theirs, new ones once written.
    const ids: (string | undefined)[] = plan.groups.map((g) => g.current?.id);
    // Members as ids, each with the display its line gives it, if any.
    const members = (planned: PlannedGroup): PlannedMember[] => {
      const { displays } = planned.group.fields;
      return resolveMembers(planned.members, (i) => ids[i]).map((value, i) => {
        const display = displays.get(planned.members[i]!.value);
        return display === undefined ? { value } : { value, display };
      });
    };
    const withMembers = (scim: ScimObject, list: PlannedMember[]): ScimObject => ({
      ...scim,
      members: list.map(({ value, display }): ScimObject =>
        display === undefined ? { value } : { value, display },
      ),
    });
    const later = plan.groups.flatMap((g, index) => (g.current ? [index] : []));

    const batched = plan.groups.flatMap((g, index) => (g.create === 'batch' ? [index] : []));
    await this.inSlices(batched, GROUP_BATCHES, signal, async (batch) => {
      for (const index of batch) ids[index] = newId('group');
      try {
        await this.createGroups(
          caller,
          batch.map((index) => ({
            id: ids[index]!,
            group: plan.groups[index]!.group,
            members: members(plan.groups[index]!),
          })),
          op,
        );
        counts.groups_created += batch.length;
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
        for (const index of batch) ids[index] = undefined;
      }
    });
    for (const [index, planned] of plan.groups.entries()) {
      signal.throwIfAborted();
      if (ids[index]) continue;
      const bare = planned.create === 'bare';
      try {
        const created = await this.paced(
          () => this.groups.create(caller, withMembers(planned.group.scim, bare ? [] : members(planned)), op),
          signal,
        );
        ids[index] = created['id'] as string;
        counts.groups_created += 1;
        if (bare) later.push(index);
      } catch (err) {
        if (err instanceof ScimError) fail({ line: planned.group.line, detail: err.message });
        else throw err;
      }
    }
    for (const index of later) {
      signal.throwIfAborted();
      const id = ids[index];
      if (!id) continue;
      const planned = plan.groups[index]!;
      try {
        const after = await this.paced(
          () =>
            this.groups.replace(caller, id, withMembers(planned.group.scim, members(planned)), undefined, op),
          signal,
        );
        if (planned.current) {
          const meta = after['meta'] as { lastModified?: string } | undefined;
          if (meta?.lastModified === updatedAt.get(planned.current.id)) counts.groups_unchanged += 1;
          else counts.groups_updated += 1;
        }
      } catch (err) {
        if (err instanceof ScimError) fail({ line: planned.group.line, detail: err.message });
        else throw err;
      }
    }
    for (const group of plan.deletes) {
      signal.throwIfAborted();
      await this.paced(() => this.groups.delete(caller, group.id, undefined, op), signal);
      counts.groups_deleted += 1;
    }
  }
}
