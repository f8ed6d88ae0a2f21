import type { PrincipalService } from '../../principals/service.js';

import { PrincipalList } from '../../schemas/principals.js';
import { MAX_IN_VALUES, SearchPrincipalsBody } from '../../schemas/search.js';
import { listBody } from '../context.js';
import { principalListItem } from '../views.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { MAX_CONDITIONS } from '../../vocabulary/policies.js';

export function principalSearchRoutes(deps: { principals: PrincipalService }): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/principals/search',
      operationId: 'searchPrincipals',
      summary: 'Search principals',
      description: [
        'Filters on `type`, `status`, `name`, `email`, `connector_source`, `created_at`, `updated_at`, `last_login`, `risk_score` and `attributes`; every condition must hold.',
        'A field or attribute takes a plain value (equality) or an operator object: `$eq`, `$ne`, `$in`, `$nin`, `$gt`, `$gte`, `$lt`, `$lte`, `$contains`, `$startsWith`, `$exists`.',
        'Array attributes match a plain value or `$eq` when they contain it, `$in` when any element is in the list, `$contains` when an element equals the operand.',
        '`$contains` and `$startsWith` on text ignore case. `$gt`-style operators compare numerically with a number operand (values that are not numbers do not match) and as text with a string; timestamps compare as instants.',
        'A missing field or attribute matches only `$ne`, `$nin` and `$exists: false`. Deleted principals are left out unless `query.status` names `deleted`.',
        `At most ${MAX_CONDITIONS} conditions and ${MAX_IN_VALUES} values per \`$in\`/\`$nin\`. Sorted by \`sort.field\` (default \`created_at\`) and \`sort.order\` (default \`desc\`), ties by \`id\`; principals without the sort field come last.`,
      ].join(' '),
      tags: ['Principals'],
      auth: { scope: 'principals:read' },
      rateLimit: 'standard',
      body: SearchPrincipalsBody,
      responses: { 200: { description: 'A page of matching principals', schema: PrincipalList } },
      handler: async ({ body }) => ({
        body: listBody(await deps.principals.search(body), principalListItem),
      }),
    }),
  ];
}
