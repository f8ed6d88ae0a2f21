import { Type, type TLiteral, type TUnion } from '@sinclair/typebox';
import {
  KEY_PATTERN,
  MAX_KEYS,
  PRINCIPAL_STATUSES,
  PRINCIPAL_TYPES,
  type AttributeValue,
} from '../principals/model.js';
import { Id, KeyedMap, PageQuery, Paginated, Timestamp } from './common.js';

function literals<T extends string>(
  values: readonly T[],
  options: Record<string, unknown> = {},
): TUnion<TLiteral<T>[]> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
}

export const PrincipalTypeSchema = literals(PRINCIPAL_TYPES, { title: 'PrincipalType' });
export const PrincipalStatusSchema = literals(PRINCIPAL_STATUSES, { title: 'PrincipalStatus' });

const AttrString = Type.String({ maxLength: 1024 });
export const AttributeValueSchema = Type.Union([AttrString, Type.Array(AttrString, { maxItems: 100 })], {
  description: 'A string (at most 1024 characters) or an array of at most 100 such strings',
});

/** Attribute maps as stored and returned. */
export const AttributesSchema = KeyedMap(AttributeValueSchema, {
  keyPattern: KEY_PATTERN,
  maxProperties: MAX_KEYS,
  title: 'Attributes',
  description: `Keys match ${KEY_PATTERN}; at most ${MAX_KEYS} keys. \`manager_id\` names another principal.`,
});
export const MetadataSchema = KeyedMap(Type.String({ maxLength: 1024 }), {
  keyPattern: KEY_PATTERN,
  maxProperties: MAX_KEYS,
  title: 'Metadata',
});

/**
 * Attribute maps as clients send them: keys by the key rule, `manager_id` a principal id, and on
 * PATCH `null` to remove a key.
 */
function attributesInput<N extends boolean>(nullable: N) {
  const value = nullable ? Type.Union([AttributeValueSchema, Type.Null()]) : AttributeValueSchema;
  const manager = nullable ? Type.Union([Id('principal'), Type.Null()]) : Id('principal');
  const schema = Type.Object(
    { manager_id: Type.Optional(manager) },
    {
      additionalProperties: value,
      propertyNames: { pattern: KEY_PATTERN },
      maxProperties: MAX_KEYS,
      description: `Keys match ${KEY_PATTERN}; at most ${MAX_KEYS} keys${nullable ? '; `null` removes a key' : ''}.`,
    },
  );
  return Type.Unsafe<Record<string, AttributeValue | (N extends true ? null : never)>>(schema);
}

function metadataInput<N extends boolean>(nullable: N) {
  const value = nullable
    ? Type.Union([Type.String({ maxLength: 1024 }), Type.Null()])
    : Type.String({ maxLength: 1024 });
  const schema = KeyedMap(value, {
    keyPattern: KEY_PATTERN,
    maxProperties: MAX_KEYS,
    description: `String values; keys match ${KEY_PATTERN}${nullable ? '; `null` removes a key' : ''}.`,
  });
  return Type.Unsafe<Record<string, string | (N extends true ? null : never)>>(schema);
}

const Name = Type.String({ minLength: 1, maxLength: 256, pattern: '\\S' });
const Description = Type.String({ maxLength: 4096 });

export const CreatePrincipalBody = Type.Object(
  {
    type: PrincipalTypeSchema,
    name: Name,
    description: Type.Optional(Description),
    attributes: Type.Optional(attributesInput(false)),
    metadata: Type.Optional(metadataInput(false)),
  },
  { additionalProperties: false, title: 'CreatePrincipal' },
);

export const PatchPrincipalBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    status: Type.Optional(literals(['active', 'suspended'])),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
    attributes: Type.Optional(attributesInput(true)),
    metadata: Type.Optional(metadataInput(true)),
  },
  { additionalProperties: false, minProperties: 1, title: 'PatchPrincipal' },
);

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const RiskFactorSchema = Type.Object(
  { code: Type.String(), points: Type.Integer({ minimum: 0, maximum: 100 }) },
  { additionalProperties: false, title: 'RiskFactor' },
);

export const PrincipalSchema = Type.Object(
  {
    id: Id('principal'),
    type: PrincipalTypeSchema,
    email: Type.Optional(NullableString),
    name: Type.String(),
    description: NullableString,
    attributes: AttributesSchema,
    metadata: MetadataSchema,
    connector_source: NullableString,
    connector_id: NullableString,
    status: PrincipalStatusSchema,
    created_at: Timestamp,
    created_by: Type.String(),
    updated_at: Timestamp,
    last_login: NullableTimestamp,
    risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
    risk_factors: Type.Array(RiskFactorSchema),
    deleted_at: Type.Optional(Timestamp),
    deleted_by: Type.Optional(Type.String()),
  },
  { additionalProperties: false, title: 'Principal' },
);

export const PrincipalListItem = Type.Object(
  {
    id: Id('principal'),
    type: PrincipalTypeSchema,
    email: Type.Optional(NullableString),
    name: Type.String(),
    attributes: AttributesSchema,
    connector_source: NullableString,
    status: PrincipalStatusSchema,
    created_at: Timestamp,
    last_login: NullableTimestamp,
  },
  { additionalProperties: false, title: 'PrincipalListItem' },
);

export const PrincipalList = Paginated(PrincipalListItem, 'PrincipalList');

export const CreatedPrincipal = Type.Object(
  {
    id: Id('principal'),
    type: PrincipalTypeSchema,
    name: Type.String(),
    description: NullableString,
    attributes: AttributesSchema,
    metadata: MetadataSchema,
    status: PrincipalStatusSchema,
    created_at: Timestamp,
    created_by: Type.String(),
  },
  { additionalProperties: false, title: 'CreatedPrincipal' },
);

export const UpdatedPrincipal = Type.Object(
  {
    id: Id('principal'),
    type: PrincipalTypeSchema,
    email: Type.Optional(NullableString),
    name: Type.String(),
    attributes: AttributesSchema,
    metadata: MetadataSchema,
    status: PrincipalStatusSchema,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'UpdatedPrincipal' },
);

export const DeletedPrincipal = Type.Object(
  { id: Id('principal'), status: Type.Literal('deleted'), deleted_at: Timestamp, deleted_by: Type.String() },
  { additionalProperties: false, title: 'DeletedPrincipal' },
);

export const PrincipalListQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(PrincipalTypeSchema),
  connector_source: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  status: Type.Optional(PrincipalStatusSchema),
});

/**
 * A principal (with `email`, null unless USER) or a group (`type: "GROUP"`, no email) inside
 * relationship and membership listings.
 */
export const PrincipalSummary = Type.Object(
  { id: Type.String(), name: Type.String(), type: Type.String(), email: Type.Optional(NullableString) },
  { additionalProperties: false, title: 'PrincipalSummary' },
);

export const RelationshipsQuery = Type.Object({
  type: Type.Optional(
    literals(['manager', 'reports', 'group_member'], { description: 'Default: all three' }),
  ),
  depth: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 3, default: 1, description: 'Traversal depth, 1-3' }),
  ),
});

export const RelationshipEntrySchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('manager'),
        principal: PrincipalSummary,
        depth: Type.Integer({ minimum: 1, maximum: 3 }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: literals(['reports', 'group_member']),
        principals: Type.Array(PrincipalSummary, { maxItems: 1000 }),
        depth: Type.Integer({ minimum: 1, maximum: 3 }),
        count: Type.Integer({ minimum: 1 }),
        truncated: Type.Optional(Type.Literal(true)),
      },
      { additionalProperties: false },
    ),
  ],
  { title: 'RelationshipEntry' },
);

export const RelationshipRecord = Type.Object(
  { principal_id: Id('principal'), relationships: Type.Array(RelationshipEntrySchema) },
  { additionalProperties: false, title: 'RelationshipRecord' },
);
