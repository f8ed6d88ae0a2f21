import { createHmac, randomBytes } from 'node:crypto';

/**
 * Signing as Standard Webhooks has it (docs/api.md §8), so that receivers can verify deliveries with
 * any of its libraries: HMAC-SHA256 over `<id>.<timestamp>.<body>`, keyed with the base64 part
 * of a `whsec_` secret.
 */

const SECRET_PREFIX = 'whsec_';

export const WEBHOOK_USER_AGENT = 'PrincipalsAccessService-Webhooks/1';

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

function keyOf(secret: string): Buffer {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  if (key.length === 0) throw new Error('webhook secret has an empty key');
  return key;
}

/**
 * `v1,<signature>` for every secret, space-separated: while a rotated secret overlaps its
 * successor, receivers holding either one can verify.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampS: number,
  body: string,
): string {
  if (secrets.length === 0) throw new Error('a webhook signature needs at least one secret');
  // A fractional or exponent-formatted timestamp would be signed as text no receiver rebuilds.
  if (!Number.isSafeInteger(timestampS)) throw new RangeError('webhook timestamp must be whole seconds');
  const content = `${id}.${timestampS}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(content, 'utf8').digest('base64')}`)
    .join(' ');
}

export function webhookHeaders(input: {
  id: string;
  timestampS: number;
  body: string;
  secrets: readonly string[];
}): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampS),
    'webhook-signature': signatureHeader(input.secrets, input.id, input.timestampS, input.body),
  };
}
