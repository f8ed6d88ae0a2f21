import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Id } from './common.js';
import { MAX_BATCH, ReasonSchema } from './decisions.js';
import { FreeForm } from './free-form.js';
import { literals } from './principals.js';
import { ACTION_NAME_PATTERN } from '../vocabulary/policies.js';

/**
 * The OpenID AuthZEN Authorization API 1.0 (final, January 2026) as the service speaks it
 * (docs/api.md §5.8). Objects accept members they do not know, as that standard requires ("receivers
 * MUST ignore unknown fields"); only what is named here is read. Text is bounded, as a
 * protection against oversized values (the standard leaves sizes to the PDP).
 */

export const EVALUATIONS_SEMANTICS = ['execute_all', 'deny_on_first_deny', 'permit_on_first_permit'] as const;
export type EvaluationsSemantic = (typeof EVALUATIONS_SEMANTICS)[number];

/** Page sizes of the search APIs: the default, and the most one response carries. */
export const DEFAULT_SEARCH_LIMIT = 50;
export const MAX_SEARCH_LIMIT = 1000;

const MAX_TEXT = 1024;
const Text = (description: string) => Type.String({ maxLength: MAX_TEXT, description });

const Properties = (description: string) =>
  FreeForm(Type.Object({}, { additionalProperties: true, description }));

const SubjectType = Text(
  'A principal type in any case (`user`, `service_account`, `ai_agent`, `api_key`), or `principal` or `identity` for any type',
);
const SubjectId = Text(
  'A principal id, else the id its identity connector gives it (`connector_id`), else its email (any case). A connector id or email held by principals of more than one connector is ambiguous unless `properties.connector` names the connector',
);
const SubjectProperties = Properties(
  'Claims about the subject, read by `subject.properties.<key>` conditions (`principal.*` conditions read the stored principal, never these). `connector` names the identity connector (its name or id) whose principals a connector id or email is looked up among',
);
const ResourceType = Text(
  'The resource type policies name (`^[a-z][a-z0-9_.-]{0,63}$`; any other is denied)',
);
const ResourceId = Text('The resource identifier (1-512 characters; any other is denied)');
const ResourceProperties = Properties(
  'The resource attributes `resource.attributes.*` conditions read; they win over those of the registered resource',
);
const ActionName = Text(
  `The action (\`${ACTION_NAME_PATTERN}\`, so MCP methods such as \`tools/call\` too; any other is denied)`,
);
const ActionProperties = Properties('Claims about the action, read by `action.properties.<key>` conditions');

export const AuthZenContextSchema = FreeForm(
  Type.Object(
    {},
    {
      additionalProperties: true,
      title: 'AuthZenContext',
      description: 'Facts about the request (`ip`, `time`, ...), read by `context.<key>` conditions',
    },
  ),
);

export const SubjectSchema = Type.Object(
  { type: SubjectType, id: SubjectId, properties: Type.Optional(SubjectProperties) },
  { title: 'AuthZenSubject' },
);
export const ResourceSchema = Type.Object(
  { type: ResourceType, id: ResourceId, properties: Type.Optional(ResourceProperties) },
  { title: 'AuthZenResource' },
);
export const ActionSchema = Type.Object(
  { name: ActionName, properties: Type.Optional(ActionProperties) },
  { title: 'AuthZenAction' },
);

export type AuthZenSubject = Static<typeof SubjectSchema>;
export type AuthZenResource = Static<typeof ResourceSchema>;
export type AuthZenAction = Static<typeof ActionSchema>;
export type AuthZenContext = Record<string, unknown>;

/** The same entities with every member optional: defaults of a batch, and its items. */
const PartialSubject = Type.Object(
  {
    type: Type.Optional(SubjectType),
    id: Type.Optional(SubjectId),
    properties: Type.Optional(SubjectProperties),
  },
  { title: 'AuthZenPartialSubject' },
);
const PartialResource = Type.Object(
  {
    type: Type.Optional(ResourceType),
    id: Type.Optional(ResourceId),
    properties: Type.Optional(ResourceProperties),
  },
  { title: 'AuthZenPartialResource' },
);
const PartialAction = Type.Object(
  { name: Type.Optional(ActionName), properties: Type.Optional(ActionProperties) },
  { title: 'AuthZenPartialAction' },
);

export type PartialEntities = {
  subject?: Static<typeof PartialSubject> | undefined;
  action?: Static<typeof PartialAction> | undefined;
  resource?: Static<typeof PartialResource> | undefined;
  context?: AuthZenContext | undefined;
};

export const EvaluationRequestSchema = Type.Object(
  {
    subject: SubjectSchema,
    action: ActionSchema,
    resource: ResourceSchema,
    context: Type.Optional(AuthZenContextSchema),
  },
  { title: 'AuthZenEvaluationRequest' },
);
export type EvaluationRequest = Static<typeof EvaluationRequestSchema>;

const EvaluationItem = Type.Object(
  {
    subject: Type.Optional(PartialSubject),
    action: Type.Optional(PartialAction),
    resource: Type.Optional(PartialResource),
    context: Type.Optional(AuthZenContextSchema),
  },
  {
    title: 'AuthZenEvaluationItem',
    description:
      'One evaluation. A member it gives replaces the default of the same name as a whole, except that a `type`, `id` or `name` it leaves out is taken from the default',
  },
);

export const EvaluationsRequestSchema = Type.Object(
  {
    subject: Type.Optional(PartialSubject),
    action: Type.Optional(PartialAction),
    resource: Type.Optional(PartialResource),
    context: Type.Optional(AuthZenContextSchema),
    evaluations: Type.Optional(
      Type.Array(EvaluationItem, {
        maxItems: MAX_BATCH,
        description: `At most ${MAX_BATCH}. Absent or empty: the request is a single evaluation of the top-level members`,
      }),
    ),
    options: Type.Optional(
      Type.Object(
        {
          evaluations_semantic: Type.Optional(
            literals(EVALUATIONS_SEMANTICS, {
              description: '`execute_all` (default), `deny_on_first_deny` or `permit_on_first_permit`',
            }),
          ),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { title: 'AuthZenEvaluationsRequest' },
);
export type EvaluationsRequest = Static<typeof EvaluationsRequestSchema>;

const PageRequest = Type.Object(
  {
    token: Type.Optional(
      Type.String({
        maxLength: 2048,
        description:
          'The `next_token` of the previous response; it carries the page size, so it may come alone',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: `Most results to return (default ${DEFAULT_SEARCH_LIMIT}; more than ${MAX_SEARCH_LIMIT} returns ${MAX_SEARCH_LIMIT}; 0 counts the results and returns none). With a token: left out, or the size of the first page`,
      }),
    ),
    properties: Type.Optional(Properties('Accepted and not read')),
  },
  { title: 'AuthZenPageRequest' },
);
export type PageRequest = Static<typeof PageRequest>;

export const SubjectSearchRequestSchema = Type.Object(
  {
    subject: Type.Object(
      { type: SubjectType, properties: Type.Optional(SubjectProperties) },
      {
        description:
          'The type of the subjects sought; an `id` is ignored. `properties` are claims about every subject sought, and `properties.connector` keeps to the principals of that connector',
      },
    ),
    action: ActionSchema,
    resource: ResourceSchema,
    context: Type.Optional(AuthZenContextSchema),
    page: Type.Optional(PageRequest),
  },
  { title: 'AuthZenSubjectSearchRequest' },
);
export type SubjectSearchRequest = Static<typeof SubjectSearchRequestSchema>;

export const ResourceSearchRequestSchema = Type.Object(
  {
    subject: SubjectSchema,
    action: ActionSchema,
    resource: Type.Object(
      { type: ResourceType, properties: Type.Optional(ResourceProperties) },
      { description: 'The type of the resources sought; an `id` is ignored' },
    ),
    context: Type.Optional(AuthZenContextSchema),
    page: Type.Optional(PageRequest),
  },
  { title: 'AuthZenResourceSearchRequest' },
);
export type ResourceSearchRequest = Static<typeof ResourceSearchRequestSchema>;

export const ActionSearchRequestSchema = Type.Object(
  {
    subject: SubjectSchema,
    resource: ResourceSchema,
    context: Type.Optional(AuthZenContextSchema),
    page: Type.Optional(PageRequest),
  },
  { title: 'AuthZenActionSearchRequest' },
);
export type ActionSearchRequest = Static<typeof ActionSearchRequestSchema>;

// ---- responses ----

export const DecisionContextSchema = Type.Union(
  [
    Type.Object(
      {
        id: Id('decision', 'The recorded decision (`GET /v1/decisions/{id}`)'),
        reasons: Type.Array(ReasonSchema),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        error: Type.Object(
          { status: Type.Integer({ minimum: 400, maximum: 599 }), message: Type.String() },
          { additionalProperties: false },
        ),
      },
      {
        additionalProperties: false,
        description: 'An evaluation of a batch that could not be made (a required member missing): denied',
      },
    ),
  ],
  { title: 'AuthZenDecisionContext' },
);

export const DecisionSchema = Type.Object(
  { decision: Type.Boolean(), context: DecisionContextSchema },
  { additionalProperties: false, title: 'AuthZenDecision' },
);
export type AuthZenDecision = Static<typeof DecisionSchema>;

export const EvaluationsResponseSchema = Type.Union(
  [
    DecisionSchema,
    Type.Object(
      {
        evaluations: Type.Array(DecisionSchema, {
          description: 'In the order of the request; a short-circuiting semantic ends it at the deciding one',
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { title: 'AuthZenEvaluationsResponse' },
);
export type EvaluationsResponse = Static<typeof EvaluationsResponseSchema>;

const PageResponse = Type.Object(
  {
    next_token: Type.String({
      description: 'Send it as `page.token` for the next page; empty on the last page',
    }),
    count: Type.Integer({ minimum: 0, description: 'Results in this response' }),
    total: Type.Integer({ minimum: 0, description: 'Results of the whole search' }),
  },
  { additionalProperties: false, title: 'AuthZenPage' },
);

const SearchResponse = <T extends TSchema>(item: T, title: string) =>
  Type.Object({ page: PageResponse, results: Type.Array(item) }, { additionalProperties: false, title });

const Found = (type: TSchema, properties: TSchema) =>
  Type.Object(
    { type, id: Type.String(), properties: Type.Optional(properties) },
    { additionalProperties: false },
  );

export const SubjectSearchResponseSchema = SearchResponse(
  Type.Object(
    {
      type: Type.String({ description: 'The type the search asked for' }),
      id: Type.String({
        description:
          "The subject's AuthZEN id: its `connector_id` when a connector gave it one, else its principal id",
      }),
    },
    { additionalProperties: false },
  ),
  'AuthZenSubjectSearchResponse',
);

export const ResourceSearchResponseSchema = SearchResponse(
  Found(
    Type.String(),
    Type.Object(
      {
        pattern: Type.Literal(true, {
          description: 'The id is a policy glob: access to every identifier it matches, registered or not',
        }),
        conditional: Type.Optional(
          Type.Literal(true, { description: 'The glob grant depends on the request context' }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
  'AuthZenResourceSearchResponse',
);

export const ActionSearchResponseSchema = SearchResponse(
  Type.Object(
    {
      name: Type.String(),
      properties: Type.Optional(
        Type.Object(
          {
            pattern: Type.Literal(true, {
              description: 'The name is a wildcard grant (`*`, `repo:*`): any action it matches',
            }),
            except: Type.Optional(
              Type.Array(Type.String(), { description: 'Actions an unconditional deny removes from it' }),
            ),
            conditional: Type.Optional(
              Type.Literal(true, { description: 'The wildcard grant depends on the request context' }),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  'AuthZenActionSearchResponse',
);

export const MetadataSchema = Type.Object(
  {
    policy_decision_point: Type.String(),
    access_evaluation_endpoint: Type.String(),
    access_evaluations_endpoint: Type.String(),
    search_subject_endpoint: Type.String(),
    search_resource_endpoint: Type.String(),
    search_action_endpoint: Type.String(),
  },
  { additionalProperties: false, title: 'AuthZenMetadata' },
);
export type Metadata = Static<typeof MetadataSchema>;

export type SearchPage = Static<typeof PageResponse>;
export type FoundSubject = Static<typeof SubjectSearchResponseSchema>['results'][number];
export type FoundResource = Static<typeof ResourceSearchResponseSchema>['results'][number];
export type FoundAction = Static<typeof ActionSearchResponseSchema>['results'][number];
