import { Type } from '@sinclair/typebox';
import type { AuditLog } from '../../audit/audit.js';
import { notFound } from '../../errors/errors.js';
import { AuditEventList, AuditEventSchema, AuditListQuery } from '../../schemas/audit.js';
import { Id } from '../../schemas/common.js';
import { pageOf } from '../../pagination.js';
import { listBody } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';

export function auditRoutes(deps: { audit: AuditLog }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/audit/events',
      operationId: 'listAuditEvents',
      summary: 'List audit events',
      description: 'Newest first (`occurred_at` descending, then `id` descending).',
      tags: ['Audit'],
      auth: { scope: 'audit:read' },
      rateLimit: 'standard',
      query: AuditListQuery,
      responses: { 200: { description: 'A page of events', schema: AuditEventList } },
      handler: async ({ query }) => ({
        body: listBody(
          await deps.audit.list(
            {
              ...(query.type ? { types: query.type.split(',') } : {}),
              ...(query.actor_id ? { actorId: query.actor_id } : {}),
              ...(query.target_id ? { targetId: query.target_id } : {}),
              ...(query.outcome ? { outcome: query.outcome } : {}),
              ...(query.since ? { since: query.since } : {}),
              ...(query.until ? { until: query.until } : {}),
            },
            pageOf(query),
          ),
        ),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/audit/events/{id}',
      operationId: 'getAuditEvent',
      summary: 'Get one audit event',
      tags: ['Audit'],
      auth: { scope: 'audit:read' },
      rateLimit: 'standard',
      params: Type.Object({ id: Id('event') }),
      responses: { 200: { description: 'The event', schema: AuditEventSchema } },
      handler: async ({ params }) => {
        const event = await deps.audit.get(params.id);
        if (!event) throw notFound('audit event', params.id);
        return { body: event };
      },
    }),
  ];
}
