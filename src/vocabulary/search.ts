/**
 * The principal search's words: its operators and its fields. The public syntax
 * (`POST /v1/principals/search`, a policy's `match`, docs/api.md §3) is a subset of what the
 * query representation can say; SCIM filters reach the rest.
 */

/** Operators of the public search syntax; each has a statement of its own in shaped search. */
export const SEARCH_OPERATORS = [
  '$eq',
  '$ne',
  '$in',
  '$nin',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$contains',
  '$startsWith',
  '$exists',
] as const;
export type SearchOperator = (typeof SEARCH_OPERATORS)[number];

/**
 * Operators the query representation knows: the public ones, `$endsWith` for SCIM's `ew`, and
 * equality ignoring case, which only SCIM filters say (`eq` on an attribute that is not
 * case-exact).
 */
export const QUERY_OPERATORS = [...SEARCH_OPERATORS, '$endsWith', '$eqIgnoreCase'] as const;
export type QueryOperator = (typeof QUERY_OPERATORS)[number];

export const TEXT_FIELDS = ['name', 'email', 'connector_source'] as const;
export const TIMESTAMP_FIELDS = ['created_at', 'updated_at', 'last_login'] as const;
export const SCORE_FIELDS = ['risk_score'] as const;
export const SORT_FIELDS = ['created_at', 'updated_at', 'name', 'last_login', 'risk_score'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
