import { validationFailed, type FieldError } from '../errors/errors.js';
import type { SearchQueryInput } from '../schemas/search.js';
import { searchBodyErrors } from '../schemas/search.js';
import type { Policy, PolicyBody, ResourceRef } from '../schemas/policies.js';
import type { PolicyEffect } from '../vocabulary/policies.js';
import { toQuery } from '../principals/search/service.js';
import { normalise } from '../principals/search/normal.js';
import { AppError } from '../errors/errors.js';
import { parseInstant } from '../time.js';
import { parseConditions } from './conditions.js';
import { compileGlob, globProblem, isGlob } from './patterns.js';

export type { Policy, PolicyBody, PolicyEffect, ResourceRef };

/** Statuses a principal must not be in for any decision to allow it. */
const INACTIVE_STATUSES = new Set(['suspended', 'deprovisioned', 'deleted']);

/**
 * A policy body checked beyond its schema, so that a policy that can never match is refused at
 * write time with pointers into the body: subjects that select nobody, a `match` query that is
 * invalid, too complex or names only principals every decision denies, a glob with `**`,
 * conditions with an unknown path or operator, a malformed CIDR, a `$ref` to an unknown path, or
 * a window that can never be open at or after `now` (epoch milliseconds). Duplicate resources are
 * dropped and the window's bounds are kept to the millisecond, in UTC, as every other timestamp.
 * Pointers are prefixed with `prefix` (`/policy` when the body is nested in a simulation).
 */
export function checkPolicyBody(body: PolicyBody, prefix = '', now = Date.now()): PolicyBody {
  const errors: FieldError[] = [];
  const validFrom = instantMs(body.valid_from, `${prefix}/valid_from`, errors);
  const validUntil = instantMs(body.valid_until, `${prefix}/valid_until`, errors);
  if (validUntil !== undefined && validUntil <= now) {
    errors.push({ pointer: `${prefix}/valid_until`, message: 'is not in the future: the window has closed' });
  } else if (validUntil !== undefined && validFrom !== undefined && validUntil <= validFrom) {
    errors.push({
      pointer: `${prefix}/valid_until`,
      message: 'is not after valid_from: the window is empty',
    });
  }
  const { subjects } = body;
  const selects =
    (subjects.principals?.length ?? 0) > 0 ||
    (subjects.groups?.length ?? 0) > 0 ||
    subjects.match !== undefined;
  if (!selects) {
    errors.push({
      pointer: `${prefix}/subjects`,
      message: 'selects no principal: give principals, groups or a match query',
    });
  }
  if (subjects.match !== undefined) errors.push(...matchErrors(subjects.match, `${prefix}/subjects/match`));
  body.resources.forEach((r, i) => {
    const problem = isGlob(r.identifier) ? globProblem(r.identifier) : undefined;
    if (problem) errors.push({ pointer: `${prefix}/resources/${i}/identifier`, message: problem });
  });
  if (body.conditions) errors.push(...parseConditions(body.conditions, `${prefix}/conditions`).errors);
  if (errors.length > 0) throw validationFailed('the policy can never match as written', errors);
  const seen = new Set<string>();
  const resources = body.resources.filter((r) => {
    const key = `${r.type}:${r.identifier}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const checked: PolicyBody = { ...body, resources };
  if (validFrom !== undefined) checked.valid_from = new Date(validFrom).toISOString();
  if (validUntil !== undefined) checked.valid_until = new Date(validUntil).toISOString();
  return checked;
}

/** A bound of a policy's window in epoch milliseconds (undefined when absent or not an instant). */
function instantMs(text: string | undefined, pointer: string, errors: FieldError[]): number | undefined {
  if (text === undefined) return undefined;
  const normal = parseInstant(text);
  if (normal !== undefined) return Date.parse(normal);
  errors.push({ pointer, message: 'is not an RFC 3339 date-time' });
  return undefined;
}

function matchErrors(match: SearchQueryInput, pointer: string): FieldError[] {
  const errors = searchBodyErrors({ query: match }).map((e) => ({
    pointer: e.pointer.replace(/^\/query/, pointer),
    message: e.message,
  }));
  if (errors.length > 0) return errors;
  const statuses = match.status === undefined ? [] : [match.status].flat();
  if (statuses.length > 0 && statuses.every((s) => INACTIVE_STATUSES.has(s))) {
    return [
      {
        pointer: `${pointer}/status`,
        message: 'selects only principals that every decision denies (suspended, deprovisioned or deleted)',
      },
    ];
  }
  try {
    normalise(toQuery({ query: match }));
  } catch (err) {
    if (err instanceof AppError && err.errors) {
      return err.errors.map((e) => ({ pointer: `${pointer}${e.pointer}`, message: e.message }));
    }
    throw err;
  }
  return [];
}

/** Case and surrounding space do not make two policy names different. */
export function policyNameKey(name: string): string {
  return name.trim().toLowerCase();
}

export const resourceKey = (type: string, identifier: string): string => `${type}:${identifier}`;

/** A stored resource text `type:identifier` (types hold no `:`) as a reference. */
export function resourceOf(key: string): ResourceRef {
  const colon = key.indexOf(':');
  return { type: key.slice(0, colon), identifier: key.slice(colon + 1) };
}

/**
 * What a `(:Policy)` node holds besides its bookkeeping: every part of the body as a property of
 * its own, readable in Neo4j Browser (`resources` as `type:identifier` texts, `match` and
 * `conditions` as JSON text), and what the access traversal needs of each glob.
 */
export interface PolicyProperties {
  name: string;
  nameKey: string;
  description: string | null;
  effect: PolicyEffect;
  status: string;
  actions: string[];
  resources: string[];
  subjectPrincipals: string[];
  subjectGroups: string[];
  match: string | null;
  conditions: string | null;
  /** The window's bounds (RFC 3339), stored as datetimes: the expiry sweep finds them by range. */
  validFrom: string | null;
  validUntil: string | null;
  /** Resources named exactly: each becomes a `(:Resource)` with an ALLOWS or DENIES edge. */
  exact: ResourceRef[];
  globTypes: string[];
  globPatterns: string[];
  globPrefixes: string[];
}

export function toProperties(body: PolicyBody): PolicyProperties {
  const exact = body.resources.filter((r) => !isGlob(r.identifier));
  const globs = body.resources.filter((r) => isGlob(r.identifier));
  const compiled = globs.map((r) => compileGlob(r.identifier));
  const conditions = body.conditions && Object.keys(body.conditions).length > 0 ? body.conditions : null;
  return {
    name: body.name.trim(),
    nameKey: policyNameKey(body.name),
    description: body.description ?? null,
    effect: body.effect,
    status: body.status ?? 'active',
    actions: [...body.actions],
    resources: body.resources.map((r) => resourceKey(r.type, r.identifier)),
    subjectPrincipals: [...(body.subjects.principals ?? [])],
    subjectGroups: [...(body.subjects.groups ?? [])],
    match: body.subjects.match === undefined ? null : JSON.stringify(body.subjects.match),
    conditions: conditions === null ? null : JSON.stringify(conditions),
    validFrom: body.valid_from ?? null,
    validUntil: body.valid_until ?? null,
    exact,
    globTypes: globs.map((r) => r.type),
    globPatterns: globs.map((r) => r.identifier),
    globPrefixes: compiled.map((g) => g.prefix),
  };
}

/** Node properties → the policy as the API shows it. */
export function fromProperties(props: Record<string, unknown>): Policy {
  const text = (key: string): string | null => (typeof props[key] === 'string' ? props[key] : null);
  const match = text('match');
  const conditions = text('conditions');
  const policy: Policy = {
    id: props['id'] as string,
    name: props['name'] as string,
    description: text('description'),
    effect: props['effect'] as PolicyEffect,
    subjects: {
      principals: (props['subject_principals'] as string[] | null) ?? [],
      groups: (props['subject_groups'] as string[] | null) ?? [],
      ...(match === null ? {} : { match: JSON.parse(match) as Record<string, unknown> }),
    },
    actions: (props['actions'] as string[] | null) ?? [],
    resources: ((props['resources'] as string[] | null) ?? []).map(resourceOf),
    conditions: conditions === null ? {} : (JSON.parse(conditions) as Record<string, unknown>),
    status: props['status'] as Policy['status'],
    version: props['version'] as number,
    activated_at: text('activated_at'),
    valid_from: text('valid_from'),
    valid_until: text('valid_until'),
    created_at: props['created_at'] as string,
    created_by: props['created_by'] as string,
    updated_at: props['updated_at'] as string,
    updated_by: props['updated_by'] as string,
  };
  if (policy.status === 'deleted') {
    policy.deleted_at = props['deleted_at'] as string;
    policy.deleted_by = props['deleted_by'] as string;
  }
  return policy;
}

/** The body a stored policy was written with (what a version records, and a PUT replaces). */
export function bodyOf(policy: Policy): PolicyBody {
  const subjects: PolicyBody['subjects'] = {};
  if (policy.subjects.principals.length > 0) subjects.principals = policy.subjects.principals;
  if (policy.subjects.groups.length > 0) subjects.groups = policy.subjects.groups;
  if (policy.subjects.match) subjects.match = policy.subjects.match;
  return {
    name: policy.name,
    ...(policy.description === null ? {} : { description: policy.description }),
    effect: policy.effect,
    subjects,
    actions: policy.actions,
    resources: policy.resources,
    ...(Object.keys(policy.conditions).length > 0 ? { conditions: policy.conditions } : {}),
    status: policy.status === 'deleted' ? 'disabled' : policy.status,
    ...(policy.valid_from === null ? {} : { valid_from: policy.valid_from }),
    ...(policy.valid_until === null ? {} : { valid_until: policy.valid_until }),
  };
}

/**
 * A checked body as the node properties and exact resources the statements write, and its window
 * (RFC 3339 texts or null), which the statements store as datetimes.
 */
export function nodeProperties(body: PolicyBody): {
  props: Record<string, unknown>;
  exact: unknown[];
  window: { valid_from: string | null; valid_until: string | null };
} {
  const p = toProperties(body);
  return {
    props: {
      name: p.name,
      name_key: p.nameKey,
      description: p.description,
      effect: p.effect,
      status: p.status,
      actions: p.actions,
      resources: p.resources,
      subject_principals: p.subjectPrincipals,
      subject_groups: p.subjectGroups,
      match: p.match,
      conditions: p.conditions,
      glob_types: p.globTypes,
      glob_patterns: p.globPatterns,
      glob_prefixes: p.globPrefixes,
    },
    exact: p.exact,
    window: { valid_from: p.validFrom, valid_until: p.validUntil },
  };
}

/** The fields of a stored policy that come from its body (the rest is its id and bookkeeping). */
export const POLICY_BODY_FIELDS = [
  'name',
  'description',
  'effect',
  'subjects',
  'actions',
  'resources',
  'conditions',
  'status',
  'valid_from',
  'valid_until',
] as const;

/** What a stored policy takes from its body. */
export function bodyFields(body: PolicyBody): Pick<Policy, (typeof POLICY_BODY_FIELDS)[number]> {
  return {
    name: body.name,
    description: body.description ?? null,
    effect: body.effect,
    subjects: {
      principals: body.subjects.principals ?? [],
      groups: body.subjects.groups ?? [],
      ...(body.subjects.match ? { match: body.subjects.match } : {}),
    },
    actions: body.actions,
    resources: body.resources,
    conditions: body.conditions ?? {},
    status: body.status ?? 'active',
    valid_from: body.valid_from ?? null,
    valid_until: body.valid_until ?? null,
  };
}
