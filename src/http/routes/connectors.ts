import { Type } from '@sinclair/typebox';
import type { ConnectorService } from '../../connectors/service.js';
import type { ConnectorSyncService } from '../../scim/sync-service.js';
import { pageOf } from '../../pagination.js';
import { Id } from '../../schemas/common.js';
import {
  ConnectorList,
  ConnectorListQuery,
  ConnectorSchema,
  ConnectorToken,
  CreateConnectorBody,
  CreatedConnector,
  DeletedConnector,
  SyncSchema,
  UpdateConnectorBody,
} from '../../schemas/connectors.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

const IdParams = Type.Object({ id: Id('connector') });

/** Media types a snapshot may come as. */
const SNAPSHOT_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/x-jsonlines'];

export function connectorRoutes(
  deps: { connectors: ConnectorService; connectorSync: ConnectorSyncService },
  syncMaxBytes: number,
): AnyRoute[] {
  const common = {
    tags: ['Connectors'],
    auth: { scope: 'connectors:admin' as const },
    rateLimit: 'standard' as const,
  };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/connectors',
      operationId: 'listConnectors',
      summary: 'List identity connectors',
      description: 'Newest first. `status` selects active (default) or deleted connectors.',
      query: ConnectorListQuery,
      responses: { 200: { description: 'A page of connectors', schema: ConnectorList } },
      handler: async ({ query }) => ({
        body: listBody(await deps.connectors.list([query.status ?? 'active'], pageOf(query))),
      }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/v1/connectors',
      operationId: 'createConnector',
      summary: 'Create an identity connector',
      description:
        'The response carries the SCIM bearer `token` once; only its digest is stored. The `name` becomes the `connector_source` of every principal and group the connector provisions. `profile` (default `generic`) is the SCIM dialect of its identity provider.',
      body: CreateConnectorBody,
      responses: {
        201: { description: 'Created', schema: CreatedConnector },
        409: { description: 'An active connector has this name (`CONFLICT`)' },
      },
      handler: async ({ ctx, body }) => {
        const created = await deps.connectors.create(body, operationContext(ctx));
        return { status: 201, body: created, headers: { Location: `/v1/connectors/${created.id}` } };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/connectors/{id}',
      operationId: 'getConnector',
      summary: 'Get an identity connector',
      params: IdParams,
      responses: { 200: { description: 'The connector', schema: ConnectorSchema } },
      handler: async ({ params }) => ({ body: await deps.connectors.get(params.id) }),
    }),
    defineRoute({
      ...common,
      method: 'PATCH',
      path: '/v1/connectors/{id}',
      operationId: 'updateConnector',
      summary: "Change a connector's profile or description",
      description:
        'A new `profile` applies to the SCIM requests that follow (on other instances within about a second). `description: null` clears it.',
      params: IdParams,
      body: UpdateConnectorBody,
      responses: {
        200: { description: 'The connector', schema: ConnectorSchema },
        409: { description: 'The connector is deleted (`CONFLICT`)' },
      },
      handler: async ({ ctx, params, body }) => ({
        body: await deps.connectors.update(params.id, body, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...common,
      method: 'DELETE',
      path: '/v1/connectors/{id}',
      operationId: 'deleteConnector',
      summary: 'Delete an identity connector',
      description: 'Its SCIM token stops working at once; the principals and groups it provisioned stay.',
      params: IdParams,
      responses: {
        200: { description: 'Deleted', schema: DeletedConnector },
        409: { description: 'Already deleted (`CONFLICT`)' },
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.connectors.delete(params.id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/v1/connectors/{id}/token',
      operationId: 'rotateConnectorToken',
      summary: 'Rotate the SCIM token of a connector',
      description: 'Answers the new token once; the previous one stops working when this returns.',
      params: IdParams,
      bodyRequired: false,
      body: Type.Object({}, { additionalProperties: false }),
      responses: {
        200: { description: 'The new token', schema: ConnectorToken },
        409: { description: 'The connector is deleted (`CONFLICT`)' },
      },
      handler: async ({ ctx, params }) => ({
        body: await deps.connectors.rotateToken(params.id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/v1/connectors/{id}/sync',
      operationId: 'syncConnector',
      summary: 'Reconcile the connector with a snapshot of its identity provider',
      description:
        'The body is JSON lines, each a SCIM User or Group as the SCIM endpoints take them. A background job creates what is new, updates what changed, deprovisions the users and deletes the groups the snapshot lacks (none when some line cannot be read), and links managers; managers and group members may be named by SCIM id, or by an externalId only one user (or group) of the snapshot and the connector holds. The body is read as it arrives, never held whole. Answers 202 with the sync; follow `Location` for progress and counts.',
      rateLimit: 'bulk',
      params: IdParams,
      body: Type.Unsafe<AsyncIterable<string>>(Type.String({ description: 'JSON lines' })),
      textBody: { mediaTypes: SNAPSHOT_TYPES, limitBytes: syncMaxBytes },
      responses: {
        202: { description: 'Accepted', schema: SyncSchema },
        409: { description: 'The connector is deleted (`CONFLICT`)' },
      },
      handler: async ({ ctx, params, body }) => {
        const sync = await deps.connectorSync.submit(params.id, body, operationContext(ctx));
        return {
          status: 202,
          body: sync,
          headers: { Location: `/v1/connectors/${params.id}/sync/${sync.id}` },
        };
      },
    }),
    defineRoute({
      ...common,
      method: 'GET',
      path: '/v1/connectors/{id}/sync/{sync_id}',
      operationId: 'getConnectorSync',
      summary: 'Progress and outcome of a sync',
      params: Type.Object({ id: Id('connector'), sync_id: Id('job') }),
      responses: { 200: { description: 'The sync', schema: SyncSchema } },
      handler: async ({ params }) => ({ body: await deps.connectorSync.get(params.id, params.sync_id) }),
    }),
  ];
}
