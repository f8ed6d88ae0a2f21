import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import { RELATIONSHIP_TYPES, type PrincipalService } from '../../principals/service.js';
import { Id } from '../../schemas/common.js';
import {
  CreatedPrincipal,
  CreatePrincipalBody,
  DeletedPrincipal,
  PatchPrincipalBody,
  PrincipalList,
  PrincipalListQuery,
  PrincipalSchema,
  RelationshipRecord,
  RelationshipsQuery,
  UpdatedPrincipal,
} from '../../schemas/principals.js';
import { AppError } from '../../errors/errors.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';
import {
  createdPrincipal,
  etagOf,
  ifMatchVersions,
  principalListItem,
  principalView,
  updatedPrincipal,
} from '../views.js';

const IdParams = Type.Object({ id: Id('principal') });

const ETAG = { ETag: { description: 'Entity tag for If-Match', schema: Type.String() } };

function ifMatch(ctx: Context): number[] | undefined {
  return ifMatchVersions(ctx.get('If-Match') || undefined);
}

/**
 * USER principals arrive only through identity connectors: asking to create one is refused as
 * such, whatever else the body holds (an `email`, fields of its own, invalid values).
 */
function refuseUser(body: unknown): void {
  if (body !== null && typeof body === 'object' && (body as { type?: unknown }).type === 'USER') {
    throw new AppError(
      'PRINCIPAL_MANAGED_BY_CONNECTOR',
      'USER principals are created by identity connectors, not through the API',
    );
  }
}

export function principalRoutes(deps: { principals: PrincipalService }): AnyRoute[] {
  const read = {
    tags: ['Principals'],
    auth: { scope: 'principals:read' as const },
    rateLimit: 'standard' as const,
  };
  const write = {
    tags: ['Principals'],
    auth: { scope: 'principals:write' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/principals',
      operationId: 'listPrincipals',
      summary: 'List principals',
      description:
        'Newest first (`created_at` descending, then `id` descending). `status` defaults to every status except `deleted`.',
      query: PrincipalListQuery,
      responses: { 200: { description: 'A page of principals', schema: PrincipalList } },
      handler: async ({ query }) => ({
        body: listBody(
          await deps.principals.search({
            query: {
              ...(query.type ? { type: query.type } : {}),
              ...(query.status ? { status: query.status } : {}),
              ...(query.connector_source ? { connector_source: query.connector_source } : {}),
            },
            sort: { field: 'created_at', order: 'desc' },
            ...(query.page !== undefined ? { page: query.page } : {}),
            ...(query.limit !== undefined ? { limit: query.limit } : {}),
          }),
          principalListItem,
        ),
      }),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      path: '/v1/principals',
      operationId: 'createPrincipal',
      summary: 'Create a principal',
      description:
        'SERVICE_ACCOUNT, AI_AGENT and API_KEY principals. USER principals come from identity connectors (403 `PRINCIPAL_MANAGED_BY_CONNECTOR`). `attributes.manager_id` must name an existing principal (422 `REFERENCE_NOT_FOUND`).',
      body: CreatePrincipalBody,
      bodyGuard: refuseUser,
      responses: {
        201: { description: 'Created', schema: CreatedPrincipal, headers: ETAG },
        403: { description: '`PRINCIPAL_MANAGED_BY_CONNECTOR` (USER) or `INSUFFICIENT_SCOPE`' },
        422: { description: '`REFERENCE_NOT_FOUND` for an unknown manager' },
      },
      handler: async ({ ctx, body }) => {
        const principal = await deps.principals.create(body, operationContext(ctx));
        return {
          status: 201,
          body: createdPrincipal(principal),
          headers: { Location: `/v1/principals/${principal.id}`, ETag: etagOf(principal) },
        };
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/principals/{id}',
      operationId: 'getPrincipal',
      summary: 'Get a principal',
      description:
        'Deleted principals are still returned (status `deleted`), so that ids in audit trails stay resolvable.',
      params: IdParams,
      responses: { 200: { description: 'The principal', schema: PrincipalSchema, headers: ETAG } },
      handler: async ({ params }) => {
        const principal = await deps.principals.get(params.id);
        return { body: principalView(principal), headers: { ETag: etagOf(principal) } };
      },
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      path: '/v1/principals/{id}',
      operationId: 'updatePrincipal',
      summary: 'Update a principal',
      description:
        '`attributes` and `metadata` merge (a key set to `null` is removed). `status` moves between `active` and `suspended` (suspended principals are denied every decision). USER principals accept only `attributes` and `metadata`. Honours `If-Match`.',
      params: IdParams,
      body: PatchPrincipalBody,
      responses: {
        200: { description: 'Updated', schema: UpdatedPrincipal, headers: ETAG },
        403: {
          description: '`PRINCIPAL_MANAGED_BY_CONNECTOR` for connector-owned fields of USER principals',
        },
        409: { description: '`PRINCIPAL_DELETED`' },
        412: { description: '`PRECONDITION_FAILED`: If-Match does not match' },
        422: { description: '`REFERENCE_NOT_FOUND` or `CYCLE_DETECTED` for `manager_id`' },
      },
      handler: async ({ ctx, params, body }) => {
        const principal = await deps.principals.update(params.id, body, ifMatch(ctx), operationContext(ctx));
        return { body: updatedPrincipal(principal), headers: { ETag: etagOf(principal) } };
      },
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      path: '/v1/principals/{id}',
      operationId: 'deletePrincipal',
      summary: 'Delete a principal',
      description:
        'SERVICE_ACCOUNT, AI_AGENT and API_KEY only. The principal leaves every group, its manager edges go, and it disappears from lists, searches and relationships; GET still returns it. Honours `If-Match`.',
      params: IdParams,
      responses: {
        200: { description: 'Deleted', schema: DeletedPrincipal },
        403: { description: '`PRINCIPAL_MANAGED_BY_CONNECTOR` (USER)' },
        409: { description: '`PRINCIPAL_DELETED`: already deleted' },
        412: { description: '`PRECONDITION_FAILED`' },
      },
      handler: async ({ ctx, params }) => {
        return { body: await deps.principals.delete(params.id, ifMatch(ctx), operationContext(ctx)) };
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/principals/{id}/relationships',
      operationId: 'getPrincipalRelationships',
      summary: 'Query the identity graph around a principal',
      description:
        'Entries in this order: manager by depth, reports by depth, group_member by depth. `principals` are sorted by name then id and capped at 1000 per entry (`count` stays true, `truncated: true` marks the cap).',
      params: IdParams,
      query: RelationshipsQuery,
      responses: { 200: { description: 'The relationship record', schema: RelationshipRecord } },
      handler: async ({ params, query }) => ({
        body: await deps.principals.relationships(
          params.id,
          query.type ? [query.type] : RELATIONSHIP_TYPES,
          query.depth ?? 1,
        ),
      }),
    }),
  ];
}
