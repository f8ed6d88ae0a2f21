import type { CONNECTOR_ATTRIBUTES, CONNECTOR_METADATA, MANAGER_KEY } from '../principals/model.js';
import { attribute, field, type Target } from '../principals/search/model.js';
import type { AttrPath } from './filter.js';
import { findNamed, memberOf, sameName } from './names.js';
import { isObject, text, type Json, type ScimObject } from './resource.js';
import {
  ENTERPRISE_SCHEMA,
  GROUP_SCHEMA,
  USER_SCHEMA,
  type AttributeDef,
  type ResourceSchema,
} from './schema.js';

/**
 * The SCIM attributes this service provider knows, and what each means for the principal a User
 * provisions: one row per attribute or sub-attribute, in the order `/Schemas` publishes them.
 *
 * A row holds
 * - its path within its schema (`userName`, `name.givenName`, `manager.value`; the schema is its
 *   section's URN: the core User, the enterprise extension, the core Group);
 * - what `/Schemas` publishes of it (RFC 7643 §7; absent characteristics are RFC 7643 §2.2's
 *   defaults: single-valued, optional, not case-exact, readWrite, returned by default, not unique),
 *   which is also how a client's resource is read (src/scim/resource.ts), patched (which
 *   attributes are multi-valued or read-only) and filtered on (which compare case-exactly);
 * - `read`: what the service shows there from the principal when it renders a User, instead of
 *   what the client sent (the id, the status, group memberships, the resolved manager);
 * - `write`: what the value the client sent becomes on the principal, on create, replace, patch
 *   and sync alike;
 * - `filter`: how a filter on it runs on the principal indexes (src/scim/query.ts), where it can.
 *
 * Everything else a client sends is kept and returned as sent. Rendering (src/scim/users.ts),
 * filters (src/scim/query.ts, the `caseExact` of src/scim/filter.ts), PATCH (src/scim/patch.ts),
 * projection (src/scim/projection.ts) and discovery (src/scim/discovery.ts) all read this table,
 * so that a new attribute is one row; docs/scim.md says how it maps for clients. Connector
 * profiles (src/scim/dialect.ts) do not differ in how attributes map, so there is one table.
 */

export type ResourceType = 'User' | 'Group';

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

type MappedAttribute = Exclude<(typeof CONNECTOR_ATTRIBUTES)[number], typeof MANAGER_KEY>;
type MappedMetadata = (typeof CONNECTOR_METADATA)[number];

/**
 * Where a User's value lands on the principal it provisions (docs/api.md §7): a field, an
 * attribute or metadata key that the connector owns (src/principals/model.ts lists them, since
 * `/v1` refuses to change them), or `manager`: the manager's SCIM id or externalId, which the
 * service resolves to the manager link and `attributes.manager_id`.
 */
export type PrincipalTarget =
  | 'user_name'
  | 'connector_id'
  | 'name'
  | 'email'
  | 'status'
  | 'manager'
  | `attributes.${MappedAttribute}`
  | `metadata.${MappedMetadata}`;

export interface Write {
  readonly to: PrincipalTarget;
  /** The text the attribute's value gives the target; by default the value, when it is non-blank text. */
  readonly from?: (value: Json | undefined) => string | undefined;
  /** Where several attributes give one target, the lowest rank that gives a value wins (default 1). */
  readonly rank?: number;
}

/**
 * How comparisons on an attribute run on the principal's `on`:
 * - `exact`: the target holds the value as sent, and the attribute is case-exact: every
 *   comparison runs exactly, but `co`, `sw` and `ew`, which ignore case in a search, only narrow
 *   the candidates that are then checked against the filter;
 * - `folded`: the target holds the value lower-cased and the attribute is not case-exact: every
 *   comparison runs exactly on the lower-cased value;
 * - `ignoring-case`: the target holds the value as sent and the attribute is not case-exact:
 *   `eq`, `co`, `sw` and `ew` run exactly; other comparisons are checked on the resource;
 * - `timestamp`: every comparison, with an instant (another value is 400 `invalidFilter`);
 * - `flag`: a boolean the target holds as `values` says; `eq` and `ne` alone can hold.
 *
 * `present` says how `pr` runs: `always` for what every user has, `exists` where the target is
 * set exactly when the attribute is. Without it, `pr` is checked on the resource.
 */
export type FilterRule =
  | {
      readonly on: Target;
      readonly compare: 'exact' | 'folded' | 'ignoring-case' | 'timestamp';
      readonly present?: 'always' | 'exists';
    }
  | {
      readonly on: Target;
      readonly compare: 'flag';
      readonly values: { readonly true: string; readonly false: string };
      readonly present?: 'always' | 'exists';
    };

export interface AttributeRow extends Omit<AttributeDef, 'name' | 'subAttributes'> {
  /** The attribute and, after a dot, its sub-attribute: `name.givenName`. */
  readonly path: string;
  /** Left out of `/Schemas`: the common attributes RFC 7643 §3.1 gives every resource (`id`, `meta`). */
  readonly unpublished?: true;
  /** The value the service shows; undefined leaves what the client sent. */
  readonly read?: (user: UserState, baseUrl: string) => Json | undefined;
  readonly write?: Write | readonly Write[];
  readonly filter?: FilterRule;
}

/** One schema's rows, with the name and description `/Schemas` gives it (RFC 7643 §8.7). */
export interface SchemaTable {
  readonly resource: ResourceType;
  readonly schema: string;
  readonly name: string;
  readonly description: string;
  readonly rows: readonly AttributeRow[];
}

export const etagOf = (version: number): string => `W/"${version}"`;

const str = (path: string, extra: Partial<AttributeRow> = {}): AttributeRow => ({
  path,
  type: 'string',
  ...extra,
});

/** A multi-valued attribute of RFC 7643 §2.4's `value`, `display`, `type` and `primary`. */
function typedValues(
  path: string,
  description: string,
  types: string[],
  value: Partial<AttributeRow> = {},
  extra: Partial<AttributeRow> = {},
): AttributeRow[] {
  return [
    { path, type: 'complex', multiValued: true, description, ...extra },
    str(`${path}.value`, value),
    str(`${path}.display`),
    str(`${path}.type`, { canonicalValues: types }),
    { path: `${path}.primary`, type: 'boolean' },
  ];
}

/** The common attributes of RFC 7643 §3.1 that lead each resource's rows. */
const commonRows = (): AttributeRow[] => [
  str('id', {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
    unpublished: true,
    read: (user) => user.id,
    filter: { on: field('id'), compare: 'exact', present: 'always' },
  }),
  str('externalId', {
    caseExact: true,
    description: 'Becomes connector_id',
    write: { to: 'connector_id' },
    filter: { on: field('connector_id'), compare: 'exact', present: 'exists' },
  }),
];

/** `meta`, which the service alone writes (RFC 7643 §3.1). */
const metaRows = (read?: AttributeRow['read']): AttributeRow[] => [
  { path: 'meta', type: 'complex', mutability: 'readOnly', unpublished: true, ...(read ? { read } : {}) },
  {
    path: 'meta.created',
    type: 'dateTime',
    mutability: 'readOnly',
    unpublished: true,
    filter: { on: field('created_at'), compare: 'timestamp', present: 'always' },
  },
  {
    path: 'meta.lastModified',
    type: 'dateTime',
    mutability: 'readOnly',
    unpublished: true,
    filter: { on: field('updated_at'), compare: 'timestamp', present: 'always' },
  },
];

/** The primary element's `value` (else the first element's). */
function primaryValue(elements: Json | undefined): string | undefined {
  if (!Array.isArray(elements)) return undefined;
  const all = elements.filter(isObject);
  const primary = all.find((e) => memberOf(e, 'primary') === true) ?? all[0];
  return text(memberOf(primary, 'value'));
}

/** Given and family name, joined by a space. */
function givenAndFamily(name: Json | undefined): string | undefined {
  if (!isObject(name)) return undefined;
  const parts = [text(memberOf(name, 'givenName')), text(memberOf(name, 'familyName'))];
  return parts.filter(Boolean).join(' ') || undefined;
}

const USER_ROWS: AttributeRow[] = [
  ...commonRows(),
  str('userName', {
    required: true,
    uniqueness: 'server',
    description: 'Unique within the connector, regardless of case',
    // Held lower-cased in user_name (the services fold it), so that uniqueness ignores case.
    write: [{ to: 'user_name' }, { to: 'name', rank: 4 }],
    filter: { on: field('user_name'), compare: 'folded', present: 'always' },
  }),
  {
    path: 'name',
    type: 'complex',
    description:
      "The components of the user's name; given and family name become the principal name when there is no displayName",
    write: { to: 'name', rank: 2, from: givenAndFamily },
  },
  str('name.formatted', { write: { to: 'name', rank: 3 } }),
  str('name.familyName'),
  str('name.givenName'),
  str('name.middleName'),
  str('name.honorificPrefix'),
  str('name.honorificSuffix'),
  str('displayName', {
    description: 'Becomes the principal name',
    write: { to: 'name', rank: 1 },
    filter: { on: field('name'), compare: 'ignoring-case' },
  }),
  str('nickName'),
  { path: 'profileUrl', type: 'reference', referenceTypes: ['external'] },
  str('title', {
    description: 'Becomes attributes.role',
    write: { to: 'attributes.role' },
    filter: { on: attribute('role'), compare: 'ignoring-case' },
  }),
  str('userType'),
  str('preferredLanguage'),
  str('locale'),
  str('timezone'),
  {
    path: 'active',
    type: 'boolean',
    description: 'false suspends the principal',
    read: (user) => user.active,
    write: { to: 'status', from: (value) => (value === false ? 'suspended' : 'active') },
    filter: {
      on: field('status'),
      compare: 'flag',
      values: { true: 'active', false: 'suspended' },
      present: 'always',
    },
  },
  str('password', { mutability: 'writeOnly', returned: 'never', description: 'Never stored' }),
  ...typedValues(
    'emails',
    'The primary (else the first) becomes the principal email',
    ['work', 'home', 'other'],
    {},
    { write: { to: 'email', from: primaryValue } },
  ),
  ...typedValues('phoneNumbers', 'Phone numbers', ['work', 'home', 'mobile', 'fax', 'pager', 'other']),
  ...typedValues('ims', 'Instant messaging addresses', [
    'aim',
    'gtalk',
    'icq',
    'xmpp',
    'msn',
    'skype',
    'qq',
    'yahoo',
  ]),
  ...typedValues('photos', 'Photos', ['photo', 'thumbnail'], {
    type: 'reference',
    referenceTypes: ['external'],
  }),
  { path: 'addresses', type: 'complex', multiValued: true, description: 'Physical mailing addresses' },
  ...['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country'].map((sub) =>
    str(`addresses.${sub}`),
  ),
  str('addresses.type', { canonicalValues: ['work', 'home', 'other'] }),
  { path: 'addresses.primary', type: 'boolean' },
  {
    path: 'groups',
    type: 'complex',
    multiValued: true,
    mutability: 'readOnly',
    description: 'The groups of this connector the user is in (read-only)',
    read: (user, baseUrl) =>
      user.groups.length === 0
        ? undefined
        : user.groups.map((g) => ({
            value: g.value,
            $ref: `${baseUrl}/Groups/${g.value}`,
            display: g.display,
            type: 'direct',
          })),
  },
  str('groups.value', { mutability: 'readOnly' }),
  { path: 'groups.$ref', type: 'reference', referenceTypes: ['User', 'Group'], mutability: 'readOnly' },
  str('groups.display', { mutability: 'readOnly' }),
  str('groups.type', { mutability: 'readOnly', canonicalValues: ['direct', 'indirect'] }),
  ...typedValues('entitlements', 'Entitlements', []),
  ...typedValues('roles', 'Roles', []),
  ...typedValues('x509Certificates', 'Certificates', [], { type: 'binary', caseExact: true }),
  ...metaRows((user, baseUrl) => ({
    resourceType: 'User',
    created: user.created,
    lastModified: user.lastModified,
    location: `${baseUrl}/Users/${user.id}`,
    version: etagOf(user.version),
  })),
];

const ENTERPRISE_ROWS: AttributeRow[] = [
  str('employeeNumber', {
    description: 'Becomes metadata.employee_number',
    write: { to: 'metadata.employee_number' },
  }),
  str('costCenter', { description: 'Becomes metadata.cost_center', write: { to: 'metadata.cost_center' } }),
  str('organization'),
  str('division'),
  str('department', {
    description: 'Becomes attributes.department',
    write: { to: 'attributes.department' },
    filter: { on: attribute('department'), compare: 'ignoring-case' },
  }),
  {
    path: 'manager',
    type: 'complex',
    description:
      "value: the manager's SCIM id, or the externalId of a user of the same connector; becomes attributes.manager_id (a manager that has not arrived yet is linked when it arrives)",
  },
  str('manager.value', { write: { to: 'manager' } }),
  {
    path: 'manager.$ref',
    type: 'reference',
    referenceTypes: ['User'],
    read: (user, baseUrl) => (user.managerId ? `${baseUrl}/Users/${user.managerId}` : undefined),
  },
  str('manager.displayName', { mutability: 'readOnly' }),
];

/**
 * A group is no principal: what its attributes become (the group's name, its MEMBER_OF edges)
 * is src/scim/groups.ts's. Its rows say what `/Schemas` publishes and how it is read and patched.
 */
const GROUP_ROWS: AttributeRow[] = [
  ...commonRows().map(({ read: _r, write: _w, filter: _f, ...row }) => row),
  str('displayName', { required: true, description: 'Becomes the group name' }),
  {
    path: 'members',
    type: 'complex',
    multiValued: true,
    description: 'Users and groups of the same connector',
  },
  str('members.value', { mutability: 'immutable', caseExact: true }),
  { path: 'members.$ref', type: 'reference', referenceTypes: ['User', 'Group'], mutability: 'immutable' },
  // The display a client sends with a member is kept with the membership and shown on reads.
  str('members.display'),
  str('members.type', { mutability: 'immutable', canonicalValues: ['User', 'Group'] }),
  ...metaRows(),
];

export const ATTRIBUTE_TABLE: readonly SchemaTable[] = [
  { resource: 'User', schema: USER_SCHEMA, name: 'User', description: 'User Account', rows: USER_ROWS },
  {
    resource: 'User',
    schema: ENTERPRISE_SCHEMA,
    name: 'EnterpriseUser',
    description: 'Enterprise User',
    rows: ENTERPRISE_ROWS,
  },
  { resource: 'Group', schema: GROUP_SCHEMA, name: 'Group', description: 'Group', rows: GROUP_ROWS },
];

/** A row's attribute and sub-attribute. */
export function splitPath(path: string): { attribute: string; sub: string | undefined } {
  const dot = path.indexOf('.');
  return dot < 0
    ? { attribute: path, sub: undefined }
    : { attribute: path.slice(0, dot), sub: path.slice(dot + 1) };
}

function definitionOf(row: AttributeRow): AttributeDef {
  const { path, unpublished: _u, read: _r, write: _w, filter: _f, ...characteristics } = row;
  return { name: splitPath(path).sub ?? path, ...characteristics };
}

/**
 * A schema's attribute definitions, sub-attributes within their attribute: those `/Schemas`
 * publishes, or all of them (reading a client's resource knows `id` and `meta` too).
 */
export function definitions(table: SchemaTable, which: 'published' | 'all'): AttributeDef[] {
  const out: AttributeDef[] = [];
  for (const row of table.rows) {
    if (which === 'published' && row.unpublished) continue;
    const { attribute, sub } = splitPath(row.path);
    if (sub === undefined) {
      out.push(definitionOf(row));
      continue;
    }
    const parent = findNamed(out, attribute, (d) => d.name);
    if (parent) parent.subAttributes = [...(parent.subAttributes ?? []), definitionOf(row)];
  }
  return out;
}

function resourceSchema(resource: ResourceType): ResourceSchema {
  const [core, ...extensions] = ATTRIBUTE_TABLE.filter((t) => t.resource === resource);
  return {
    core: core!.schema,
    attributes: definitions(core!, 'all'),
    extensions: Object.fromEntries(extensions.map((t) => [t.schema, definitions(t, 'all')])),
  };
}

/** How a User is read and patched: its core attributes and the enterprise extension. */
export const USER_RESOURCE: ResourceSchema = resourceSchema('User');
export const GROUP_RESOURCE: ResourceSchema = resourceSchema('Group');

/**
 * The row an attribute path names among a resource type's schemas. A path qualified with a schema
 * URN names an attribute of that schema; an unqualified one a core attribute, else an extension's,
 * as a filter reads the resource (src/scim/filter.ts).
 */
export function rowAt(resource: ResourceType, path: AttrPath): AttributeRow | undefined {
  const name = path.sub === undefined ? path.attribute : `${path.attribute}.${path.sub}`;
  const tables = ATTRIBUTE_TABLE.filter((t) => t.resource === resource);
  const named = path.uri === undefined ? tables : tables.filter((t) => sameName(t.schema, path.uri!));
  for (const table of named) {
    const row = findNamed(table.rows, name, (r) => r.path);
    if (row) return row;
  }
  return undefined;
}

/**
 * Whether comparisons on a path respect case, as its row says (`caseExact`): `id`, `externalId`,
 * a group's `members.value` do; most attributes do not. Remembered by path, since a filter checked
 * on candidates asks for every comparison of every candidate.
 */
export function caseExactOf(resource: ResourceType): (path: AttrPath) => boolean {
  const known = new Map<string, boolean>();
  return (path) => {
    const key = `${path.uri ?? ''}|${path.attribute}|${path.sub ?? ''}`.toLowerCase();
    let exact = known.get(key);
    if (exact === undefined) {
      exact = rowAt(resource, path)?.caseExact === true;
      if (known.size < 1_000) known.set(key, exact);
    }
    return exact;
  };
}

/** The rows of a resource type, each with its schema. */
export function rowsOf(resource: ResourceType): { schema: string; row: AttributeRow }[] {
  return ATTRIBUTE_TABLE.filter((t) => t.resource === resource).flatMap((t) =>
    t.rows.map((row) => ({ schema: t.schema, row })),
  );
}

/** The core schema of each resource type: the first of its sections. */
const CORE_SCHEMAS = new Set(
  (['User', 'Group'] as const).map((r) => ATTRIBUTE_TABLE.find((t) => t.resource === r)!.schema),
);

/** What the client sent at a row's path: a simple value stands for a complex attribute's `value`. */
export function valueAt(resource: ScimObject, schema: string, path: string): Json | undefined {
  const holder = CORE_SCHEMAS.has(schema) ? resource : memberOf(resource, schema);
  if (!isObject(holder)) return undefined;
  const { attribute: name, sub } = splitPath(path);
  const value = memberOf(holder, name);
  if (sub === undefined) return value;
  if (isObject(value)) return memberOf(value, sub);
  return sameName(sub, 'value') && value !== null && !Array.isArray(value) ? value : undefined;
}

/** A row's writes, none, one or several (`userName` gives `user_name`, and `name` last of all). */
export function writesOf(row: AttributeRow): readonly Write[] {
  const write: Write | readonly Write[] | undefined = row.write;
  if (write === undefined) return [];
  return isWriteList(write) ? write : [write];
}

const isWriteList = (write: Write | readonly Write[]): write is readonly Write[] => Array.isArray(write);
