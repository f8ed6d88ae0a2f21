import { invalidValue } from './errors.js';
import { isObject, readResource, text, type ScimObject } from './resource.js';
import { COMMON_ATTRIBUTES, GROUP_ATTRIBUTES, GROUP_SCHEMA } from './schema.js';
import { etagOf } from './users.js';

/** Longest group name kept. */
const MAX_NAME = 256;

export interface GroupFields {
  displayName: string;
  externalId: string | null;
  /** Member ids as the client names them (principal and group ids), without repeats. */
  members: string[];
}

/** A Group as a client sent it, read leniently (src/scim/resource.ts) and checked. */
export function readGroup(body: unknown): ScimObject {
  const group = readResource(body, [...COMMON_ATTRIBUTES, ...GROUP_ATTRIBUTES], {});
  const name = text(group['displayName']);
  if (name === undefined) throw invalidValue('displayName is required and must be a non-empty string');
  if (name.length > MAX_NAME) throw invalidValue(`displayName is longer than ${MAX_NAME} characters`);
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

export function groupFields(group: ScimObject): GroupFields {
  const members = Array.isArray(group['members']) ? group['members'] : [];
  return {
    displayName: (group['displayName'] as string).trim(),
    externalId: text(group['externalId']) ?? null,
    members: [
      ...new Set(members.flatMap((m) => (isObject(m) && typeof m['value'] === 'string' ? [m['value']] : []))),
    ],
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
