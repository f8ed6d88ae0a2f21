import { MAX_MEMBERS, NAME_ATTRIBUTES } from './bounds.js';
import { invalidValue } from './errors.js';
import { etagOf, GROUP_RESOURCE } from './attributes.js';
import { keyOf, sameName } from './names.js';
import { isObject, readResource, text, type Json, type ScimObject } from './resource.js';
import { GROUP_SCHEMA } from './schema.js';

export interface GroupFields {
  displayName: string;
  externalId: string | null;
  /** Member ids as the client names them (principal and group ids), without repeats. */
  members: string[];
  /**
   * The display text sent with a member (`display`, or `displayName` as some clients spell it),
   * by member id: the last one sent when a member comes more than once. A member sent without
   * one is not here.
   */
  displays: Map<string, string>;
}

/** A Group as a client sent it, read leniently (src/scim/resource.ts) and checked. */
export function readGroup(body: unknown): ScimObject {
  const group = readResource(body, GROUP_RESOURCE.attributes, GROUP_RESOURCE.extensions, {
    schema: GROUP_SCHEMA,
    references: { name: 'members', max: MAX_MEMBERS },
    names: NAME_ATTRIBUTES,
  });
  const name = text(group['displayName']);
  if (name === undefined) throw invalidValue('displayName is required and must be a non-empty string');
  if (group['externalId'] !== undefined && typeof group['externalId'] !== 'string')
    throw invalidValue('externalId must be a string');
  const members = group['members'];
  if (members !== undefined) {
    if (!Array.isArray(members)) throw invalidValue('members must be an array');
    members.forEach((m, i) => {
      if (!isObject(m) || typeof m['value'] !== 'string' || m['value'] === '')
        throw invalidValue(`members[${i}].value must be a member id`);
    });
  }
  return group;
}

/** `members`, plain or qualified with the Group schema's URN. */
const isMembersPath = (path: string): boolean =>
  sameName(path, 'members') || sameName(path, `${GROUP_SCHEMA}:members`);

/** Members named by bare ids (`"id"`, `["id", …]`) as the `{ "value": id }` objects they mean. */
function memberObjects(value: Json): Json {
  if (typeof value === 'string') return [{ value }];
  if (Array.isArray(value)) return value.map((m) => (typeof m === 'string' ? { value: m } : m));
  return value;
}

/**
 * A group PATCH's operations with members sent as a bare id (`"value": "id"` where RFC 7644
 * wants `[{"value": "id"}]`, as Microsoft's reference tests send them) read as one member each:
 * in an `add` or `replace` whose path is `members`, or in the `members` of a path-less value.
 */
export function withMemberObjects(operations: unknown[]): unknown[] {
  return operations.map((operation) => {
    if (!isObject(operation)) return operation;
    const opKey = keyOf(operation, 'op');
    const op = opKey === undefined ? undefined : operation[opKey];
    const valueKey = keyOf(operation, 'value');
    if (typeof op !== 'string' || !/^(add|replace)$/i.test(op) || valueKey === undefined) return operation;
    const pathKey = keyOf(operation, 'path');
    const path = pathKey === undefined ? undefined : operation[pathKey];
    const value = operation[valueKey]!;
    // A path that is not a string is left for the patch to refuse.
    const target =
      typeof path === 'string' ? path.trim() : path === undefined || path === null ? '' : undefined;
    if (target === undefined) return operation;
    if (target !== '')
      return isMembersPath(target) ? { ...operation, [valueKey]: memberObjects(value) } : operation;
    const membersKey = isObject(value) ? keyOf(value, 'members') : undefined;
    if (!isObject(value) || membersKey === undefined) return operation;
    return { ...operation, [valueKey]: { ...value, [membersKey]: memberObjects(value[membersKey]!) } };
  });
}

/** The display text a member object carries: `display`, else `displayName`, in any case. */
function displayOf(member: ScimObject): string | undefined {
  for (const name of ['display', 'displayName']) {
    const key = keyOf(member, name);
    const value = key === undefined ? undefined : text(member[key]);
    if (value !== undefined) return value;
  }
  return undefined;
}

export function groupFields(group: ScimObject): GroupFields {
  const members = Array.isArray(group['members']) ? group['members'] : [];
  const ids = new Set<string>();
  const displays = new Map<string, string>();
  for (const m of members) {
    if (!isObject(m) || typeof m['value'] !== 'string') continue;
    ids.add(m['value']);
    const display = displayOf(m);
    if (display !== undefined) displays.set(m['value'], display);
  }
  return {
    displayName: (group['displayName'] as string).trim(),
    externalId: text(group['externalId']) ?? null,
    members: [...ids],
    displays,
  };
}

/** What a group keeps of its client's resource: everything but its members, which are edges. */
export function storedGroup(group: ScimObject): ScimObject {
  const { members: _members, ...rest } = group;
  return rest;
}

export interface GroupState {
  id: string;
  created: string;
  lastModified: string;
  version: string;
  members: { value: string; display: string; type: string }[] | undefined;
}

export function groupView(stored: ScimObject, state: GroupState, baseUrl: string): ScimObject {
  const { schemas: _s, id: _i, meta: _m, ...rest } = stored;
  return {
    schemas: [GROUP_SCHEMA],
    id: state.id,
    ...rest,
    ...(state.members
      ? {
          members: state.members.map((m) => ({
            value: m.value,
            $ref: `${baseUrl}/${m.type === 'Group' ? 'Groups' : 'Users'}/${m.value}`,
            display: m.display,
            type: m.type,
          })),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: state.created,
      lastModified: state.lastModified,
      location: `${baseUrl}/Groups/${state.id}`,
      version: state.version,
    },
  };
}

/** Groups have no version counter: their last change time stands in for it. */
export const groupEtag = (lastModified: string): string => etagOf(Date.parse(lastModified));
