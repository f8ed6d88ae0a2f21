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

/** How a principal field's values compare: type and status are labels, the rest plain values. */
export type FieldKind = 'label' | 'text' | 'timestamp' | 'score';

/**
 * The fields of a principal that principal queries (src/principals/search/model.ts) and policy
 * conditions (`principal.<field>`, src/policies/conditions.ts) read, with how each compares.
 * Conditions read only the fields a decision holds for every principal (`condition: true`); the
 * timestamps, the SCIM user name and the connector reference are for queries alone.
 */
export const PRINCIPAL_FIELDS = {
  id: { kind: 'text', condition: true },
  type: { kind: 'label', condition: true },
  status: { kind: 'label', condition: true },
  name: { kind: 'text', condition: true },
  email: { kind: 'text', condition: true },
  connector_source: { kind: 'text', condition: true },
  connector_id: { kind: 'text', condition: true },
  connector_ref: { kind: 'text', condition: false },
  user_name: { kind: 'text', condition: false },
  created_at: { kind: 'timestamp', condition: false },
  updated_at: { kind: 'timestamp', condition: false },
  last_login: { kind: 'timestamp', condition: false },
  risk_score: { kind: 'score', condition: true },
} as const satisfies Record<string, { kind: FieldKind; condition: boolean }>;
export type PrincipalField = keyof typeof PRINCIPAL_FIELDS;
export const PRINCIPAL_FIELD_NAMES = Object.keys(PRINCIPAL_FIELDS) as PrincipalField[];

/** The fields a policy condition reads as `principal.<field>`. */
export type ConditionField = {
  [F in PrincipalField]: (typeof PRINCIPAL_FIELDS)[F]['condition'] extends true ? F : never;
}[PrincipalField];
export const CONDITION_FIELDS = PRINCIPAL_FIELD_NAMES.filter(
  (f): f is ConditionField => PRINCIPAL_FIELDS[f].condition,
);
