import type { OperationContext } from '../audit/audit.js';
import type { ScimCaller } from '../connectors/model.js';
import type { Database } from '../db/database.js';
import type { EventSink } from '../events/sink.js';
import { AppError } from '../errors/errors.js';
import { isId, newId } from '../ids.js';
import { MANAGER_KEY } from '../principals/model.js';
import { principalRepository as principals } from '../principals/repository.js';
import { assessRisk } from '../risk/score.js';
import { recordPrincipalUpdate } from '../principals/service.js';
import { nowIso } from '../time.js';
import { ScimError } from './errors.js';
import type { ScimGroupService } from './groups-service.js';
import { groupFields, readGroup, storedGroup } from './groups.js';
import { isObject, type ScimObject } from './resource.js';
import { GROUP_SCHEMA, USER_SCHEMA } from './schema.js';
import {
  scimRepository,
  scimSyncRepository as repo,
  type ExistingUser,
  type ManagerLink,
} from './repository.js';
import {
  createdChanges,
  mappedAttributes,
  mappedMetadata,
  mergePatch,
  readUser,
  updatedChanges,
  userFields,
  withMapped,
  type UserFields,
} from './users.js';

/** Users written per transaction. */
const BATCH = 1_000;
/** New groups written per transaction. */
const GROUP_BATCH = 100;
/** Line errors reported back (all are counted). */
const MAX_ERRORS = 100;
/** Manager chains are followed this far when looking for a cycle. */
const MAX_CHAIN = 64;

export interface SyncCounts {
  lines: number;
  invalid: number;
  users_created: number;
  users_updated: number;
  users_unchanged: number;
  users_deprovisioned: number;
  groups_created: number;
  groups_updated: number;
  groups_unchanged: number;
  groups_deleted: number;
}

export interface SyncProgress {
  phase: 'reading' | 'users' | 'deprovisioning' | 'managers' | 'groups' | 'done';
  processed: number;
  total: number;
  counts: SyncCounts;
  errors: { line: number; detail: string }[];
}

interface SnapshotUser {
  line: number;
  scim: ScimObject;
  fields: UserFields;
}

interface SnapshotGroup {
  line: number;
  scim: ScimObject;
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

function schemasOf(value: ScimObject): string[] {
  const schemas = value['schemas'];
  return Array.isArray(schemas)
    ? schemas.filter((s): s is string => typeof s === 'string').map((s) => s.toLowerCase())
    : [];
}

/**
 * Reconciles a connector with a snapshot of its identity provider (JSON lines, each a SCIM User
 * or Group): creates what is new, updates what changed, deprovisions the users and deletes the
 * groups the snapshot no longer has. Users are written in batches of a thousand per transaction,
 * new groups with their members in batches of a hundred (each change still an audit event in its
 * transaction); changed groups through the SCIM group service.
 * It compares before it writes, so running it again, or resuming it after an interruption,
 * changes only what still differs. A line that cannot be read is reported and skipped; a
 * snapshot with unreadable lines deprovisions nobody, since a missing user might be one of them.
 */
export class ScimSync {
  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
    private readonly groups: ScimGroupService,
  ) {}

  async reconcile(
    caller: ScimCaller,
    text: string,
    op: OperationContext,
    report: (progress: SyncProgress) => Promise<void>,
    signal: AbortSignal,
  ): Promise<SyncProgress> {
    const counts = emptyCounts();
    const errors: SyncProgress['errors'] = [];
    const fail = (line: number, detail: string): void => {
      counts.invalid += 1;
      if (errors.length < MAX_ERRORS) errors.push({ line, detail });
    };
    const { users, groups } = this.read(text, counts, fail);
    const progress = (phase: SyncProgress['phase'], processed: number, total: number): SyncProgress => ({
      phase,
      processed,
      total,
      counts: { ...counts },
      errors: [...errors],
    });
    await report(progress('users', 0, users.length));

    const existing = new Map((await repo.users(this.db, caller.name)).map((e) => [e.principal.id, e]));
    const byExternal = new Map<string, ExistingUser>();
    const byUserName = new Map<string, ExistingUser>();
    for (const e of existing.values()) {
      if (e.principal.connector_id) byExternal.set(e.principal.connector_id, e);
      if (e.userName !== undefined) byUserName.set(e.userName, e);
    }
    const seen = new Set<string>();
    const creates: { id: string; user: SnapshotUser }[] = [];
    const updates: { user: SnapshotUser; current: ExistingUser }[] = [];
    for (const user of users) {
      const { externalId, userName } = user.fields;
      const current =
        (externalId ? byExternal.get(externalId) : undefined) ?? byUserName.get(userName.toLowerCase());
      if (current && seen.has(current.principal.id)) {
        fail(
          user.line,
          `a user with userName "${userName}" or externalId "${externalId ?? ''}" appears twice`,
        );
        continue;
      }
      if (current) {
        seen.add(current.principal.id);
        updates.push({ user, current });
      } else {
        creates.push({ id: newId('principal'), user });
      }
    }
    const createdKeys = new Set<string>();
    const uniqueCreates = creates.filter(({ user }) => {
      const key = `u:${user.fields.userName.toLowerCase()}`;
      const ext = user.fields.externalId ? `e:${user.fields.externalId}` : undefined;
      if (createdKeys.has(key) || (ext && createdKeys.has(ext))) {
        fail(user.line, `a user with userName "${user.fields.userName}" appears twice`);
        return false;
      }
      createdKeys.add(key);
      if (ext) createdKeys.add(ext);
      return true;
    });

    // Every manager link the snapshot asks for, decided before anything is written: new users
    // are created with theirs (managers first), and only the links left over are made after.
    const ids = new Map<string, string>();
    for (const { id, user } of uniqueCreates) this.remember(ids, id, user.fields);
    for (const { user, current } of updates) this.remember(ids, current.principal.id, user.fields);
    const wanted = plannedManagers(
      [
        ...uniqueCreates.map(({ id, user }) => ({ id, ref: user.fields.managerRef })),
        ...updates.map(({ user, current }) => ({ id: current.principal.id, ref: user.fields.managerRef })),
      ],
      ids,
    );
    const ordered = managersFirst(uniqueCreates, wanted);

    let processed = 0;
    const unlinked: string[] = [];
    for (let i = 0; i < ordered.length; i += BATCH) {
      signal.throwIfAborted();
      unlinked.push(...(await this.createBatch(caller, ordered.slice(i, i + BATCH), wanted, op)));
      counts.users_created += Math.min(BATCH, ordered.length - i);
      processed += Math.min(BATCH, ordered.length - i);
      await report(progress('users', processed, users.length));
    }
    for (let i = 0; i < updates.length; i += BATCH) {
      signal.throwIfAborted();
      const changed = await this.updateBatch(caller, updates.slice(i, i + BATCH), op);
      counts.users_updated += changed;
      counts.users_unchanged += Math.min(BATCH, updates.length - i) - changed;
      processed += Math.min(BATCH, updates.length - i);
      await report(progress('users', processed, users.length));
    }

    const missing = [...existing.values()].filter((e) => !seen.has(e.principal.id));
    if (counts.invalid === 0) {
      await report(progress('deprovisioning', 0, missing.length));
      for (let i = 0; i < missing.length; i += BATCH) {
        signal.throwIfAborted();
        await this.deprovisionBatch(missing.slice(i, i + BATCH), op);
        counts.users_deprovisioned += Math.min(BATCH, missing.length - i);
        await report(progress('deprovisioning', Math.min(i + BATCH, missing.length), missing.length));
      }
    }

    signal.throwIfAborted();
    await report(progress('managers', 0, users.length));
    await this.linkManagers(
      [
        // New users whose manager was written after them: the link only (their event has it).
        ...unlinked.map((id) => ({
          id,
          managerId: wanted.get(id) ?? null,
          ref: null,
          from: null,
          recorded: true,
        })),
        ...updates.flatMap(({ user, current }) => {
          const managerId = wanted.get(current.principal.id) ?? null;
          const ref = managerId === null ? user.fields.managerRef : null;
          if (managerId === current.managerId && ref === current.managerRef) return [];
          return [{ id: current.principal.id, managerId, ref, from: current.managerId, recorded: false }];
        }),
      ],
      op,
    );

    await report(progress('groups', 0, groups.length));
    await this.reconcileGroups(caller, groups, ids, counts, fail, op, signal, counts.invalid === 0);
    const done = progress('done', users.length + groups.length, users.length + groups.length);
    await report(done);
    return done;
  }

  /** Splits the snapshot into users and groups, reading each as the SCIM endpoints do. */
  private read(
    text: string,
    counts: SyncCounts,
    fail: (line: number, detail: string) => void,
  ): { users: SnapshotUser[]; groups: SnapshotGroup[] } {
    const users: SnapshotUser[] = [];
    const groups: SnapshotGroup[] = [];
    const lines = text.split('\n');
    lines.forEach((raw, index) => {
      const line = index + 1;
      if (raw.trim() === '') return;
      counts.lines += 1;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        fail(line, 'not a JSON value');
        return;
      }
      if (!isObject(value)) {
        fail(line, 'not a JSON object');
        return;
      }
      const schemas = schemasOf(value);
      const isGroup =
        schemas.includes(GROUP_SCHEMA.toLowerCase()) ||
        (!schemas.includes(USER_SCHEMA.toLowerCase()) && value['userName'] === undefined);
      try {
        if (isGroup) {
          const scim = readGroup(value);
          groups.push({ line, scim });
        } else {
          const scim = readUser(value);
          users.push({ line, scim, fields: userFields(scim) });
        }
      } catch (err) {
        if (err instanceof ScimError) fail(line, err.message);
        else throw err;
      }
    });
    return { users, groups };
  }

  /** Creates a batch of users; answers those whose manager was not written yet. */
  private async createBatch(
    caller: ScimCaller,
    batch: { id: string; user: SnapshotUser }[],
    wanted: Map<string, string | null>,
    op: OperationContext,
  ): Promise<string[]> {
    const now = nowIso();
    const rows = batch.map(({ id, user }) => {
      const f = user.fields;
      const managerId = wanted.get(id) ?? null;
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
          user_name: f.userName.toLowerCase(),
          scim: JSON.stringify(user.scim),
          ...(managerId === null && f.managerRef ? { manager_ref: f.managerRef } : {}),
        },
      };
    });
    return this.db.write('scim/sync/create', async (tx) => {
      const externalIds = rows.flatMap((r) => (r.connectorId ? [r.connectorId] : []));
      if (externalIds.length > 0) await repo.releaseExternalIds(tx, caller.name, externalIds);
      const pending = await repo.createUsers(tx, rows, caller.id);
      for (const r of rows) {
        this.events.record(tx, op, {
          type: 'principal.created',
          target: { type: 'principal', id: r.id },
          changes: createdChanges(caller.name, { ...r, externalId: r.connectorId }, r),
        });
      }
      return pending;
    });
  }

  /** Writes the users whose snapshot differs from what is stored; says how many did. */
  private async updateBatch(
    caller: ScimCaller,
    batch: { user: SnapshotUser; current: ExistingUser }[],
    op: OperationContext,
  ): Promise<number> {
    const changed = batch.filter(({ user, current }) => {
      const p = current.principal;
      return (
        JSON.stringify(user.scim) !== current.scim ||
        (user.fields.active ? 'active' : 'suspended') !== p.status ||
        p.name !== user.fields.name
      );
    });
    if (changed.length === 0) return 0;
    await this.db.write('scim/sync/update', async (tx) => {
      const now = nowIso();
      for (const { user, current } of changed) {
        const p = current.principal;
        const f = user.fields;
        // The manager is left to the managers pass.
        const { attributes, metadata } = withMapped(p, f, undefined);
        const status = f.active ? 'active' : 'suspended';
        const changes = updatedChanges(
          { principal: p, scim: current.scim ? (JSON.parse(current.scim) as ScimObject) : {} },
          { fields: f, scim: user.scim, attributes, metadata },
        );
        await principals.update(
          tx,
          p,
          {
            name: f.name,
            email: f.email,
            status,
            attributes: mergePatch(p.attributes, attributes),
            metadata: mergePatch(p.metadata, metadata),
            risk: assessRisk({ ...p, status, attributes, metadata }),
            extra: {
              connector_id: f.externalId,
              user_name: f.userName.toLowerCase(),
              scim: JSON.stringify(user.scim),
            },
          },
          now,
        );
        recordPrincipalUpdate(this.events, tx, op, p.id, changes, { from: p.status, to: status });
      }
    });
    return changed.length;
  }

  private async deprovisionBatch(batch: ExistingUser[], op: OperationContext): Promise<void> {
    await this.db.write('scim/sync/deprovision', async (tx) => {
      const rows = batch.map(({ principal: p }) => {
        const risk = assessRisk({ ...p, status: 'deprovisioned' });
        return { id: p.id, score: risk.score, factors: JSON.stringify(risk.factors) };
      });
      await repo.deprovision(tx, rows, nowIso());
      for (const { principal: p } of batch) {
        this.events.record(tx, op, {
          type: 'principal.status_changed',
          target: { type: 'principal', id: p.id },
          changes: { status: { from: p.status, to: 'deprovisioned' } },
        });
      }
    });
  }

  /** Every way a snapshot may name a user: its SCIM id, its externalId. */
  private remember(ids: Map<string, string>, id: string, fields: UserFields): void {
    ids.set(id, id);
    if (fields.externalId) ids.set(fields.externalId, id);
  }

  /**
   * Links each user to the manager its snapshot names, among the connector's users; a manager
   * that is not there (or would close a cycle) is waited for, as over SCIM. Only links that
   * change are written.
   */
  private async linkManagers(
    rows: (ManagerLink & { from: string | null; recorded: boolean })[],
    op: OperationContext,
  ): Promise<void> {
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      await this.db.write('scim/sync/managers', async (tx) => {
        await repo.linkManagers(tx, batch, nowIso());
        for (const row of batch) {
          if (row.recorded || row.managerId === row.from) continue;
          this.events.record(tx, op, {
            type: 'principal.updated',
            target: { type: 'principal', id: row.id },
            changes: { [`attributes.${MANAGER_KEY}`]: { from: row.from, to: row.managerId } },
          });
        }
      });
    }
  }

  /** New groups and their memberships, a batch in one transaction, an audit event per group. */
  private async createGroups(
    caller: ScimCaller,
    batch: { entry: { group: SnapshotGroup; id: string | undefined }; members: string[] }[],
    op: OperationContext,
  ): Promise<void> {
    const rows = batch.map(({ entry, members }) => {
      const f = groupFields(entry.group.scim);
      return {
        id: entry.id!,
        name: f.displayName,
        externalId: f.externalId,
        scim: JSON.stringify(storedGroup(entry.group.scim)),
        members: [...new Set(members)],
      };
    });
    await this.db.write('scim/sync/groups', async (tx) => {
      await repo.createGroups(tx, caller.name, caller.id, rows, nowIso());
      // A group created with its members is one event that names them all.
      for (const row of rows) {
        this.events.record(tx, op, {
          type: 'group.created',
          target: { type: 'group', id: row.id },
          changes: {
            name: { to: row.name },
            connector_source: { to: caller.name },
            ...(row.externalId ? { connector_id: { to: row.externalId } } : {}),
            ...(row.members.length > 0 ? { members: { to: row.members } } : {}),
          },
        });
      }
    });
  }

  /**
   * Groups matched by externalId, else by name: created, replaced when they differ (members
   * named by SCIM id, externalId or, for groups, name), and deleted when the snapshot lacks them.
   */
  private async reconcileGroups(
    caller: ScimCaller,
    snapshot: SnapshotGroup[],
    userIds: Map<string, string>,
    counts: SyncCounts,
    fail: (line: number, detail: string) => void,
    op: OperationContext,
    signal: AbortSignal,
    mayDelete: boolean,
  ): Promise<void> {
    const rows = await scimRepository.allGroups(this.db, caller.name, false);
    const byExternal = new Map<string, (typeof rows)[number]>();
    const byName = new Map<string, (typeof rows)[number]>();
    const byId = new Map(rows.map((row) => [row.props['id'] as string, row]));
    for (const row of rows) {
      if (typeof row.props['connector_id'] === 'string') byExternal.set(row.props['connector_id'], row);
      byName.set(String(row.props['name']).toLowerCase(), row);
    }
    const groupIds = new Map<string, string>();
    const plan: { group: SnapshotGroup; id: string | undefined }[] = [];
    const seen = new Set<string>();
    for (const group of snapshot) {
      const f = groupFields(group.scim);
      const current =
        (f.externalId ? byExternal.get(f.externalId) : undefined) ?? byName.get(f.displayName.toLowerCase());
      const id = current?.props['id'] as string | undefined;
      if (id && seen.has(id)) {
        fail(group.line, `a group named "${f.displayName}" appears twice`);
        continue;
      }
      if (id) seen.add(id);
      plan.push({ group, id });
    }
    // Every way the snapshot may name a group: SCIM id, externalId, name.
    const groupKeys = new Set<string>();
    for (const entry of plan) {
      const f = groupFields(entry.group.scim);
      groupKeys.add(f.displayName.toLowerCase());
      if (f.externalId) groupKeys.add(f.externalId);
      if (entry.id) groupKeys.add(entry.id);
    }
    const namesGroup = (m: string): boolean =>
      groupKeys.has(m) || groupKeys.has(m.toLowerCase()) || isId('group', m);
    const translate = (members: string[]): string[] =>
      members.map(
        (m) =>
          (isId('group', m) ? groupIds.get(m) : userIds.get(m)) ??
          groupIds.get(m.toLowerCase()) ??
          groupIds.get(m) ??
          userIds.get(m) ??
          m,
      );
    const withMembers = (scim: ScimObject, members: string[]): ScimObject => ({
      ...scim,
      members: members.map((value) => ({ value })),
    });
    // New groups naming only users of the connector are written in batches with their members;
    // groups that name groups (which may be new too) are created bare first and given their
    // members below, as is any batch the name constraint refuses (group by group, so that the
    // line at fault is reported).
    const connectorUsers = new Set(userIds.values());
    const later: typeof plan = [];
    const simple: { entry: (typeof plan)[number]; members: string[] }[] = [];
    for (const entry of plan) {
      const f = groupFields(entry.group.scim);
      if (entry.id) later.push(entry);
      else if (f.members.some(namesGroup)) continue;
      else {
        const members = translate(f.members);
        if (members.every((m) => connectorUsers.has(m))) simple.push({ entry, members });
      }
    }
    for (let i = 0; i < simple.length; i += GROUP_BATCH) {
      signal.throwIfAborted();
      const batch = simple.slice(i, i + GROUP_BATCH);
      for (const item of batch) item.entry.id = newId('group');
      try {
        await this.createGroups(caller, batch, op);
        counts.groups_created += batch.length;
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
        for (const item of batch) item.entry.id = undefined;
      }
    }
    for (const entry of plan) {
      signal.throwIfAborted();
      if (entry.id) continue;
      const f = groupFields(entry.group.scim);
      const nested = f.members.some(namesGroup);
      try {
        const created = await this.groups.create(
          caller,
          nested ? withMembers(entry.group.scim, []) : withMembers(entry.group.scim, translate(f.members)),
          op,
        );
        entry.id = created['id'] as string;
        counts.groups_created += 1;
        if (nested) later.push(entry);
      } catch (err) {
        if (err instanceof ScimError) fail(entry.group.line, err.message);
        else throw err;
      }
    }
    for (const entry of plan) {
      const f = groupFields(entry.group.scim);
      if (entry.id) {
        groupIds.set(entry.id, entry.id);
        groupIds.set(f.displayName.toLowerCase(), entry.id);
        if (f.externalId) groupIds.set(f.externalId, entry.id);
      }
    }
    for (const entry of later) {
      signal.throwIfAborted();
      if (!entry.id) continue;
      const f = groupFields(entry.group.scim);
      try {
        const after = await this.groups.replace(
          caller,
          entry.id,
          withMembers(entry.group.scim, translate(f.members)),
          undefined,
          op,
        );
        const existing = byId.get(entry.id);
        if (existing) {
          const meta = after['meta'] as { lastModified?: string } | undefined;
          if (meta?.lastModified === existing.props['updated_at']) counts.groups_unchanged += 1;
          else counts.groups_updated += 1;
        }
      } catch (err) {
        if (err instanceof ScimError) fail(entry.group.line, err.message);
        else throw err;
      }
    }
    if (!mayDelete) return;
    for (const row of rows) {
      const id = row.props['id'] as string;
      if (seen.has(id)) continue;
      signal.throwIfAborted();
      await this.groups.delete(caller, id, undefined, op);
      counts.groups_deleted += 1;
    }
  }
}

/**
 * The manager each user ends up with: the one its reference names among the connector's users,
 * or none when the reference names nobody (it waits) or the link would close a cycle.
 */
function plannedManagers(
  users: { id: string; ref: string | null }[],
  ids: Map<string, string>,
): Map<string, string | null> {
  const wanted = new Map<string, string | null>();
  for (const u of users) {
    const managerId = u.ref ? ids.get(u.ref) : undefined;
    wanted.set(u.id, managerId && managerId !== u.id ? managerId : null);
  }
  for (const [id] of wanted) {
    // A chain that comes back to its start is a cycle: the link closing it waits instead.
    let at = wanted.get(id) ?? null;
    for (let steps = 0; at !== null && steps < MAX_CHAIN; steps += 1) {
      if (at === id) {
        wanted.set(id, null);
        break;
      }
      at = wanted.get(at) ?? null;
    }
  }
  return wanted;
}

/** New users ordered so that a manager comes before its reports (cycles are already cut). */
function managersFirst<T extends { id: string }>(creates: T[], wanted: Map<string, string | null>): T[] {
  const byId = new Map(creates.map((c) => [c.id, c]));
  const placed = new Set<string>();
  const out: T[] = [];
  for (const create of creates) {
    const chain: T[] = [];
    let at: T | undefined = create;
    while (at && !placed.has(at.id)) {
      placed.add(at.id);
      chain.push(at);
      const managerId = wanted.get(at.id);
      at = managerId ? byId.get(managerId) : undefined;
    }
    out.push(...chain.reverse());
  }
  return out;
}
