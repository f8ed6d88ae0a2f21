/**
 * The SCIM schemas this service provider speaks (RFC 7643 §4 core User and Group, §4.3 the
 * enterprise extension): the attribute definitions that `/Schemas` publishes and that reading a
 * client's resource relies on (canonical attribute names, which are multi-valued, which compare
 * case-exactly).
 */
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

export interface AttributeDef {
  name: string;
  type: 'string' | 'boolean' | 'decimal' | 'integer' | 'dateTime' | 'reference' | 'binary' | 'complex';
  multiValued?: boolean;
  required?: boolean;
  caseExact?: boolean;
  mutability?: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned?: 'always' | 'never' | 'default' | 'request';
  uniqueness?: 'none' | 'server' | 'global';
  referenceTypes?: string[];
  canonicalValues?: string[];
  description?: string;
  subAttributes?: AttributeDef[];
}

const str = (name: string, extra: Partial<AttributeDef> = {}): AttributeDef => ({
  name,
  type: 'string',
  ...extra,
});
const TYPED_VALUE = (types: string[], value: Partial<AttributeDef> = {}): AttributeDef[] => [
  str('value', value),
  str('display'),
  str('type', { canonicalValues: types }),
  { name: 'primary', type: 'boolean' },
];
const multi = (name: string, subAttributes: AttributeDef[], description: string): AttributeDef => ({
  name,
  type: 'complex',
  multiValued: true,
  subAttributes,
  description,
});

export const USER_ATTRIBUTES: AttributeDef[] = [
  str('userName', {
    required: true,
    uniqueness: 'server',
    description: 'Unique within the connector, regardless of case',
  }),
  {
    name: 'name',
    type: 'complex',
    description:
      "The components of the user's name; given and family name become the principal name when there is no displayName",
    subAttributes: [
      'formatted',
      'familyName',
      'givenName',
      'middleName',
      'honorificPrefix',
      'honorificSuffix',
    ].map((n) => str(n)),
  },
  str('displayName', { description: 'Becomes the principal name' }),
  str('nickName'),
  { name: 'profileUrl', type: 'reference', referenceTypes: ['external'] },
  str('title', { description: 'Becomes attributes.role' }),
  str('userType'),
  str('preferredLanguage'),
  str('locale'),
  str('timezone'),
  { name: 'active', type: 'boolean', description: 'false suspends the principal' },
  str('password', { mutability: 'writeOnly', returned: 'never', description: 'Never stored' }),
  multi(
    'emails',
    TYPED_VALUE(['work', 'home', 'other']),
    'The primary (else the first) becomes the principal email',
  ),
  multi('phoneNumbers', TYPED_VALUE(['work', 'home', 'mobile', 'fax', 'pager', 'other']), 'Phone numbers'),
  multi(
    'ims',
    TYPED_VALUE(['aim', 'gtalk', 'icq', 'xmpp', 'msn', 'skype', 'qq', 'yahoo']),
    'Instant messaging addresses',
  ),
  multi(
    'photos',
    TYPED_VALUE(['photo', 'thumbnail'], { type: 'reference', referenceTypes: ['external'] }),
    'Photos',
  ),
  multi(
    'addresses',
    [
      ...['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country'].map((n) => str(n)),
      str('type', { canonicalValues: ['work', 'home', 'other'] }),
      { name: 'primary', type: 'boolean' },
    ],
    'Physical mailing addresses',
  ),
  {
    ...multi(
      'groups',
      [
        str('value', { mutability: 'readOnly' }),
        { name: '$ref', type: 'reference', referenceTypes: ['User', 'Group'], mutability: 'readOnly' },
        str('display', { mutability: 'readOnly' }),
        str('type', { mutability: 'readOnly', canonicalValues: ['direct', 'indirect'] }),
      ],
      'The groups of this connector the user is in (read-only)',
    ),
    mutability: 'readOnly',
  },
  multi('entitlements', TYPED_VALUE([]), 'Entitlements'),
  multi('roles', TYPED_VALUE([]), 'Roles'),
  multi('x509Certificates', TYPED_VALUE([], { type: 'binary', caseExact: true }), 'Certificates'),
];

export const ENTERPRISE_ATTRIBUTES: AttributeDef[] = [
  str('employeeNumber', { description: 'Becomes metadata.employee_number' }),
  str('costCenter', { description: 'Becomes metadata.cost_center' }),
  str('organization'),
  str('division'),
  str('department', { description: 'Becomes attributes.department' }),
  {
    name: 'manager',
    type: 'complex',
    description:
      "value: the manager's SCIM id, or the externalId of a user of the same connector; becomes attributes.manager_id (a manager that has not arrived yet is linked when it arrives)",
    subAttributes: [
      str('value'),
      { name: '$ref', type: 'reference', referenceTypes: ['User'] },
      str('displayName', { mutability: 'readOnly' }),
    ],
  },
];

export const GROUP_ATTRIBUTES: AttributeDef[] = [
  str('displayName', { required: true, description: 'Becomes the group name' }),
  {
    ...multi(
      'members',
      [
        str('value', { mutability: 'immutable', caseExact: true }),
        { name: '$ref', type: 'reference', referenceTypes: ['User', 'Group'], mutability: 'immutable' },
        str('display', { mutability: 'readOnly' }),
        str('type', { mutability: 'immutable', canonicalValues: ['User', 'Group'] }),
      ],
      'Users and groups of the same connector',
    ),
  },
];

/** Attributes every resource has (RFC 7643 §3.1). */
export const COMMON_ATTRIBUTES: AttributeDef[] = [
  str('id', { caseExact: true, mutability: 'readOnly', returned: 'always', uniqueness: 'server' }),
  str('externalId', { caseExact: true, description: 'Becomes connector_id' }),
];

/** Looks a definition up by name, regardless of case. */
export function findAttribute(defs: readonly AttributeDef[], name: string): AttributeDef | undefined {
  const key = name.toLowerCase();
  return defs.find((d) => d.name.toLowerCase() === key);
}

/**
 * Whether comparisons on an attribute path respect case, as the definitions say (`caseExact`):
 * `id`, `externalId`, a group's `members.value` do; most attributes do not.
 */
export function caseExactIn(
  core: readonly AttributeDef[],
  extensions: Record<string, readonly AttributeDef[]> = {},
): (path: { uri?: string; attribute: string; sub?: string }) => boolean {
  return (path) => {
    const uri = path.uri?.toLowerCase();
    const extension = Object.entries(extensions).find(([u]) => u.toLowerCase() === uri)?.[1];
    const def = findAttribute(extension ?? core, path.attribute);
    const target = def && path.sub !== undefined ? findAttribute(def.subAttributes ?? [], path.sub) : def;
    return target?.caseExact === true;
  };
}
