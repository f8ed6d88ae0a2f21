import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { SimulationService } from '../../decisions/simulation.js';
import { pageOf } from '../../pagination.js';
import type { PolicyService } from '../../policies/service.js';
import {
  DeletedPolicy,
  PolicyBodySchema,
  PolicyIdParams,
  PolicyList,
  PolicyListQuery,
  PolicySchema,
  PolicyVersionList,
  SimulateBodySchema,
  SimulateNewBodySchema,
  SimulationResultSchema,
} from '../../schemas/policies.js';
import { PageQuery } from '../../schemas/common.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { etagOf, ifMatchVersions } from '../views.js';

const ETAG = { ETag: { description: 'The version, `"<version>"`, for If-Match', schema: Type.String() } };

/** Policy entity tags are the bare version (docs/api.md §1: `ETag` is `"<version>"`). */
const policyTag = (policy: { version: number }): string => etagOf(policy, '');
const ifMatch = (ctx: Context): number[] | undefined => ifMatchVersions(ctx.get('If-Match') || undefined, '');

const NEVER_MATCHES = {
  description:
    '`VALIDATION_FAILED` with pointers: a schema violation, or a policy that can never match (subjects selecting nobody, an unknown condition path or operator, a malformed glob or CIDR, a `$ref` to an unknown path, a window whose `valid_until` is not in the future or not after `valid_from`)',
};

export function policyRoutes(deps: { policies: PolicyService; simulations: SimulationService }): AnyRoute[] {
  const read = {
    tags: ['Policies'],
    auth: { scope: 'policies:read' as const },
    rateLimit: 'standard' as const,
  };
  const write = {
    tags: ['Policies'],
    auth: { scope: 'policies:write' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/policies',
      operationId: 'listPolicies',
      summary: 'List policies',
      description:
        'Newest first (`created_at` descending, then `id`). `status` defaults to every status but `deleted`.',
      query: PolicyListQuery,
      responses: { 200: { description: 'A page of policies', schema: PolicyList } },
      handler: async ({ query }) => ({
        body: listBody(
          await deps.policies.list({ status: query.status, effect: query.effect }, pageOf(query)),
        ),
      }),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      path: '/v1/policies',
      operationId: 'createPolicy',
      summary: 'Create a policy',
      description:
        'Deny overrides allow; no applicable allow means deny. Subjects and resources that do not exist yet are allowed. The name is unique among policies that are not deleted, regardless of case. With `valid_from`/`valid_until` the policy applies only inside that window.',
      body: PolicyBodySchema,
      responses: {
        201: { description: 'Created', schema: PolicySchema, headers: ETAG },
        400: NEVER_MATCHES,
        409: { description: '`CONFLICT`: a policy with this name exists' },
      },
      handler: async ({ ctx, body }) => {
        const policy = await deps.policies.create(body, operationContext(ctx));
        return {
          status: 201,
          body: policy,
          headers: { Location: `/v1/policies/${policy.id}`, ETag: policyTag(policy) },
        };
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/policies/{id}',
      operationId: 'getPolicy',
      summary: 'Get a policy',
      description:
        'Deleted policies are still returned (status `deleted`), so that decision records resolve.',
      params: PolicyIdParams,
      responses: { 200: { description: 'The policy', schema: PolicySchema, headers: ETAG } },
      handler: async ({ params }) => {
        const policy = await deps.policies.get(params.id);
        return { body: policy, headers: { ETag: policyTag(policy) } };
      },
    }),
    defineRoute({
      ...write,
      method: 'PUT',
      path: '/v1/policies/{id}',
      operationId: 'replacePolicy',
      summary: 'Replace a policy',
      description:
        'A full replacement: the version goes up by one and is kept (`GET /v1/policies/{id}/versions`). Honours `If-Match`. A policy becomes active again (`activated_at`) when its status moves to `active`. The window is replaced too (a bound left out is no bound), and the close of the new one is recorded (`policy.expired`) in turn.',
      params: PolicyIdParams,
      body: PolicyBodySchema,
      responses: {
        200: { description: 'Replaced', schema: PolicySchema, headers: ETAG },
        400: NEVER_MATCHES,
        409: { description: '`CONFLICT`: the name is taken, or the policy is deleted' },
        412: { description: '`PRECONDITION_FAILED`: If-Match does not match' },
      },
      handler: async ({ ctx, params, body }) => {
        const policy = await deps.policies.replace(params.id, body, ifMatch(ctx), operationContext(ctx));
        return { body: policy, headers: { ETag: policyTag(policy) } };
      },
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      path: '/v1/policies/{id}',
      operationId: 'deletePolicy',
      summary: 'Delete a policy',
      description:
        'It takes effect no more and gives its name up; it stays readable by id with its versions. Honours `If-Match`.',
      params: PolicyIdParams,
      responses: {
        200: { description: 'Deleted', schema: DeletedPolicy },
        409: { description: '`CONFLICT`: already deleted' },
        412: { description: '`PRECONDITION_FAILED`' },
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.policies.delete(params.id, ifMatch(ctx), operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/policies/{id}/versions',
      operationId: 'listPolicyVersions',
      summary: 'List the versions of a policy',
      description: 'Newest first: each version with the body it had and who wrote it.',
      params: PolicyIdParams,
      query: Type.Object(PageQuery),
      responses: { 200: { description: 'A page of versions', schema: PolicyVersionList } },
      handler: async ({ params, query }) => ({
        body: listBody(await deps.policies.versions(params.id, pageOf(query))),
      }),
    }),
    defineRoute({
      ...read,
      rateLimit: 'bulk',
      method: 'POST',
      path: '/v1/policies/simulate',
      operationId: 'simulateNewPolicy',
      summary: 'Simulate creating a policy',
      description:
        'Nothing is written. The policy is simulated as if it were created: with `requests`, each is decided without it and with it; without, the blast radius of creating it (every principal it selects, with the actions gained or lost on every resource it names; at most 10,000 changes listed). A policy whose window is not open now, or that is created as a draft or disabled, grants nothing now. The answer has no `policy_id`.',
      body: SimulateNewBodySchema,
      responses: {
        200: { description: 'The simulation', schema: SimulationResultSchema },
        400: NEVER_MATCHES,
      },
      handler: async ({ body }) => ({ body: await deps.simulations.simulateNew(body) }),
    }),
    defineRoute({
      ...read,
      rateLimit: 'bulk',
      method: 'POST',
      path: '/v1/policies/{id}/simulate',
      operationId: 'simulatePolicy',
      summary: 'Simulate a change to a policy',
      description:
        'Nothing is written. With `requests`, each is decided with the policy as stored and as proposed. Without, the blast radius: every principal the current or the proposed policy selects, with the actions gained and lost on every resource either names (at most 10,000 changes listed; `summary` counts all). Both count windows: a version whose window is not open now grants nothing now. `policy` replaces the policy, `delete: true` removes it; with neither, the stored policy is made active.',
      params: PolicyIdParams,
      body: SimulateBodySchema,
      responses: {
        200: { description: 'The simulation', schema: SimulationResultSchema },
        400: NEVER_MATCHES,
        409: { description: '`CONFLICT`: the policy is deleted' },
      },
      handler: async ({ params, body }) => ({ body: await deps.simulations.simulate(params.id, body) }),
    }),
  ];
}
