import { parseConditions, type CompiledCondition } from '../policies/conditions.js';
import { resourceOf, type Policy } from '../policies/model.js';
import { compileGlob, isGlob, type Glob } from '../policies/patterns.js';
import { toQuery } from '../principals/search/service.js';
import { compilePredicate, type Predicate, type Subject } from '../principals/search/evaluate.js';
import type { Query } from '../principals/search/model.js';
import { instantKey } from '../time.js';

/**
 * A principal as the decision index holds it: what conditions (`principal.*`) and `match`
 * subjects read, and its direct groups. Timestamps are instant keys (src/principals/search/evaluate.ts).
 */
export interface IxPrincipal extends Subject {
  readonly id: string;
  readonly connector_id: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  /** Groups it is a direct member of. */
  groups: string[];
  /** Its privilege risk factors as stored (JSON text), to tell whether they need rewriting. */
  privileges: string;
  /**
   * The first three UTF-16 units of its name packed in one number: comparing two principals by
   * this first orders them by name as text does, unless the names start alike.
   */
  readonly order: number;
}

/** The start of a name as a number that orders like the text (see `IxPrincipal.order`). */
export function nameOrder(name: string): number {
  const unit = (i: number): number => (i < name.length ? name.charCodeAt(i) + 1 : 0);
  return (unit(0) * 65537 + unit(1)) * 65537 + unit(2);
}

export interface IxResourceSpec {
  readonly type: string;
  readonly identifier: string;
  /** Set when the identifier is a glob. */
  readonly glob: Glob | null;
}

/** How a policy selects a principal: naming it, through a group it is in, or by `match`. */
export type SubjectVia = 'principal' | 'group' | 'match';

/** A policy compiled for evaluation. */
export interface IxPolicy {
  readonly id: string;
  readonly version: number;
  readonly name: string;
  readonly effect: 'allow' | 'deny';
  /** Its status as stored; only an active policy is indexed for lookup. */
  readonly status: Policy['status'];
  readonly active: boolean;
  readonly principals: ReadonlySet<string>;
  readonly groups: readonly string[];
  readonly match: Predicate | null;
  /** The `match` query as the search representation (what the index reads to find its candidates). */
  readonly matchQuery: Query | null;
  /** The `match` query as text: policies with the same query share its evaluation. */
  readonly matchKey: string | null;
  readonly actions: readonly string[];
  readonly resources: readonly IxResourceSpec[];
  /** Null when the policy has no conditions. */
  readonly conditions: readonly CompiledCondition[] | null;
  /** The conditions as written, which `policySource` gives back (null: none). */
  readonly conditionsSource: Policy['conditions'] | null;
  readonly activatedAt: string | null;
  /**
   * The window of a time-bound policy, in epoch milliseconds (null: unbounded on that side). It
   * is applied when a decision is made, so a policy takes and loses effect on time without any
   * change to the index.
   */
  readonly validFrom: number | null;
  readonly validUntil: number | null;
  /**
   * When each subject (principal or group id) came to the policy, epoch ms: what dates the grant
   * of a principal it selects by id or through a group. Empty for a policy not read from storage.
   */
  readonly subjectSince: ReadonlyMap<string, number>;
  /** `valid_from` and `valid_until` as stored (RFC 3339), for what answers show. */
  readonly validFromText: string | null;
  readonly validUntilText: string | null;
}

/** Whether a policy's window holds the instant `now`: from `validFrom` on, until `validUntil`. */
export function inWindow(policy: IxPolicy, now: number): boolean {
  return (
    (policy.validFrom === null || policy.validFrom <= now) &&
    (policy.validUntil === null || now < policy.validUntil)
  );
}

/** A registered resource: its attributes feed `resource.attributes.*` conditions. */
export interface IxResource {
  readonly type: string;
  readonly identifier: string;
  readonly attributes: Readonly<Record<string, unknown>>;
}

const NO_SINCE: ReadonlyMap<string, number> = new Map();

/**
 * Compiles a stored (or proposed) policy; its body has been checked at write time. `since`: when
 * each subject came to it, as stored (epoch ms; null: unknown).
 */
export function compilePolicy(policy: Policy, since?: Iterable<readonly [string, number | null]>): IxPolicy {
  let subjectSince = NO_SINCE;
  if (since) {
    const known = new Map<string, number>();
    for (const [id, at] of since) if (typeof at === 'number') known.set(id, at);
    if (known.size > 0) subjectSince = known;
  }
  const matchQuery = policy.subjects.match ? toQuery({ query: policy.subjects.match }) : null;
  const match = matchQuery ? compilePredicate(matchQuery) : null;
  const hasConditions = Object.keys(policy.conditions).length > 0;
  return {
    id: policy.id,
    version: policy.version,
    name: policy.name,
    effect: policy.effect,
    status: policy.status,
    active: policy.status === 'active',
    principals: new Set(policy.subjects.principals),
    groups: [...policy.subjects.groups],
    match,
    matchQuery,
    matchKey: policy.subjects.match ? JSON.stringify(policy.subjects.match) : null,
    actions: [...policy.actions],
    resources: policy.resources.map((r) => ({
      type: r.type,
      identifier: r.identifier,
      glob: isGlob(r.identifier) ? compileGlob(r.identifier) : null,
    })),
    conditions: hasConditions ? parseConditions(policy.conditions).conditions : null,
    conditionsSource: hasConditions ? policy.conditions : null,
    activatedAt: policy.activated_at,
    validFrom: policy.valid_from === null ? null : Date.parse(policy.valid_from),
    validUntil: policy.valid_until === null ? null : Date.parse(policy.valid_until),
    subjectSince,
    validFromText: policy.valid_from,
    validUntilText: policy.valid_until,
  };
}

/**
 * What `compilePolicy` needs to compile a policy again, from the compiled policy (the index keeps
 * no stored body; the bookkeeping the engine never reads is left empty).
 */
export function policySource(policy: IxPolicy): Policy {
  return {
    id: policy.id,
    name: policy.name,
    description: null,
    effect: policy.effect,
    subjects: {
      principals: [...policy.principals],
      groups: [...policy.groups],
      ...(policy.matchKey !== null ? { match: JSON.parse(policy.matchKey) as Record<string, unknown> } : {}),
    },
    actions: [...policy.actions],
    resources: policy.resources.map((r) => ({ type: r.type, identifier: r.identifier })),
    conditions: policy.conditionsSource ?? {},
    status: policy.status,
    version: policy.version,
    activated_at: policy.activatedAt,
    valid_from: policy.validFromText,
    valid_until: policy.validUntilText,
    created_at: '',
    created_by: '',
    updated_at: '',
    updated_by: '',
  };
}

/** A timestamp as the table stores it: epoch seconds (NaN: none) and the nanoseconds within. */
export type Instant = readonly [seconds: number, nanos: number];

/** What a principal is written from: a row the index reads, or a principal made in memory. */
export interface PrincipalFields {
  id: string;
  type: string;
  status: string;
  name: string;
  email: string | null;
  connector_source: string | null;
  connector_id: string | null;
  created: Instant;
  updated: Instant;
  last_login: Instant;
  risk_score: number;
  privileges: string;
  attributes: Readonly<Record<string, string | readonly string[]>>;
  metadata: Readonly<Record<string, string>>;
}

/**
 * A principal as decisions/index_principals and decisions/principals_by_id read it: its node's
 * properties, timestamps as [epoch seconds, nanoseconds] (null where there is none), and its
 * direct groups.
 */
export interface StoredPrincipalRow {
  p: Record<string, unknown>;
  /** Its direct groups, each with when it joined (epoch ms; null where unknown). */
  groups: [string, number | null][];
}

const instant = (value: unknown): Instant => {
  if (!Array.isArray(value) || typeof value[0] !== 'number') return [NaN, 0];
  return [value[0], typeof value[1] === 'number' ? value[1] : 0];
};
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A stored principal row → what the index's principal table writes. */
export function fieldsOfRow(row: StoredPrincipalRow): PrincipalFields {
  const { p } = row;
  const attributes: Record<string, string | readonly string[]> = {};
  const metadata: Record<string, string> = {};
  for (const key in p) {
    if (key.startsWith('attr.')) attributes[key.slice(5)] = p[key] as string | string[];
    else if (key.startsWith('meta.')) metadata[key.slice(5)] = p[key] as string;
  }
  return {
    id: p['id'] as string,
    type: p['type'] as string,
    status: p['status'] as string,
    name: text(p['name']) ?? '',
    email: text(p['email']),
    connector_source: text(p['connector_source']),
    connector_id: text(p['connector_id']),
    created: instant(p['created_at']),
    updated: instant(p['updated_at']),
    last_login: instant(p['last_login']),
    risk_score: typeof p['risk_score'] === 'number' ? p['risk_score'] : 0,
    privileges: text(p['privilege_factors']) ?? '[]',
    attributes,
    metadata,
  };
}

/** A principal as a test or a tool writes it, timestamps as text (RFC 3339). */
export interface PrincipalRow {
  id: string;
  type: string;
  status: string;
  name: string | null;
  email: string | null;
  connector_source: string | null;
  connector_id: string | null;
  created_at: string | null;
  updated_at: string | null;
  last_login: string | null;
  risk_score: number | null;
  privileges: string | null;
  /** `attr.<key>` and `meta.<key>` properties with their values. */
  fields: [string, unknown][];
  groups: string[];
}

const key = (v: string | null): string | null => (v === null ? null : (instantKey(v) ?? v));

/** A principal row with text timestamps → the index's principal. */
export function toIxPrincipal(row: PrincipalRow): IxPrincipal {
  const attributes: Record<string, string | readonly string[]> = {};
  const metadata: Record<string, string> = {};
  for (const [name, value] of row.fields) {
    if (name.startsWith('attr.')) attributes[name.slice(5)] = value as string | string[];
    else metadata[name.slice(5)] = value as string;
  }
  return {
    id: row.id,
    type: row.type,
    status: row.status,
    name: row.name ?? '',
    email: row.email,
    connector_source: row.connector_source,
    connector_id: row.connector_id,
    created_at: key(row.created_at) ?? '',
    updated_at: key(row.updated_at) ?? '',
    last_login: key(row.last_login),
    risk_score: row.risk_score ?? 0,
    attributes,
    metadata,
    groups: row.groups,
    privileges: row.privileges ?? '[]',
    order: nameOrder(row.name ?? ''),
  };
}

/**
 * A delegation as the decision index holds it (only active ones are held): who may act for
 * whom, for which actions and resources, until when.
 */
export interface IxDelegation {
  readonly id: string;
  readonly delegatorId: string;
  readonly delegateId: string;
  readonly actions: readonly string[];
  /** Null: every resource. */
  readonly resources: readonly IxResourceSpec[] | null;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

/** A delegation as decisions/index_delegations reads it. */
export interface DelegationRow {
  id: string;
  delegator_id: string;
  delegate_id: string;
  actions: string[] | null;
  resources: string[] | null;
  expires_at: string;
  status: string;
}

/** A delegation row → the index's delegation. */
export function toIxDelegation(row: DelegationRow): IxDelegation {
  return {
    id: row.id,
    delegatorId: row.delegator_id,
    delegateId: row.delegate_id,
    actions: row.actions ?? ['*'],
    resources:
      row.resources === null
        ? null
        : row.resources.map((key) => {
            const { type, identifier } = resourceOf(key);
            return { type, identifier, glob: isGlob(identifier) ? compileGlob(identifier) : null };
          }),
    expiresAt: Date.parse(row.expires_at),
  };
}
