import { Type, type Static } from '@sinclair/typebox';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';
import { DecisionRequestSchema } from './decisions.js';
import { FreeForm } from './free-form.js';
import { literals } from './principals.js';
import { SearchQuery } from './search.js';
import {
  ACTION_PATTERN,
  MAX_IDENTIFIER_LENGTH,
  RESOURCE_TYPE_PATTERN,
  MAX_CONDITIONS,
  POLICY_EFFECTS,
  POLICY_RECORD_STATUSES,
  POLICY_STATUSES,
} from '../vocabulary/policies.js';

export const MAX_SUBJECT_IDS = 1000;
export const MAX_ACTIONS = 100;
export const MAX_RESOURCES = 100;

/** Not blank, and no control characters. */
const TEXT_LINE = '^[^\\u0000-\\u001f]*\\S[^\\u0000-\\u001f]*$';

export const ResourceRefSchema = Type.Object(
  {
    type: Type.String({ pattern: RESOURCE_TYPE_PATTERN, description: `Matches ${RESOURCE_TYPE_PATTERN}` }),
    identifier: Type.String({
      minLength: 1,
      maxLength: MAX_IDENTIFIER_LENGTH,
      pattern: '^[^\\u0000-\\u001f]+$',
      description: `1-${MAX_IDENTIFIER_LENGTH} characters`,
    }),
  },
  { additionalProperties: false, title: 'ResourceRef' },
);
export type ResourceRef = Static<typeof ResourceRefSchema>;

export const ResourcePatternSchema = Type.Object(
  {
    type: ResourceRefSchema.properties.type,
    identifier: Type.String({
      minLength: 1,
      maxLength: MAX_IDENTIFIER_LENGTH,
      pattern: '^[^\\u0000-\\u001f]+$',
      description: 'An exact identifier, or a glob where `*` matches any run of characters',
    }),
  },
  { additionalProperties: false, title: 'PolicyResource' },
);

export const PolicySubjectsSchema = Type.Object(
  {
    principals: Type.Optional(
      Type.Array(Id('principal'), {
        maxItems: MAX_SUBJECT_IDS,
        uniqueItems: true,
        description: 'Principal ids',
      }),
    ),
    groups: Type.Optional(
      Type.Array(Id('group'), {
        maxItems: MAX_SUBJECT_IDS,
        uniqueItems: true,
        description: 'Group ids; membership counts through nested groups',
      }),
    ),
    match: Type.Optional(SearchQuery),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    title: 'PolicySubjects',
    description:
      'A principal is a subject if any of the three selects it. `match` is a query of the principal search language, evaluated against the stored principal.',
  },
);

export const PolicyBodySchema = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: TEXT_LINE,
      description: 'Unique among policies that are not deleted, regardless of case',
    }),
    description: Type.Optional(Type.String({ maxLength: 4096 })),
    effect: literals(POLICY_EFFECTS, { description: 'Deny overrides allow' }),
    subjects: PolicySubjectsSchema,
    actions: Type.Array(Type.String({ pattern: ACTION_PATTERN }), {
      minItems: 1,
      maxItems: MAX_ACTIONS,
      uniqueItems: true,
      description:
        'Action names (MCP method names such as `tools/call` included), `*` (any), or a prefix wildcard ending in `:*` or `/*` (`repo:*`, `tools/*`)',
    }),
    resources: Type.Array(ResourcePatternSchema, { minItems: 1, maxItems: MAX_RESOURCES }),
    conditions: Type.Optional(
      FreeForm(
        Type.Record(Type.String(), Type.Unknown(), {
          maxProperties: MAX_CONDITIONS,
          description:
            'Path → value (equality) or operator object; every entry must hold. Paths: `principal.<field>`, `principal.attributes.<key>`, `principal.metadata.<key>`, `resource.type`, `resource.identifier`, `resource.attributes.<key>`, `context.<key>`, and the claims a request carries: `action.name`, `action.properties.<key>`, `subject.properties.<key>` (never stored identity). `context`, `action.properties` and `subject.properties` keys may go deeper, a segment per level (`context.session.level`). Operators: those of principal search plus `$cidr`; an operand may be `{ "$ref": "<path>" }`. `$exists` tests presence; any other operator on a missing path is unknown: an allow does not apply, a deny does.',
        }),
        { paths: true },
      ),
    ),
    status: Type.Optional(literals(POLICY_STATUSES, { default: 'active', description: 'Default `active`' })),
    valid_from: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description:
          'RFC 3339: the policy applies from this instant on (inclusive); before it, decisions are made as if it were not there',
      }),
    ),
    valid_until: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 64,
        description:
          'RFC 3339: the policy applies until this instant (exclusive), then decisions are made as if it were not there and `policy.expired` is recorded. Must be in the future and after `valid_from`',
      }),
    ),
  },
  { additionalProperties: false, title: 'PolicyBody' },
);
export type PolicyBody = Static<typeof PolicyBodySchema>;

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const PolicySchema = Type.Object(
  {
    id: Id('policy'),
    name: Type.String(),
    description: NullableString,
    effect: literals(POLICY_EFFECTS),
    subjects: Type.Object(
      {
        principals: Type.Array(Type.String()),
        groups: Type.Array(Type.String()),
        match: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      },
      { additionalProperties: false },
    ),
    actions: Type.Array(Type.String()),
    resources: Type.Array(ResourceRefSchema),
    conditions: Type.Record(Type.String(), Type.Unknown()),
    status: literals(POLICY_RECORD_STATUSES),
    version: Type.Integer({ minimum: 1, description: 'Counts the changes; the ETag is `"<version>"`' }),
    activated_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When the policy last became active (null if it never was)',
    }),
    valid_from: Type.Union([Timestamp, Type.Null()], {
      description: 'When its window opens (null: no lower bound)',
    }),
    valid_until: Type.Union([Timestamp, Type.Null()], {
      description: 'When its window closes (null: it does not end)',
    }),
    created_at: Timestamp,
    created_by: Type.String(),
    updated_at: Timestamp,
    updated_by: Type.String(),
    deleted_at: Type.Optional(Timestamp),
    deleted_by: Type.Optional(Type.String()),
  },
  { additionalProperties: false, title: 'Policy' },
);
export type Policy = Static<typeof PolicySchema>;

export const PolicyList = Paginated(PolicySchema, 'PolicyList');

export const PolicyListQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(
    literals(POLICY_RECORD_STATUSES, { description: 'Default: every status but `deleted`' }),
  ),
  effect: Type.Optional(literals(POLICY_EFFECTS)),
});

export const PolicyIdParams = Type.Object({ id: Id('policy') });

export const DeletedPolicy = Type.Object(
  { id: Id('policy'), status: Type.Literal('deleted'), deleted_at: Timestamp, deleted_by: Type.String() },
  { additionalProperties: false, title: 'DeletedPolicy' },
);

export const PolicyVersionSchema = Type.Object(
  {
    policy_id: Id('policy'),
    version: Type.Integer({ minimum: 1 }),
    policy: Type.Record(Type.String(), Type.Unknown(), { description: 'The policy body as of this version' }),
    status: Type.String(),
    created_at: Timestamp,
    created_by: Type.String(),
  },
  { additionalProperties: false, title: 'PolicyVersion' },
);

export const PolicyVersionList = Paginated(PolicyVersionSchema, 'PolicyVersionList');

export const MAX_SIMULATED_REQUESTS = 1000;

export const SimulateBodySchema = Type.Object(
  {
    policy: Type.Optional(PolicyBodySchema),
    delete: Type.Optional(Type.Literal(true, { description: 'Simulate deleting the policy' })),
    requests: Type.Optional(
      Type.Array(DecisionRequestSchema, { minItems: 1, maxItems: MAX_SIMULATED_REQUESTS }),
    ),
  },
  {
    additionalProperties: false,
    title: 'Simulation',
    description:
      'Without `policy` or `delete`, the simulation is of the stored policy made active (nothing changes for a policy already active).',
  },
);
export type SimulateBody = Static<typeof SimulateBodySchema>;

export const SimulateNewBodySchema = Type.Object(
  {
    policy: PolicyBodySchema,
    requests: Type.Optional(
      Type.Array(DecisionRequestSchema, { minItems: 1, maxItems: MAX_SIMULATED_REQUESTS }),
    ),
  },
  {
    additionalProperties: false,
    title: 'NewPolicySimulation',
    description: 'A policy that does not exist yet, simulated as if it were created.',
  },
);
export type SimulateNewBody = Static<typeof SimulateNewBodySchema>;

const Verdict = literals(['ALLOW', 'DENY']);

const SimulatedResource = Type.Object(
  {
    type: Type.String(),
    identifier: Type.String(),
    pattern: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);

export const SimulationResultSchema = Type.Object(
  {
    policy_id: Type.Optional(Id('policy', 'The policy simulated; absent for a policy not created yet')),
    results: Type.Optional(
      Type.Array(
        Type.Object(
          {
            request: Type.Record(Type.String(), Type.Unknown()),
            current: Verdict,
            simulated: Verdict,
            changed: Type.Boolean(),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    access_changes: Type.Optional(
      Type.Array(
        Type.Object(
          {
            principal_id: Id('principal'),
            principal: Type.Object(
              { id: Type.String(), name: Type.String(), type: Type.String(), email: NullableString },
              { additionalProperties: false },
            ),
            resource: SimulatedResource,
            gained: Type.Array(Type.String()),
            lost: Type.Array(Type.String()),
          },
          { additionalProperties: false },
        ),
        { description: 'Ordered by principal name, then id, then resource' },
      ),
    ),
    truncated: Type.Optional(
      Type.Literal(true, { description: 'More changes than listed; the summary counts them all' }),
    ),
    summary: Type.Object(
      {
        evaluated: Type.Integer({ minimum: 0 }),
        changed: Type.Integer({ minimum: 0 }),
        newly_allowed: Type.Integer({ minimum: 0 }),
        newly_denied: Type.Integer({ minimum: 0 }),
        principals_affected: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'SimulationResult' },
);
