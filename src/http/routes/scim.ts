import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { OperationContext } from '../../audit/audit.js';
import { ScimError } from '../../scim/errors.js';
import { resourceTypes, schemas, serviceProviderConfig } from '../../scim/discovery.js';
import { project } from '../../scim/projection.js';
import { isObject, type ScimObject } from '../../scim/resource.js';
import { LIST_SCHEMA, PATCH_SCHEMA } from '../../scim/schema.js';
import type { ScimGroupService } from '../../scim/groups-service.js';
import type { ScimUserService } from '../../scim/users-service.js';
import { ScimBody, ScimListQuery, ScimListResponse, ScimResource } from '../../schemas/scim.js';
import { requestMeta } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { stateOf } from '../state.js';

const SCIM_JSON = 'application/scim+json';
const DEFAULT_COUNT = 100;
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

function caller(ctx: Context) {
  const connector = stateOf(ctx).connector;
  if (!connector) throw new ScimError(401, undefined, 'a connector SCIM token is required');
  return connector;
}

function operation(ctx: Context): OperationContext {
  return { actor: { type: 'connector', id: caller(ctx).id }, meta: requestMeta(ctx) };
}

function resource(body: ScimObject, status = 200, location?: string) {
  const meta = body['meta'];
  const version = isObject(meta) && typeof meta['version'] === 'string' ? meta['version'] : undefined;
  return {
    status,
    body,
    headers: {
      ...(version ? { ETag: version } : {}),
      ...(location ? { Location: location } : {}),
    },
  };
}

function listResponse(total: number, startIndex: number, items: ScimObject[]) {
  return {
    body: {
      schemas: [LIST_SCHEMA],
      totalResults: total,
      startIndex,
      itemsPerPage: items.length,
      Resources: items,
    },
  };
}

/** A discovery resource by its id, regardless of case (RFC 7644 §4). */
function found(items: ScimObject[], id: string, what: string): ScimObject {
  const item = items.find((i) => typeof i['id'] === 'string' && i['id'].toLowerCase() === id.toLowerCase());
  if (!item) throw new ScimError(404, undefined, `no ${what} ${id}`);
  return item;
}

/** Members are read only when the answer shows them. */
function wantsMembers(query: {
  attributes?: string | undefined;
  excludedAttributes?: string | undefined;
}): boolean {
  const names = (list: string | undefined) => (list ?? '').split(',').map((n) => n.trim().toLowerCase());
  if (query.attributes)
    return names(query.attributes).some((n) => n === 'members' || n.startsWith('members.'));
  return !names(query.excludedAttributes).includes('members');
}

function patchOperations(body: Record<string, unknown>): unknown[] {
  const ops = Object.entries(body).find(([k]) => k.toLowerCase() === 'operations')?.[1];
  if (!Array.isArray(ops))
    throw new ScimError(400, 'invalidSyntax', `a PatchOp (${PATCH_SCHEMA}) needs an Operations array`);
  return ops;
}

/**
 * The SCIM 2.0 service provider of each connector (RFC 7644), at `/scim/v2`: the bearer token is
 * the connector's, which decides whose users a request sees. Paths match regardless of case
 * (`/Users`, `/users`), bodies may be `application/scim+json` or `application/json`, and the
 * bodies are read by the SCIM service itself, leniently, as real provisioning clients need.
 */
export function scimRoutes(deps: { scimUsers: ScimUserService; scimGroups: ScimGroupService }): AnyRoute[] {
  const users = deps.scimUsers;
  const groups = deps.scimGroups;
  const base = users.baseUrl;
  const common = {
    tags: ['SCIM'],
    auth: 'connector' as const,
    rateLimit: 'scim' as const,
    scim: true,
  };
  const ok = (description: string) => ({
    200: { description, schema: ScimResource, contentType: SCIM_JSON },
  });
  return [
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/ServiceProviderConfig',
      operationId: 'scimServiceProviderConfig',
      summary: 'What this SCIM service provider supports',
      responses: ok('RFC 7643 §5'),
      handler: () => ({ body: serviceProviderConfig(base) }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/ResourceTypes',
      operationId: 'scimResourceTypes',
      summary: 'The SCIM resource types',
      responses: {
        200: { description: 'A list response', schema: ScimListResponse, contentType: SCIM_JSON },
      },
      handler: () => {
        const items = resourceTypes(base);
        return listResponse(items.length, 1, items);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Schemas',
      operationId: 'scimSchemas',
      summary: 'The SCIM schemas, with every attribute',
      responses: {
        200: { description: 'A list response', schema: ScimListResponse, contentType: SCIM_JSON },
      },
      handler: () => {
        const items = schemas(base);
        return listResponse(items.length, 1, items);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/ResourceTypes/{id}',
      operationId: 'scimResourceType',
      summary: 'One SCIM resource type',
      params: IdParams,
      responses: ok('The resource type'),
      handler: ({ params }) => ({ body: found(resourceTypes(base), params.id, 'resource type') }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Schemas/{id}',
      operationId: 'scimSchema',
      summary: 'One SCIM schema, by its URI',
      params: IdParams,
      responses: ok('The schema'),
      handler: ({ params }) => ({ body: found(schemas(base), params.id, 'schema') }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Users',
      operationId: 'scimListUsers',
      summary: "List the connector's users",
      description:
        'RFC 7644 §3.4.2: `filter` (the full grammar), `startIndex`, `count` (at most 200), `attributes`, `excludedAttributes`. Ordered by creation.',
      query: ScimListQuery,
      responses: {
        200: { description: 'A list response', schema: ScimListResponse, contentType: SCIM_JSON },
      },
      handler: async ({ ctx, query }) => {
        const startIndex = Math.max(1, query.startIndex ?? 1);
        const result = await users.list(caller(ctx), {
          filter: query.filter,
          startIndex,
          count: Math.max(0, query.count ?? DEFAULT_COUNT),
        });
        const items = result.resources.map((r) => project(r, query.attributes, query.excludedAttributes));
        return listResponse(result.totalResults, startIndex, items);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/scim/v2/Users',
      operationId: 'scimCreateUser',
      summary: 'Provision a user',
      body: ScimBody,
      responses: {
        201: { description: 'Created', schema: ScimResource, contentType: SCIM_JSON },
        409: { description: '`uniqueness`: the userName (or externalId) is taken' },
      },
      handler: async ({ ctx, body }) => {
        const created = await users.create(caller(ctx), body, operation(ctx));
        return resource(created, 201, `${base}/Users/${created['id'] as string}`);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Users/{id}',
      operationId: 'scimGetUser',
      summary: 'Get a user',
      params: IdParams,
      query: ScimListQuery,
      responses: ok('The user'),
      handler: async ({ ctx, params, query }) =>
        resource(
          project(await users.get(caller(ctx), params.id), query.attributes, query.excludedAttributes),
        ),
    }),
    defineRoute({
      ...common,
      method: 'PUT',
      path: '/scim/v2/Users/{id}',
      operationId: 'scimReplaceUser',
      summary: 'Replace a user',
      params: IdParams,
      body: ScimBody,
      responses: { ...ok('The user'), 412: { description: '`If-Match` does not match' } },
      handler: async ({ ctx, params, body }) =>
        resource(
          await users.replace(caller(ctx), params.id, body, ctx.get('If-Match') || undefined, operation(ctx)),
        ),
    }),
    defineRoute({
      ...common,
      method: 'PATCH',
      path: '/scim/v2/Users/{id}',
      operationId: 'scimPatchUser',
      summary: 'Change a user (PatchOp)',
      params: IdParams,
      body: ScimBody,
      responses: { ...ok('The user'), 412: { description: '`If-Match` does not match' } },
      handler: async ({ ctx, params, body }) =>
        resource(
          await users.patch(
            caller(ctx),
            params.id,
            patchOperations(body),
            ctx.get('If-Match') || undefined,
            operation(ctx),
          ),
        ),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      path: '/scim/v2/Users/{id}',
      operationId: 'scimDeleteUser',
      summary: 'Deprovision a user',
      description:
        'The principal stays (status `deprovisioned`) for history; SCIM answers 404 for it from now on.',
      params: IdParams,
      responses: { 204: { description: 'Deprovisioned' }, 412: { description: '`If-Match` does not match' } },
      handler: async ({ ctx, params }) => {
        await users.delete(caller(ctx), params.id, ctx.get('If-Match') || undefined, operation(ctx));
        return { status: 204 };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Groups',
      operationId: 'scimListGroups',
      summary: "List the connector's groups",
      description:
        'RFC 7644 §3.4.2: `filter`, `startIndex`, `count` (at most 200), `attributes`, `excludedAttributes` (`members` left out saves reading them). Ordered by creation.',
      query: ScimListQuery,
      responses: {
        200: { description: 'A list response', schema: ScimListResponse, contentType: SCIM_JSON },
      },
      handler: async ({ ctx, query }) => {
        const startIndex = Math.max(1, query.startIndex ?? 1);
        const result = await groups.list(
          caller(ctx),
          { filter: query.filter, startIndex, count: Math.max(0, query.count ?? DEFAULT_COUNT) },
          wantsMembers(query),
        );
        const items = result.resources.map((r) => project(r, query.attributes, query.excludedAttributes));
        return listResponse(result.totalResults, startIndex, items);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/scim/v2/Groups',
      operationId: 'scimCreateGroup',
      summary: 'Provision a group',
      body: ScimBody,
      responses: {
        201: { description: 'Created', schema: ScimResource, contentType: SCIM_JSON },
        409: { description: '`uniqueness`: the displayName (or externalId) is taken in this connector' },
      },
      handler: async ({ ctx, body }) => {
        const created = await groups.create(caller(ctx), body, operation(ctx));
        return resource(created, 201, `${base}/Groups/${created['id'] as string}`);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Groups/{id}',
      operationId: 'scimGetGroup',
      summary: 'Get a group',
      params: IdParams,
      query: ScimListQuery,
      responses: ok('The group'),
      handler: async ({ ctx, params, query }) =>
        resource(
          project(
            await groups.get(caller(ctx), params.id, wantsMembers(query)),
            query.attributes,
            query.excludedAttributes,
          ),
        ),
    }),
    defineRoute({
      ...common,
      method: 'PUT',
      path: '/scim/v2/Groups/{id}',
      operationId: 'scimReplaceGroup',
      summary: 'Replace a group, members included',
      params: IdParams,
      body: ScimBody,
      responses: { ...ok('The group'), 412: { description: '`If-Match` does not match' } },
      handler: async ({ ctx, params, body }) =>
        resource(
          await groups.replace(
            caller(ctx),
            params.id,
            body,
            ctx.get('If-Match') || undefined,
            operation(ctx),
          ),
        ),
    }),
    defineRoute({
      ...common,
      method: 'PATCH',
      path: '/scim/v2/Groups/{id}',
      operationId: 'scimPatchGroup',
      summary: 'Change a group (PatchOp): name, members added, removed or replaced',
      params: IdParams,
      body: ScimBody,
      responses: { ...ok('The group'), 412: { description: '`If-Match` does not match' } },
      handler: async ({ ctx, params, body }) =>
        resource(
          await groups.patch(
            caller(ctx),
            params.id,
            patchOperations(body),
            ctx.get('If-Match') || undefined,
            operation(ctx),
          ),
        ),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      path: '/scim/v2/Groups/{id}',
      operationId: 'scimDeleteGroup',
      summary: 'Delete a group',
      description: 'The group and its memberships go; its members stay.',
      params: IdParams,
      responses: { 204: { description: 'Deleted' }, 412: { description: '`If-Match` does not match' } },
      handler: async ({ ctx, params }) => {
        await groups.delete(caller(ctx), params.id, ctx.get('If-Match') || undefined, operation(ctx));
        return { status: 204 };
      },
    }),
  ];
}
