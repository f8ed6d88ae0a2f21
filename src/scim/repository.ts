import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import { groupNameKey } from '../groups/model.js';
import { fromProperties, type Principal } from '../principals/model.js';
import type { ScimObject } from './resource.js';

const Q = defineQueries('scim', [
  'user_get',
  'user_lock',
  'manager_find',
  'user_prepare',
  'group_get',
  'group_all',
  'group_page',
  'group_batch',
  'group_batch_external',
  'group_by_name',
  'group_lock',
  'member_candidates',
]);
/** The queries of a connector's reconciliation with a snapshot (`scimSyncRepository`). */
const SyncQ = defineQueries('scim', ['sync_users']);

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
  /** The display its client sent with it, else the member's own name. */
  display: string;
  type: string;
  /** The display its client sent with it, or null; read only under the group's write lock. */
  sent?: string | null;
}

/** A connector group as the queries read it: its properties, and its members when asked. */
export interface StoredGroup {
  props: Record<string, unknown>;
  members: ScimMember[] | null;
}

/**
 * Where a batch of a connector's groups in creation order starts: after the group created at
 * `at` (its created_at as Neo4j writes it, to the nanosecond) with id `id`.
 */
export interface GroupCursor {
  at: string;
  id: string;
}

/** A group of a batch, with the cursor that starts the batch after it. */
export interface BatchedGroup extends StoredGroup {
  at: string;
}

/** Before every group: the first batch starts here. */
const FIRST: GroupCursor = { at: '0001-01-01T00:00:00Z', id: '' };

/** A member's display on its membership edge; null removes it. */
export interface MemberDisplay {
  id: string;
  display: string | null;
}

/**
 * Named queries over a connector's SCIM users and groups. A connector is named by its id (the
 * `connector_ref` of what it provisions), never by its name, which a later connector may reuse.
 */
export const scimRepository = {
  /**
   * What creating a user needs to know, in one round trip: the manager the new user names; and
   * the users already waiting for the new user as their manager (none by an externalId that
   * another user of the connector holds already).
   */
  async prepareUser(
    tx: Tx,
    connector: string,
    user: { id: string; externalId: string | null; managerRef: string | null },
  ): Promise<{ managerId: string | null; waiting: string[] } | undefined> {
    return tx.first<{ managerId: string | null; waiting: string[] }>(Q.user_prepare, {
      id: user.id,
      connector,
      externalId: user.externalId,
      ref: user.managerRef,
    });
  },

  /** The users of the connector that SCIM still sees among `ids`, in the order of `ids`. */
  async users(tx: Reader, connector: string, ids: string[]): Promise<StoredUser[]> {
    if (ids.length === 0) return [];
    const rows = await tx.run<UserRow>(Q.user_get, { ids, connector });
    const byId = new Map(rows.map((r) => [r.props['id'] as string, r]));
    return ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [storedUser(row)] : [];
    });
  },

  /** A user of the connector under its write lock, for a change that follows. */
  async lockUser(tx: Tx, connector: string, id: string): Promise<StoredUser | undefined> {
    const row = await tx.first<UserRow>(Q.user_lock, { id, connector });
    return row ? storedUser(row) : undefined;
  },

  /**
   * The id of the manager a SCIM client names: its SCIM id, else the externalId of a user of the
   * same connector (none when several of its users share that externalId).
   */
  async findManager(tx: Reader, connector: string, ref: string): Promise<string | undefined> {
    const row = await tx.first<{ id: string | null }>(Q.manager_find, { ref, connector });
    return row?.id ?? undefined;
  },

  /** Groups of the connector among `ids`, with their members when asked. */
  async groups(tx: Reader, connector: string, ids: string[], withMembers: boolean): Promise<StoredGroup[]> {
    return tx.run<StoredGroup>(Q.group_get, { ids, connector, withMembers });
  },

  /** Every group of the connector, oldest first, with their members when asked. */
  async allGroups(tx: Reader, connector: string, withMembers: boolean): Promise<StoredGroup[]> {
    return tx.run<StoredGroup>(Q.group_all, { connector, withMembers });
  },

  /**
   * How many groups the connector holds, and `limit` of them after the first `skip` in creation
   * order (then id), with their members when asked.
   */
  async groupPage(
    tx: Reader,
    connector: string,
    page: { skip: number; limit: number },
    withMembers: boolean,
  ): Promise<{ total: number; groups: StoredGroup[] }> {
    const row = await tx.first<{ total: number; groups: StoredGroup[] }>(Q.group_page, {
      connector,
      skip: page.skip,
      limit: page.limit,
      withMembers,
    });
    return row ?? { total: 0, groups: [] };
  },

  /**
   * Up to `limit` groups of the connector in creation order (then id) after `after` (from the
   * first when none), only those whose externalId is `externalId` when one is given; each with
   * the cursor of the next batch, and its members when asked.
   */
  async groupBatch(
    tx: Reader,
    connector: string,
    after: GroupCursor | undefined,
    limit: number,
    options: { withMembers: boolean; externalId?: string | undefined },
  ): Promise<BatchedGroup[]> {
    const { at, id } = after ?? FIRST;
    const params = { connector, at, id, limit, withMembers: options.withMembers };
    return options.externalId === undefined
      ? tx.run<BatchedGroup>(Q.group_batch, params)
      : tx.run<BatchedGroup>(Q.group_batch_external, { ...params, externalId: options.externalId });
  },

  /** The group of the connector of that name, in any case, with its members when asked. */
  async groupByName(
    tx: Reader,
    connector: string,
    name: string,
    withMembers: boolean,
  ): Promise<StoredGroup[]> {
    return tx.run<StoredGroup>(Q.group_by_name, {
      nameKey: groupNameKey(name, connector),
      connector,
      withMembers,
    });
  },

  /** A group of the connector under its write lock, with its members, for a change that follows. */
  async lockGroup(tx: Tx, connector: string, id: string): Promise<StoredGroup | undefined> {
    return tx.first<StoredGroup>(Q.group_lock, { id, connector });
  },

  /** Writes the SCIM view of a group, with the key that keeps names unique within the connector. */
  /** Which of `ids` may be members of a group of the connector: its users SCIM still sees, and its groups. */
  async memberCandidates(tx: Reader, connector: string, ids: string[]): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.member_candidates, { ids, connector });
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

/** Named queries of the bulk reconciliation of a connector with a snapshot (src/scim/sync.ts). */
export const scimSyncRepository = {
  /** Every user of the connector (by its id) that SCIM still sees, with its manager. */
  async users(tx: Reader, connector: string): Promise<ExistingUser[]> {
    const rows = await tx.run<{ props: Record<string, unknown>; managerId: string | null }>(
      SyncQ.sync_users,
      { connector },
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
};
