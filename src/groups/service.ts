import type { Static } from '@sinclair/typebox';
import { type Changes, type OperationContext } from '../audit/audit.js';
import type { Transactions, Tx } from '../db/database.js';
import type { EventRecorder } from '../events/sink.js';
import { AppError, conflict, notFound } from '../errors/errors.js';
import { isId, newId } from '../ids.js';
import { groupSummary, summary } from '../principals/model.js';
import type { Page, Paged } from '../pagination.js';
import type {
  DeletedGroup as DeletedGroupSchema,
  GroupMember as GroupMemberSchema,
  GroupMembership,
} from '../schemas/groups.js';
import { nowIso } from '../time.js';
import { GroupWrites } from './writes.js';
import {
  groupRepository,
  type Group,
  type GroupChanges,
  type LockedGroup,
  type MemberRow,
} from './repository.js';

export type { Group } from './repository.js';

/**
 * The most groups one chain of nesting may hold (a group inside a group inside ... ). The
 * traversals in cypher/groups are bounded by it, so it cannot grow without them.
 */
export const MAX_NESTING_LEVELS = 16;

export interface CreateGroupInput {
  name: string;
  description?: string;
}

export interface PatchGroupInput {
  name?: string;
  /** `null` clears the description. */
  description?: string | null;
}

export type GroupMember = Static<typeof GroupMemberSchema>;
export type Membership = Static<typeof GroupMembership>;
export type DeletedGroup = Static<typeof DeletedGroupSchema>;

function memberView(row: MemberRow): GroupMember {
  return row.type === 'GROUP' ? groupSummary(row) : summary({ ...row, type: row.type });
}

function managedByConnector(group: LockedGroup): AppError {
  return new AppError(
    'PRINCIPAL_MANAGED_BY_CONNECTOR',
    `group ${group.id} is managed by its identity connector (${group.connector_source ?? 'unknown'}) and is read-only through the API`,
  );
}

/** Turns the name_key constraint violation into a message that names the clash. */
async function uniqueName<T>(name: string | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (name !== undefined && err instanceof AppError && err.code === 'CONFLICT') {
      throw conflict(`a group named "${name}" already exists`);
    }
    throw err;
  }
}

/** The group queries the service runs: unit tests give it an in-memory stand-in. */
export type GroupRepository = Pick<
  typeof groupRepository,
  | 'create'
  | 'get'
  | 'lock'
  | 'list'
  | 'update'
  | 'delete'
  | 'lockNesting'
  | 'lockMember'
  | 'nestingCheck'
  | 'addMember'
  | 'removeMember'
  | 'members'
>;

/** Groups of principals and of other groups; connector groups are read-only here. */
export class GroupService {
  constructor(
    private readonly db: Transactions,
    private readonly events: EventRecorder,
    private readonly repo: GroupRepository = groupRepository,
  ) {
    this.writes = new GroupWrites(events, repo);
  }

  /** Writes that record their audit events, shared with the connectors' writes. */
  private readonly writes: GroupWrites;

  async create(input: CreateGroupInput, op: OperationContext): Promise<Group> {
    const name = input.name.trim();
    const id = newId('group');
    return uniqueName(name, () =>
      this.db.write('groups/create', async (tx) => {
        // A retry after a lost commit answer returns what the first run committed.
        const committed = tx.attempt > 1 ? await this.repo.get(tx, id) : undefined;
        if (committed) return committed;
        return this.writes.create(
          tx,
          {
            id,
            name,
            description: input.description ?? null,
            source: 'api',
            connectorSource: null,
            connectorRef: null,
            connectorId: null,
            createdBy: op.actor.id,
          },
          op,
          {
            name: { to: name },
            ...(input.description !== undefined ? { description: { to: input.description } } : {}),
          },
        );
      }),
    );
  }

  async get(id: string): Promise<Group> {
    const group = await this.repo.get(this.db, id);
    if (!group) throw notFound('group', id);
    return group;
  }

  async list(filter: { connectorSource?: string | undefined }, page: Page): Promise<Paged<Group>> {
    const { total, groups } = await this.repo.list(
      this.db,
      { connectorSource: filter.connectorSource ?? null },
      page,
    );
    return { total, items: groups, page };
  }

  async update(id: string, patch: PatchGroupInput, op: OperationContext): Promise<Group> {
    const name = patch.name?.trim();
    return uniqueName(name, () =>
      this.db.write('groups/update', async (tx) => {
        const current = await this.lockWritable(tx, id);
        const set: GroupChanges = {};
        const changes: Changes = {};
        if (name !== undefined && name !== current.name) {
          set.name = name;
          changes['name'] = { from: current.name, to: name };
        }
        if (patch.description !== undefined && patch.description !== current.description) {
          set.description = patch.description;
          changes['description'] = { from: current.description, to: patch.description };
        }
        // A patch that changes nothing writes nothing, so it leaves no event either.
        if (Object.keys(changes).length === 0) return (await this.repo.get(tx, id))!;
        const updated = await this.repo.update(tx, current, set, nowIso());
        this.events.record(tx, op, { type: 'group.updated', target: { type: 'group', id }, changes });
        return updated;
      }),
    );
  }

  async delete(id: string, op: OperationContext): Promise<DeletedGroup> {
    return this.db.write('groups/delete', async (tx) => {
      const current = await this.lockWritable(tx, id);
      const deletedAt = nowIso();
      await this.writes.delete(tx, current, op);
      return { id, status: 'deleted', deleted_at: deletedAt, deleted_by: op.actor.id };
    });
  }

  /** Direct members, or with `transitive` every principal and group reachable through nesting. */
  async members(id: string, transitive: boolean, page: Page): Promise<Paged<GroupMember>> {
    const rows = await this.repo.members(this.db, id, transitive, page);
    if (!rows) throw notFound('group', id);
    return { total: rows.total, items: rows.members.map(memberView), page };
  }

  /**
   * Adds a principal or a group. Idempotent: an existing membership answers with its original
   * time and records nothing.
   */
  async addMember(groupId: string, memberId: string, op: OperationContext): Promise<Membership> {
    const nesting = isId('group', memberId);
    return this.db.write('groups/add_member', async (tx) => {
      // Taken before the group lock, so that nestings queue on one lock in one order.
      if (nesting) await this.writes.lockNesting(tx);
      await this.lockWritable(tx, groupId);
      const found = await this.repo.lockMember(tx, groupId, memberId);
      if (!found) throw notFound(nesting ? 'group' : 'principal', memberId);
      const member = memberView(found.member);
      if (found.addedAt !== null) return { group_id: groupId, member, added_at: found.addedAt };
      if (found.member.status === 'deleted') {
        throw new AppError('PRINCIPAL_DELETED', `principal ${memberId} is deleted`);
      }
      if (nesting) {
        const check = await this.writes.nestingCheck(tx, groupId, memberId);
        if (check.cycle) {
          throw new AppError(
            'CYCLE_DETECTED',
            memberId === groupId
              ? `group ${groupId} cannot be a member of itself`
              : `group ${groupId} is already nested inside ${memberId}, directly or indirectly`,
          );
        }
        if (check.levels > MAX_NESTING_LEVELS) {
          throw conflict(
            `nesting ${memberId} inside ${groupId} would make a chain of ${check.levels} groups; at most ${MAX_NESTING_LEVELS} are allowed`,
          );
        }
      }
      const addedAt = await this.writes.addMember(tx, groupId, memberId, op.actor.id, op);
      return { group_id: groupId, member, added_at: addedAt };
    });
  }

  /** Removes a member; idempotent, `removed` says whether there was anything to remove. */
  async removeMember(
    groupId: string,
    memberId: string,
    op: OperationContext,
  ): Promise<{ group_id: string; member_id: string; removed: boolean }> {
    return this.db.write('groups/remove_member', async (tx) => {
      await this.lockWritable(tx, groupId);
      const removed = await this.writes.removeMember(tx, groupId, memberId, op);
      return { group_id: groupId, member_id: memberId, removed };
    });
  }

  /** The group under its write lock, if the API may change it. */
  private async lockWritable(tx: Tx, id: string): Promise<LockedGroup> {
    const group = await this.repo.lock(tx, id);
    if (!group) throw notFound('group', id);
    if (group.source === 'connector') throw managedByConnector(group);
    return group;
  }
}
