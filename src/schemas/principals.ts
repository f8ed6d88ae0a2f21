import { Type, type Static, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { Id, KeyedMap, PageQuery, Paginated, Timestamp } from './common.js';
import { FreeForm } from './free-form.js';
import { KEY_PATTERN, MAX_KEYS, PRINCIPAL_STATUSES, PRINCIPAL_TYPES } from '../vocabulary/principals.js';

export function literals<T extends string>(
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
export type AttributeValue = Static<typeof AttributeValueSchema>;
export type Attributes = Record<string, AttributeValue>;
export type Metadata = Record<string, string>;

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

/** Attribute maps as clients send them whole (a registered resource's). */
export const AttributesInputSchema = FreeForm(
  KeyedMap(AttributeValueSchema, {
    keyPattern: KEY_PATTERN,
    maxProperties: MAX_KEYS,
    description: `Keys match ${KEY_PATTERN}; at most ${MAX_KEYS} keys.`,
  }),
);

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
  return Type.Unsafe<Record<string, AttributeValue | (N extends true ? null : never)>>(FreeForm(schema));
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
  return Type.Unsafe<Record<string, string | (N extends true ? null : never)>>(FreeForm(schema));
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
export type RiskFactor = Static<typeof RiskFactorSchema>;

const principalFields = {
  id: Id('principal'),
  type: PrincipalTypeSchema,
  email: NullableString,
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
  deleted_at: NullableTimestamp,
  deleted_by: NullableString,
  risk_score: Type.Integer({ minimum: 0, maximum: 100 }),
  risk_factors: Type.Array(RiskFactorSchema),
};

/** A principal as the service holds it; `version` counts its changes and makes its ETag. */
export const PrincipalRecord = Type.Object(
  {
    ...principalFields,
    version: Type.Integer({ minimum: 1 }),
    /** The risk factors that come from what it can access, kept current by the decision engine. */
    privilege_factors: Type.Array(RiskFactorSchema),
    /**
     * Where the owner of a non-USER principal stands when it does not live: it names no
     * principal, or it is deprovisioned or deleted (src/risk/ownership.ts).
     */
    owner_state: Type.Union([
      Type.Literal('missing'),
      Type.Literal('deprovisioned'),
      Type.Literal('deleted'),
      Type.Null(),
    ]),
    /**
     * Where the delegations an AI agent holds stand: `acting` while it holds active ones, all from
     * active delegators; `orphaned` when one comes from a delegator who is no longer active; null
     * when it holds none (src/risk/delegations.ts).
     */
    delegation_state: Type.Union([Type.Literal('acting'), Type.Literal('orphaned'), Type.Null()]),
  },
  { additionalProperties: false },
);
export type Principal = Static<typeof PrincipalRecord>;

type PrincipalField = keyof typeof principalFields;

/**
 * Fields a response shows only where they apply: `email` on USER principals, `deleted_at` and
 * `deleted_by` once deleted (and then never null).
 */
const CONDITIONAL: Partial<Record<PrincipalField, TSchema>> = {
  email: NullableString,
  deleted_at: Timestamp,
  deleted_by: Type.String(),
};

/**
 * A response shape: the record's fields named here, in this order. Responses are projected
 * through the same schema (src/http/views.ts), so the fields a response carries and the fields
 * its schema documents cannot differ.
 */
function principalView(title: string, fields: readonly PrincipalField[]) {
  const properties: Record<string, TSchema> = {};
  for (const field of fields) {
    const conditional = CONDITIONAL[field];
    properties[field] = conditional ? Type.Optional(conditional) : principalFields[field];
  }
  return Type.Object(properties, { additionalProperties: false, title });
}

/** The full record of GET /principals/{id}. */
export const PrincipalSchema = principalView('Principal', [
  'id',
  'type',
  'email',
  'name',
  'description',
  'attributes',
  'metadata',
  'connector_source',
  'connector_id',
  'status',
  'created_at',
  'created_by',
  'updated_at',
  'last_login',
  'risk_score',
  'risk_factors',
  'deleted_at',
  'deleted_by',
]);

/**
 * List and search items: the fields the contract gives them, and the risk score, which searches
 * filter and sort by (a list sorted by risk should show it).
 */
export const PrincipalListItem = principalView('PrincipalListItem', [
  'id',
  'type',
  'email',
  'name',
  'attributes',
  'connector_source',
  'status',
  'created_at',
  'last_login',
  'risk_score',
]);

export const PrincipalList = Paginated(PrincipalListItem, 'PrincipalList');

/** The response of POST /principals: the seed's fields. */
export const CreatedPrincipal = principalView('CreatedPrincipal', [
  'id',
  'type',
  'name',
  'description',
  'attributes',
  'metadata',
  'status',
  'created_at',
  'created_by',
]);

/** The response of PATCH /principals/{id}. */
export const UpdatedPrincipal = principalView('UpdatedPrincipal', [
  'id',
  'type',
  'email',
  'name',
  'attributes',
  'metadata',
  'status',
  'updated_at',
]);

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

/** A report, with the edge a client needs to draw the chart: who it reports to. */
export const ReportSummary = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: Type.String(),
    email: NullableString,
    manager_id: Type.String({
      description: 'Its direct manager: the next step towards the subject (the subject itself at depth 1)',
    }),
  },
  { additionalProperties: false, title: 'ReportSummary' },
);

/** A group the subject is in, with the edges a client needs to draw the nesting. */
export const ReachedGroup = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: Type.Literal('GROUP'),
    via: Type.Array(Type.String(), {
      minItems: 1,
      description:
        'Sorted ids of the members through which the group is reached at its depth: the subject at depth 1, else the groups one step nearer (at depth - 1) that are direct members of it',
    }),
  },
  { additionalProperties: false, title: 'ReachedGroup' },
);

const level = {
  depth: Type.Integer({ minimum: 1, maximum: 3 }),
  count: Type.Integer({ minimum: 1 }),
  truncated: Type.Optional(Type.Literal(true)),
};

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
        type: Type.Literal('reports'),
        principals: Type.Array(ReportSummary, { maxItems: 1000 }),
        ...level,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('group_member'),
        principals: Type.Array(ReachedGroup, { maxItems: 1000 }),
        ...level,
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
