import type { AuthZenService } from '../../authzen/service.js';
import {
  ActionSearchRequestSchema,
  ActionSearchResponseSchema,
  DecisionSchema,
  EvaluationRequestSchema,
  EvaluationsRequestSchema,
  EvaluationsResponseSchema,
  MAX_SEARCH_LIMIT,
  MetadataSchema,
  ResourceSearchRequestSchema,
  ResourceSearchResponseSchema,
  SubjectSearchRequestSchema,
  SubjectSearchResponseSchema,
} from '../../schemas/authzen.js';
import { MAX_BATCH } from '../../schemas/decisions.js';
import { defineRoute, type AnyRoute } from '../route.js';

const NO_STORE = { 'Cache-Control': 'no-store' };

const MAPPING =
  "`subject.id` names a principal by id, else by `connector_id`, else by email (any case); `subject.type` is a principal type in any case (`user`, `ai_agent`, ...), or `principal` or `identity` for any type. A connector id or email held by principals of more than one connector (or by several principals of one connector) is ambiguous: denied with reason `AMBIGUOUS_SUBJECT`, unless `subject.properties.connector` names the connector (its name or id). A subject that names no principal of that type is denied (fail closed), not an error. `resource` `{type, id, properties}` is `{type, identifier, attributes}`; `action.name` is the action; `context` is the context; `action.properties` and `subject.properties` are claims that `action.properties.<key>` and `subject.properties.<key>` conditions read. A string `context.agent` (the COAZ-MCP binding sends the token's `client_id`) names an agent acting for the subject: a principal id, else a connector id, else an AI agent's `attributes.client_id`. The evaluation is then decided as that agent on behalf of the subject (`on_behalf_of` in the record): a delegation from the subject must cover the request (`NO_DELEGATION`), both principals must be allowed and the agent keeps to its `allowed_tools`; an agent that names no principal is denied with `PRINCIPAL_NOT_FOUND`.";

const PAGING = `Paginated by opaque tokens: \`page.limit\` (default 50, at most ${MAX_SEARCH_LIMIT}) and \`page.token\` (the \`next_token\` of the previous page). A follow-up may send \`page.token\` alone: the token carries the page size. Only \`page.token\` may change between pages (a changed member, or another \`page.limit\`, is 400). \`page.next_token\` is empty on the last page; \`count\` and \`total\` count this page's and all results.`;

/**
 * The OpenID AuthZEN Authorization API 1.0 (docs/api.md §5.8) at the root of the service. Unknown
 * members are ignored as that standard requires, and errors are its plain error messages.
 */
export function authzenRoutes(deps: { authzen: AuthZenService }): AnyRoute[] {
  const common = {
    tags: ['AuthZEN'],
    auth: { scope: 'decisions:evaluate' as const },
    errors: 'authzen' as const,
  };
  return [
    defineRoute({
      ...common,
      rateLimit: 'decisions',
      method: 'POST',
      path: '/access/v1/evaluation',
      operationId: 'authzenEvaluation',
      summary: 'AuthZEN Access Evaluation: may the subject take the action on the resource?',
      description: `${MAPPING} Answers \`{ decision, context: { id, reasons } }\`: \`id\` is the recorded decision (\`GET /v1/decisions/{id}\`), \`reasons\` as in \`POST /v1/decisions/evaluate\`. A resource type, identifier or action name that policies cannot name is denied. A missing required member is 400.`,
      body: EvaluationRequestSchema,
      responses: { 200: { description: 'The decision', schema: DecisionSchema } },
      handler: async ({ body }) => ({ body: await deps.authzen.evaluate(body), headers: NO_STORE }),
    }),
    defineRoute({
      ...common,
      rateLimit: 'bulk',
      method: 'POST',
      path: '/access/v1/evaluations',
      operationId: 'authzenEvaluations',
      summary: 'AuthZEN Access Evaluations: several decisions in one request',
      description: `${MAPPING} Top-level \`subject\`, \`action\`, \`resource\` and \`context\` are defaults: a member an evaluation gives replaces the default as a whole, except that a \`type\`, \`id\` or \`name\` it leaves out comes from the default. Decisions come in the order of \`evaluations\` (at most ${MAX_BATCH}). \`options.evaluations_semantic\`: \`execute_all\` (default) answers every evaluation; \`deny_on_first_deny\` stops after the first denial and \`permit_on_first_permit\` after the first permit, the deciding one last. An evaluation still missing a required member is denied with \`context.error\` (status 400), the others are answered. Without \`evaluations\` (or with none) the request is a single evaluation and answers one decision. Every evaluation made is recorded.`,
      body: EvaluationsRequestSchema,
      responses: { 200: { description: 'The decisions', schema: EvaluationsResponseSchema } },
      handler: async ({ body }) => ({ body: await deps.authzen.evaluations(body), headers: NO_STORE }),
    }),
    defineRoute({
      ...common,
      rateLimit: 'bulk',
      method: 'POST',
      path: '/access/v1/search/subject',
      operationId: 'authzenSearchSubjects',
      summary: 'AuthZEN Subject Search: who may take the action on the resource',
      description: `The active principals of \`subject.type\` (\`principal\` or \`identity\`: every type) allowed the action on the resource, ordered by name then id, each as \`{ type, id }\` with the type asked for and its AuthZEN id: the \`connector_id\` its identity connector gave it, else its principal id, so that the ids are those a caller sends; an id two principals share is listed once. \`subject.properties.connector\` keeps to the principals of that connector. Group membership counts through nesting; denies and the AI-agent tool guardrail apply; a grant that depends on the request is decided with \`context\`, \`resource.properties\` and the claims of \`action.properties\` and \`subject.properties\`. An unknown type or resource gives no results. ${PAGING}`,
      body: SubjectSearchRequestSchema,
      responses: { 200: { description: 'The subjects', schema: SubjectSearchResponseSchema } },
      handler: async ({ body }) => ({ body: await deps.authzen.searchSubjects(body), headers: NO_STORE }),
    }),
    defineRoute({
      ...common,
      rateLimit: 'bulk',
      method: 'POST',
      path: '/access/v1/search/resource',
      operationId: 'authzenSearchResources',
      summary: 'AuthZEN Resource Search: what the subject may take the action on',
      description: `The resources of \`resource.type\` the subject may take the action on, by identifier: those policies name exactly and the registered ones their globs match (a grant that depends on the request decided with \`context\` and the claims of \`action.properties\` and \`subject.properties\`). A glob itself is a result too, with \`properties.pattern: true\` (every identifier it matches, registered or not) and \`properties.conditional: true\` when it depends on the request. An unknown or inactive subject gives no results. ${PAGING}`,
      body: ResourceSearchRequestSchema,
      responses: { 200: { description: 'The resources', schema: ResourceSearchResponseSchema } },
      handler: async ({ body }) => ({ body: await deps.authzen.searchResources(body), headers: NO_STORE }),
    }),
    defineRoute({
      ...common,
      rateLimit: 'bulk',
      method: 'POST',
      path: '/access/v1/search/action',
      operationId: 'authzenSearchActions',
      summary: 'AuthZEN Action Search: what the subject may do on the resource',
      description: `The actions the subject may take on the resource, sorted. Actions policies grant by name are listed by name (one that depends on the request is decided with \`context\`, \`resource.properties\` and the claims of \`subject.properties\`; with no action named, \`action.properties\` conditions are unknown). A wildcard grant (\`*\`, \`repo:*\`) is listed as written, with \`properties.pattern: true\` (any action it matches), \`properties.except\` naming the actions an unconditional deny removes from it, and \`properties.conditional: true\` when it depends on the request; it is not expanded into names, since any name would match it. Denies and the AI-agent tool guardrail apply. An unknown or inactive subject gives no results. ${PAGING}`,
      body: ActionSearchRequestSchema,
      responses: { 200: { description: 'The actions', schema: ActionSearchResponseSchema } },
      handler: async ({ body }) => ({ body: await deps.authzen.searchActions(body), headers: NO_STORE }),
    }),
    defineRoute({
      method: 'GET',
      path: '/.well-known/authzen-configuration',
      operationId: 'getAuthzenConfiguration',
      summary: 'AuthZEN Policy Decision Point metadata',
      description:
        'Where the AuthZEN endpoints are: `policy_decision_point` is the public base URL of the service (`PUBLIC_BASE_URL`).',
      tags: ['AuthZEN'],
      auth: 'public',
      rateLimit: 'none',
      responses: { 200: { description: 'The PDP metadata', schema: MetadataSchema } },
      handler: () => ({
        body: deps.authzen.metadata(),
        headers: { 'Cache-Control': 'public, max-age=300' },
      }),
    }),
  ];
}
