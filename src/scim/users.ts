import { diffMaps, type Changes } from '../audit/audit.js';
import {
  CONNECTOR_ATTRIBUTES,
  CONNECTOR_METADATA,
  MANAGER_KEY,
  type Attributes,
  type Metadata,
  type Principal,
} from '../principals/model.js';
import {
  rowsOf,
  splitPath,
  USER_RESOURCE,
  valueAt,
  writesOf,
  type PrincipalTarget,
  type UserState,
} from './attributes.js';
import { NAME_ATTRIBUTES } from './bounds.js';
import { invalidValue } from './errors.js';
import { keyOf } from './names.js';
import {
  isObject,
  readResource,
  text,
  withoutNeverReturned,
  type Json,
  type ScimObject,
} from './resource.js';
import { USER_SCHEMA } from './schema.js';

export { etagOf, type UserState } from './attributes.js';

/** Longest text kept in a mapped principal field (attribute values hold at most 1024 characters). */
const MAX_FIELD = 1024;

/**
 * What a SCIM User says about the principal it provisions, as the attribute table's `write`s
 * compute it (src/scim/attributes.ts).
 */
export interface UserFields {
  userName: string;
  externalId: string | null;
  name: string;
  email: string | null;
  active: boolean;
  /** The principal attributes it maps to (role, department; the manager aside), by key. */
  attributes: Record<string, string>;
  /** The principal metadata it maps to (employee_number, cost_center), by key. */
  metadata: Record<string, string>;
  /** The manager as the client names it: a SCIM id or an externalId of the same connector. */
  managerRef: string | null;
}

/** A User as a client sent it, read leniently (src/scim/resource.ts) and checked. */
export function readUser(body: unknown): ScimObject {
  const user = readResource(body, USER_RESOURCE.attributes, USER_RESOURCE.extensions, {
    schema: USER_SCHEMA,
    names: NAME_ATTRIBUTES,
  });
  if (text(user['userName']) === undefined)
    throw invalidValue('userName is required and must be a non-empty string');
  if (user['externalId'] !== undefined && typeof user['externalId'] !== 'string')
    throw invalidValue('externalId must be a string');
  return user;
}

/** Where each target's value comes from: the writes of the table's rows, best rank first. */
const WRITES = rowsOf('User')
  .flatMap(({ schema, row }) => writesOf(row).map((write) => ({ schema, path: row.path, write })))
  .sort((a, b) => (a.write.rank ?? 1) - (b.write.rank ?? 1));

/**
 * Targets held as text on the principal, bounded as attribute values are: a value beyond is
 * reported against the attribute that ranks first for its target. The userName is bounded as a
 * name already; the manager is resolved, not stored.
 */
const BOUNDED = new Map(
  WRITES.filter(({ write }) => !['user_name', 'status', 'manager'].includes(write.to))
    .reverse()
    .map(({ path, write }) => [write.to, splitPath(path).attribute]),
);

/**
 * What each target of a User's rows is given (only `only`, when said), by the best-ranked row
 * that gives one.
 */
function targets(user: ScimObject, only?: PrincipalTarget): Map<PrincipalTarget, string> {
  const given = new Map<PrincipalTarget, string>();
  for (const { schema, path, write } of WRITES) {
    if (given.has(write.to) || (only !== undefined && write.to !== only)) continue;
    const value = (write.from ?? text)(valueAt(user, schema, path));
    if (value !== undefined) given.set(write.to, value);
  }
  for (const [target, label] of BOUNDED) {
    const value = given.get(target);
    if (value !== undefined && value.length > MAX_FIELD)
      throw invalidValue(`${label} is longer than ${MAX_FIELD} characters`);
  }
  return given;
}

/** The manager a User names (enterprise `manager.value`, or a bare `manager` string). */
export function managerRefOf(user: ScimObject): string | undefined {
  return targets(user, 'manager').get('manager');
}

export function userFields(user: ScimObject): UserFields {
  const given = targets(user);
  const prefixed = (prefix: string): Record<string, string> =>
    Object.fromEntries(
      [...given]
        .filter(([target]) => target.startsWith(prefix))
        .map(([target, value]) => [target.slice(prefix.length), value]),
    );
  const userName = given.get('user_name')!;
  return {
    userName,
    externalId: given.get('connector_id') ?? null,
    name: given.get('name') ?? userName,
    email: given.get('email') ?? null,
    active: given.get('status') !== 'suspended',
    attributes: prefixed('attributes.'),
    metadata: prefixed('metadata.'),
    managerRef: given.get('manager') ?? null,
  };
}

/** Sets what the service shows at a row's path; a sub-attribute only in an object the User holds. */
function show(user: ScimObject, schema: string, path: string, value: Json): void {
  let holder: ScimObject = user;
  if (schema !== USER_SCHEMA) {
    const key = keyOf(user, schema);
    const extension = key === undefined ? undefined : user[key];
    if (key === undefined || !isObject(extension)) return;
    holder = user[key] = { ...extension };
  }
  const { attribute, sub } = splitPath(path);
  const key = keyOf(holder, attribute) ?? attribute;
  if (sub === undefined) {
    holder[key] = value;
    return;
  }
  const parent = holder[key];
  if (isObject(parent)) holder[key] = { ...parent, [keyOf(parent, sub) ?? sub]: value };
}

/**
 * The User a client reads: what it sent (kept whole), with what the service owns where the
 * attribute table reads it from the principal.
 */
export function userView(stored: ScimObject, state: UserState, baseUrl: string): ScimObject {
  const {
    schemas: _s,
    id: _i,
    meta: _m,
    ...rest
  } = withoutNeverReturned(stored, USER_RESOURCE.attributes, USER_SCHEMA);
  // The id leads, as in RFC 7643's examples; the table's `read` of it sets the same value.
  const user: ScimObject = { schemas: [USER_SCHEMA], id: state.id, ...rest };
  for (const { schema, row } of rowsOf('User')) {
    const value = row.read?.(state, baseUrl);
    if (value !== undefined) show(user, schema, row.path, value);
  }
  const extensions = Object.keys(USER_RESOURCE.extensions).filter((urn) => isObject(user[urn]));
  user['schemas'] = [USER_SCHEMA, ...extensions];
  return user;
}

/** The principal attributes a User maps to (docs/api.md §7), with the manager it resolved to. */
export function mappedAttributes(fields: UserFields, managerId: string | null): Record<string, string> {
  return { ...fields.attributes, ...(managerId ? { [MANAGER_KEY]: managerId } : {}) };
}

/** The principal metadata a User maps to. */
export function mappedMetadata(fields: UserFields): Record<string, string> {
  return { ...fields.metadata };
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
    ...diffMaps(withoutNeverReturned(before.scim, USER_RESOURCE.attributes, USER_SCHEMA), after.scim, 'scim'),
  };
}
