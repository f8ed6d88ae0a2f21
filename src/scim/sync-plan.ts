import { isId } from '../ids.js';
import { ScimError } from './errors.js';
import { groupFields, readGroup, type GroupFields } from './groups.js';
import type { ManagerLink } from '../principals/model.js';
import type { ExistingUser } from './repository.js';
import { memberOf } from './names.js';
import { isObject, text, type ScimObject } from './resource.js';
import { GROUP_SCHEMA, USER_SCHEMA } from './schema.js';
import { readUser, userFields, type UserFields } from './users.js';

/**
 * What reconciling a connector with a snapshot decides, apart from the writing (src/scim/sync.ts
 * writes it): reading the snapshot, matching it with what the connector holds, and the creates,
 * updates, deprovisions, manager links and group changes that follow. Nothing here reads the
 * database or the clock; new principal ids come from the caller.
 */

/** Manager chains are followed this far when looking for a cycle. */
const MAX_CHAIN = 64;

/**
 * A plan computed in steps: it pauses (yields) after every few thousand items, so that a caller
 * planning a snapshot of a hundred thousand users can let the event loop turn between steps
 * (`runSteps` computes it in one go).
 */
export type Steps<T> = Generator<void, T, void>;

/** Items between two pauses of a stepped plan. */
const STEP = 2_000;

/** True every `STEP` calls: where a stepped plan pauses. */
function pacer(): () => boolean {
  let n = 0;
  return () => ++n % STEP === 0;
}

/** A stepped plan computed without pausing. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** A line of the snapshot that cannot be taken, and why. */
export interface LineError {
  line: number;
  detail: string;
}

export interface SnapshotUser {
  line: number;
  /** The SCIM id the line gives, if any: it names a stored user of the connector. */
  id?: string;
  scim: ScimObject;
  fields: UserFields;
}

export interface SnapshotGroup {
  line: number;
  /** The SCIM id the line gives, if any: it names a stored group of the connector. */
  id?: string;
  scim: ScimObject;
  fields: GroupFields;
}

/** A snapshot read: its users and groups in the order of its lines, and the lines that were not. */
export interface Snapshot {
  /** Lines that are not blank. */
  lines: number;
  users: SnapshotUser[];
  groups: SnapshotGroup[];
  errors: LineError[];
}

function schemasOf(value: ScimObject): string[] {
  const schemas = value['schemas'];
  return Array.isArray(schemas)
    ? schemas.filter((s): s is string => typeof s === 'string').map((s) => s.toLowerCase())
    : [];
}

/**
 * Reads a snapshot (JSON lines, each a SCIM User or Group) as it arrives, piece by piece (a line
 * may run on into the next piece), splitting it into users and groups and reading each as the
 * SCIM endpoints do; a line without a schema is a user when it has a userName. `read` takes a
 * bounded number of lines, so that a caller can let other work run between turns.
 */
export class SnapshotReader {
  readonly snapshot: Snapshot = { lines: 0, users: [], groups: [], errors: [] };
  private carry = '';
  private queue: string[] = [];
  private next = 0;
  private line = 0;

  /** Queues the lines of the next piece; the lines queued before must have been read. */
  push(piece: string): void {
    const parts = (this.carry + piece).split('\n');
    this.carry = parts.pop() ?? '';
    this.queue = parts;
    this.next = 0;
  }

  /** The snapshot ended: its last line, if it has no line break, is queued too. */
  end(): void {
    this.queue = [this.carry];
    this.carry = '';
    this.next = 0;
  }

  /** Reads up to `max` queued lines; false when none is left to read. */
  read(max: number): boolean {
    const stop = Math.min(this.queue.length, this.next + max);
    for (; this.next < stop; this.next++) this.readLine(this.queue[this.next]!, ++this.line);
    if (this.next < this.queue.length) return true;
    this.queue = [];
    this.next = 0;
    return false;
  }

  private readLine(raw: string, line: number): void {
    const snapshot = this.snapshot;
    if (raw.trim() === '') return;
    snapshot.lines += 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      snapshot.errors.push({ line, detail: 'not a JSON value' });
      return;
    }
    if (!isObject(value)) {
      snapshot.errors.push({ line, detail: 'not a JSON object' });
      return;
    }
    const schemas = schemasOf(value);
    const isGroup =
      schemas.includes(GROUP_SCHEMA.toLowerCase()) ||
      (!schemas.includes(USER_SCHEMA.toLowerCase()) && value['userName'] === undefined);
    const id = text(memberOf(value, 'id'));
    try {
      if (isGroup) {
        const scim = readGroup(value);
        snapshot.groups.push({ line, ...(id === undefined ? {} : { id }), scim, fields: groupFields(scim) });
      } else {
        const scim = readUser(value);
        snapshot.users.push({ line, ...(id === undefined ? {} : { id }), scim, fields: userFields(scim) });
      }
    } catch (err) {
      if (err instanceof ScimError) snapshot.errors.push({ line, detail: err.message });
      else throw err;
    }
  }
}

/** Reads a whole snapshot at once (see `SnapshotReader`). */
export function readSnapshot(text: string): Snapshot {
  const reader = new SnapshotReader();
  reader.push(text);
  reader.read(Infinity);
  reader.end();
  reader.read(Infinity);
  return reader.snapshot;
}

/** A user the snapshot provisions. */
export interface UserCreate {
  id: string;
  user: SnapshotUser;
  /** The manager it is created with, one of the snapshot's users; none when it names nobody. */
  managerId: string | null;
  /** The reference it waits on when its manager is none of the snapshot's users. */
  managerRef: string | null;
}

/** A user of the snapshot the connector holds already. */
export interface UserMatch {
  user: SnapshotUser;
  current: ExistingUser;
  /** Whether the snapshot's user differs from the stored one: only then is it written. */
  differs: boolean;
}

/** A manager link that changes, and the manager it had. */
export interface ManagerChange extends ManagerLink {
  from: string | null;
}

export interface UsersPlan {
  /** New users in the order they are written: a manager before its reports. */
  creates: UserCreate[];
  /** Stored users the snapshot has, in its order (written when they differ). */
  matches: UserMatch[];
  /** Stored users the snapshot lacks; none when `removes` is false. */
  deprovisions: ExistingUser[];
  /**
   * Manager links of stored users that change (their manager as the snapshot has it, or the
   * reference they wait on). New users are created with theirs.
   */
  managers: ManagerChange[];
  /**
   * Every way the snapshot names one of its users, to its principal id: its SCIM id, and an
   * externalId that no other user of the connector has (a shared one is ambiguous: it names none).
   */
  ids: Map<string, string>;
  /**
   * The externalIds several users hold (of the snapshot, or staying outside it): ambiguous, they
   * name none of them, nor anything else.
   */
  shared: Set<string>;
  /**
   * Whether what the snapshot lacks goes: only when every line was read and no user was
   * ambiguous, since a missing user might be one of them.
   */
  removes: boolean;
  /** Users that appear twice, in the order they are found. */
  errors: LineError[];
}

/** Whether a stored user holds what its snapshot line says (the manager aside). */
function differs(user: SnapshotUser, current: ExistingUser): boolean {
  const p = current.principal;
  return (
    JSON.stringify(user.scim) !== current.scim ||
    (user.fields.active ? 'active' : 'suspended') !== p.status ||
    p.name !== user.fields.name
  );
}

/**
 * The users of a snapshot against the connector's stored users (those SCIM still sees): each
 * matched by the SCIM id its line gives, else by userName in any case, never by externalId, which
 * several users may share; the rest are new, and the stored ones it lacks are deprovisioned. A
 * deprovisioned user is not among the stored ones, so one that comes back is new (the old
 * principal keeps its history).
 */
export function planUsers(snapshot: Snapshot, stored: ExistingUser[], newId: () => string): UsersPlan {
  return runSteps(planUsersSteps(snapshot, stored, newId));
}

/** `planUsers`, pausing between steps. */
export function* planUsersSteps(
  snapshot: Snapshot,
  stored: ExistingUser[],
  newId: () => string,
): Steps<UsersPlan> {
  const due = pacer();
  const errors: LineError[] = [];
  const existing = new Map(stored.map((e) => [e.principal.id, e]));
  const byUserName = new Map<string, ExistingUser>();
  for (const e of existing.values()) {
    if (e.userName !== undefined) byUserName.set(e.userName, e);
  }
  const seen = new Set<string>();
  const matches: UserMatch[] = [];
  const fresh: SnapshotUser[] = [];
  for (const user of snapshot.users) {
    if (due()) yield;
    const { userName } = user.fields;
    const byId = user.id === undefined ? undefined : existing.get(user.id);
    const holder = byUserName.get(userName.toLowerCase());
    const current = byId ?? holder;
    if (current && seen.has(current.principal.id)) {
      errors.push({
        line: user.line,
        detail: byId
          ? `the user ${byId.principal.id} appears twice`
          : `a user with userName "${userName}" appears twice`,
      });
      continue;
    }
    if (byId && holder && holder !== byId) {
      // Renaming one stored user to the userName of another would break the uniqueness of names.
      errors.push({
        line: user.line,
        detail: `the userName "${userName}" of user ${byId.principal.id} belongs to user ${holder.principal.id}`,
      });
      continue;
    }
    if (current) {
      seen.add(current.principal.id);
      matches.push({ user, current, differs: differs(user, current) });
    } else {
      fresh.push(user);
    }
  }
  // New users repeating one another's userName (in any case): the first is taken. They may share
  // an externalId.
  const createdNames = new Set<string>();
  const created: { id: string; user: SnapshotUser }[] = [];
  for (const user of fresh) {
    if (due()) yield;
    const key = user.fields.userName.toLowerCase();
    if (createdNames.has(key)) {
      errors.push({
        line: user.line,
        detail: `a user with userName "${user.fields.userName}" appears twice`,
      });
      continue;
    }
    createdNames.add(key);
    created.push({ id: newId(), user });
  }
  const removes = snapshot.errors.length === 0 && errors.length === 0;

  // Every manager link the snapshot asks for, decided before anything is written: new users are
  // created with theirs (managers first), and only the links of stored users are made after.
  // Stored users the snapshot lacks stay when nothing is removed, and hold their externalIds.
  const { ids, shared } = yield* namesOf(
    [
      ...created.map(({ id, user }) => ({ id, externalId: user.fields.externalId })),
      ...matches.map(({ user, current }) => ({
        id: current.principal.id,
        externalId: user.fields.externalId,
      })),
    ],
    removes ? [] : stored.filter((e) => !seen.has(e.principal.id)).map((e) => e.principal.connector_id),
  );
  const wanted = yield* plannedManagers(
    [
      ...created.map(({ id, user }) => ({ id, ref: user.fields.managerRef })),
      ...matches.map(({ user, current }) => ({ id: current.principal.id, ref: user.fields.managerRef })),
    ],
    ids,
  );
  const creates: UserCreate[] = [];
  for (const { id, user } of yield* managersFirst(created, wanted)) {
    if (due()) yield;
    const managerId = wanted.get(id) ?? null;
    creates.push({ id, user, managerId, managerRef: managerId === null ? user.fields.managerRef : null });
  }
  const managers: ManagerChange[] = [];
  for (const { user, current } of matches) {
    if (due()) yield;
    const managerId = wanted.get(current.principal.id) ?? null;
    const ref = managerId === null ? user.fields.managerRef : null;
    if (managerId === current.managerId && ref === current.managerRef) continue;
    managers.push({ id: current.principal.id, managerId, ref, from: current.managerId });
  }

  return {
    creates,
    matches,
    deprovisions: removes ? [...existing.values()].filter((e) => !seen.has(e.principal.id)) : [],
    managers,
    ids,
    shared,
    removes,
    errors,
  };
}

/**
 * Every way a snapshot may name one of its users, to its principal id: its SCIM id; else an
 * externalId that only this user has. An externalId two users share, or that a user staying
 * outside the snapshot (`others`) holds, is ambiguous and names none of them, as over SCIM
 * (`shared`).
 */
function* namesOf(
  users: { id: string; externalId: string | null }[],
  others: (string | null)[],
): Steps<{ ids: Map<string, string>; shared: Set<string> }> {
  const due = pacer();
  const ids = new Map<string, string>();
  for (const { id } of users) ids.set(id, id);
  yield;
  const holders = new Map<string, Set<string>>();
  const hold = (externalId: string, id: string): void => {
    const set = holders.get(externalId) ?? new Set<string>();
    set.add(id);
    holders.set(externalId, set);
  };
  for (const { id, externalId } of users) {
    if (due()) yield;
    if (externalId) hold(externalId, id);
  }
  others.forEach((externalId, i) => {
    if (externalId && holders.has(externalId)) hold(externalId, `other:${i}`);
  });
  const shared = new Set<string>();
  for (const [externalId, set] of holders) {
    if (due()) yield;
    const [only] = set;
    if (ids.has(externalId)) continue;
    if (set.size === 1) ids.set(externalId, only!);
    else shared.add(externalId);
  }
  return { ids, shared };
}

/**
 * The manager each user ends up with: the one its reference names among the snapshot's users,
 * or none when the reference names nobody (it waits) or the link would close a cycle.
 */
function* plannedManagers(
  users: { id: string; ref: string | null }[],
  ids: Map<string, string>,
): Steps<Map<string, string | null>> {
  const due = pacer();
  const wanted = new Map<string, string | null>();
  for (const u of users) {
    if (due()) yield;
    const managerId = u.ref ? ids.get(u.ref) : undefined;
    wanted.set(u.id, managerId && managerId !== u.id ? managerId : null);
  }
  for (const [id] of wanted) {
    if (due()) yield;
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
function* managersFirst<T extends { id: string }>(
  creates: T[],
  wanted: Map<string, string | null>,
): Steps<T[]> {
  const due = pacer();
  const byId = new Map(creates.map((c) => [c.id, c]));
  yield;
  const placed = new Set<string>();
  const out: T[] = [];
  for (const create of creates) {
    if (due()) yield;
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

/** A group the connector holds, as the snapshot is matched with it. */
export interface CurrentGroup {
  id: string;
  name: string;
  externalId: string | null;
}

/**
 * What a member the snapshot names may stand for, the first that is there winning: a principal,
 * or a group of the plan (by its index), which stands for it once it has an id.
 */
export type MemberCandidate = { principal: string } | { group: number };

/**
 * A member as the snapshot names it. A group created in the same run has no id until it is
 * written, so a member naming one is resolved then (`resolveMembers`); one that nothing stands
 * for is passed on as named, for the group service to refuse.
 */
export interface MemberRef {
  value: string;
  candidates: MemberCandidate[];
}

/**
 * How a new group is written. `batch`: with its members, all users of the snapshot, among a
 * batch of new groups; `alone`: through the group service, with its members; `bare`: through the
 * group service without members, which it is given once every new group has an id (it names
 * groups, which may be new too).
 */
export type GroupCreate = 'batch' | 'alone' | 'bare';

export interface PlannedGroup {
  group: SnapshotGroup;
  /** The stored group the snapshot's replaces; none for a new group. */
  current: CurrentGroup | null;
  /** How it is created; none for a stored group, which is replaced whole with its members. */
  create: GroupCreate | null;
  /** Its members, in the snapshot's order. */
  members: MemberRef[];
}

export interface GroupsPlan {
  /** The snapshot's groups in its order, each at most once. */
  groups: PlannedGroup[];
  /** Stored groups the snapshot lacks, oldest first; none when the users plan removes nothing. */
  deletes: CurrentGroup[];
  /** Groups that appear twice. */
  errors: LineError[];
}

/** How many of `keys` each key is, blanks left out. */
function tally(keys: (string | null)[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

/**
 * The groups of a snapshot against the connector's stored groups (oldest first). A line matches
 * the stored group its SCIM `id` names; else the one stored group holding its externalId, when
 * no other stored group and no other line holds it (externalIds may repeat); else the stored
 * group of its name, in any case (names are unique within the connector). Groups are created,
 * replaced (members named by SCIM id, by an externalId only one user, or else only one group,
 * holds, or, for groups, by name), and deleted when the snapshot lacks them and the users plan
 * removes what it lacks.
 */
export function planGroups(
  snapshot: SnapshotGroup[],
  stored: CurrentGroup[],
  users: Pick<UsersPlan, 'ids' | 'shared' | 'removes'>,
): GroupsPlan {
  return runSteps(planGroupsSteps(snapshot, stored, users));
}

/** `planGroups`, pausing between steps (every few thousand members). */
export function* planGroupsSteps(
  snapshot: SnapshotGroup[],
  stored: CurrentGroup[],
  users: Pick<UsersPlan, 'ids' | 'shared' | 'removes'>,
): Steps<GroupsPlan> {
  const errors: LineError[] = [];
  const byId = new Map(stored.map((g) => [g.id, g]));
  const byExternal = new Map<string, CurrentGroup[]>();
  const byName = new Map<string, CurrentGroup>();
  for (const g of stored) {
    if (g.externalId !== null) byExternal.set(g.externalId, [...(byExternal.get(g.externalId) ?? []), g]);
    byName.set(g.name.toLowerCase(), g);
  }
  const lines = tally(snapshot.map((g) => g.fields.externalId));
  const matched: { group: SnapshotGroup; current: CurrentGroup | null }[] = [];
  const seen = new Set<string>();
  for (const group of snapshot) {
    const f = group.fields;
    const named = group.id === undefined ? undefined : byId.get(group.id);
    const holders = f.externalId && lines.get(f.externalId) === 1 ? byExternal.get(f.externalId) : undefined;
    const current =
      named ?? (holders?.length === 1 ? holders[0] : undefined) ?? byName.get(f.displayName.toLowerCase());
    if (current && seen.has(current.id)) {
      errors.push({
        line: group.line,
        detail: named
          ? `the group ${named.id} appears twice`
          : `a group named "${f.displayName}" appears twice`,
      });
      continue;
    }
    if (current) seen.add(current.id);
    matched.push({ group, current: current ?? null });
  }

  // How the snapshot may name a group: the SCIM id of a stored one; an externalId only one group
  // holds (among those of the snapshot and the stored ones that stay outside it); its name, in
  // any case, the later in the snapshot first.
  const groupIds = new Map<string, number>();
  const externalIds = new Map<string, number[]>();
  const names = new Map<string, number[]>();
  matched.forEach(({ group, current }, index) => {
    if (current) groupIds.set(current.id, index);
    const { externalId, displayName } = group.fields;
    if (externalId) externalIds.set(externalId, [index, ...(externalIds.get(externalId) ?? [])]);
    const name = displayName.toLowerCase();
    names.set(name, [index, ...(names.get(name) ?? [])]);
  });
  const staying = tally(users.removes ? [] : stored.filter((g) => !seen.has(g.id)).map((g) => g.externalId));
  const namesGroup = (m: string): boolean =>
    groupIds.has(m) || externalIds.has(m) || names.has(m.toLowerCase()) || isId('group', m);
  const candidates = (m: string): MemberCandidate[] => {
    // An externalId several users share names nobody; one several groups share names no group.
    if (users.shared.has(m)) return [];
    const user = users.ids.get(m);
    const principal: MemberCandidate[] = user === undefined ? [] : [{ principal: user }];
    const holders = externalIds.get(m) ?? [];
    const groups =
      holders.length + (staying.get(m) ?? 0) > 1
        ? []
        : [...new Set([groupIds.get(m), ...holders, ...(names.get(m.toLowerCase()) ?? [])])].flatMap(
            (group): MemberCandidate[] => (group === undefined ? [] : [{ group }]),
          );
    // A SCIM group id is looked up among the groups first; anything else among the users first.
    if (isId('group', m)) return [...groups, ...principal];
    return principal.length > 0 ? principal : groups;
  };

  // New groups naming only users of the snapshot are written in batches with their members;
  // groups that name groups are created bare and given their members once every new group has
  // an id.
  const connectorUsers = new Set(users.ids.values());
  yield;
  const groups: PlannedGroup[] = [];
  let sinceLastPause = 0;
  for (const { group, current } of matched) {
    sinceLastPause += group.fields.members.length + 1;
    if (sinceLastPause >= STEP) {
      sinceLastPause = 0;
      yield;
    }
    const members = group.fields.members.map((value) => ({ value, candidates: candidates(value) }));
    let create: GroupCreate | null = null;
    if (!current) {
      if (group.fields.members.some(namesGroup)) create = 'bare';
      else if (resolveMembers(members, () => undefined).every((m) => connectorUsers.has(m))) create = 'batch';
      else create = 'alone';
    }
    groups.push({ group, current, create, members });
  }

  return {
    groups,
    deletes: users.removes ? stored.filter((g) => !seen.has(g.id)) : [],
    errors,
  };
}

/** Members as ids, given the ids the plan's groups have so far (by their index in the plan). */
export function resolveMembers(
  members: MemberRef[],
  groupId: (index: number) => string | undefined,
): string[] {
  return members.map(({ value, candidates }) => {
    for (const c of candidates) {
      const id = 'principal' in c ? c.principal : groupId(c.group);
      if (id !== undefined) return id;
    }
    return value;
  });
}
