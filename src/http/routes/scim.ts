import { Type, type Static } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { OperationContext } from '../../audit/audit.js';
import { ScimError } from '../../scim/errors.js';
import { dialectOf } from '../../scim/dialect.js';
import { resourceTypes, schemas, serviceProviderConfig } from '../../scim/discovery.js';
import { project } from '../../scim/projection.js';
import { findNamed, memberOf, sameName } from '../../scim/names.js';
import { isObject, type ScimObject } from '../../scim/resource.js';
import { LIST_SCHEMA, PATCH_SCHEMA } from '../../scim/schema.js';
import type { ScimGroupService } from '../../scim/groups-service.js';
import type { ListRequest, ListResult, ScimUserService } from '../../scim/users-service.js';
import type { ScimCaller } from '../../connectors/model.js';
import { ScimBody, ScimListQuery, ScimListResponse, ScimResource } from '../../schemas/scim.js';
import { requestMeta } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { stateOf } from '../state.js';

const SCIM_JSON = 'application/scim+json';
const DEFAULT_COUNT = 100;
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });
const LIST_OK = { 200: { description: 'A list response', schema: ScimListResponse, contentType: SCIM_JSON } };

function caller(ctx: Context) {
  const connector = stateOf(ctx).connector;
  if (!connector) throw new ScimError(401, undefined, 'a connector SCIM token is required');
  return connector;
}

function operation(ctx: Context): OperationContext {
  return { actor: { type: 'connector', id: caller(ctx).id }, meta: requestMeta(ctx) };
}

type ScimResourceBody = Static<typeof ScimResource>;

/**
 * Whether a SCIM object is a resource as the OpenAPI document describes it. The SCIM services
 * build their objects as free JSON; every one they answer carries `schemas` (RFC 7643 §3).
 */
function isScimResource(object: ScimObject): object is ScimObject & ScimResourceBody {
  const { schemas, id, meta } = object;
  return (
    Array.isArray(schemas) &&
    schemas.every((s) => typeof s === 'string') &&
    (id === undefined || typeof id === 'string') &&
    (meta === undefined || (isObject(meta) && typeof meta['resourceType'] === 'string'))
  );
}

/** A SCIM object answered as a resource; one without `schemas` is a fault of the service. */
function asResource(object: ScimObject): ScimResourceBody {
  if (!isScimResource(object)) throw new Error('a SCIM object without the members of a resource');
  return object;
}

/** The version (the weak ETag) a resource's `meta` gives, if any. */
function versionOf(object: ScimObject): string | undefined {
  const meta = object['meta'];
  return isObject(meta) && typeof meta['version'] === 'string' ? meta['version'] : undefined;
}

function resource<S extends 200 | 201>(object: ScimObject, status: S, location?: string) {
  const body = asResource(object);
  const version = versionOf(object);
  return {
    status,
    body,
    headers: {
      ...(version ? { ETag: version } : {}),
      ...(location ? { Location: location } : {}),
    },
  };
}

/**
 * A PATCH answered without a body (RFC 7644 §3.5.2: 204 "and the appropriate response headers"):
 * the resource's new ETag still comes.
 */
function noContent(object: ScimObject) {
  const version = versionOf(object);
  const headers: Record<string, string> = version ? { ETag: version } : {};
  return { status: 204 as const, headers };
}

function listResponse(total: number, startIndex: number, items: ScimObject[]) {
  return {
    body: {
      schemas: [LIST_SCHEMA],
      totalResults: total,
      startIndex,
      itemsPerPage: items.length,
      Resources: items.map(asResource),
    },
  };
}

/** A discovery resource by its id, regardless of case (RFC 7644 §4). */
function found(items: ScimObject[], id: string, what: string): ScimObject {
  const item = findNamed(items, id, (i) => i['id']);
  if (!item) throw new ScimError(404, undefined, `no ${what} ${id}`);
  return item;
}

/** Members are read only when the answer shows them. */
function wantsMembers(query: {
  attributes?: string | undefined;
  excludedAttributes?: string | undefined;
}): boolean {
  const names = (list: string | undefined) => (list ?? '').split(',').map((n) => n.trim());
  const members = (n: string): boolean => sameName(n.split('.')[0]!, 'members');
  if (query.attributes) return names(query.attributes).some(members);
  return !names(query.excludedAttributes).some((n) => sameName(n, 'members'));
}

function patchOperations(body: Record<string, unknown>): unknown[] {
  const ops = memberOf(body, 'Operations');
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
    errors: 'scim' as const,
  };
  // The discovery documents depend on nothing but the base URL.
  const config = serviceProviderConfig(base);
  const types = resourceTypes(base);
  const schemaDocs = schemas(base);
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
      handler: () => ({ body: asResource(config) }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/serviceConfiguration',
      operationId: 'scimServiceConfiguration',
      summary: "ServiceProviderConfig, at the path Microsoft's reference tests ask",
      description: 'The same document as `/scim/v2/ServiceProviderConfig`, whose location it gives.',
      responses: ok('RFC 7643 §5'),
      handler: () => ({ body: asResource(config) }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/ResourceTypes',
      operationId: 'scimResourceTypes',
      summary: 'The SCIM resource types',
      responses: LIST_OK,
      handler: () => listResponse(types.length, 1, types),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Schemas',
      operationId: 'scimSchemas',
      summary: 'The SCIM schemas, with every attribute',
      responses: LIST_OK,
      handler: () => listResponse(schemaDocs.length, 1, schemaDocs),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/ResourceTypes/{id}',
      operationId: 'scimResourceType',
      summary: 'One SCIM resource type',
      params: IdParams,
      responses: ok('The resource type'),
      handler: ({ params }) => ({ body: asResource(found(types, params.id, 'resource type')) }),
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/scim/v2/Schemas/{id}',
      operationId: 'scimSchema',
      summary: 'One SCIM schema, by its URI',
      params: IdParams,
      responses: ok('The schema'),
      handler: ({ params }) => ({ body: asResource(found(schemaDocs, params.id, 'schema')) }),
    }),
    ...resourceRoutes(common, {
      kind: 'User',
      plural: 'Users',
      listDescription:
        'RFC 7644 §3.4.2: `filter` (the full grammar), `startIndex`, `count` (at most 200), `attributes`, `excludedAttributes`. Ordered by creation.',
      createSummary: 'Provision a user',
      conflict:
        '`uniqueness`: the userName is taken in this connector (in any case; an externalId may repeat)',
      putSummary: 'Replace a user',
      patchSummary: 'Change a user (PatchOp)',
      deleteSummary: 'Deprovision a user',
      deleteDescription:
        'The principal stays (status `deprovisioned`) for history; SCIM answers 404 for it from now on.',
      base,
      service: {
        list: (caller, request) => users.list(caller, request),
        get: (caller, id) => users.get(caller, id),
        create: (caller, body, op) => users.create(caller, body, op),
        replace: (caller, id, body, ifMatch, op) => users.replace(caller, id, body, ifMatch, op),
        patch: (caller, id, ops, ifMatch, op) => users.patch(caller, id, ops, ifMatch, op),
        delete: (caller, id, ifMatch, op) => users.delete(caller, id, ifMatch, op),
      },
    }),
    ...resourceRoutes(common, {
      kind: 'Group',
      plural: 'Groups',
      listDescription:
        'RFC 7644 §3.4.2: `filter`, `startIndex`, `count` (at most 200), `attributes`, `excludedAttributes` (`members` left out saves reading them). Ordered by creation.',
      createSummary: 'Provision a group',
      conflict: '`uniqueness`: the displayName is taken in this connector (in any case)',
      putSummary: 'Replace a group, members included',
      patchSummary: 'Change a group (PatchOp): name, members added, removed or replaced',
      deleteSummary: 'Delete a group',
      deleteDescription: 'The group and its memberships go; its members stay.',
      base,
      service: {
        list: (caller, request, query) => groups.list(caller, request, wantsMembers(query)),
        get: (caller, id, query) => groups.get(caller, id, wantsMembers(query)),
        create: (caller, body, op) => groups.create(caller, body, op),
        replace: (caller, id, body, ifMatch, op) => groups.replace(caller, id, body, ifMatch, op),
        patch: (caller, id, ops, ifMatch, op) => groups.patch(caller, id, ops, ifMatch, op),
        delete: (caller, id, ifMatch, op) => groups.delete(caller, id, ifMatch, op),
      },
    }),
  ];
}

type Projection = { attributes?: string | undefined; excludedAttributes?: string | undefined };

/** What the routes of one SCIM resource type call. */
interface ResourceService {
  list(caller: ScimCaller, request: ListRequest, query: Projection): Promise<ListResult>;
  get(caller: ScimCaller, id: string, query: Projection): Promise<ScimObject>;
  create(caller: ScimCaller, body: unknown, op: OperationContext): Promise<ScimObject>;
  replace(
    caller: ScimCaller,
    id: string,
    body: unknown,
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<ScimObject>;
  patch(
    caller: ScimCaller,
    id: string,
    operations: unknown[],
    ifMatch: string | undefined,
    op: OperationContext,
  ): Promise<ScimObject>;
  delete(caller: ScimCaller, id: string, ifMatch: string | undefined, op: OperationContext): Promise<void>;
}

/** List, create, get, replace, patch and delete of one SCIM resource type. */
function resourceRoutes(
  common: { tags: string[]; auth: 'connector'; rateLimit: 'scim'; errors: 'scim' },
  spec: {
    kind: 'User' | 'Group';
    plural: 'Users' | 'Groups';
    listDescription: string;
    createSummary: string;
    conflict: string;
    putSummary: string;
    patchSummary: string;
    deleteSummary: string;
    deleteDescription: string;
    base: string;
    service: ResourceService;
  },
): AnyRoute[] {
  const { kind, plural, service } = spec;
  const collection = `/scim/v2/${plural}`;
  const item = `${collection}/{id}`;
  const one = {
    200: { description: `The ${kind.toLowerCase()}`, schema: ScimResource, contentType: SCIM_JSON },
  };
  const stale = { 412: { description: '`If-Match` does not match' } };
  const ifMatch = (ctx: Context): string | undefined => ctx.get('If-Match') || undefined;
  return [
    defineRoute({
      ...common,
      method: 'GET',
      path: collection,
      operationId: `scimList${plural}`,
      summary: `List the connector's ${plural.toLowerCase()}`,
      description: spec.listDescription,
      query: ScimListQuery,
      responses: LIST_OK,
      handler: async ({ ctx, query }) => {
        const startIndex = Math.max(1, query.startIndex ?? 1);
        const count = Math.max(0, query.count ?? DEFAULT_COUNT);
        const result = await service.list(caller(ctx), { filter: query.filter, startIndex, count }, query);
        const items = result.resources.map((r) => project(r, query.attributes, query.excludedAttributes));
        return listResponse(result.totalResults, startIndex, items);
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: collection,
      operationId: `scimCreate${kind}`,
      summary: spec.createSummary,
      body: ScimBody,
      responses: {
        201: { description: 'Created', schema: ScimResource, contentType: SCIM_JSON },
        409: { description: spec.conflict },
      },
      handler: async ({ ctx, body }) => {
        const created = await service.create(caller(ctx), body, operation(ctx));
        return resource(created, 201, `${spec.base}/${plural}/${created['id'] as string}`);
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: item,
      operationId: `scimGet${kind}`,
      summary: `Get a ${kind.toLowerCase()}`,
      params: IdParams,
      query: ScimListQuery,
      responses: one,
      handler: async ({ ctx, params, query }) =>
        resource(
          project(
            await service.get(caller(ctx), params.id, query),
            query.attributes,
            query.excludedAttributes,
          ),
          200,
        ),
    }),
    defineRoute({
      ...common,
      method: 'PUT',
      path: item,
      operationId: `scimReplace${kind}`,
      summary: spec.putSummary,
      params: IdParams,
      body: ScimBody,
      responses: { ...one, 409: { description: spec.conflict }, ...stale },
      handler: async ({ ctx, params, body }) =>
        resource(await service.replace(caller(ctx), params.id, body, ifMatch(ctx), operation(ctx)), 200),
    }),
    defineRoute({
      ...common,
      method: 'PATCH',
      path: item,
      operationId: `scimPatch${kind}`,
      summary: spec.patchSummary,
      description:
        'Answers 200 with the resource, or 204 without a body for a connector of profile `entra` (docs/scim.md, Profiles).',
      params: IdParams,
      body: ScimBody,
      responses: {
        ...one,
        204: { description: `The ${kind.toLowerCase()} changed (profile \`entra\`), with its ETag` },
        409: { description: spec.conflict },
        ...stale,
      },
      handler: async ({ ctx, params, body }) => {
        const who = caller(ctx);
        const patched = await service.patch(
          who,
          params.id,
          patchOperations(body),
          ifMatch(ctx),
          operation(ctx),
        );
        return dialectOf(who).patchAnswersNoContent ? noContent(patched) : resource(patched, 200);
      },
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      path: item,
      operationId: `scimDelete${kind}`,
      summary: spec.deleteSummary,
      description: spec.deleteDescription,
      params: IdParams,
      responses: { 204: { description: kind === 'User' ? 'Deprovisioned' : 'Deleted' }, ...stale },
      handler: async ({ ctx, params }) => {
        await service.delete(caller(ctx), params.id, ifMatch(ctx), operation(ctx));
        return { status: 204 };
      },
    }),
  ];
}
