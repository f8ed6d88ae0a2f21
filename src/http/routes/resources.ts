import type { ResourceService } from '../../resources/service.js';
import { pageOf } from '../../pagination.js';
import {
  DeletedResource,
  PutResourceBody,
  ResourceList,
  ResourceListQuery,
  ResourceParams,
  ResourceSchema,
} from '../../schemas/resources.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

export function resourceRoutes(deps: { resources: ResourceService }): AnyRoute[] {
  const read = {
    tags: ['Resources'],
    auth: { scope: 'policies:read' as const },
    rateLimit: 'standard' as const,
  };
  const write = {
    tags: ['Resources'],
    auth: { scope: 'policies:write' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/resources',
      operationId: 'listResources',
      summary: 'List resources',
      description:
        'Registered resources and resources policies name exactly, ordered by type, then identifier.',
      query: ResourceListQuery,
      responses: { 200: { description: 'A page of resources', schema: ResourceList } },
      handler: async ({ query }) => ({
        body: listBody(
          await deps.resources.list({ type: query.type, registered: query.registered }, pageOf(query)),
        ),
      }),
    }),
    defineRoute({
      ...write,
      method: 'PUT',
      path: '/v1/resources/{type}/{identifier}',
      operationId: 'registerResource',
      summary: 'Register a resource',
      description:
        'Sets its attributes (read by `resource.attributes.*` conditions) and owner, replacing earlier ones, and makes it visible to policy globs. The identifier is URL-encoded in the path.',
      params: ResourceParams,
      body: PutResourceBody,
      bodyRequired: false,
      responses: {
        200: { description: 'Registered (it existed)', schema: ResourceSchema },
        201: { description: 'Registered (it is new)', schema: ResourceSchema },
        422: { description: '`REFERENCE_NOT_FOUND`: `owner_id` names no principal' },
      },
      handler: async ({ ctx, params, body }) => {
        const { resource, created } = await deps.resources.put(
          params.type,
          params.identifier,
          body ?? {},
          operationContext(ctx),
        );
        return created
          ? {
              status: 201,
              body: resource,
              headers: {
                Location: `/v1/resources/${encodeURIComponent(resource.type)}/${encodeURIComponent(resource.identifier)}`,
              },
            }
          : { body: resource };
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/resources/{type}/{identifier}',
      operationId: 'getResource',
      summary: 'Get a resource',
      description: 'A registered resource, or one a policy names exactly (`registered: false`).',
      params: ResourceParams,
      responses: { 200: { description: 'The resource', schema: ResourceSchema } },
      handler: async ({ params }) => ({ body: await deps.resources.get(params.type, params.identifier) }),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      path: '/v1/resources/{type}/{identifier}',
      operationId: 'deleteResource',
      summary: 'Delete a resource registration',
      description:
        'Its attributes and owner go and globs no longer list it. While a policy names it exactly, the resource itself stays, unregistered (`named_by_policies`).',
      params: ResourceParams,
      responses: {
        200: { description: 'Deleted', schema: DeletedResource },
        404: { description: '`NOT_FOUND`: no registered resource here' },
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.resources.delete(params.type, params.identifier, operationContext(ctx)),
      }),
    }),
  ];
}
