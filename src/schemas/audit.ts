import { Type } from '@sinclair/typebox';
import { AUDIT_EVENT_TYPES } from '../vocabulary/audit-events.js';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const AuditEventSchema = Type.Object(
  {
    id: Id('event'),
    type: Type.String({ description: `One of ${AUDIT_EVENT_TYPES.join(', ')}` }),
    occurred_at: Timestamp,
    actor: Type.Object(
      {
        type: Type.Union([Type.Literal('client'), Type.Literal('connector'), Type.Literal('system')]),
        id: Type.String(),
      },
      { additionalProperties: false },
    ),
    target: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
    request_id: Nullable(Type.String()),
    source_ip: Nullable(Type.String()),
    user_agent: Nullable(Type.String()),
    reason: Type.Optional(Type.String({ description: 'Why a failure happened' })),
    changes: Type.Union(
      [
        Type.Record(
          Type.String(),
          Type.Object(
            { from: Type.Optional(Type.Unknown()), to: Type.Optional(Type.Unknown()) },
            { additionalProperties: false },
          ),
        ),
        Type.Null(),
      ],
      { description: 'Field-level changes, `{ "field": { "from": ..., "to": ... } }`; never secrets' },
    ),
  },
  { additionalProperties: false, title: 'AuditEvent' },
);

const TYPE_FILTER = `^(?:${['[a-z_]+\\.\\*', ...AUDIT_EVENT_TYPES.map((t) => t.replace('.', '\\.'))].join('|')})(?:,(?:${[
  '[a-z_]+\\.\\*',
  ...AUDIT_EVENT_TYPES.map((t) => t.replace('.', '\\.')),
].join('|')}))*$`;

export const AuditListQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(
    Type.String({
      pattern: TYPE_FILTER,
      description: 'Comma-separated event types; `principal.*` selects every type of that prefix',
    }),
  ),
  actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  target_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  outcome: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failure')])),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or after (RFC 3339)' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Events before (RFC 3339)' })),
});

export const AuditEventList = Paginated(AuditEventSchema, 'AuditEventList');
