import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { Static } from '@sinclair/typebox';
import type { GroupSchema } from '../schemas/groups.js';
import { type PrincipalType } from '../vocabulary/principals.js';
import { groupNameKey } from './model.js';

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
  'add_members',
  'remove_members',
  'create_many',
  'set_from_source',
  'set_member_displays',
  'load',
  'load_memberships',
  'load_nesting',
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

/** A group of a provisioning source, written in a batch with its members. */
export interface SourceGroup {
  id: string;
  name: string;
  externalId: string | null;
  /** Further node properties the source keeps (SCIM: the attributes its client sent). */
  extra: Record<string, unknown>;
  /** Members (principals the caller checked), each with properties for its membership edge. */
  members: { id: string; props: Record<string, unknown> }[];
}

/** A group of a bulk load (benchmarks and imports): an API group. */
export interface LoadedGroup {
  id: string;
  name: string;
  description?: string;
  createdAt: string;
}

/** A membership of a bulk load: a principal in a group, or a group nested in another. */
export interface LoadedMembership {
  groupId: string;
  memberId: string;
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

  /** Members joining a group, all at once; answers those that were not members yet. */
  async addMembers(tx: Tx, groupId: string, ids: string[], addedBy: string, now: string): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.add_members, { groupId, ids, addedBy, now });
    return rows.map((r) => r.id);
  },

  /** Members leaving a group, all at once; answers those that were members. */
  async removeMembers(tx: Tx, groupId: string, ids: string[]): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.remove_members, { groupId, ids });
    return rows.map((r) => r.id);
  },

  /** New groups of a connector with their members, a batch in one statement. */
  async createMany(
    tx: Tx,
    connector: { id: string; name: string },
    actor: string,
    groups: readonly SourceGroup[],
    now: string,
  ): Promise<void> {
    const rows = groups.map((g) => ({
      id: g.id,
      name: g.name,
      nameKey: groupNameKey(g.name, connector.id),
      externalId: g.externalId,
      extra: g.extra,
      members: g.members.map((m) => ({ id: m.id, props: m.props })),
    }));
    await tx.run(Q.create_many, { rows, source: connector.name, connector: connector.id, actor, now });
  },

  /** A connector group's name, external id and source properties, as its source has them now. */
  async setFromSource(
    tx: Tx,
    connector: string,
    id: string,
    group: { name: string; externalId: string | null; extra: Record<string, unknown> },
    now: string,
  ): Promise<void> {
    await tx.run(Q.set_from_source, {
      id,
      name: group.name,
      nameKey: groupNameKey(group.name, connector),
      externalId: group.externalId,
      extra: group.extra,
      now,
    });
  },

  /** The display a SCIM client sent with each of these members of a group (null: none). */
  async setMemberDisplays(
    tx: Tx,
    groupId: string,
    rows: readonly { id: string; display: string | null }[],
  ): Promise<void> {
    if (rows.length > 0) await tx.run(Q.set_member_displays, { groupId, rows: [...rows] });
  },

  /** API groups of a bulk load, a batch in one statement. */
  async load(tx: Tx, rows: readonly LoadedGroup[], actor: string): Promise<void> {
    const params = rows.map((g) => ({ ...g, description: g.description ?? null, createdBy: actor }));
    await tx.run(Q.load, { rows: params });
  },

  /** Principal → group memberships of a bulk load. */
  async loadMemberships(
    tx: Tx,
    rows: readonly LoadedMembership[],
    addedAt: string,
    actor: string,
  ): Promise<void> {
    await tx.run(Q.load_memberships, { rows: rows.map((m) => ({ ...m, addedAt, addedBy: actor })) });
  },

  /** Group → group memberships (nesting) of a bulk load. */
  async loadNesting(
    tx: Tx,
    rows: readonly LoadedMembership[],
    addedAt: string,
    actor: string,
  ): Promise<void> {
    await tx.run(Q.load_nesting, { rows: rows.map((m) => ({ ...m, addedAt, addedBy: actor })) });
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
