import { Type } from '@sinclair/typebox';
import { ID_PREFIXES, ULID_PATTERN } from '../ids.js';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';
import { PrincipalTypeSchema } from './principals.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** Not blank, and no control characters: names show up in lists, logs and audit trails. */
const Name = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^[^\\u0000-\\u001f]*\\S[^\\u0000-\\u001f]*$',
  description: '1-256 characters, not blank; unique among API groups regardless of case',
});
const Description = Type.String({ maxLength: 4096 });

export const GroupSchema = Type.Object(
  {
    id: Id('group'),
    name: Type.String(),
    description: NullableString,
    source: Type.Union([Type.Literal('api'), Type.Literal('connector')], {
      description: '`connector` groups come from an identity connector and are read-only here',
    }),
    connector_source: NullableString,
    connector_id: NullableString,
    member_count: Type.Integer({ minimum: 0, description: 'Direct members (principals and groups)' }),
    created_at: Timestamp,
    created_by: Type.String({ description: 'Client or connector that created the group' }),
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'Group' },
);

export const GroupList = Paginated(GroupSchema, 'GroupList');

export const GroupListQuery = Type.Object({
  ...PageQuery,
  connector_source: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});

export const CreateGroupBody = Type.Object(
  { name: Name, description: Type.Optional(Description) },
  { additionalProperties: false, title: 'CreateGroup' },
);

export const PatchGroupBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Type.Union([Description, Type.Null()], { description: '`null` clears it' })),
  },
  { additionalProperties: false, minProperties: 1, title: 'PatchGroup' },
);

export const DeletedGroup = Type.Object(
  { id: Id('group'), status: Type.Literal('deleted'), deleted_at: Timestamp, deleted_by: Type.String() },
  { additionalProperties: false, title: 'DeletedGroup' },
);

const PrincipalMember = Type.Object(
  {
    id: Id('principal'),
    name: Type.String(),
    type: PrincipalTypeSchema,
    email: Type.Union([Type.String(), Type.Null()], { description: 'null unless USER' }),
  },
  { additionalProperties: false, title: 'PrincipalMember' },
);

const NestedGroup = Type.Object(
  { id: Id('group'), name: Type.String(), type: Type.Literal('GROUP') },
  { additionalProperties: false, title: 'NestedGroup' },
);

export const GroupMember = Type.Union([PrincipalMember, NestedGroup], { title: 'GroupMember' });

export const GroupMemberList = Paginated(GroupMember, 'GroupMemberList');

export const GroupMembersQuery = Type.Object({
  ...PageQuery,
  transitive: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Every distinct principal and group reachable through nesting, not only direct members',
    }),
  ),
});

export const GroupMembership = Type.Object(
  { group_id: Id('group'), member: GroupMember, added_at: Timestamp },
  { additionalProperties: false, title: 'GroupMembership' },
);

export const RemovedGroupMember = Type.Object(
  {
    group_id: Id('group'),
    member_id: Type.String(),
    removed: Type.Boolean({ description: 'false when it was not a member' }),
  },
  { additionalProperties: false, title: 'RemovedGroupMember' },
);

export const GroupIdParams = Type.Object({ id: Id('group') });

/** A member is a principal or a group; any other id is simply not found. */
export const GroupMemberParams = Type.Object({
  id: Id('group'),
  member_id: Type.String({
    pattern: `^(?:${ID_PREFIXES.principal}|${ID_PREFIXES.group})_${ULID_PATTERN}$`,
    description: 'A principal (`prn_`) or group (`grp_`) id',
  }),
});
