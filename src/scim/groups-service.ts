import { diffMaps, type Changes, type OperationContext } from '../audit/audit.js';
import type { ScimCaller } from '../connectors/model.js';
import type { Database, Reader, Tx } from '../db/database.js';
import { AppError } from '../errors/errors.js';
import type { GroupWriter } from '../groups/writes.js';
import { MAX_NESTING_LEVELS } from '../groups/service.js';
import { isId, newId } from '../ids.js';
import { instantKey, nowIso } from '../time.js';
import { MAX_MEMBERS } from './bounds.js';
import { invalidValue, ScimError, scimNotFound } from './errors.js';
import { evaluateFilter, filterPaths, type ScimFilter } from './filter.js';
import { caseExactOf, GROUP_RESOURCE } from './attributes.js';
import { dialectOf } from './dialect.js';
import { findNamed, sameName } from './names.js';
import {
  groupEtag,
  groupFields,
  groupView,
  readGroup,
  storedGroup,
  withMemberObjects,
  type GroupFields,
} from './groups.js';
import {
  scimRepository as repo,
  type BatchedGroup,
  type GroupCursor,
  type MemberDisplay,
  type ScimMember,
  type StoredGroup,
} from './repository.js';
import { text, type ScimObject } from './resource.js';
import { ScimResourceWrites } from './writes.js';
import { GROUP_SCHEMA } from './schema.js';
import {
  checkIfMatch,
  MAX_RESULTS,
  parseFilterOr400,
  type ListRequest,
  type ListResult,
} from './users-service.js';

const caseExact = caseExactOf('Group');

/**
 * Groups read at once while a filter is checked on them, one batch after another; fewer when
 * their members are read with them (a group may have thousands).
 */
const GROUP_SCAN_BATCH = 500;
const GROUP_SCAN_BATCH_WITH_MEMBERS = 50;

/** An `eq` that an index answers: the groups it may match, looked up, then checked whole. */
type IndexedEq = { attribute: 'id' | 'displayName' | 'externalId'; value: string };

/** Which attribute's `eq` narrows the candidates most: ids and names are unique, externalIds not. */
const SELECTIVITY: IndexedEq['attribute'][] = ['id', 'displayName', 'externalId'];

/**
 * The Groups of a connector's SCIM service provider: connector groups (read-only through `/v1`)
 * whose members are the connector's users and groups, as MEMBER_OF edges that the decision
 * engine follows like any other.
 */
export class ScimGroupService extends ScimResourceWrites {
  constructor(
    private readonly db: Database,
    readonly baseUrl: string,
    /** Groups and memberships are written by their owner, which records the events. */
    private readonly writer: GroupWriter,
  ) {
    super();
  }

  async create(caller: ScimCaller, body: unknown, op: OperationContext): Promise<ScimObject> {
    const scim = readGroup(body);
    const fields = groupFields(scim);
    const id = newId('group');
    return this.uniquely(fields.displayName, () =>
      this.db.write('scim/groups/create', async (tx) => {
        // One instant for the group and its SCIM view: a new group has not been modified since.
        const now = nowIso();
        await this.writer.create(
          tx,
          {
            id,
            name: fields.displayName,
            description: null,
            source: 'connector',
            connectorSource: caller.name,
            connectorRef: caller.id,
            connectorId: fields.externalId,
            createdBy: caller.id,
          },
          op,
          {
            name: { to: fields.displayName },
            connector_source: { to: caller.name },
            ...(fields.externalId ? { connector_id: { to: fields.externalId } } : {}),
          },
          now,
        );
        await this.setScim(tx, caller, id, fields, scim, op, {}, now);
        await this.changeMembers(tx, caller, id, [], fields.members, op);
        await this.writer.setMemberDisplays(tx, id, displayChanges([], fields));
        return this.view((await repo.groups(tx, caller.id, [id], true))[0]!);
      }),
    );
  }

  async get(caller: ScimCaller, id: string, withMembers: boolean): Promise<ScimObject> {
    const [found] = await repo.groups(this.db, caller.id, [id], withMembers);
    if (!found) throw scimNotFound('Group', id);
    return this.view(found);
  }

  /**
   * A page of the connector's groups in creation order (then id), with how many match. Without a
   * filter the page is read alone, with a count. A filter that is (or is an `and` holding) an
   * `eq` on `id`, `displayName` or `externalId` looks its candidates up by index and checks the
   * whole filter on them; any other is checked on every group of the connector, read in batches
   * (of {@link GROUP_SCAN_BATCH}), keeping only the count and the page. Members are read for the
   * page alone, unless the filter tests them.
   */
  async list(caller: ScimCaller, request: ListRequest, withMembers: boolean): Promise<ListResult> {
    const filter = request.filter === undefined ? undefined : parseFilterOr400(request.filter);
    const skip = request.startIndex - 1;
    const count = Math.min(request.count, MAX_RESULTS);
    const shown = (rows: StoredGroup[]): ScimObject[] =>
      rows.map((row) => {
        const resource = this.view(row);
        if (withMembers) return resource;
        const { members: _m, ...rest } = resource;
        return rest;
      });
    if (filter === undefined) {
      const { total, groups: page } = await repo.groupPage(
        this.db,
        caller.id,
        { skip, limit: count },
        withMembers,
      );
      return { totalResults: total, startIndex: request.startIndex, resources: shown(page) };
    }
    const filterNeedsMembers = filterPaths(filter).some((p) => sameName(p.attribute, 'members'));
    const { total, page } = await this.db.read('scim/groups/list', async (tx) => {
      let matched = 0;
      const kept: StoredGroup[] = [];
      for await (const batch of this.candidates(tx, caller, filter, filterNeedsMembers)) {
        for (const row of batch) {
          if (!evaluateFilter(filter, this.view(row), { caseExact })) continue;
          if (matched >= skip && matched < skip + count) kept.push(row);
          matched += 1;
        }
      }
      if (!withMembers || filterNeedsMembers || kept.length === 0) return { total: matched, page: kept };
      // The page's members, read for it alone.
      const full = await repo.groups(
        tx,
        caller.id,
        kept.map((row) => row.props['id'] as string),
        true,
      );
      const byId = new Map(full.map((row) => [row.props['id'] as string, row]));
      return { total: matched, page: kept.map((row) => byId.get(row.props['id'] as string) ?? row) };
    });
    return { totalResults: total, startIndex: request.startIndex, resources: shown(page) };
  }

  /**
   * The groups a filter may match, in creation order (then id), a batch at a time: those its
   * indexed `eq` finds, else every group of the connector.
   */
  private async *candidates(
    tx: Reader,
    caller: ScimCaller,
    filter: ScimFilter,
    withMembers: boolean,
  ): AsyncGenerator<StoredGroup[]> {
    const eq = indexedEq(filter);
    if (eq?.attribute === 'id') {
      yield await repo.groups(tx, caller.id, [eq.value], withMembers);
      return;
    }
    if (eq?.attribute === 'displayName') {
      yield await repo.groupByName(tx, caller.id, eq.value, withMembers);
      return;
    }
    const externalId = eq?.value;
    const size = withMembers ? GROUP_SCAN_BATCH_WITH_MEMBERS : GROUP_SCAN_BATCH;
    let after: GroupCursor | undefined;
    for (;;) {
      const batch: BatchedGroup[] = await repo.groupBatch(tx, caller.id, after, size, {
        withMembers,
        externalId,
      });
      if (batch.length > 0) yield batch;
      if (batch.length < size) return;
      const last = batch[batch.length - 1]!;
      after = { at: last.at, id: last.props['id'] as string };
    }
  }

  protected readonly resource = GROUP_RESOURCE;

  protected read(body: unknown): ScimObject {
    return readGroup(body);
  }

  /** Members given as bare ids, as some clients send them, become member objects. */
  protected override operationsOf(operations: unknown[]): unknown[] {
    return withMemberObjects(operations);
  }

  async delete(
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<void> {
    await this.db.write('scim/groups/delete', async (tx) => {
      const current = await this.lock(tx, caller, id, ifMatch);
      await this.writer.delete(tx, { id, name: current.props['name'] as string, description: null }, op);
    });
  }

  protected async write(
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
          const currentMembers = (current.members ?? []).map((m) => m.value);
          const held = new Set(currentMembers);
          const displays = displayChanges(current.members ?? [], fields);
          // A new member's display comes with its arrival; those of members it had are changes.
          const sent = new Map((current.members ?? []).map((m) => [m.value, m.sent ?? null]));
          const redisplayed = displays.filter((d) => held.has(d.id));
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
            ...(redisplayed.length > 0
              ? {
                  member_display: {
                    from: Object.fromEntries(redisplayed.map((d) => [d.id, sent.get(d.id) ?? null])),
                    to: Object.fromEntries(redisplayed.map((d) => [d.id, d.display])),
                  },
                }
              : {}),
          };
          const membersChanged =
            currentMembers.length !== fields.members.length ||
            fields.members.some((m) => !held.has(m)) ||
            displays.length > 0;
          if (Object.keys(changes).length === 0 && !membersChanged) return this.view(current);
          await this.setScim(tx, caller, id, fields, scim, op, changes);
          await this.changeMembers(tx, caller, id, currentMembers, fields.members, op);
          await this.writer.setMemberDisplays(tx, id, displays);
          return this.view((await repo.groups(tx, caller.id, [id], true))[0]!);
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
    let added = wanted.filter((m) => !have.has(m));
    const keep = new Set(wanted);
    const removed = current.filter((m) => !keep.has(m));
    if (added.length > 0) {
      const known = new Set(await repo.memberCandidates(tx, caller.id, added));
      const unknown = added.filter((m) => !known.has(m));
      if (unknown.length > 0 && !dialectOf(caller).skipsUnknownMembers)
        throw invalidValue(
          `members name no user or group of this connector: ${unknown.slice(0, 5).join(', ')}`,
        );
      added = added.filter((m) => known.has(m));
      if (added.some((m) => isId('group', m))) await this.writer.lockNesting(tx);
    }
    // Users join in one statement; a nested group is checked for cycles and depth first.
    const users = added.filter((m) => !isId('group', m));
    if (users.length > 0) {
      await this.writer.addMembers(tx, groupId, users, caller.id, op);
    }
    for (const memberId of added.filter((m) => isId('group', m))) {
      const check = await this.writer.nestingCheck(tx, groupId, memberId);
      if (check.cycle)
        throw invalidValue(`group ${memberId} cannot be nested in ${groupId}: it would make a cycle`);
      if (check.levels > MAX_NESTING_LEVELS)
        throw invalidValue(
          `nesting ${memberId} in ${groupId} would chain more than ${MAX_NESTING_LEVELS} groups`,
        );
      await this.writer.addMember(tx, groupId, memberId, caller.id, op);
    }
    if (removed.length > 0) {
      await this.writer.removeMembers(tx, groupId, removed, op);
    }
  }

  /** The group as its client has it now, with `group.updated` when `changes` says what changed. */
  private async setScim(
    tx: Tx,
    caller: ScimCaller,
    id: string,
    fields: GroupFields,
    scim: ScimObject,
    op: OperationContext,
    changes: Changes,
    now?: string,
  ): Promise<void> {
    await this.writer.setFromSource(
      tx,
      caller.id,
      id,
      {
        name: fields.displayName,
        externalId: fields.externalId,
        extra: { scim: JSON.stringify(storedGroup(scim)) },
      },
      op,
      changes,
      now,
    );
  }

  private async lock(
    tx: Tx,
    caller: ScimCaller,
    id: string,
    ifMatch: string | undefined,
  ): Promise<StoredGroup> {
    const current = await repo.lockGroup(tx, caller.id, id);
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

  /**
   * A name taken within the connector, in any case, is 409 `uniqueness`; an externalId may
   * repeat (RFC 7643 makes only a user's userName unique).
   */
  private async uniquely<T>(name: string | (() => string | undefined), work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') {
        const shown = typeof name === 'function' ? name() : name;
        throw new ScimError(
          409,
          'uniqueness',
          `a group named "${shown ?? ''}" already exists in this connector`,
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

/**
 * The displays to write on the membership edges of `fields.members`, where they change: a new
 * member's when its client sent one; a current member's when the client sent another than it
 * shows (or none, where it had one). A member sent with the display it shows already keeps what
 * it has, so that a PATCH, which works on the group as it is shown, changes only what it names.
 */
function displayChanges(current: ScimMember[], fields: GroupFields): MemberDisplay[] {
  const held = new Map(current.map((m) => [m.value, m]));
  return fields.members.flatMap((id): MemberDisplay[] => {
    const display = fields.displays.get(id) ?? null;
    const member = held.get(id);
    if (!member) return display === null ? [] : [{ id, display }];
    if (display === member.display || display === (member.sent ?? null)) return [];
    return [{ id, display }];
  });
}

/**
 * The `eq` of a filter that an index answers, if any: the filter itself, or one side of an `and`
 * (at any depth), on `id`, `displayName` or `externalId` (the Group schema's, by its URN or
 * without one), comparing with text that the filter compares as text. Where several do, the
 * most selective.
 */
function indexedEq(filter: ScimFilter): IndexedEq | undefined {
  const found: IndexedEq[] = [];
  const walk = (node: ScimFilter): void => {
    if (node.kind === 'and') {
      walk(node.of[0]);
      walk(node.of[1]);
      return;
    }
    if (node.kind !== 'compare' || node.op !== 'eq' || node.path.sub !== undefined) return;
    if (node.path.uri !== undefined && !sameName(node.path.uri, GROUP_SCHEMA)) return;
    const attribute = findNamed(SELECTIVITY, node.path.attribute, (a) => a);
    const value = node.value;
    // A number, a boolean or an instant compares otherwise than as the text an index holds; a
    // blank externalId is none.
    if (attribute === undefined || typeof value !== 'string' || instantKey(value) !== undefined) return;
    if (attribute === 'externalId' && text(value) === undefined) return;
    found.push({ attribute, value });
  };
  walk(filter);
  return found.sort((a, b) => SELECTIVITY.indexOf(a.attribute) - SELECTIVITY.indexOf(b.attribute))[0];
}
