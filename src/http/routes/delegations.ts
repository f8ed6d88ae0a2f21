import type { DelegationService } from '../../delegations/service.js';
import { pageOf } from '../../pagination.js';
import {
  CreateDelegationBody,
  DelegationList,
  DelegationListQuery,
  DelegationParams,
  DelegatingPrincipalParams,
  DelegationSchema,
  PrincipalDelegationsSchema,
} from '../../schemas/delegations.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

export function delegationRoutes(deps: { delegations: DelegationService }): AnyRoute[] {
  const read = {
    tags: ['Delegations'],
    auth: { scope: 'delegations:read' as const },
    rateLimit: 'standard' as const,
  };
  const write = {
    tags: ['Delegations'],
    auth: { scope: 'delegations:write' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...write,
      method: 'POST',
      path: '/v1/delegations',
      operationId: 'createDelegation',
      summary: 'Delegate',
      description:
        'Lets an AI agent or a service account act for a principal, for the actions and resources given (default: all of them; the delegate never gets more than the delegator may do), until `expires_at` (at most `DELEGATION_MAX_DAYS`, 90, ahead). Decisions honour it as soon as this answers.',
      body: CreateDelegationBody,
      responses: {
        201: { description: 'Created', schema: DelegationSchema },
        400: { description: '`VALIDATION_FAILED`: `expires_at` past or too far ahead, a malformed glob' },
        422: {
          description:
            '`REFERENCE_NOT_FOUND`: an unknown principal; `DELEGATION_NOT_ALLOWED`: a delegate that is not an AI agent or a service account, or a principal that is not active; `CYCLE_DETECTED`: to oneself, or closing a cycle',
        },
      },
      handler: async ({ ctx, body }) => {
        const delegation = await deps.delegations.create(body, operationContext(ctx));
        return { status: 201, body: delegation, headers: { Location: `/v1/delegations/${delegation.id}` } };
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/delegations',
      operationId: 'listDelegations',
      summary: 'List delegations',
      description: 'Newest first; filtered by delegator, delegate and status.',
      query: DelegationListQuery,
      responses: { 200: { description: 'A page of delegations', schema: DelegationList } },
      handler: async ({ query }) => ({
        body: listBody(
          await deps.delegations.list(
            { delegatorId: query.delegator_id, delegateId: query.delegate_id, status: query.status },
            pageOf(query),
          ),
        ),
      }),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/delegations/{id}',
      operationId: 'getDelegation',
      summary: 'Get a delegation',
      params: DelegationParams,
      responses: { 200: { description: 'The delegation', schema: DelegationSchema } },
      handler: async ({ params }) => ({ body: await deps.delegations.get(params.id) }),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      path: '/v1/delegations/{id}',
      operationId: 'revokeDelegation',
      summary: 'Revoke a delegation',
      description:
        'It stops applying as soon as this answers. Revoking a revoked delegation answers it unchanged.',
      params: DelegationParams,
      responses: {
        200: { description: 'Revoked', schema: DelegationSchema },
        409: { description: '`CONFLICT`: the delegation has expired' },
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.delegations.revoke(params.id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/principals/{id}/delegations',
      operationId: 'getPrincipalDelegations',
      summary: "A principal's delegations",
      description:
        'The delegations it gives (then the active ones further down the chains that start at it) and those it receives; each active one with its `chain`, outermost delegator first.',
      params: DelegatingPrincipalParams,
      responses: { 200: { description: 'Its delegations', schema: PrincipalDelegationsSchema } },
      handler: async ({ params }) => ({ body: await deps.delegations.ofPrincipal(params.id) }),
    }),
  ];
}
