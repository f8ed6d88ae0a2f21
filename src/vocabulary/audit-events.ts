/** The audit event types (a leaf module: the schemas and the audit code both read it). */
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
  'policy.expired',
  'policy.window_opened',
  'resource.created',
  'resource.updated',
  'resource.deleted',
  'delegation.created',
  'delegation.revoked',
  'delegation.expired',
  'client.created',
  'client.deleted',
  'token.revoked',
  'auth.failed',
  'connector.created',
  'connector.updated',
  'connector.deleted',
  'connector.token_rotated',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.disabled',
  'report.completed',
  'report.failed',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/**
 * What a webhook may subscribe to: every audit event type, and `access.changed`, the access
 * changes of one cause in parts (docs/access-history.md), which is no audit event of its own.
 */
export const WEBHOOK_EVENT_TYPES = [...AUDIT_EVENT_TYPES, 'access.changed'] as const;
