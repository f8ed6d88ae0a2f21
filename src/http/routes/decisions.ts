import type { AccessAsOf } from '../../access-history/as-of.js';
import type { AccessService } from '../../decisions/access-service.js';
import { validationFailed } from '../../errors/errors.js';
import type { DecisionService } from '../../decisions/service.js';
import type { JsonBytes } from '../../json.js';
import { pageOf } from '../../pagination.js';
import {
  AccessQuery,
  AccessRecordSchema,
  BatchBodySchema,
  BatchResultSchema,
  DecisionIdParams,
  DecisionListQuery,
  DecisionRecordListSchema,
  DecisionRecordSchema,
  DecisionSchema,
  EvaluateRequestSchema,
  MAX_BATCH,
  ResourceAccessQuery,
  ResourceAccessSchema,
} from '../../schemas/decisions.js';
import { Type } from '@sinclair/typebox';
import { SETTLE_MARGIN_MS } from '../../decisions/record-list.js';
import { Id } from '../../schemas/common.js';
import { defineRoute, type AnyRoute } from '../route.js';

/** `as_of` cannot go with these: the history keeps a principal's own access only. */
function refuseWithAsOf(given: Record<string, unknown>, where: '/body' | '/query'): void {
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined || value === false) continue;
    throw validationFailed(`${name} with as_of`, [
      { pointer: `${where}/${name}`, message: `is not available with as_of (docs/access-history.md)` },
    ]);
  }
}

export function decisionRoutes(
  deps: {
    decisions: DecisionService;
    access: AccessService;
    asOf: AccessAsOf;
  },
  records: {
    /** How old a recorded decision must be before a list includes it (`settleWindowMs`). */
    settleMs: number;
  },
): AnyRoute[] {
  const evaluate = { tags: ['Decisions'], auth: { scope: 'decisions:evaluate' as const } };
  return [
    defineRoute({
      ...evaluate,
      rateLimit: 'decisions',
      method: 'POST',
      path: '/v1/decisions/evaluate',
      operationId: 'evaluateDecision',
      summary: 'Decide an access request',
      description:
        'Answered from memory, without a database round trip. Deny overrides allow; no applicable allow means deny; an unknown or inactive principal is a DENY (200), never a 404. AI agents reach a `tool` only if it is in their `allowed_tools`. With `on_behalf_of` (a principal id, or a delegation chain outermost delegator first), every link must be an active delegation covering the request (else `NO_DELEGATION`) and every principal of the chain must be allowed (else `DELEGATOR_DENIED`). `explain: true` adds a `trace` of every candidate policy. Every decision is recorded (`GET /v1/decisions/{id}`) within a second, without delaying the answer.',
      body: EvaluateRequestSchema,
      responses: { 200: { description: 'The decision', schema: DecisionSchema } },
      handler: async ({ body }) => {
        const { as_of: asOf, ...request } = body;
        if (asOf === undefined) return { body: deps.decisions.answer(request) };
        refuseWithAsOf({ on_behalf_of: request.on_behalf_of, explain: request.explain }, '/body');
        const at = await deps.asOf.instant(asOf, '/body/as_of');
        const action = typeof request.action === 'string' ? request.action : request.action.name;
        return { body: await deps.asOf.decide({ ...request, action }, at) };
      },
    }),
    defineRoute({
      ...evaluate,
      rateLimit: 'bulk',
      method: 'POST',
      path: '/v1/decisions/batch',
      operationId: 'evaluateDecisionBatch',
      summary: 'Decide up to 1,000 access requests',
      description: `Results in the order of the requests, each as a single decision, with a summary. At most ${MAX_BATCH} requests.`,
      // Read and checked where it is decided: a batch of many, on a decision thread.
      body: Type.Unsafe<JsonBytes>(BatchBodySchema),
      documentedBody: BatchBodySchema,
      bodyAsBytes: true,
      responses: { 200: { description: 'The decisions', schema: BatchResultSchema } },
      handler: async ({ body }) => ({ body: await deps.decisions.batchBody(body) }),
    }),
    defineRoute({
      tags: ['Decisions'],
      auth: { scope: 'decisions:read' },
      rateLimit: 'standard',
      method: 'GET',
      path: '/v1/decisions/{id}',
      operationId: 'getDecision',
      summary: 'Get a recorded decision',
      description:
        'The decision as answered, with the context and resource attributes of its request; 404 after the retention period.',
      params: DecisionIdParams,
      responses: { 200: { description: 'The recorded decision', schema: DecisionRecordSchema } },
      handler: async ({ params }) => ({ body: await deps.decisions.get(params.id) }),
    }),
    defineRoute({
      tags: ['Decisions'],
      auth: { scope: 'decisions:read' },
      rateLimit: 'standard',
      method: 'GET',
      path: '/v1/decisions',
      operationId: 'listDecisions',
      summary: 'List recorded decisions',
      description: `Recorded decisions in the order they were made (their ids sort that way), oldest first, each as \`GET /v1/decisions/{id}\` answers it. Follow them with \`cursor\`: each page's \`next_cursor\` is where the next poll starts, also when the page is empty. A decision is listed once it is older than the settle window (\`DECISION_FLUSH_INTERVAL_MS\` and ${SETTLE_MARGIN_MS / 1000} seconds), so that a batch of records another instance writes a little later cannot hold one a follower has passed (docs/api.md §5.4).`,
      query: DecisionListQuery,
      responses: { 200: { description: 'A page of recorded decisions', schema: DecisionRecordListSchema } },
      handler: async ({ query }) => ({ body: await deps.decisions.list(query, records.settleMs) }),
    }),
    defineRoute({
      tags: ['Principals'],
      auth: { scope: 'principals:read' },
      rateLimit: 'standard',
      method: 'GET',
      path: '/v1/principals/{id}/access',
      operationId: 'getPrincipalAccess',
      summary: 'The effective access of a principal',
      description:
        'Walks the graph: principal → groups (nested) → active policies → resources. One entry per resource (ordered by type, then identifier): the allowed actions less those an unconditional deny removes, the allow policies granting them, when the grant took effect, and whether it depends on the request. A glob appears as its own entry (`pattern: true`) besides the registered resources it matches. A principal that is not active has no access. With `page` or `limit`, `access` is paginated. With `explain=true`, each entry also has `grants`: for each policy of `granted_by`, in its order, the policy name and how it selects the principal (`via`), with the membership `path` of a group grant as the decision trace gives it. With `on_behalf_of` (a principal id, or a comma-separated delegation chain, outermost first), what the principal may reach acting for them: the entries every principal of the chain reaches too, narrowed to what the delegations in force hand on, ending at the earliest of their ends; none when a link has no delegation in force.',
      params: Type.Object({ id: Id('principal') }),
      query: AccessQuery,
      responses: {
        200: { description: 'The access record', schema: AccessRecordSchema },
        422: { description: '`REFERENCE_NOT_FOUND`: `on_behalf_of` names no principal' },
      },
      handler: async ({ params, query }) => {
        const filter = { resourceType: query.resource_type, action: query.action };
        const page = query.page !== undefined || query.limit !== undefined ? pageOf(query) : undefined;
        if (query.as_of !== undefined) {
          refuseWithAsOf({ on_behalf_of: query.on_behalf_of }, '/query');
          const at = await deps.asOf.instant(query.as_of, '/query/as_of');
          return {
            body: await deps.asOf.principalAccess(params.id, at, filter, page, query.explain ?? false),
          };
        }
        return {
          body: await deps.access.principalAccess(
            params.id,
            filter,
            page,
            query.explain ?? false,
            query.on_behalf_of?.split(',') ?? [],
          ),
        };
      },
    }),
    defineRoute({
      tags: ['Resources'],
      auth: { scope: 'policies:read' },
      rateLimit: 'standard',
      method: 'GET',
      path: '/v1/resources/access',
      operationId: 'getResourceAccess',
      summary: 'Who can access a resource',
      description:
        'Every active principal with access to the resource, ordered by name then id, with its actions and the allow policies granting them. `action` keeps those granted that action.',
      query: ResourceAccessQuery,
      responses: { 200: { description: 'The principals with access', schema: ResourceAccessSchema } },
      handler: async ({ query }) => {
        if (query.as_of === undefined)
          return {
            body: deps.access.whoCanAccess(query.type, query.identifier, query.action, pageOf(query)),
          };
        const at = await deps.asOf.instant(query.as_of, '/query/as_of');
        return {
          body: await deps.asOf.resourceAccess(query.type, query.identifier, query.action, pageOf(query), at),
        };
      },
    }),
  ];
}
