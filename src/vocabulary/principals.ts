/** What a principal is: a person from the identity provider, or a non-human identity. */
export const PRINCIPAL_TYPES = ['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT'] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

/** Where a principal stands in its lifecycle (docs/api.md §3). */
export const PRINCIPAL_STATUSES = ['active', 'suspended', 'deprovisioned', 'deleted'] as const;
export type PrincipalStatus = (typeof PRINCIPAL_STATUSES)[number];

/** The names of attribute and metadata keys. */
export const KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$';
/** Keys an attribute or metadata map holds at most. */
export const MAX_KEYS = 64;
