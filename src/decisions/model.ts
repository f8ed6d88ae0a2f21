import { parseConditions, type CompiledCondition } from '../policies/conditions.js';
import type { Policy } from '../policies/model.js';
import { compileGlob, isGlob, type Glob } from '../policies/patterns.js';
import { toQuery } from '../principals/search.js';
import { compilePredicate, type Predicate, type Subject } from '../query/evaluate.js';
import { instantKey } from '../time.js';

/**
 * A principal as the decision index holds it: what conditions (`principal.*`) and `match`
 * subjects read, and its direct groups. Timestamps are instant keys (src/query/evaluate.ts).
 */
export interface IxPrincipal extends Subject {
  readonly id: string;
  readonly connector_id: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  /** Groups it is a direct member of. */
  groups: string[];
  /** Its privilege risk factors as stored (JSON text), to tell whether they need rewriting. */
  privileges: string;
}

export interface IxGroup {
  readonly id: string;
  name: string;
  /** Groups this group is nested in, directly. */
  readonly parents: Set<string>;
  /** Groups nested in this group, directly. */
  readonly children: Set<string>;
  /** Principals that are direct members. */
  readonly members: Set<string>;
}

export interface IxResourceSpec {
  readonly type: string;
  readonly identifier: string;
  /** Set when the identifier is a glob. */
  readonly glob: Glob | null;
}

/** A policy compiled for evaluation. */
export interface IxPolicy {
  readonly id: string;
  readonly version: number;
  readonly name: string;
  readonly effect: 'allow' | 'deny';
  readonly active: boolean;
  readonly principals: ReadonlySet<string>;
  readonly groups: readonly string[];
  readonly match: Predicate | null;
  readonly actions: readonly string[];
  readonly resources: readonly IxResourceSpec[];
  /** Null when the policy has no conditions. */
  readonly conditions: readonly CompiledCondition[] | null;
  readonly activatedAt: string | null;
  readonly policy: Policy;
}

/** A registered resource: its attributes feed `resource.attributes.*` conditions. */
export interface IxResource {
  readonly type: string;
  readonly identifier: string;
  readonly attributes: Readonly<Record<string, unknown>>;
}

/** Compiles a stored (or proposed) policy; its body has been checked at write time. */
export function compilePolicy(policy: Policy): IxPolicy {
  const match = policy.subjects.match ? compilePredicate(toQuery({ query: policy.subjects.match })) : null;
  const hasConditions = Object.keys(policy.conditions).length > 0;
  return {
    id: policy.id,
    version: policy.version,
    name: policy.name,
    effect: policy.effect,
    active: policy.status === 'active',
    principals: new Set(policy.subjects.principals),
    groups: [...policy.subjects.groups],
    match,
    actions: [...policy.actions],
    resources: policy.resources.map((r) => ({
      type: r.type,
      identifier: r.identifier,
      glob: isGlob(r.identifier) ? compileGlob(r.identifier) : null,
    })),
    conditions: hasConditions ? parseConditions(policy.conditions).conditions : null,
    activatedAt: policy.activated_at,
    policy,
  };
}

const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Principal node properties (with its direct groups) → the index's principal. */
export function toIxPrincipal(props: Record<string, unknown>, groups: string[]): IxPrincipal {
  const attributes: Record<string, string | readonly string[]> = {};
  const metadata: Record<string, string> = {};
  for (const key in props) {
    if (key.startsWith('attr.')) attributes[key.slice(5)] = props[key] as string | string[];
    else if (key.startsWith('meta.')) metadata[key.slice(5)] = props[key] as string;
  }
  const key = (v: unknown): string | null => (typeof v === 'string' ? (instantKey(v) ?? v) : null);
  return {
    id: props['id'] as string,
    type: props['type'] as string,
    status: props['status'] as string,
    name: (props['name'] as string | undefined) ?? '',
    email: text(props['email']),
    connector_source: text(props['connector_source']),
    connector_id: text(props['connector_id']),
    created_at: key(props['created_at']) ?? '',
    updated_at: key(props['updated_at']) ?? '',
    last_login: key(props['last_login']),
    risk_score: (props['risk_score'] as number | undefined) ?? 0,
    attributes,
    metadata,
    groups,
    privileges: typeof props['privilege_factors'] === 'string' ? props['privilege_factors'] : '[]',
  };
}
