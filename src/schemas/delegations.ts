import { Type, type Static } from '@sinclair/typebox';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';
import { literals } from './principals.js';
import { MAX_ACTIONS, MAX_RESOURCES, ResourcePatternSchema } from './policies.js';
import { MAX_CHAIN } from '../vocabulary/delegations.js';
import { ACTION_PATTERN } from '../vocabulary/policies.js';

export const DELEGATION_STATUSES = ['active', 'revoked', 'expired'] as const;
export type DelegationStatus = (typeof DELEGATION_STATUSES)[number];

export { MAX_CHAIN };

const Actions = Type.Array(Type.String({ pattern: ACTION_PATTERN }), {
  minItems: 1,
  maxItems: MAX_ACTIONS,
  uniqueItems: true,
  description:
    'What the delegate may do for the delegator: action names, `*`, or prefix wildcards (`repo:*`, `tools/*`), as in a policy',
});

const Resources = Type.Array(ResourcePatternSchema, {
  minItems: 1,
  maxItems: MAX_RESOURCES,
  description: 'What it may do it on: exact identifiers or globs, as in a policy',
});

export const CreateDelegationBody = Type.Object(
  {
    delegator_id: Id('principal', 'Who delegates: any active principal'),
    delegate_id: Id('principal', 'Who acts for the delegator: an AI agent or a service account'),
    expires_at: Type.String({
      format: 'date-time',
      maxLength: 64,
      description: 'In the future, and at most `DELEGATION_MAX_DAYS` (90) days ahead',
    }),
    actions: Type.Optional(Actions),
    resources: Type.Optional(Resources),
    reason: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false, title: 'CreateDelegation' },
);
export type CreateDelegation = Static<typeof CreateDelegationBody>;

export const DelegationSchema = Type.Object(
  {
    id: Id('delegation'),
    delegator_id: Type.String(),
    delegate_id: Type.String(),
    actions: Type.Array(Type.String()),
    resources: Type.Union(
      [
        Type.Array(
          Type.Object({ type: Type.String(), identifier: Type.String() }, { additionalProperties: false }),
        ),
        Type.Null(),
      ],
      { description: '`null`: every resource (the delegator’s own access still bounds it)' },
    ),
    expires_at: Timestamp,
    reason: Type.Union([Type.String(), Type.Null()]),
    status: literals(DELEGATION_STATUSES, {
      description:
        '`active` until revoked or expired; an active delegation applies only while both principals are active',
    }),
    applies: Type.Boolean({
      description: 'Whether it takes effect now: active, not past `expires_at`, and both principals active',
    }),
    delegator_status: Type.String({ description: 'The status of the delegator now' }),
    delegate_status: Type.String({ description: 'The status of the delegate now' }),
    created_at: Timestamp,
    created_by: Type.String(),
    revoked_at: Type.Optional(Timestamp),
    revoked_by: Type.Optional(Type.String()),
    expired_at: Type.Optional(Timestamp),
    chain: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'For an active delegation in a principal’s view: the principal ids from the outermost delegator to this delegate',
      }),
    ),
  },
  { additionalProperties: false, title: 'Delegation' },
);
export type Delegation = Static<typeof DelegationSchema>;

export const DelegationList = Paginated(DelegationSchema, 'DelegationList');

export const DelegationListQuery = Type.Object({
  ...PageQuery,
  delegator_id: Type.Optional(Id('principal')),
  delegate_id: Type.Optional(Id('principal')),
  status: Type.Optional(literals(DELEGATION_STATUSES)),
});

export const DelegationParams = Type.Object({ id: Id('delegation') });

export const DelegatingPrincipalParams = Type.Object({ id: Id('principal') });

export const PrincipalDelegationsSchema = Type.Object(
  {
    principal_id: Type.String(),
    given: Type.Array(DelegationSchema, {
      description: 'Its own delegations, then the active ones further down the chains that start at it',
    }),
    received: Type.Array(DelegationSchema),
  },
  { additionalProperties: false, title: 'PrincipalDelegations' },
);
export type PrincipalDelegations = Static<typeof PrincipalDelegationsSchema>;
