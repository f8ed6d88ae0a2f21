import type { AccessHistoryService } from '../../access-history/service.js';
import { AccessChangeList, AccessChangeListQuery } from '../../schemas/access-history.js';
import { defineRoute, type AnyRoute } from '../route.js';

export function accessHistoryRoutes(deps: { accessHistory: AccessHistoryService }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/access-changes',
      operationId: 'listAccessChanges',
      summary: 'List access changes',
      description:
        'What committed changes did to who can reach what: one change per principal and resource (or policy glob) whose allowed actions moved, with the policies behind it and the audit event that caused it, in the order they were recorded (oldest first). Page by `page`, or follow the history with `cursor` (docs/access-history.md).',
      tags: ['Audit'],
      auth: { scope: 'audit:read' },
      rateLimit: 'standard',
      query: AccessChangeListQuery,
      responses: { 200: { description: 'A page of access changes', schema: AccessChangeList } },
      handler: async ({ query }) => ({ body: await deps.accessHistory.list(query) }),
    }),
  ];
}
