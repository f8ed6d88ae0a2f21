import { Type } from '@sinclair/typebox';
import { pageOf } from '../../pagination.js';
import { Id } from '../../schemas/common.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeletedWebhook,
  DeliveryList,
  DeliveryListQuery,
  UpdateWebhookBody,
  WebhookList,
  WebhookListQuery,
  WebhookSchema,
  WebhookSecret,
  WebhookTestResult,
} from '../../schemas/webhooks.js';
import type { WebhookService } from '../../webhooks/service.js';
import { listBody, operationContext } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

const IdParams = Type.Object({ id: Id('webhook') });
const EmptyBody = Type.Object({}, { additionalProperties: false });

export function webhookRoutes(deps: { webhooks: WebhookService }): AnyRoute[] {
  const common = { tags: ['Webhooks'], rateLimit: 'standard' as const };
  const read = { ...common, auth: { scope: 'webhooks:read' as const } };
  const write = { ...common, auth: { scope: 'webhooks:write' as const } };
  return [
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      summary: 'List webhooks',
      description: 'Newest first (`created_at` descending, then `id` descending).',
      query: WebhookListQuery,
      responses: { 200: { description: 'A page of webhooks', schema: WebhookList } },
      handler: async ({ query }) => ({
        body: listBody(await deps.webhooks.list(query.status, pageOf(query))),
      }),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      summary: 'Subscribe a URL to audit events',
      description:
        'Events matching `events` (`*`, a type such as `policy.updated`, or `principal.*`) are delivered at least once, signed as Standard Webhooks with the `secret` this response carries once. The URL must be https and must not point to a loopback, private, link-local or other internal address.',
      body: CreateWebhookBody,
      responses: { 201: { description: 'Created', schema: CreatedWebhook } },
      handler: async ({ ctx, body }) => {
        const created = await deps.webhooks.create(body, operationContext(ctx));
        return { status: 201, body: created, headers: { Location: `/v1/webhooks/${created.id}` } };
      },
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'Get a webhook',
      params: IdParams,
      responses: { 200: { description: 'The webhook', schema: WebhookSchema } },
      handler: async ({ params }) => ({ body: await deps.webhooks.get(params.id) }),
    }),
    defineRoute({
      ...write,
      method: 'PATCH',
      path: '/v1/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Change a webhook, or enable or disable it',
      description:
        'Enabling a disabled webhook resets its failure count; what was queued for it is delivered.',
      params: IdParams,
      body: UpdateWebhookBody,
      responses: { 200: { description: 'The webhook', schema: WebhookSchema } },
      handler: async ({ ctx, params, body }) => ({
        body: await deps.webhooks.update(params.id, body, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...write,
      method: 'DELETE',
      path: '/v1/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook',
      description: 'Nothing more is delivered to it, including what was still queued.',
      params: IdParams,
      responses: { 200: { description: 'Deleted', schema: DeletedWebhook } },
      handler: async ({ ctx, params }) => ({
        body: await deps.webhooks.delete(params.id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      path: '/v1/webhooks/{id}/test',
      operationId: 'testWebhook',
      summary: 'Deliver a test event now',
      description:
        'Sends a signed `webhook.test` event at once (whatever the webhook’s status) and answers how the receiver took it; the attempt is logged and not retried.',
      params: IdParams,
      bodyRequired: false,
      body: EmptyBody,
      responses: { 200: { description: 'The outcome', schema: WebhookTestResult } },
      handler: async ({ ctx, params }) => ({
        body: await deps.webhooks.test(params.id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...write,
      method: 'POST',
      path: '/v1/webhooks/{id}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate the signing secret of a webhook',
      description:
        'Answers the new secret once. For 24 hours deliveries carry two signatures, one per secret, so the receiver can switch without losing a delivery.',
      params: IdParams,
      bodyRequired: false,
      body: EmptyBody,
      responses: { 200: { description: 'The new secret', schema: WebhookSecret } },
      handler: async ({ ctx, params }) => ({
        body: await deps.webhooks.rotateSecret(params.id, operationContext(ctx)),
      }),
    }),
    defineRoute({
      ...read,
      method: 'GET',
      path: '/v1/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The log of delivery attempts',
      description: 'Newest first (`attempted_at` descending, then `id` descending).',
      params: IdParams,
      query: DeliveryListQuery,
      responses: { 200: { description: 'A page of attempts', schema: DeliveryList } },
      handler: async ({ params, query }) => ({
        body: listBody(
          await deps.webhooks.deliveries(
            params.id,
            { eventId: query.event_id, success: query.success },
            pageOf(query),
          ),
        ),
      }),
    }),
  ];
}
