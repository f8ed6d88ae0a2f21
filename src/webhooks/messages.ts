import type { AuditEvent } from '../audit/audit.js';
import { WEBHOOK_EVENT_TYPES } from '../vocabulary/audit-events.js';
import { decrypt, encrypt } from '../auth/key-encryption.js';
import type { FieldError } from '../errors/errors.js';
import { newId } from '../ids.js';
import { webhookHeaders } from './signature.js';
import type { SendResult } from './transport.js';

/** How long a rotated-out secret keeps signing next to the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

const KINDS = new Set(WEBHOOK_EVENT_TYPES.map((t) => t.split('.')[0]!));
const TYPES = new Set<string>(WEBHOOK_EVENT_TYPES);

/** Patterns that can never match an event are refused, so a typo does not silently deliver nothing. */
export function checkEventPatterns(patterns: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  patterns.forEach((pattern, i) => {
    if (pattern === '*' || TYPES.has(pattern)) return;
    if (pattern.endsWith('.*') && KINDS.has(pattern.slice(0, -2))) return;
    errors.push({ pointer: `/events/${i}`, message: `matches no event type (${pattern})` });
  });
  return errors;
}

/** One attempt of one event to one webhook, as the delivery log keeps it. */
export interface AttemptRecord {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  success: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
  next_attempt_at: string | null;
}

export function attemptRecord(
  attempt: { webhookId: string; event: { id: string; type: string }; number: number; attemptedAt: string },
  result: Pick<SendResult, 'success' | 'statusCode' | 'error' | 'durationMs'>,
  nextAttemptAt: string | null = null,
): AttemptRecord {
  return {
    id: newId('delivery'),
    webhook_id: attempt.webhookId,
    event_id: attempt.event.id,
    event_type: attempt.event.type,
    attempt: attempt.number,
    success: result.success,
    status_code: result.statusCode,
    error: result.error,
    duration_ms: Math.round(result.durationMs),
    attempted_at: attempt.attemptedAt,
    next_attempt_at: nextAttemptAt,
  };
}

/** Secrets are kept encrypted with the installation's key, bound to their webhook. */
export const sealSecret = (kek: Buffer, webhookId: string, secret: string): string =>
  encrypt(kek, secret, `webhook:${webhookId}`);

export interface SealedSecrets {
  id: string;
  secret_sealed: string;
  previous_secret_sealed?: string | null;
  previous_secret_until?: string | null;
}

/** The secrets a delivery is signed with now: the current one, and a rotated-out one still overlapping. */
export function signingSecrets(kek: Buffer, row: SealedSecrets, now = Date.now()): string[] {
  const aad = `webhook:${row.id}`;
  const secrets = [decrypt(kek, row.secret_sealed, aad)];
  if (
    row.previous_secret_sealed &&
    row.previous_secret_until &&
    Date.parse(row.previous_secret_until) > now
  ) {
    secrets.push(decrypt(kek, row.previous_secret_sealed, aad));
  }
  return secrets;
}

/** What a delivery carries: an audit event, or another message with its own data (`access.changed`). */
export interface OutgoingEvent {
  id: string;
  type: string;
  occurred_at: string;
  data: unknown;
}

export const outgoingOf = (event: AuditEvent): OutgoingEvent => ({
  id: event.id,
  type: event.type,
  occurred_at: event.occurred_at,
  data: event,
});

/** A delivery as it goes on the wire: the Standard Webhooks envelope, signed. */
export function signedMessage(
  event: OutgoingEvent,
  secrets: readonly string[],
  now = Date.now(),
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({ type: event.type, timestamp: event.occurred_at, data: event.data });
  return {
    body,
    headers: webhookHeaders({ id: event.id, timestampS: Math.floor(now / 1000), body, secrets }),
  };
}
