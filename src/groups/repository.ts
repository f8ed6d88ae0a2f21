import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { Static } from '@sinclair/typebox';
import type { GroupSchema } from '../schemas/groups.js';
import { type PrincipalType } from '../vocabulary/principals.js';

const Q = defineQueries('groups', [
  'create',
  'get',
  'lock',
  'page',
  'page_by_connector',
  'update',
  'delete',
  'nesting_lock',
  'lock_member',
  'nesting_check',
  'add_member',
  'remove_member',
  'members',
  'members_transitive',
]);

export type GroupSource = 'api' | 'connector';

export type Group = Static<typeof GroupSchema>;

/** A group as read under its lock: without the member count, which grows with the group. */
export type LockedGroup = Omit<Group, 'member_count'>;

export interface NewGroup {
  id: string;
  name: string;
  description: string | null;
  source: GroupSource;
  connectorSource: string | null;
  /** The id of the connector that provisions the group (its scope); null for an API group. */
  connectorRef: string | null;
  connectorId: string | null;
  createdBy: string;
}

/** A member as the queries return it: `type` is `GROUP` for a nested group. */
export interface MemberRow {
  id: string;
  name: string;
  type: PrincipalType | 'GROUP';
  email: string | null;
}

export interface GroupChanges {
  name?: string;
  /** `null` removes the description. */
  description?: string | null;
}

/**
 * The unique key behind "names are unique per source": among API groups, and among the groups
 * of one connector (by its id, so that a connector reusing a deleted one's name starts afresh),
 * compared without case and surrounding space.
 */
export function groupNameKey(name: string, connectorRef: string | null): string {
  const key = name.trim().toLowerCase();
  return connectorRef === null ? `api:${key}` : `connector:${connectorRef}:${key}`;
}

type Row<T extends { source: GroupSource }> = Omit<T, 'source'> & { source: string | null };

/** A node without `source` (written by other tooling) counts as an API group. */
function toGroup<T extends { source: GroupSource }>(row: Row<T>): T {
  return { ...row, source: row.source === 'connector' ? 'connector' : 'api' } as T;
}

/** Named queries over group nodes and MEMBER_OF edges; always inside the caller's transaction. */
export const groupRepository = {
  async create(tx: Tx, g: NewGroup, now: string): Promise<Group> {
    if (g.source === 'connector' && g.connectorRef === null)
      throw new Error(`connector group ${g.id} needs the id of its connector`);
    const connectorRef = g.source === 'connector' ? g.connectorRef : null;
    const row = await tx.first<{ group: Row<Group> }>(Q.create, {
      id: g.id,
      name: g.name,
      nameKey: groupNameKey(g.name, connectorRef),
      description: g.description,
      source: g.source,
      connectorSource: g.connectorSource,
      connectorRef,
      connectorId: g.connectorId,
      createdBy: g.createdBy,
      now,
    });
    return toGroup(row!.group);
  },

  async get(tx: Reader, id: string): Promise<Group | undefined> {
    const row = await tx.first<{ group: Row<Group> }>(Q.get, { id });
    return row ? toGroup(row.group) : undefined;
  },

  /** The group under its write lock, for the rest of the transaction. */
  async lock(tx: Tx, id: string): Promise<LockedGroup | undefined> {
    const row = await tx.first<{ group: Row<LockedGroup> }>(Q.lock, { id });
    return row ? toGroup(row.group) : undefined;
  },

  async list(
    tx: Reader,
    filter: { connectorSource: string | null },
    page: Page,
  ): Promise<{ total: number; groups: Group[] }> {
    const row = await tx.first<{ total: number; groups: Row<Group>[] }>(
      filter.connectorSource === null ? Q.page : Q.page_by_connector,
      { connectorSource: filter.connectorSource, skip: page.skip, limit: page.limit },
    );
    return { total: row?.total ?? 0, groups: (row?.groups ?? []).map(toGroup) };
  },

  /** Changes an API group; a connector group changes through its connector's SCIM view. */
  async update(tx: Tx, current: LockedGroup, changes: GroupChanges, now: string): Promise<Group> {
    if (current.source === 'connector')
      throw new Error(`group ${current.id} is managed by its identity connector`);
    const set: Record<string, string | null> = {};
    if (changes.name !== undefined) {
      set['name'] = changes.name;
      set['name_key'] = groupNameKey(changes.name, null);
    }
    if (changes.description !== undefined) set['description'] = changes.description;
    const row = await tx.first<{ group: Row<Group> }>(Q.update, { id: current.id, set, now });
    return toGroup(row!.group);
  },

  /** Deletes the group and its edges; says how many members it had and which groups it was in. */
  async delete(tx: Tx, id: string): Promise<{ members: number; groups: string[] }> {
    const row = await tx.first<{ members: number; groups: string[] }>(Q.delete, { id });
    return row ?? { members: 0, groups: [] };
  },

  /** Serialises every nesting of a group inside another; take it before any group lock. */
  async lockNesting(tx: Tx): Promise<void> {
    await tx.run(Q.nesting_lock);
  },

  /**
   * A principal or group under its write lock, with its status (principals) and the time it
   * joined the group, if it is a member already.
   */
  async lockMember(
    tx: Tx,
    groupId: string,
    memberId: string,
  ): Promise<{ member: MemberRow & { status: string | null }; addedAt: string | null } | undefined> {
    return tx.first(Q.lock_member, { groupId, memberId });
  },

  /** Whether nesting would close a cycle, and the number of levels the deepest chain would have. */
  async nestingCheck(tx: Tx, groupId: string, memberId: string): Promise<{ cycle: boolean; levels: number }> {
    const row = await tx.first<{ cycle: boolean; levels: number }>(Q.nesting_check, { groupId, memberId });
    return row!;
  },

  async addMember(tx: Tx, groupId: string, memberId: string, addedBy: string, now: string): Promise<string> {
    const row = await tx.first<{ addedAt: string }>(Q.add_member, { groupId, memberId, addedBy, now });
    return row!.addedAt;
  },

  async removeMember(tx: Tx, groupId: string, memberId: string): Promise<boolean> {
    const row = await tx.first<{ removed: number }>(Q.remove_member, { groupId, memberId });
    return (row?.removed ?? 0) > 0;
  },

  /** A page of members, or undefined when the group does not exist. */
  async members(
    tx: Reader,
    id: string,
    transitive: boolean,
    page: Page,
  ): Promise<{ total: number; members: MemberRow[] } | undefined> {
    return tx.first(transitive ? Q.members_transitive : Q.members, {
      id,
      skip: page.skip,
      limit: page.limit,
    });
  },
};
