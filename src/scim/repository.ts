import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import { groupNameKey } from '../groups/repository.js';
import { fromProperties, type Principal } from '../principals/model.js';
import { principalRows, type SeedPrincipal } from '../seed/bulk.js';
import type { ScimObject } from './resource.js';

const Q = defineQueries('scim', [
  'user_get',
  'user_lock',
  'manager_find',
  'release_external_id',
  'user_prepare',
  'group_get',
  'group_all',
  'group_lock',
  'group_set',
  'member_candidates',
  'members_add',
  'members_remove',
]);
/** The queries of a connector's reconciliation with a snapshot (`scimSyncRepository`). */
const SyncQ = defineQueries('scim', [
  'sync_groups_create',
  'sync_users',
  'sync_release',
  'sync_deprovision',
  'sync_managers',
]);
const SEED = defineQueries('seed', ['principals']);

/** A user of a connector as SCIM sees it: the principal and the client's own attributes. */
export interface StoredUser {
  principal: Principal;
  scim: ScimObject;
  managerId: string | null;
  /** The connector's groups the user is directly in. */
  groups?: { value: string; display: string }[];
}

/** A user as cypher/scim/user_get (and user_lock) read it. */
interface UserRow {
  props: Record<string, unknown>;
  managerId: string | null;
  groups: { value: string; display: string }[];
}

function storedUser(row: UserRow): StoredUser {
  const text = row.props['scim'];
  return {
    principal: fromProperties(row.props),
    scim: typeof text === 'string' ? (JSON.parse(text) as ScimObject) : {},
    managerId: row.managerId,
    groups: row.groups,
  };
}

export interface ScimMember {
  value: string;
  display: string;
  type: string;
}

/** A connector group as the queries read it: its properties, and its members when asked. */
export interface StoredGroup {
  props: Record<string, unknown>;
  members: ScimMember[] | null;
}

/** The SCIM view of a connector group, as cypher/scim/group_set writes it. */
export interface ScimGroupChanges {
  name: string;
  externalId: string | null;
  /** The attributes its client sent, as JSON. */
  scim: string;
}

/** Named queries over a connector's SCIM users and groups. */
export const scimRepository = {
  /**
   * What creating a user needs to know, in one round trip: a deprovisioned user holding the new
   * user's externalId gives it up; the manager the new user names; and the users already waiting
   * for the new user as their manager.
   */
  async prepareUser(
    tx: Tx,
    source: string,
    user: { id: string; externalId: string | null; managerRef: string | null },
  ): Promise<{ managerId: string | null; waiting: string[] } | undefined> {
    return tx.first<{ managerId: string | null; waiting: string[] }>(Q.user_prepare, {
      id: user.id,
      source,
      externalId: user.externalId,
      ref: user.managerRef,
    });
  },

  /** The users of the connector that SCIM still sees among `ids`, in the order of `ids`. */
  async users(tx: Reader, source: string, ids: string[]): Promise<StoredUser[]> {
    if (ids.length === 0) return [];
    const rows = await tx.run<UserRow>(Q.user_get, { ids, source });
    const byId = new Map(rows.map((r) => [r.props['id'] as string, r]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [storedUser(row)] : [];
    });
  },

  /** A user of the connector under its write lock, for a change that follows. */
  async lockUser(tx: Tx, source: string, id: string): Promise<StoredUser | undefined> {
    const row = await tx.first<UserRow>(Q.user_lock, { id, source });
    return row ? storedUser(row) : undefined;
  },

  /** A deprovisioned user gives its externalId up when the connector provisions it again. */
  async releaseExternalId(tx: Tx, source: string, externalId: string): Promise<void> {
    await tx.run(Q.release_external_id, { source, externalId });
  },

  /**
   * The id of the manager a SCIM client names: its SCIM id, else the externalId of a user of the
   * same connector.
   */
  async findManager(tx: Reader, source: string, ref: string): Promise<string | undefined> {
    const row = await tx.first<{ id: string }>(Q.manager_find, { ref, source });
    return row?.id;
  },

  /** Groups of the connector among `ids`, with their members when asked. */
  async groups(tx: Reader, source: string, ids: string[], withMembers: boolean): Promise<StoredGroup[]> {
    return tx.run<StoredGroup>(Q.group_get, { ids, source, withMembers });
  },

  /** Every group of the connector, oldest first, with their members when asked. */
  async allGroups(tx: Reader, source: string, withMembers: boolean): Promise<StoredGroup[]> {
    return tx.run<StoredGroup>(Q.group_all, { source, withMembers });
  },

  /** A group of the connector under its write lock, with its members, for a change that follows. */
  async lockGroup(tx: Tx, source: string, id: string): Promise<StoredGroup | undefined> {
    return tx.first<StoredGroup>(Q.group_lock, { id, source });
  },

  /** Writes the SCIM view of a group, with the key that keeps names unique within the connector. */
  async setGroup(tx: Tx, source: string, id: string, group: ScimGroupChanges, now: string): Promise<void> {
    await tx.run(Q.group_set, {
      id,
      name: group.name,
      nameKey: groupNameKey(group.name, source),
      externalId: group.externalId,
      scim: group.scim,
      now,
    });
  },

  /** Which of `ids` may be members of a group of the connector: its users SCIM still sees, and its groups. */
  async memberCandidates(tx: Reader, source: string, ids: string[]): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.member_candidates, { ids, source });
    return rows.map((r) => r.id);
  },

  /** Users joining a group, all at once; answers those that were not members yet. */
  async addUsers(tx: Tx, groupId: string, ids: string[], addedBy: string, now: string): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.members_add, { groupId, ids, addedBy, now });
    return rows.map((r) => r.id);
  },

  /** Members leaving a group, all at once; answers those that were members. */
  async removeMembers(tx: Tx, groupId: string, ids: string[]): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.members_remove, { groupId, ids });
    return rows.map((r) => r.id);
  },
};

/** A user of the connector as a snapshot is reconciled against it. */
export interface ExistingUser {
  principal: Principal;
  /** The stored SCIM resource, as JSON. */
  scim: string;
  /** Lower-cased. */
  userName: string | undefined;
  managerId: string | null;
  /** The manager reference it waits on, if any. */
  managerRef: string | null;
}

/** A deprovisioned user's new risk assessment, its factors as JSON. */
export interface DeprovisionRow {
  id: string;
  score: number;
  factors: string;
}

/** A user's manager link as a snapshot has it. */
export interface ManagerLink {
  id: string;
  /** The manager it reports to, or none. */
  managerId: string | null;
  /** The manager reference it waits on when its manager is not among the connector's users. */
  ref: string | null;
}

/** A new group of a snapshot with its members (users of the connector). */
export interface NewSyncGroup {
  id: string;
  name: string;
  externalId: string | null;
  /** The attributes its client sent, as JSON. */
  scim: string;
  members: string[];
}

/** Named queries of the bulk reconciliation of a connector with a snapshot (src/scim/sync.ts). */
export const scimSyncRepository = {
  /** Every user of the connector that SCIM still sees, with its manager. */
  async users(tx: Reader, source: string): Promise<ExistingUser[]> {
    const rows = await tx.run<{ props: Record<string, unknown>; managerId: string | null }>(
      SyncQ.sync_users,
      {
        source,
      },
    );
    const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
    return rows.map((r) => ({
      principal: fromProperties(r.props),
      scim: text(r.props['scim']) ?? '',
      userName: text(r.props['user_name']),
      managerId: r.managerId,
      managerRef: text(r.props['manager_ref']) ?? null,
    }));
  },

  /** Deprovisioned users give up the externalIds a snapshot provisions again. */
  async releaseExternalIds(tx: Tx, source: string, externalIds: string[]): Promise<void> {
    await tx.run(SyncQ.sync_release, { source, externalIds });
  },

  /**
   * Creates a batch of users as the bulk load does (cypher/seed/principals.cypher); answers
   * those whose manager is not there yet.
   */
  async createUsers(tx: Tx, rows: SeedPrincipal[], createdBy: string): Promise<string[]> {
    const [result] = await tx.run<{ pending: string[] }>(SEED.principals, principalRows(rows, createdBy));
    return result?.pending ?? [];
  },

  /** Users missing from a snapshot: deprovisioned (they stay for history). */
  async deprovision(tx: Tx, rows: DeprovisionRow[], now: string): Promise<void> {
    await tx.run(SyncQ.sync_deprovision, { rows, now });
  },

  /** Sets each user's manager link (and the reference it waits on) as given. */
  async linkManagers(tx: Tx, rows: ManagerLink[], now: string): Promise<void> {
    await tx.run(SyncQ.sync_managers, { rows, now });
  },

  /**
   * New groups with their members, a batch at once; the group name constraint refuses a name
   * the connector already uses.
   */
  async createGroups(
    tx: Tx,
    source: string,
    actor: string,
    groups: NewSyncGroup[],
    now: string,
  ): Promise<void> {
    const rows = groups.map((g) => ({
      id: g.id,
      name: g.name,
      nameKey: groupNameKey(g.name, source),
      externalId: g.externalId,
      scim: g.scim,
      members: g.members,
    }));
    await tx.run(SyncQ.sync_groups_create, { rows, source, actor, now });
  },
};
