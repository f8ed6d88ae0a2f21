import { Type } from '@sinclair/typebox';
import { fromStored, type StoredEvent } from '../../audit/audit.js';
import { parseInstant } from '../../time.js';
import { defineReportType } from '../report-type.js';
import type { SourceRows } from '../sources.js';

/** Where a range left open by the request starts: before any event. */
const EPOCH = '1970-01-01T00:00:00.000Z';

/**
 * The audit events of `[since, until)`, oldest first, in keyset pages: the cursor is the last
 * event's time and id. The request fixes `until` when it is left open, so that a run resumed
 * later reads no event recorded after the request.
 */
export const auditLog = defineReportType({
  name: 'audit_log',
  description: 'the audit events of `[since, until)`, oldest first',
  parameters: Type.Object(
    {
      since: Type.Optional(
        Type.String({
          format: 'date-time',
          maxLength: 64,
          description: 'RFC 3339; default: from the first event',
        }),
      ),
      until: Type.Optional(
        Type.String({
          format: 'date-time',
          maxLength: 64,
          description: 'RFC 3339, later than `since`; default: the instant of the request',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  settle: ({ since, until }, now) => {
    // The schema's format accepts exactly what parseInstant reads: both are instants here.
    const range = {
      since: since === undefined ? EPOCH : (parseInstant(since) ?? since),
      until: until === undefined ? now : (parseInstant(until) ?? until),
    };
    return Date.parse(range.since) >= Date.parse(range.until)
      ? [{ pointer: '/until', message: 'must be later than since' }]
      : range;
  },
  columns: [
    'id',
    'occurred_at',
    'type',
    'actor_type',
    'actor_id',
    'target_type',
    'target_id',
    'outcome',
    'reason',
    'request_id',
    'source_ip',
    'user_agent',
    'changes',
  ],
  queries: ['count_audit_log', 'rows_audit_log'],
  source: (parameters, { pageSize }) => {
    const range = { since: String(parameters['since']), until: String(parameters['until']) };
    const limit = pageSize.principals;
    return {
      total: (read) => read.total('count_audit_log', range),
      page: async (read, cursor) => {
        const [afterAt, afterId] = cursor ? (JSON.parse(cursor) as [string, string]) : [null, null];
        const page = await read.page<SourceRows<StoredEvent> & { lastAt?: string | null }>('rows_audit_log', {
          ...range,
          afterAt,
          afterId,
          limit,
        });
        return {
          rows: page.rows.map((stored) => {
            const e = fromStored(stored);
            return {
              id: e.id,
              occurred_at: e.occurred_at,
              type: e.type,
              actor_type: e.actor.type,
              actor_id: e.actor.id,
              target_type: e.target.type,
              target_id: e.target.id,
              outcome: e.outcome,
              reason: e.reason ?? null,
              request_id: e.request_id,
              source_ip: e.source_ip,
              user_agent: e.user_agent,
              changes: e.changes,
            };
          }),
          scanned: page.scanned,
          cursor:
            page.scanned < limit || !page.last ? null : JSON.stringify([page.lastAt ?? null, page.last]),
        };
      },
    };
  },
});
