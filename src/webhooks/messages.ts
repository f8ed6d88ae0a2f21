import { AUDIT_EVENT_TYPES, type AuditEvent } from '../audit/audit.js';
import { decrypt, encrypt } from '../auth/key-encryption.js';
import type { FieldError } from '../errors/errors.js';
import { webhookHeaders } from './signature.js';

/** How long a rotated-out secret keeps signing next to the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

const KINDS = new Set(AUDIT_EVENT_TYPES.map((t) => t.split('.')[0]!));
const TYPES = new Set<string>(AUDIT_EVENT_TYPES);

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

/** Whether a webhook subscribed to `patterns` receives events of `type` (as the outbox decides). */
export function subscribes(patterns: readonly string[], type: string): boolean {
  return patterns.some(
    (p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))),
  );
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

/** A delivery as it goes on the wire: the Standard Webhooks envelope, signed. */
export function signedMessage(
  event: AuditEvent,
  secrets: readonly string[],
  now = Date.now(),
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({ type: event.type, timestamp: event.occurred_at, data: event });
  return {
    body,
    headers: webhookHeaders({ id: event.id, timestampS: Math.floor(now / 1000), body, secrets }),
  };
}
