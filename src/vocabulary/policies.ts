import { SEARCH_OPERATORS } from './search.js';

/**
 * The words of a policy (docs/api.md §5.1): what an action and a resource type may be called,
 * and the operators of its conditions. Matching them is src/policies/patterns.ts's business.
 */

export const POLICY_EFFECTS = ['allow', 'deny'] as const;
export type PolicyEffect = (typeof POLICY_EFFECTS)[number];
/** `active` policies take effect; `disabled` and `draft` are kept without effect. */
export const POLICY_STATUSES = ['active', 'disabled', 'draft'] as const;
export type PolicyStatus = (typeof POLICY_STATUSES)[number];
/** A deleted policy stays readable by id, so that decision records and audit events resolve. */
export const POLICY_RECORD_STATUSES = ['active', 'disabled', 'draft', 'deleted'] as const;

/** Slashes let MCP method names such as `tools/call` be actions. */
export const ACTION_NAME_PATTERN = '^[a-z][a-z0-9_.:/-]{0,127}$';
/**
 * An action name, `*` (any action) or a prefix wildcard ending in `:*` or `/*` (`repo:*`,
 * `tools/*`): a wildcard ends at a separator, so that it names a family of actions rather than
 * whatever shares its first letters.
 */
export const ACTION_PATTERN = '^(?:\\*|[a-z][a-z0-9_.:/-]{0,125}[:/]\\*|[a-z][a-z0-9_.:/-]{0,127})$';
export const RESOURCE_TYPE_PATTERN = '^[a-z][a-z0-9_.-]{0,63}$';
export const MAX_IDENTIFIER_LENGTH = 512;

/** The operators of principal search (docs/api.md §2), and `$cidr`. */
export const CONDITION_OPERATORS = [...SEARCH_OPERATORS, '$cidr'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/** Conditions a policy holds at most. */
export const MAX_CONDITIONS = 32;
