import type { Changes, OperationContext } from '../audit/audit.js';
import type { Tx } from '../db/database.js';
import type { EventRecorder } from '../events/sink.js';
import { nowIso } from '../time.js';
import {
  groupRepository,
  type Group,
  type LoadedGroup,
  type LoadedMembership,
  type NewGroup,
  type SourceGroup,
} from './repository.js';

export type { LoadedGroup, LoadedMembership };

/**
 * The one way groups and their memberships are written. The REST API (src/groups/service.ts),
 * the SCIM endpoints and a connector's sync go through here, so that each change records its
 * audit event in the same transaction, the same way whoever makes it. Checks that differ by
 * caller (who may change which group, how a refusal reads) stay with the caller.
 */

/** The single-member queries: what the REST service's unit tests stand in for. */
export type GroupStore = Pick<
  typeof groupRepository,
  'create' | 'delete' | 'lockNesting' | 'nestingCheck' | 'addMember' | 'removeMember'
>;

/** What a caller of the group writes sees. */
export type GroupWriter = Pick<
  GroupWrites,
  | 'create'
  | 'delete'
  | 'lockNesting'
  | 'nestingCheck'
  | 'addMember'
  | 'removeMember'
  | 'addMembers'
  | 'removeMembers'
  | 'createMany'
  | 'setFromSource'
  | 'setMemberDisplays'
>;

/**
 * A bulk load of trusted rows (benchmarks and imports, src/seed/bulk.ts): no checks and no
 * events, the same nodes and edges as the writes above.
 */
export interface GroupLoader {
  load(tx: Tx, rows: readonly LoadedGroup[], actor: string): Promise<void>;
  loadMemberships(tx: Tx, rows: readonly LoadedMembership[], addedAt: string, actor: string): Promise<void>;
  loadNesting(tx: Tx, rows: readonly LoadedMembership[], addedAt: string, actor: string): Promise<void>;
}

export const groupLoader: GroupLoader = {
  load: (tx, rows, actor) => groupRepository.load(tx, rows, actor),
  loadMemberships: (tx, rows, addedAt, actor) => groupRepository.loadMemberships(tx, rows, addedAt, actor),
  loadNesting: (tx, rows, addedAt, actor) => groupRepository.loadNesting(tx, rows, addedAt, actor),
};

export class GroupWrites {
  constructor(
    private readonly events: EventRecorder,
    private readonly repo: GroupStore = groupRepository,
  ) {}

  /** Creates a group and records `group.created` with `changes`. */
  async create(
    tx: Tx,
    group: NewGroup,
    op: OperationContext,
    changes: Changes,
    now = nowIso(),
  ): Promise<Group> {
    const created = await this.repo.create(tx, group, now);
    this.events.record(tx, op, { type: 'group.created', target: { type: 'group', id: group.id }, changes });
    return created;
  }

  /** Deletes a group read under its lock, with `group.deleted` saying what it held. */
  async delete(
    tx: Tx,
    current: { id: string; name: string; description: string | null },
    op: OperationContext,
  ): Promise<void> {
    const { members, groups } = await this.repo.delete(tx, current.id);
    this.events.record(tx, op, {
      type: 'group.deleted',
      target: { type: 'group', id: current.id },
      changes: {
        name: { from: current.name },
        ...(current.description !== null ? { description: { from: current.description } } : {}),
        ...(members > 0 ? { member_count: { from: members } } : {}),
        ...(groups.length > 0 ? { groups: { from: groups.sort(), to: [] } } : {}),
      },
    });
  }

  /** Taken before any group lock by a write that nests groups, so that nestings queue in one order. */
  lockNesting(tx: Tx): Promise<void> {
    return this.repo.lockNesting(tx);
  }

  /** Whether nesting `memberId` in `groupId` would close a cycle, and how long a chain it makes. */
  nestingCheck(tx: Tx, groupId: string, memberId: string): Promise<{ cycle: boolean; levels: number }> {
    return this.repo.nestingCheck(tx, groupId, memberId);
  }

  /** Adds one member (checked by the caller), with `group.member_added`; answers when. */
  async addMember(
    tx: Tx,
    groupId: string,
    memberId: string,
    addedBy: string,
    op: OperationContext,
  ): Promise<string> {
    const addedAt = await this.repo.addMember(tx, groupId, memberId, addedBy, nowIso());
    this.memberEvents(tx, op, groupId, 'group.member_added', [memberId]);
    return addedAt;
  }

  /** Removes one member, with `group.member_removed` when it was one; answers whether it was. */
  async removeMember(tx: Tx, groupId: string, memberId: string, op: OperationContext): Promise<boolean> {
    const removed = await this.repo.removeMember(tx, groupId, memberId);
    if (removed) this.memberEvents(tx, op, groupId, 'group.member_removed', [memberId]);
    return removed;
  }

  /** Members (checked by the caller) joining at once; an event for each that was not one yet. */
  async addMembers(
    tx: Tx,
    groupId: string,
    ids: string[],
    addedBy: string,
    op: OperationContext,
  ): Promise<string[]> {
    const joined = await groupRepository.addMembers(tx, groupId, ids, addedBy, nowIso());
    this.memberEvents(tx, op, groupId, 'group.member_added', joined);
    return joined;
  }

  /** Members leaving at once; an event for each that was one. */
  async removeMembers(tx: Tx, groupId: string, ids: string[], op: OperationContext): Promise<string[]> {
    const left = await groupRepository.removeMembers(tx, groupId, ids);
    this.memberEvents(tx, op, groupId, 'group.member_removed', left);
    return left;
  }

  /**
   * New groups of a connector with their members, a batch in one statement, with one
   * `group.created` per group (`changesOf` says what it holds).
   */
  async createMany(
    tx: Tx,
    connector: { id: string; name: string },
    actor: string,
    groups: readonly SourceGroup[],
    op: OperationContext,
    changesOf: (group: SourceGroup) => Changes,
  ): Promise<void> {
    await groupRepository.createMany(tx, connector, actor, groups, nowIso());
    for (const g of groups) {
      this.events.record(tx, op, {
        type: 'group.created',
        target: { type: 'group', id: g.id },
        changes: changesOf(g),
      });
    }
  }

  /**
   * A connector group as its source has it now; records `group.updated` when `changes` says
   * something changed.
   */
  async setFromSource(
    tx: Tx,
    connector: string,
    id: string,
    group: { name: string; externalId: string | null; extra: Record<string, unknown> },
    op: OperationContext,
    changes: Changes,
    /** A group created in the same write gives its creation instant, so that it was not modified since. */
    now = nowIso(),
  ): Promise<void> {
    await groupRepository.setFromSource(tx, connector, id, group, now);
    if (Object.keys(changes).length > 0) {
      this.events.record(tx, op, { type: 'group.updated', target: { type: 'group', id }, changes });
    }
  }

  /** The display a SCIM client sent with members, on their membership edges: no event (not access). */
  setMemberDisplays(
    tx: Tx,
    groupId: string,
    rows: readonly { id: string; display: string | null }[],
  ): Promise<void> {
    return groupRepository.setMemberDisplays(tx, groupId, rows);
  }

  private memberEvents(
    tx: Tx,
    op: OperationContext,
    groupId: string,
    type: 'group.member_added' | 'group.member_removed',
    ids: readonly string[],
  ): void {
    for (const memberId of ids) {
      this.events.record(tx, op, {
        type,
        target: { type: 'group', id: groupId },
        changes: { members: type === 'group.member_added' ? { to: memberId } : { from: memberId } },
      });
    }
  }
}
