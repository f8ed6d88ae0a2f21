import type { Tx } from '../db/database.js';
import { defineQueries } from '../db/catalogue.js';
import { newId } from '../ids.js';
import { nowIso } from '../time.js';

export const AUDIT_EVENT_TYPES = [
  'principal.created',
  'principal.updated',
  'principal.deleted',
  'principal.status_changed',
  'group.created',
  'group.updated',
  'group.deleted',
  'group.member_added',
  'group.member_removed',
  'policy.created',
  'policy.updated',
  'policy.deleted',
  'client.created',
  'client.deleted',
  'token.revoked',
  'auth.failed',
  'connector.created',
  'connector.deleted',
  'connector.token_rotated',
  'webhook.created',
  'webhook.deleted',
  'report.completed',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export interface Actor {
  type: 'client' | 'connector' | 'system';
  id: string;
}

export interface RequestMeta {
  requestId: string | null;
  sourceIp: string | null;
  userAgent: string | null;
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

const Q = defineQueries('audit', ['record']);

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

/**
 * Writes the event inside the caller's transaction, so the change and its record commit
 * together or not at all.
 */
export async function recordEvent(tx: Tx, op: OperationContext, input: AuditEventInput): Promise<string> {
  const id = newId('event');
  const changes = scrubChanges(input.changes);
  await tx.run(Q.record, {
    id,
    type: input.type,
    occurredAt: nowIso(),
    actorType: op.actor.type,
    actorId: op.actor.id,
    targetType: input.target.type,
    targetId: input.target.id,
    outcome: input.outcome ?? 'success',
    requestId: op.meta.requestId,
    sourceIp: op.meta.sourceIp,
    userAgent: op.meta.userAgent?.slice(0, 512) ?? null,
    reason: input.reason ?? null,
    changes: changes ? JSON.stringify(changes) : null,
  });
  return id;
}
