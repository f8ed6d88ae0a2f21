import { diffMaps, type Changes } from '../audit/audit.js';
import {
  CONNECTOR_ATTRIBUTES,
  CONNECTOR_METADATA,
  MANAGER_KEY,
  type Attributes,
  type Metadata,
  type Principal,
} from '../principals/model.js';
import { NAME_ATTRIBUTES } from './bounds.js';
import { invalidValue } from './errors.js';
import {
  isObject,
  member,
  readResource,
  text,
  withoutNeverReturned,
  type Json,
  type ScimObject,
} from './resource.js';
import {
  COMMON_ATTRIBUTES,
  ENTERPRISE_ATTRIBUTES,
  ENTERPRISE_SCHEMA,
  USER_ATTRIBUTES,
  USER_SCHEMA,
} from './schema.js';

/** Longest text kept in a mapped principal field (attribute values hold at most 1024 characters). */
const MAX_FIELD = 1024;

/** What a SCIM User says about the principal it provisions (docs/api.md §7). */
export interface UserFields {
  userName: string;
  externalId: string | null;
  name: string;
  email: string | null;
  active: boolean;
  /** attributes.role, attributes.department */
  role: string | null;
  department: string | null;
  /** metadata.employee_number, metadata.cost_center */
  employeeNumber: string | null;
  costCenter: string | null;
  /** The manager as the client names it: a SCIM id or an externalId of the same connector. */
  managerRef: string | null;
}

/** A User as a client sent it, read leniently (src/scim/resource.ts) and checked. */
export function readUser(body: unknown): ScimObject {
  const user = readResource(
    body,
    [...COMMON_ATTRIBUTES, ...USER_ATTRIBUTES],
    { [ENTERPRISE_SCHEMA]: ENTERPRISE_ATTRIBUTES },
    { schema: USER_SCHEMA, names: NAME_ATTRIBUTES },
  );
  if (text(user['userName']) === undefined)
    throw invalidValue('userName is required and must be a non-empty string');
  if (user['externalId'] !== undefined && typeof user['externalId'] !== 'string')
    throw invalidValue('externalId must be a string');
  return user;
}

function bounded(value: string | undefined, path: string): string | null {
  if (value === undefined) return null;
  if (value.length > MAX_FIELD) throw invalidValue(`${path} is longer than ${MAX_FIELD} characters`);
  return value;
}

function primaryEmail(emails: Json | undefined): string | undefined {
  if (!Array.isArray(emails)) return undefined;
  const all = emails.filter(isObject);
  const primary = all.find((e) => e['primary'] === true) ?? all[0];
  return text(primary?.['value']);
}

/** The manager a User names (enterprise `manager.value`, or a bare `manager` string). */
export function managerRefOf(user: ScimObject): string | undefined {
  const enterprise = user[ENTERPRISE_SCHEMA];
  const manager = isObject(enterprise) ? enterprise['manager'] : undefined;
  return isObject(manager) ? text(manager['value']) : text(manager);
}

export function userFields(user: ScimObject): UserFields {
  const enterprise = isObject(user[ENTERPRISE_SCHEMA]) ? user[ENTERPRISE_SCHEMA] : undefined;
  const name = isObject(user['name']) ? user['name'] : undefined;
  const given = text(name?.['givenName']);
  const family = text(name?.['familyName']);
  const userName = user['userName'] as string;
  const fullName = [given, family].filter(Boolean).join(' ');
  const managerRef = managerRefOf(user);
  return {
    userName,
    externalId: bounded(text(user['externalId']), 'externalId'),
    name: bounded(
      text(user['displayName']) ?? (fullName || undefined) ?? text(name?.['formatted']) ?? userName,
      'displayName',
    )!,
    email: bounded(primaryEmail(user['emails']), 'emails'),
    active: user['active'] !== false,
    role: bounded(text(user['title']), 'title'),
    department: bounded(text(member(enterprise, 'department')), 'department'),
    employeeNumber: bounded(text(member(enterprise, 'employeeNumber')), 'employeeNumber'),
    costCenter: bounded(text(member(enterprise, 'costCenter')), 'costCenter'),
    managerRef: managerRef ?? null,
  };
}

/** What the service owns in a User it returns. */
export interface UserState {
  id: string;
  active: boolean;
  created: string;
  lastModified: string;
  version: number;
  /** The manager the link resolved to, when it did. */
  managerId: string | null;
  /** The connector's groups the user is directly in. */
  groups: { value: string; display: string }[];
}

export const etagOf = (version: number): string => `W/"${version}"`;

/** The User a client reads: what it sent (kept whole), with what the service owns. */
export function userView(stored: ScimObject, state: UserState, baseUrl: string): ScimObject {
  const {
    schemas: _s,
    id: _i,
    meta: _m,
    ...rest
  } = withoutNeverReturned(stored, USER_ATTRIBUTES, USER_SCHEMA);
  const extension = isObject(rest[ENTERPRISE_SCHEMA]) ? { ...rest[ENTERPRISE_SCHEMA] } : undefined;
  if (extension && isObject(extension['manager']) && state.managerId) {
    extension['manager'] = {
      ...extension['manager'],
      $ref: `${baseUrl}/Users/${state.managerId}`,
    };
  }
  return {
    schemas: extension ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA],
    id: state.id,
    ...rest,
    ...(extension ? { [ENTERPRISE_SCHEMA]: extension } : {}),
    active: state.active,
    ...(state.groups.length > 0
      ? {
          groups: state.groups.map((g) => ({
            value: g.value,
            $ref: `${baseUrl}/Groups/${g.value}`,
            display: g.display,
            type: 'direct',
          })),
        }
      : {}),
    meta: {
      resourceType: 'User',
      created: state.created,
      lastModified: state.lastModified,
      location: `${baseUrl}/Users/${state.id}`,
      version: etagOf(state.version),
    },
  };
}

/** The principal attributes a User maps to (docs/api.md §7), with the manager it resolved to. */
export function mappedAttributes(fields: UserFields, managerId: string | null): Record<string, string> {
  return {
    ...(fields.role ? { role: fields.role } : {}),
    ...(fields.department ? { department: fields.department } : {}),
    ...(managerId ? { [MANAGER_KEY]: managerId } : {}),
  };
}

/** The principal metadata a User maps to. */
export function mappedMetadata(fields: UserFields): Record<string, string> {
  return {
    ...(fields.employeeNumber ? { employee_number: fields.employeeNumber } : {}),
    ...(fields.costCenter ? { cost_center: fields.costCenter } : {}),
  };
}

/** The merge patch taking `before` to `after`: changed keys, and `null` for removed ones. */
export function mergePatch<T>(before: Record<string, T>, after: Record<string, T>): Record<string, T | null> {
  const out: Record<string, T | null> = {};
  for (const key of Object.keys(before)) if (!(key in after)) out[key] = null;
  for (const [key, value] of Object.entries(after)) {
    if (JSON.stringify(before[key]) !== JSON.stringify(value)) out[key] = value;
  }
  return out;
}

/**
 * A principal's attributes and metadata once a User's mapped values replace what the connector
 * set before (others, set through `/v1`, stay). `managerId` undefined keeps the manager as it is.
 */
export function withMapped(
  current: { attributes: Attributes; metadata: Metadata },
  fields: UserFields,
  managerId: string | null | undefined,
): { attributes: Attributes; metadata: Metadata } {
  const attributes: Attributes = { ...current.attributes };
  const metadata: Metadata = { ...current.metadata };
  for (const key of CONNECTOR_ATTRIBUTES)
    if (key !== MANAGER_KEY || managerId !== undefined) delete attributes[key];
  for (const key of CONNECTOR_METADATA) delete metadata[key];
  Object.assign(attributes, mappedAttributes(fields, managerId ?? null));
  Object.assign(metadata, mappedMetadata(fields));
  return { attributes, metadata };
}

/** What `principal.created` says of a user a connector provisions. */
export function createdChanges(
  source: string,
  user: {
    name: string;
    status: string;
    email?: string | null | undefined;
    externalId?: string | null | undefined;
  },
  mapped: { attributes: Attributes; metadata: Metadata },
): Changes {
  return {
    type: { to: 'USER' },
    name: { to: user.name },
    status: { to: user.status },
    connector_source: { to: source },
    ...(user.email ? { email: { to: user.email } } : {}),
    ...(user.externalId ? { connector_id: { to: user.externalId } } : {}),
    ...diffMaps(null, mapped.attributes, 'attributes'),
    ...diffMaps(null, mapped.metadata, 'metadata'),
  };
}

/** What `principal.updated` says when a User replaces what a principal held (status aside). */
export function updatedChanges(
  before: { principal: Principal; scim: ScimObject },
  after: { fields: UserFields; scim: ScimObject; attributes: Attributes; metadata: Metadata },
): Changes {
  const p = before.principal;
  const f = after.fields;
  const field = (name: string, from: string | null, to: string | null): Changes =>
    from === to ? {} : { [name]: { from, to } };
  return {
    ...field('name', p.name, f.name),
    ...field('email', p.email, f.email),
    ...field('connector_id', p.connector_id, f.externalId),
    ...diffMaps(p.attributes, after.attributes, 'attributes'),
    ...diffMaps(p.metadata, after.metadata, 'metadata'),
    // What was stored before passwords were dropped however spelled is not written to the event.
    ...diffMaps(withoutNeverReturned(before.scim, USER_ATTRIBUTES, USER_SCHEMA), after.scim, 'scim'),
  };
}
