import { Type } from '@sinclair/typebox';
import { defineReportType } from '../report-type.js';
import { actsFor, byPrincipalId, type SourceRows } from '../sources.js';

/**
 * Each active principal's effective access, as the decision engine gives it: one row per
 * resource (or pattern) it reaches, with whom it acts for when it holds delegations (§10).
 */
export const accessReview = defineReportType({
  name: 'access_review',
  description:
    'each active principal × resource it can reach: actions, denied actions, the policies granting them, whether conditional, `expires_at`, and the delegations it holds (`acts_for`)',
  parameters: Type.Object({}, { additionalProperties: false }),
  columns: [
    'principal_id',
    'principal_name',
    'principal_type',
    'principal_email',
    'resource_type',
    'resource_identifier',
    'pattern',
    'actions',
    'denied_actions',
    'granted_by',
    'conditional',
    'expires_at',
    'acts_for',
  ],
  queries: ['count_active_principals', 'rows_access_review'],
  source: (_parameters, { access, pageSize }) => ({
    total: (read) => read.total('count_active_principals'),
    page: byPrincipalId(
      async (read, after, limit) => {
        const page = await read.page<SourceRows<string>>('rows_access_review', { after, limit });
        // Whom each principal of the page acts for, read with it: an agent's rows carry them.
        const held = page.rows.length > 0 ? await read.actsFor(page.rows, new Date().toISOString()) : null;
        return { ...page, rows: page.rows.map((id) => ({ id, held: held?.get(id) ?? [] })) };
      },
      pageSize.review,
      ({ id, held }) => {
        const found = access.entriesOf(id);
        if (!found) return [];
        const { principal } = found;
        return found.entries.map((e) => ({
          principal_id: principal.id,
          principal_name: principal.name,
          principal_type: principal.type,
          principal_email: principal.email,
          resource_type: e.resource.type,
          resource_identifier: e.resource.identifier,
          pattern: e.pattern === true,
          actions: e.actions,
          denied_actions: e.denied_actions ?? [],
          granted_by: e.granted_by,
          conditional: e.conditional,
          expires_at: e.expires_at ?? null,
          acts_for: actsFor(held),
        }));
      },
    ),
  }),
});
