import { Type, type Static, type TProperties, type TSchema } from '@sinclair/typebox';
import { Id, KeyedMap, PageQuery, Pagination, Timestamp } from './common.js';
import { FreeForm } from './free-form.js';
import { literals } from './principals.js';
import { ACTION_NAME_PATTERN, MAX_IDENTIFIER_LENGTH, RESOURCE_TYPE_PATTERN } from '../vocabulary/policies.js';
import { idPattern } from '../ids.js';
import { MAX_CHAIN } from '../vocabulary/delegations.js';
import { KEY_PATTERN, MAX_KEYS } from '../vocabulary/principals.js';

export const MAX_BATCH = 1000;

const Scalar = Type.Union([Type.String({ maxLength: 1024 }), Type.Number(), Type.Boolean()]);

/** Attributes a request may give for its resource: they win over the registered ones. */
export const RequestAttributesSchema = FreeForm(
  KeyedMap(Type.Union([Scalar, Type.Array(Scalar, { maxItems: 100 })]), {
    keyPattern: KEY_PATTERN,
    maxProperties: MAX_KEYS,
    description: 'Win over the attributes of the registered resource',
  }),
);

const ActionName = Type.String({
  pattern: ACTION_NAME_PATTERN,
  description: `Matches ${ACTION_NAME_PATTERN} (MCP method names such as \`tools/call\` included)`,
});

/** Claims an enforcement point sends with a request: bounded like the context. */
const Claims = (description: string) =>
  FreeForm(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 64, description }));

export const DecisionRequestSchema = Type.Object(
  {
    principal_id: Id('principal'),
    action: Type.Union(
      [
        ActionName,
        Type.Object(
          {
            name: ActionName,
            properties: Type.Optional(
              Claims('What the caller claims about the action, read by `action.properties.<key>` conditions'),
            ),
          },
          { additionalProperties: false, title: 'DecisionAction' },
        ),
      ],
      { description: 'The action: its name, or `{ name, properties }`' },
    ),
    resource: Type.Object(
      {
        type: Type.String({ pattern: RESOURCE_TYPE_PATTERN }),
        identifier: Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH }),
        attributes: Type.Optional(RequestAttributesSchema),
      },
      { additionalProperties: false },
    ),
    context: Type.Optional(
      FreeForm(
        Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), {
          maxProperties: 64,
          description: 'Facts about the request (`ip`, `time`, ...), read by `context.<key>` conditions',
        }),
      ),
    ),
    subject_properties: Type.Optional(
      Claims(
        'What the caller claims about the principal, read by `subject.properties.<key>` conditions (never the stored principal, which `principal.*` reads)',
      ),
    ),
    on_behalf_of: Type.Optional(
      Type.Union([Id('principal'), Type.Array(Id('principal'), { minItems: 1, maxItems: MAX_CHAIN })], {
        description:
          'Whom the caller acts for: a principal id, or the delegation chain outermost delegator first (at most 4). ALLOW only if every link is an active delegation covering the request and every principal of the chain, and the caller, is allowed',
      }),
    ),
    explain: Type.Optional(Type.Boolean({ description: 'Add a `trace` of every candidate policy' })),
  },
  { additionalProperties: false, title: 'DecisionRequest' },
);

const AsOf = (what: string) =>
  Type.String({
    format: 'date-time',
    maxLength: 64,
    description: `${what} as it held at this instant (RFC 3339), within the access history (docs/access-history.md); before its horizon: 400`,
  });

/** `POST /v1/decisions/evaluate` takes a decision request, and `as_of`. */
export const EvaluateRequestSchema = Type.Object(
  {
    ...DecisionRequestSchema.properties,
    as_of: Type.Optional(
      AsOf(
        'The decision as the principal’s access then allowed it (not recorded; without `on_behalf_of` or `explain`; conditions are not evaluated). The answer',
      ),
    ),
  },
  { additionalProperties: false, title: 'EvaluateRequest' },
);
export type DecisionRequest = Static<typeof DecisionRequestSchema>;

export const REASON_CODES = [
  'POLICY_ALLOW',
  'POLICY_DENY',
  'NO_MATCHING_POLICY',
  'PRINCIPAL_NOT_FOUND',
  'PRINCIPAL_INACTIVE',
  'TOOL_NOT_ALLOWED',
  'DELEGATOR_DENIED',
  'NO_DELEGATION',
  'AMBIGUOUS_SUBJECT',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export const ReasonSchema = Type.Object(
  {
    code: literals(REASON_CODES),
    policy_id: Type.Optional(Id('policy')),
    policy_version: Type.Optional(Type.Integer({ minimum: 1 })),
    principal_id: Type.Optional(
      Type.String({
        description:
          'Whom the reason is about, when it is not the requesting principal (for `NO_DELEGATION`, the delegator of the link)',
      }),
    ),
    delegate_id: Type.Optional(Type.String({ description: 'For `NO_DELEGATION`: the delegate of the link' })),
    message: Type.Optional(Type.String()),
  },
  { additionalProperties: false, title: 'Reason' },
);
export type Reason = Static<typeof ReasonSchema>;

export const TraceStep = Type.Object(
  { id: Type.String(), name: Type.String(), type: Type.String() },
  { additionalProperties: false },
);

const ConditionOutcomeSchema = Type.Object(
  {
    path: Type.String(),
    result: literals(['true', 'false', 'unknown']),
    missing: Type.Optional(Type.Array(Type.String(), { description: 'Paths that were missing' })),
  },
  { additionalProperties: false },
);

export const TraceCandidateSchema = Type.Object(
  {
    policy_id: Id('policy'),
    policy_version: Type.Integer({ minimum: 1 }),
    name: Type.String(),
    effect: literals(['allow', 'deny']),
    principal_id: Type.String({ description: 'The principal this candidate was evaluated for' }),
    subject: Type.Object(
      {
        matched: Type.Boolean(),
        via: Type.Optional(literals(['principal', 'group', 'match'])),
        path: Type.Optional(
          Type.Array(TraceStep, { description: 'For group grants: principal → group → … → group' }),
        ),
      },
      { additionalProperties: false },
    ),
    conditions: Type.Array(ConditionOutcomeSchema),
    applied: Type.Boolean(),
    why: Type.String(),
  },
  { additionalProperties: false, title: 'TraceCandidate' },
);
export type TraceCandidate = Static<typeof TraceCandidateSchema>;

/** A principal a decision looked at: the subject, and whoever it acts for. */
const TracePrincipalSchema = Type.Object(
  {
    id: Type.String(),
    found: Type.Boolean(),
    type: Type.Optional(Type.String()),
    status: Type.Optional(Type.String()),
    groups: Type.Optional(Type.Array(Type.String(), { description: 'Every group, through nesting' })),
  },
  { additionalProperties: false },
);
export type TracePrincipal = Static<typeof TracePrincipalSchema>;

/** A link of a delegation chain: whether a delegation covers the request. */
const TraceLinkSchema = Type.Object(
  {
    delegator_id: Type.String(),
    delegate_id: Type.String(),
    delegation_id: Type.Optional(Type.String({ description: 'The delegation that covers it' })),
    expires_at: Type.Optional(Timestamp),
    covered: Type.Boolean(),
    why: Type.String(),
  },
  { additionalProperties: false, title: 'TraceLink' },
);
export type TraceLink = Static<typeof TraceLinkSchema>;

/** One principal's own decision in a chain. */
const TraceVerdictSchema = Type.Object(
  {
    principal_id: Type.String(),
    allowed: Type.Boolean(),
    reasons: Type.Array(ReasonSchema),
  },
  { additionalProperties: false, title: 'TraceVerdict' },
);
export type TraceVerdict = Static<typeof TraceVerdictSchema>;

export const TraceSchema = Type.Object(
  {
    index_version: Type.Integer({ minimum: 0, description: 'Version of the policy index that answered' }),
    principals: Type.Array(TracePrincipalSchema),
    candidates: Type.Array(TraceCandidateSchema, {
      description: 'Every active policy naming the resource and the action, and why it did or did not apply',
    }),
    links: Type.Optional(
      Type.Array(TraceLinkSchema, {
        description:
          'With `on_behalf_of`: each link of the chain, outermost first, and the delegation covering it',
      }),
    ),
    verdicts: Type.Optional(
      Type.Array(TraceVerdictSchema, {
        description: 'With `on_behalf_of`: each principal’s own decision, the caller first',
      }),
    ),
  },
  { additionalProperties: false, title: 'Trace' },
);

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Message = Type.String({ description: 'The same, as a sentence' });
const PolicyRef = Type.Object(
  { policy_id: Id('policy'), policy_name: Type.String() },
  { additionalProperties: false },
);

/** What stopped a near-miss policy first, each kind with the facts a reader needs to act on it. */
export const NearMissFailureSchema = Type.Union(
  [
    Type.Object(
      {
        kind: Type.Literal('window'),
        detail: Type.Object(
          {
            message: Message,
            state: literals(['closed', 'not_yet_open']),
            at: Type.String({
              format: 'date-time',
              description: 'When the window closed, or when it will open',
            }),
            valid_from: Nullable(Type.String({ format: 'date-time' })),
            valid_until: Nullable(Type.String({ format: 'date-time' })),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false, title: 'NearMissWindow' },
    ),
    Type.Object(
      {
        kind: Type.Literal('not_subject'),
        detail: Type.Object(
          {
            message: Message,
            groups: Type.Array(
              Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false }),
              { description: 'The policy’s groups, none of which the principal is in (through nesting)' },
            ),
            named: Type.Boolean({
              description: 'The policy names principals by id, and not this one',
            }),
            match: Type.Optional(
              Type.Object(
                {
                  target: Type.String({
                    description: 'The field, or `attributes.<key>`, of the first test of `match` that fails',
                  }),
                  op: Type.String(),
                  operand: Type.Unknown(),
                  value: Type.Unknown({ description: 'The principal’s value; null when it has none' }),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false, title: 'NearMissNotSubject' },
    ),
    Type.Object(
      {
        kind: Type.Literal('condition'),
        detail: Type.Object(
          {
            message: Message,
            path: Type.String(),
            op: Type.String({ description: 'The operator that does not hold (`$eq` for a plain value)' }),
            operand: Type.Unknown({ description: 'As the policy writes it (`{ $ref }` included)' }),
            result: literals(['false', 'unknown']),
            value: Type.Unknown({ description: 'The value at the path; null when it is missing' }),
            missing: Type.Optional(Type.Array(Type.String(), { description: 'Paths that were missing' })),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false, title: 'NearMissCondition' },
    ),
    Type.Object(
      {
        kind: Type.Literal('denied_by'),
        detail: Type.Object(
          {
            message: Message,
            denies: Type.Array(PolicyRef, {
              minItems: 1,
              description: 'The deny policies that applied, by id',
            }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false, title: 'NearMissDeniedBy' },
    ),
    Type.Object(
      {
        kind: Type.Literal('delegation'),
        detail: Type.Object(
          {
            message: Message,
            delegator_id: Type.String(),
            delegate_id: Type.String(),
            expired: Type.Boolean({
              description: 'A delegation between them existed and has expired; false when there is none',
            }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false, title: 'NearMissDelegation' },
    ),
  ],
  { description: 'What stopped the policy first' },
);

export const NearMissSchema = Type.Object(
  {
    policy_id: Id('policy'),
    policy_name: Type.String(),
    principal_id: Type.String({
      description: 'Whom the policy was decided for: the principal, or a delegator of `on_behalf_of`',
    }),
    failed: NearMissFailureSchema,
  },
  { additionalProperties: false, title: 'NearMiss' },
);
export type NearMiss = Static<typeof NearMissSchema>;

const BlastRadius = Type.Object(
  {
    principals: Type.Integer({
      minimum: 0,
      description: 'Principals other than the one let through that would gain access to something',
    }),
    resources: Type.Integer({
      minimum: 0,
      description:
        'Resources other than the requested one that anyone would gain access to (a policy glob counts once, besides the registered resources it matches)',
    }),
  },
  { additionalProperties: false, title: 'BlastRadius' },
);

const PolicyTarget = Type.Object(
  {
    type: Type.Literal('policy'),
    id: Id('policy'),
    name: Type.String(),
    version: Type.Integer({ minimum: 1, description: 'The version the change applies to (`If-Match`)' }),
  },
  { additionalProperties: false },
);
/** A proposed change of one kind: its target and its change (each remedy, and each step of one). */
const remedyShape = <K extends string, T extends TSchema, C extends TSchema>(
  kind: K,
  target: T,
  change: C,
) => ({
  kind: Type.Literal(kind),
  target,
  change,
  principal_id: Type.String({ description: 'Whom the change lets through' }),
  message: Message,
});

const ADD_TO_GROUP = remedyShape(
  'add_to_group',
  Type.Object(
    { type: Type.Literal('group'), id: Type.String(), name: Type.String() },
    { additionalProperties: false },
  ),
  Type.Object(
    { member_id: Type.String({ description: '`PUT /v1/groups/{target.id}/members/{member_id}`' }) },
    { additionalProperties: false },
  ),
);
const ADD_TO_POLICY = remedyShape(
  'add_to_policy',
  PolicyTarget,
  Type.Object(
    {
      subjects: Type.Object(
        {
          principals: Type.Array(Type.String()),
          groups: Type.Array(Type.String()),
          match: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        },
        { additionalProperties: false },
      ),
    },
    {
      additionalProperties: false,
      description: 'A JSON merge patch (RFC 7396) of the policy body at `target.version`',
    },
  ),
);
const EXTEND_WINDOW = remedyShape(
  'extend_window',
  PolicyTarget,
  Type.Object(
    {
      valid_from: Nullable(Type.String({ format: 'date-time' })),
      valid_until: Nullable(Type.String({ format: 'date-time' })),
    },
    {
      additionalProperties: false,
      description: 'A JSON merge patch (RFC 7396) of the policy body at `target.version`: its new window',
    },
  ),
);
const DELEGATE = remedyShape(
  'delegate',
  Type.Object(
    { type: Type.Literal('delegation'), delegator_id: Type.String(), delegate_id: Type.String() },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      delegator_id: Type.String(),
      delegate_id: Type.String(),
      actions: Type.Array(Type.String()),
      resources: Type.Array(
        Type.Object({ type: Type.String(), identifier: Type.String() }, { additionalProperties: false }),
      ),
      expires_at: Type.String({ format: 'date-time' }),
    },
    { additionalProperties: false, description: 'A body for `POST /v1/delegations`' },
  ),
);

const remedyStep = <P extends TProperties>(shape: P, title: string) =>
  Type.Object(shape, { additionalProperties: false, title: `RemedyStep${title}` });

/** One more change a remedy needs (`also`): a remedy's fields without its blast radius. */
export const RemedyStepSchema = Type.Union(
  [
    remedyStep(ADD_TO_GROUP, 'AddToGroup'),
    remedyStep(ADD_TO_POLICY, 'AddToPolicy'),
    remedyStep(EXTEND_WINDOW, 'ExtendWindow'),
    remedyStep(DELEGATE, 'Delegate'),
  ],
  { description: 'A further change of a remedy' },
);

const remedyOf = <P extends TProperties>(shape: P, title: string) =>
  Type.Object(
    {
      ...shape,
      also: Type.Optional(
        Type.Array(RemedyStepSchema, {
          description:
            'Further changes to make with this one, when no one change alone lets the request through: only all of them together do, and the blast radius is of them all',
        }),
      ),
      blast_radius: BlastRadius,
    },
    { additionalProperties: false, title: `Remedy${title}` },
  );

export const RemedySchema = Type.Union(
  [
    remedyOf(ADD_TO_GROUP, 'AddToGroup'),
    remedyOf(ADD_TO_POLICY, 'AddToPolicy'),
    remedyOf(EXTEND_WINDOW, 'ExtendWindow'),
    remedyOf(DELEGATE, 'Delegate'),
    Type.Object(
      {
        kind: Type.Literal('none'),
        target: PolicyTarget,
        change: Type.Null({ description: 'Nothing is proposed: only removing the deny would lift it' }),
        principal_id: Type.String({ description: 'Whom the change lets through' }),
        message: Message,
        blast_radius: BlastRadius,
      },
      { additionalProperties: false, title: 'RemedyNone' },
    ),
  ],
  { description: 'A change that, simulated, turns the request into ALLOW (`none`: the deny that stands)' },
);
export type Remedy = Static<typeof RemedySchema>;
export type RemedyStep = Static<typeof RemedyStepSchema>;

export const DecisionSchema = Type.Object(
  {
    id: Id('decision'),
    decision: literals(['ALLOW', 'DENY']),
    allowed: Type.Boolean(),
    principal_id: Type.String(),
    action: Type.String({ description: 'The name of the action' }),
    resource: Type.Object(
      { type: Type.String(), identifier: Type.String() },
      { additionalProperties: false },
    ),
    on_behalf_of: Type.Optional(
      Type.Array(Type.String(), { description: 'The delegation chain, outermost delegator first' }),
    ),
    reasons: Type.Array(ReasonSchema),
    granted_by: Type.Array(Id('policy')),
    evaluated_at: Timestamp,
    as_of: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'With `as_of`: the instant decided for (not recorded)',
      }),
    ),
    trace: Type.Optional(TraceSchema),
    near_misses: Type.Optional(
      Type.Array(NearMissSchema, {
        description:
          'With `explain` on a DENY: each allow policy naming the resource and the action that did not let the request through, and what stopped it first',
      }),
    ),
    remedies: Type.Optional(
      Type.Array(RemedySchema, {
        maxItems: 5,
        description:
          'With `explain` on a DENY: at most 5 single changes, each simulated to turn the request into ALLOW, fewest other grants first; or `none` naming each deny that applied',
      }),
    ),
  },
  { additionalProperties: false, title: 'Decision' },
);
export type Decision = Static<typeof DecisionSchema>;

/** A decision as recorded: the answer and what the request said beyond it. */
export const DecisionRecordSchema = Type.Object(
  {
    ...DecisionSchema.properties,
    context: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    resource_attributes: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    action_properties: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'The action properties of the request' }),
    ),
    subject_properties: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'The subject properties of the request' }),
    ),
  },
  { additionalProperties: false, title: 'DecisionRecord' },
);

export const BatchBodySchema = Type.Object(
  { requests: Type.Array(DecisionRequestSchema, { minItems: 1, maxItems: MAX_BATCH }) },
  { additionalProperties: false, title: 'DecisionBatch' },
);

export const BatchResultSchema = Type.Object(
  {
    results: Type.Array(DecisionSchema, { description: 'In the order of the requests' }),
    summary: Type.Object(
      {
        total: Type.Integer({ minimum: 0 }),
        allowed: Type.Integer({ minimum: 0 }),
        denied: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'DecisionBatchResult' },
);

export const DecisionIdParams = Type.Object({ id: Id('decision') });

/** The most recorded decisions a page of `GET /v1/decisions` holds, and how many without `limit`. */
export const MAX_DECISIONS_PAGE = 500;
export const DEFAULT_DECISIONS_PAGE = 100;

export const DecisionListQuery = Type.Object({
  cursor: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]{1,200}$',
      description: 'The `next_cursor` of the page before: the decisions recorded after it',
    }),
  ),
  since: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 64,
      description: 'Decisions made at or after this instant (RFC 3339); with `cursor`, whichever is later',
    }),
  ),
  principal_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'Decisions for this principal: a `prn_` id, or the subject id an AuthZEN evaluation named when it named no principal',
    }),
  ),
  decision: Type.Optional(literals(['ALLOW', 'DENY'])),
  action: Type.Optional(
    Type.String({ pattern: ACTION_NAME_PATTERN, description: 'Decisions on this action' }),
  ),
  resource_type: Type.Optional(
    Type.String({ pattern: RESOURCE_TYPE_PATTERN, description: 'Decisions on resources of this type' }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_DECISIONS_PAGE,
      description: `Page size, 1-${MAX_DECISIONS_PAGE} (default ${DEFAULT_DECISIONS_PAGE})`,
    }),
  ),
});
export type DecisionListRequest = Static<typeof DecisionListQuery>;

export const DecisionRecordListSchema = Type.Object(
  {
    data: Type.Array(DecisionRecordSchema, { description: 'In id order, which is the order they were made' }),
    pagination: Type.Object(
      {
        per_page: Type.Integer({ minimum: 1, maximum: MAX_DECISIONS_PAGE }),
        next_cursor: Type.String({
          description:
            'Pass as `cursor` for the decisions after this page (to follow them, poll with it); past every decision the page looked at, so also when `data` is empty',
        }),
        has_more: Type.Boolean({
          description:
            'Decisions made before `settled_until` may follow this page: poll again with `next_cursor` at once. False once the page reaches `settled_until`',
        }),
        settled_until: Type.String({
          format: 'date-time',
          description:
            'Decisions made from this instant on are not listed yet (the settle window): a later poll lists them',
        }),
        horizon: Type.String({
          format: 'date-time',
          description: 'Decisions before this instant are no longer kept (`DECISION_RETENTION_DAYS`)',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'DecisionRecordList' },
);
export type DecisionRecordList = Static<typeof DecisionRecordListSchema>;

const PrincipalRefSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const AccessGrantSchema = Type.Object(
  {
    policy_id: Id('policy'),
    policy_name: Type.String(),
    via: literals(['principal', 'group', 'match'], {
      description:
        'The policy names the principal, one of its groups (directly or through nesting), or matches it',
    }),
    path: Type.Optional(
      Type.Array(TraceStep, {
        description:
          'For group grants: the shortest membership path, principal → group → … → group, as the decision trace gives it; left out while this instance has yet to learn of a recent membership or policy change',
      }),
    ),
  },
  { additionalProperties: false, title: 'AccessGrant' },
);

export const AccessEntrySchema = Type.Object(
  {
    resource: Type.Object(
      { type: Type.String(), identifier: Type.String() },
      { additionalProperties: false },
    ),
    pattern: Type.Optional(
      Type.Literal(true, {
        description: 'The entry is a policy glob: access to what it matches, registered or not',
      }),
    ),
    actions: Type.Array(Type.String()),
    denied_actions: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Actions an unconditional deny removes from a wildcard that remains in `actions`',
      }),
    ),
    granted_by: Type.Array(Id('policy')),
    granted_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'When the grant took effect. With `as_of`: when the change that made the entry true committed; null when it held since before the access history began',
    }),
    granted_by_event: Type.Optional(
      Type.Union(
        [
          Type.Object(
            {
              event_id: Id('event'),
              event_type: Type.String(),
              actor: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ],
        {
          description:
            'With `as_of`: the audit event of the change that made the entry true (the last that gained it actions); null when it held since before the access history began',
        },
      ),
    ),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When every policy of `granted_by` is time-bound: the earliest close of their windows, when the entry first changes. Left out when a grant does not end',
      }),
    ),
    conditional: Type.Boolean({ description: 'Some grant depends on the request context' }),
    grants: Type.Optional(
      Type.Array(AccessGrantSchema, {
        description:
          'With `explain=true`: how each policy of `granted_by` reaches the principal, in the same order',
      }),
    ),
  },
  { additionalProperties: false, title: 'AccessEntry' },
);

export const AccessRecordSchema = Type.Object(
  {
    principal_id: Id('principal'),
    as_of: Type.Optional(
      Type.String({ format: 'date-time', description: 'With `as_of`: the instant answered for' }),
    ),
    access: Type.Array(AccessEntrySchema),
    total_resources: Type.Integer({ minimum: 0 }),
    pagination: Type.Optional(Pagination),
  },
  { additionalProperties: false, title: 'AccessRecord' },
);

export const AccessQuery = Type.Object({
  resource_type: Type.Optional(Type.String({ pattern: RESOURCE_TYPE_PATTERN })),
  on_behalf_of: Type.Optional(
    Type.String({
      pattern: `^${idPattern('principal').slice(1, -1)}(,${idPattern('principal').slice(1, -1)}){0,${MAX_CHAIN - 1}}$`,
      description:
        'What the principal may reach acting for this principal (or comma-separated chain, outermost delegator first): the intersection of its access, theirs, and what the delegations in force hand on',
    }),
  ),
  action: Type.Optional(
    Type.String({ pattern: ACTION_NAME_PATTERN, description: 'Entries granting this action' }),
  ),
  explain: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Add `grants` to each entry: how each of its policies reaches the principal',
    }),
  ),
  as_of: Type.Optional(AsOf('The access (not with `on_behalf_of`)')),
  ...PageQuery,
});

export const ResourceAccessQuery = Type.Object({
  type: Type.String({ pattern: RESOURCE_TYPE_PATTERN }),
  identifier: Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH }),
  action: Type.Optional(
    Type.String({ pattern: ACTION_NAME_PATTERN, description: 'Principals granted this action' }),
  ),
  as_of: Type.Optional(AsOf('Who could access the resource')),
  ...PageQuery,
});

export const ResourceAccessSchema = Type.Object(
  {
    resource: Type.Object(
      { type: Type.String(), identifier: Type.String(), registered: Type.Boolean() },
      { additionalProperties: false },
    ),
    as_of: Type.Optional(
      Type.String({ format: 'date-time', description: 'With `as_of`: the instant answered for' }),
    ),
    principals: Type.Array(
      Type.Object(
        {
          principal: PrincipalRefSchema,
          actions: Type.Array(Type.String()),
          denied_actions: Type.Optional(Type.Array(Type.String())),
          granted_by: Type.Array(Id('policy')),
          expires_at: Type.Optional(
            Type.String({
              format: 'date-time',
              description: 'As in an access entry: when every grant is time-bound, the earliest close',
            }),
          ),
          conditional: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
      { description: 'Ordered by principal name, then id' },
    ),
    pagination: Pagination,
  },
  { additionalProperties: false, title: 'ResourceAccess' },
);
