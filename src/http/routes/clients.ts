import { Type } from '@sinclair/typebox';
import type { ClientService } from '../../auth/clients.js';
import {
  ClientList,
  ClientListQuery,
  ClientSchema,
  CreateClientBody,
  CreatedClient,
  DeletedClient,
} from '../../schemas/clients.js';
import { Id } from '../../schemas/common.js';
import { pageOf } from '../../pagination.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

const IdParams = Type.Object({ id: Id('client') });

export function clientRoutes(deps: { clients: ClientService }): AnyRoute[] {
  const common = {
    tags: ['Clients'],
    auth: { scope: 'clients:admin' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/clients',
      operationId: 'listClients',
      summary: 'List API clients',
      description: 'Newest first. `status` selects active (default) or deleted clients.',
      query: ClientListQuery,
      responses: { 200: { description: 'A page of clients', schema: ClientList } },
      handler: async ({ query }) => ({
        body: listBody(await deps.clients.list([query.status ?? 'active'], pageOf(query))),
      }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/v1/clients',
      operationId: 'createClient',
      summary: 'Create an API client',
      description: 'The response carries `client_secret` once; only a slow hash of it is stored.',
      body: CreateClientBody,
      responses: {
        201: { description: 'Created', schema: CreatedClient },
        409: { description: 'An active client has this name (`CONFLICT`)' },
      },
      handler: async ({ ctx, body }) => {
        const created = await deps.clients.create(body, operationContext(ctx));
        return { status: 201, body: created, headers: { Location: `/v1/clients/${created.id}` } };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/clients/{id}',
      operationId: 'getClient',
      summary: 'Get an API client',
      params: IdParams,
      responses: { 200: { description: 'The client', schema: ClientSchema } },
      handler: async ({ params }) => ({ body: await deps.clients.get(params.id) }),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      path: '/v1/clients/{id}',
      operationId: 'deleteClient',
      summary: 'Delete an API client and revoke its tokens',
      params: IdParams,
      responses: {
        200: { description: 'Deleted', schema: DeletedClient },
        409: { description: 'Already deleted, or the last client holding `clients:admin` (`CONFLICT`)' },
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.clients.delete(params.id, operationContext(ctx)),
      }),
    }),
  ];
}
