import type { OperationContext } from '../audit/audit.js';
import { diffMaps } from '../audit/audit.js';
import type { ScimCaller } from '../connectors/model.js';
import type { Database, Tx } from '../db/database.js';
import { AppError } from '../errors/errors.js';
import type { EventSink } from '../events/sink.js';
import { groupRepository as groups } from '../groups/repository.js';
import { MAX_NESTING_LEVELS } from '../groups/service.js';
import { isId, newId } from '../ids.js';
import { nowIso } from '../time.js';
import { invalidValue, ScimError, scimNotFound } from './errors.js';
import { evaluateFilter, filterPaths } from './filter.js';
import { groupEtag, groupFields, groupView, readGroup, storedGroup } from './groups.js';
import { patchResource } from './patch.js';
import { scimRepository as repo, type StoredGroup } from './repository.js';
import type { ScimObject } from './resource.js';
import { caseExactIn, COMMON_ATTRIBUTES, GROUP_ATTRIBUTES, GROUP_SCHEMA } from './schema.js';
import {
  checkIfMatch,
  MAX_RESULTS,
  parseFilterOr400,
  type ListRequest,
  type ListResult,
} from './users-service.js';

const caseExact = caseExactIn([...COMMON_ATTRIBUTES, ...GROUP_ATTRIBUTES]);

/** Most members one request may name. */
const MAX_MEMBERS = 10_000;

/**
 * The Groups of a connector's SCIM service provider: connector groups (read-only through `/v1`)
 * whose members are the connector's users and groups, as MEMBER_OF edges that the decision
 * engine follows like any other.
 */
export class ScimGroupService {
  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
    readonly baseUrl: string,
  ) {}

  async create(caller: ScimCaller, body: unknown, op: OperationContext): Promise<ScimObject> {
    const scim = readGroup(body);
    const fields = groupFields(scim);
    const id = newId('group');
    return this.uniquely(fields.displayName, () =>
      this.db.write('scim/groups/create', async (tx) => {
        const now = nowIso();
        await groups.create(
          tx,
          {
            id,
            name: fields.displayName,
            description: null,
            source: 'connector',
            connectorSource: caller.name,
            connectorId: fields.externalId,
            createdBy: caller.id,
          },
          now,
        );
        await this.setScim(tx, caller, id, fields, scim, now);
        this.events.record(tx, op, {
          type: 'group.created',
          target: { type: 'group', id },
          changes: {
            name: { to: fields.displayName },
            connector_source: { to: caller.name },
            ...(fields.externalId ? { connector_id: { to: fields.externalId } } : {}),
          },
        });
        await this.changeMembers(tx, caller, id, [], fields.members, op);
        return this.view((await repo.groups(tx, caller.name, [id], true))[0]!);
      }),
    );
  }

  async get(caller: ScimCaller, id: string, withMembers: boolean): Promise<ScimObject> {
    const [found] = await repo.groups(this.db, caller.name, [id], withMembers);
    if (!found) throw scimNotFound('Group', id);
    return this.view(found);
  }

  /**
   * A connector holds few groups next to its users: they are read whole and the filter is
   * checked against each (members only when the filter or the answer needs them).
   */
  async list(caller: ScimCaller, request: ListRequest, withMembers: boolean): Promise<ListResult> {
    const filter = request.filter === undefined ? undefined : parseFilterOr400(request.filter);
    // Members are read for the filter only when it tests them; otherwise for the page alone.
    const filterNeedsMembers =
      filter !== undefined && filterPaths(filter).some((p) => p.attribute.toLowerCase() === 'members');
    const rows = await repo.allGroups(this.db, caller.name, filterNeedsMembers);
    let resources = rows.map((r) => this.view(r));
    if (filter) resources = resources.filter((g) => evaluateFilter(filter, g, { caseExact }));
    const skip = request.startIndex - 1;
    let page = resources.slice(skip, skip + Math.min(request.count, MAX_RESULTS));
    if (withMembers && !filterNeedsMembers && page.length > 0) {
      const full = await repo.groups(
        this.db,
        caller.name,
        page.map((g) => g['id'] as string),
        true,
      );
      const byId = new Map(full.map((r) => [r.props['id'] as string, this.view(r)]));
      page = page.map((g) => byId.get(g['id'] as string) ?? g);
    }
    return {
      totalResults: resources.length,
      startIndex: request.startIndex,
      resources: withMembers ? page : page.map(({ members: _m, ...rest }) => rest),
    };
  }

  async replace(
    caller: ScimCaller,
    id: string,
    body: unknown,
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<ScimObject> {
    const scim = readGroup(body);
    return this.write(caller, id, ifMatch, op, () => scim);
  }

  async patch(
    caller: ScimCaller,
    id: string,
    operations: unknown[],
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<ScimObject> {
    return this.write(caller, id, ifMatch, op, (current) =>
      readGroup(
        patchResource(current, operations, {
          core: GROUP_SCHEMA,
          attributes: [...COMMON_ATTRIBUTES, ...GROUP_ATTRIBUTES],
          extensions: [],
          readOnly: ['id', 'meta'],
        }),
      ),
    );
  }

  async delete(
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<void> {
    await this.db.write('scim/groups/delete', async (tx) => {
      const current = await this.lock(tx, caller, id, ifMatch);
      const { members, groups: parents } = await groups.delete(tx, id);
      this.events.record(tx, op, {
        type: 'group.deleted',
        target: { type: 'group', id },
        changes: {
          name: { from: current.props['name'] },
          ...(members > 0 ? { member_count: { from: members } } : {}),
          ...(parents.length > 0 ? { groups: { from: parents.sort(), to: [] } } : {}),
        },
      });
    });
  }

  private async write(
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
    op: OperationContext,
    next: (current: ScimObject) => ScimObject,
  ): Promise<ScimObject> {
    let name: string | undefined;
    return this.uniquely(
      () => name,
      () =>
        this.db.write('scim/groups/update', async (tx) => {
          const current = await this.lock(tx, caller, id, ifMatch);
          const scim = next(this.view(current));
          const fields = groupFields(scim);
          name = fields.displayName;
          const before = stored(current);
          const changes = {
            ...(current.props['name'] !== fields.displayName
              ? { name: { from: current.props['name'] as string, to: fields.displayName } }
              : {}),
            ...((current.props['connector_id'] ?? null) !== fields.externalId
              ? {
                  connector_id: {
                    from: (current.props['connector_id'] as string | null) ?? null,
                    to: fields.externalId,
                  },
                }
              : {}),
            ...diffMaps(before, storedGroup(scim), 'scim'),
          };
          const currentMembers = (current.members ?? []).map((m) => m.value);
          const held = new Set(currentMembers);
          const membersChanged =
            currentMembers.length !== fields.members.length || fields.members.some((m) => !held.has(m));
          if (Object.keys(changes).length === 0 && !membersChanged) return this.view(current);
          await this.setScim(tx, caller, id, fields, scim, nowIso());
          if (Object.keys(changes).length > 0)
            this.events.record(tx, op, { type: 'group.updated', target: { type: 'group', id }, changes });
          await this.changeMembers(tx, caller, id, currentMembers, fields.members, op);
          return this.view((await repo.groups(tx, caller.name, [id], true))[0]!);
        }),
    );
  }

  /** Adds and removes members so that the group holds exactly `wanted`; one event per change. */
  private async changeMembers(
    tx: Tx,
    caller: ScimCaller,
    groupId: string,
    current: string[],
    wanted: string[],
    op: OperationContext,
  ): Promise<void> {
    if (wanted.length > MAX_MEMBERS) throw invalidValue(`a request may name at most ${MAX_MEMBERS} members`);
    const have = new Set(current);
    const added = wanted.filter((m) => !have.has(m));
    const keep = new Set(wanted);
    const removed = current.filter((m) => !keep.has(m));
    if (added.length > 0) {
      const known = new Set(await repo.memberCandidates(tx, caller.name, added));
      const unknown = added.filter((m) => !known.has(m));
      if (unknown.length > 0)
        throw invalidValue(
          `members name no user or group of this connector: ${unknown.slice(0, 5).join(', ')}`,
        );
      if (added.some((m) => isId('group', m))) await groups.lockNesting(tx);
    }
    const now = nowIso();
    const record = (type: 'group.member_added' | 'group.member_removed', memberId: string): void => {
      this.events.record(tx, op, {
        type,
        target: { type: 'group', id: groupId },
        changes: { members: type === 'group.member_added' ? { to: memberId } : { from: memberId } },
      });
    };
    // Users join in one statement; a nested group is checked for cycles and depth first.
    const users = added.filter((m) => !isId('group', m));
    if (users.length > 0) {
      const joined = await repo.addUsers(tx, groupId, users, caller.id, now);
      for (const id of joined) record('group.member_added', id);
    }
    for (const memberId of added.filter((m) => isId('group', m))) {
      const check = await groups.nestingCheck(tx, groupId, memberId);
      if (check.cycle)
        throw invalidValue(`group ${memberId} cannot be nested in ${groupId}: it would make a cycle`);
      if (check.levels > MAX_NESTING_LEVELS)
        throw invalidValue(
          `nesting ${memberId} in ${groupId} would chain more than ${MAX_NESTING_LEVELS} groups`,
        );
      await groups.addMember(tx, groupId, memberId, caller.id, now);
      record('group.member_added', memberId);
    }
    if (removed.length > 0) {
      const left = await repo.removeMembers(tx, groupId, removed);
      for (const id of left) record('group.member_removed', id);
    }
  }

  private async setScim(
    tx: Tx,
    caller: ScimCaller,
    id: string,
    fields: ReturnType<typeof groupFields>,
    scim: ScimObject,
    now: string,
  ): Promise<void> {
    await repo.setGroup(
      tx,
      caller.name,
      id,
      { name: fields.displayName, externalId: fields.externalId, scim: JSON.stringify(storedGroup(scim)) },
      now,
    );
  }

  private async lock(
    tx: Tx,
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
  ): Promise<StoredGroup> {
    const current = await repo.lockGroup(tx, caller.name, id);
    if (!current) throw scimNotFound('Group', id);
    checkIfMatch(ifMatch, groupEtag(current.props['updated_at'] as string));
    return current;
  }

  private view(row: StoredGroup): ScimObject {
    const p = row.props;
    return groupView(
      stored(row),
      {
        id: p['id'] as string,
        created: p['created_at'] as string,
        lastModified: p['updated_at'] as string,
        version: groupEtag(p['updated_at'] as string),
        members: row.members ?? undefined,
      },
      this.baseUrl,
    );
  }

  /** A name taken within the connector (or an externalId) is 409 `uniqueness`. */
  private async uniquely<T>(name: string | (() => string | undefined), work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') {
        const shown = typeof name === 'function' ? name() : name;
        throw new ScimError(
          409,
          'uniqueness',
          `a group named "${shown ?? ''}" (or with this externalId) already exists`,
        );
      }
      throw err;
    }
  }
}

function stored(row: StoredGroup): ScimObject {
  const text = row.props['scim'];
  if (typeof text === 'string') return JSON.parse(text) as ScimObject;
  // A group written before it had a SCIM view: its name is all there is.
  return { displayName: row.props['name'] as string };
}
