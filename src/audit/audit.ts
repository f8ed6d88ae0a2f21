import type { Static } from '@sinclair/typebox';
import type { AuditEventSchema } from '../schemas/audit.js';
import type { AuditEventType } from '../vocabulary/audit-events.js';
import type { Page, Paged } from '../pagination.js';

/** Who acts: the `actor` of an audit event. */
export type Actor = AuditEvent['actor'];

export interface RequestMeta {
  requestId: string | null;
  sourceIp: string | null;
  userAgent: string | null;
  /**
   * The W3C `traceparent` of the request (the service's own span when it traces, else the
   * caller's), kept with its events and jobs so that their webhook deliveries and runs join its trace.
   */
  traceparent?: string | null;
}

/** Who is acting and through which request: every mutation takes one. */
export interface OperationContext {
  actor: Actor;
  meta: RequestMeta;
}

export const SYSTEM_CONTEXT: OperationContext = {
  actor: { type: 'system', id: 'system' },
  meta: { requestId: null, sourceIp: null, userAgent: null },
};

export type Changes = Record<string, { from?: unknown; to?: unknown }>;

export interface AuditEventInput {
  type: AuditEventType;
  target: { type: string; id: string };
  outcome?: 'success' | 'failure';
  changes?: Changes;
  /** Why a failure happened, in a few words (never a secret). */
  reason?: string;
}

/** Field names whose values must never reach the audit trail, whatever a caller passes. */
const SECRET_FIELD = /secret|password|hash|token|private|credential/i;

export function scrubChanges(changes: Changes | undefined): Changes | null {
  if (!changes) return null;
  const out: Changes = {};
  for (const [field, change] of Object.entries(changes)) {
    out[field] = SECRET_FIELD.test(field) ? { from: '[redacted]', to: '[redacted]' } : change;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * Field-level differences between two flat maps, keyed `prefix.key`; a missing side is left
 * out, so `{to}` is an addition and `{from}` a removal.
 */
export function diffMaps(
  before: Record<string, unknown> | null | undefined,
  after: Record<string, unknown> | null | undefined,
  prefix: string,
): Changes {
  const changes: Changes = {};
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const key of [...keys].sort()) {
    const from = before?.[key];
    const to = after?.[key];
    if (JSON.stringify(from) === JSON.stringify(to)) continue;
    changes[`${prefix}.${key}`] = {
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    };
  }
  return changes;
}

/** An audit event as the API shows it. */
export type AuditEvent = Static<typeof AuditEventSchema>;

/** An audit event as an `(:AuditEvent)` node holds it: flat properties, changes as JSON. */
export interface StoredEvent {
  id: string;
  type: string;
  occurred_at: string;
  actor_type: Actor['type'];
  actor_id: string;
  target_type: string;
  target_id: string;
  outcome: 'success' | 'failure';
  request_id: string | null;
  source_ip: string | null;
  user_agent: string | null;
  reason: string | null;
  changes: string | null;
  /** Absent from events of requests that carried no trace context. */
  trace_parent?: string | null;
}

export function toStored(
  id: string,
  op: OperationContext,
  input: AuditEventInput,
  occurredAt: string,
): StoredEvent {
  const changes = scrubChanges(input.changes);
  return {
    id,
    type: input.type,
    occurred_at: occurredAt,
    actor_type: op.actor.type,
    actor_id: op.actor.id,
    target_type: input.target.type,
    target_id: input.target.id,
    outcome: input.outcome ?? 'success',
    request_id: op.meta.requestId,
    source_ip: op.meta.sourceIp,
    user_agent: op.meta.userAgent?.slice(0, 512) ?? null,
    reason: input.reason ?? null,
    changes: changes ? JSON.stringify(changes) : null,
    ...(op.meta.traceparent ? { trace_parent: op.meta.traceparent } : {}),
  };
}

export function fromStored(row: StoredEvent): AuditEvent {
  return {
    id: row.id,
    type: row.type,
    occurred_at: row.occurred_at,
    actor: { type: row.actor_type, id: row.actor_id },
    target: { type: row.target_type, id: row.target_id },
    outcome: row.outcome,
    request_id: row.request_id ?? null,
    source_ip: row.source_ip ?? null,
    user_agent: row.user_agent ?? null,
    ...(row.reason ? { reason: row.reason } : {}),
    changes: row.changes ? (JSON.parse(row.changes) as Changes) : null,
  };
}

/** What a search of the audit trail may name. */
export interface AuditFilters {
  /** Exact types and `prefix.*` forms. */
  types?: string[];
  actorId?: string;
  targetId?: string;
  outcome?: 'success' | 'failure';
  since?: string;
  until?: string;
}

/** The audit trail as its readers see it (GET /v1/audit/events): src/audit/repository.ts. */
export interface AuditLog {
  get(id: string): Promise<AuditEvent | undefined>;
  list(filters: AuditFilters, page: Page): Promise<Paged<AuditEvent>>;
}
