import path from 'node:path';
import { type AccessRequest, type RequestAction, type Verdict } from '../../src/decisions/engine.js';
import { compilePolicy, toIxPrincipal, type IxPrincipal } from '../../src/decisions/model.js';
import { PolicyIndex } from '../../src/decisions/policy-index.js';
import {
  bodyFields,
  checkPolicyBody,
  resourceOf,
  type Policy,
  type PolicyBody,
} from '../../src/policies/model.js';
import type { Reason } from '../../src/schemas/decisions.js';
import type { SearchQueryInput } from '../../src/schemas/search.js';
import { loadCases } from './cases.js';

/**
 * The decision engine's cases as data: `test/cases/engine/*.yaml`, one file per rule of
 * docs/policies.md, each a world (principals, nested groups, registered resources, policies,
 * delegations) and requests with the decision and the exact reasons expected. A file may name a
 * shared world of `test/cases/engine/worlds/` that its own entries are added to. The format is
 * described in test/cases/engine/README.md; this module checks a file against it, resolves its
 * times, expands its tables into cases, and builds the index a world stands for. The engine test
 * and `npm run bench:decisions` both run the cases through it, so what is measured is what is
 * tested.
 */

// ---- the format ----

type Attributes = Record<string, string | string[]>;

export interface PrincipalSpec {
  id: string;
  type: 'USER' | 'SERVICE_ACCOUNT' | 'AI_AGENT' | 'API_KEY';
  name: string;
  status?: 'active' | 'suspended' | 'deprovisioned' | 'deleted';
  attributes?: Attributes;
  /** Groups it is a direct member of. */
  groups?: string[];
  risk_score?: number;
}

export interface GroupSpec {
  id: string;
  /** Groups it is nested in, directly. */
  parents?: string[];
}

export interface ResourceSpec {
  /** `type:identifier`. */
  resource: string;
  attributes: Record<string, unknown>;
}

export interface PolicySpec {
  id: string;
  effect: 'allow' | 'deny';
  principals?: string[];
  groups?: string[];
  match?: SearchQueryInput;
  /** Default `['read']`. */
  actions?: string[];
  /** `type:identifier`, the identifier exact or a glob. */
  resources: string[];
  conditions?: Record<string, unknown>;
  status?: 'active' | 'disabled' | 'draft';
  version?: number;
  /** A time-bound policy's window: RFC 3339, or relative to when the cases are loaded (`now+1d`). */
  valid_from?: string;
  valid_until?: string;
}

/** An active delegation of every action and resource, for a day from when the cases are loaded. */
export interface DelegationSpec {
  delegator: string;
  delegate: string;
}

export interface World {
  principals: PrincipalSpec[];
  groups: GroupSpec[];
  resources: ResourceSpec[];
  policies: PolicySpec[];
  delegations: DelegationSpec[];
}

export interface EngineCase {
  name: string;
  principal: string;
  /** Default `read`. */
  action?: RequestAction;
  /** `type:identifier`. */
  resource: string;
  attributes?: Record<string, unknown>;
  context?: Record<string, unknown>;
  subject_properties?: Record<string, unknown>;
  /** A principal id, or a delegation chain, outermost delegator first. */
  on_behalf_of?: string | string[];
  allowed: boolean;
  /**
   * The reasons, in any order: `CODE`, then ` <policy_id>` when the reason names a policy and
   * ` @<principal_id>` when it names a principal.
   */
  reasons: string[];
  /** Other reason lists that are equally right (the contract does not rank every cause of a DENY). */
  or?: string[][];
  /** Why the case is skipped: the engine disagrees with the contract. */
  skip?: string;
}

/**
 * Many requests that differ in one field, against one policy: `yes` are those the policy applies
 * to (its conditions true, its glob or its actions matching), `no` those it does not (false),
 * `unknown` those whose conditions cannot be decided. An allow that applies grants; a deny that
 * applies, or whose conditions are unknown, refuses; otherwise the answer is the allow named by
 * `otherwise`, or no matching policy.
 */
export interface TableSpec {
  /** The field the rows vary: the request's context, its resource identifier, or its action. */
  table: 'context' | 'identifier' | 'action';
  principal: string;
  /** `type:identifier` (context and action tables). */
  resource?: string;
  /** The resource type (identifier tables). */
  type?: string;
  policy: string;
  otherwise?: string;
  yes?: (Record<string, unknown> | string)[];
  no?: (Record<string, unknown> | string)[];
  unknown?: Record<string, unknown>[];
}

export interface WorldFile {
  principals?: PrincipalSpec[];
  groups?: GroupSpec[];
  resources?: ResourceSpec[];
  policies?: PolicySpec[];
  delegations?: DelegationSpec[];
}

export interface SuiteFile extends WorldFile {
  rule: string;
  /** A shared world of `test/cases/engine/worlds/`, by file name without `.yaml`. */
  world?: string;
  cases: (EngineCase | TableSpec)[];
}

/** One file, loaded: its rule, the whole world (the shared one included) and every case. */
export interface EngineSuite {
  file: string;
  rule: string;
  world: World;
  cases: EngineCase[];
}

// ---- the schema ----

const text = { type: 'string', minLength: 1 } as const;
const texts = { type: 'array', items: text } as const;
const object = { type: 'object' } as const;
/** RFC 3339, or `now` with an optional offset in days, hours or minutes. */
const instant = {
  type: 'string',
  pattern: '^(now([+-][0-9]+[dhm])?|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2}))$',
} as const;
const resourceKey = { type: 'string', pattern: '^[^:]+:.*$' } as const;
const reason = { type: 'string', pattern: '^[A-Z_]+( [^ @]+)?( @[^ ]+)?$' } as const;

const principalSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'name'],
  properties: {
    id: text,
    type: { enum: ['USER', 'SERVICE_ACCOUNT', 'AI_AGENT', 'API_KEY'] },
    name: text,
    status: { enum: ['active', 'suspended', 'deprovisioned', 'deleted'] },
    attributes: {
      type: 'object',
      additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    },
    groups: texts,
    risk_score: { type: 'number' },
  },
} as const;

const groupSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: text, parents: texts },
} as const;

const resourceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['resource', 'attributes'],
  properties: { resource: resourceKey, attributes: object },
} as const;

const policySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'effect', 'resources'],
  properties: {
    id: text,
    effect: { enum: ['allow', 'deny'] },
    principals: texts,
    groups: texts,
    match: object,
    actions: texts,
    resources: { type: 'array', minItems: 1, items: resourceKey },
    conditions: object,
    status: { enum: ['active', 'disabled', 'draft'] },
    version: { type: 'integer', minimum: 1 },
    valid_from: instant,
    valid_until: instant,
  },
} as const;

const delegationSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['delegator', 'delegate'],
  properties: { delegator: text, delegate: text },
} as const;

const worldProperties = {
  principals: { type: 'array', items: principalSchema },
  groups: { type: 'array', items: groupSchema },
  resources: { type: 'array', items: resourceSchema },
  policies: { type: 'array', items: policySchema },
  delegations: { type: 'array', items: delegationSchema },
} as const;

const caseSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'principal', 'resource', 'allowed', 'reasons'],
  properties: {
    name: text,
    principal: text,
    action: {
      anyOf: [
        text,
        {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: text, properties: object },
        },
      ],
    },
    resource: resourceKey,
    attributes: object,
    context: object,
    subject_properties: object,
    on_behalf_of: { anyOf: [text, { type: 'array', minItems: 1, items: text }] },
    allowed: { type: 'boolean' },
    reasons: { type: 'array', minItems: 1, items: reason },
    or: { type: 'array', items: { type: 'array', minItems: 1, items: reason } },
    skip: text,
  },
} as const;

/** The rows of a table, each a context (object) or an identifier or action (text). */
const rows = (item: object) => ({ type: 'array', minItems: 1, items: item });

/**
 * An object that has every one of `keys` (strict mode wants the keys a subschema requires
 * declared beside it, even where the enclosing schema declares them).
 */
const has = (...keys: string[]) => ({
  properties: Object.fromEntries(keys.map((k) => [k, true])),
  required: keys,
});

const tableSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['table', 'principal', 'policy'],
  properties: {
    table: { enum: ['context', 'identifier', 'action'] },
    principal: text,
    resource: resourceKey,
    type: text,
    policy: text,
    otherwise: text,
    yes: { type: 'array' },
    no: { type: 'array' },
    unknown: { type: 'array' },
  },
  anyOf: [has('yes'), has('no'), has('unknown')],
  allOf: [
    {
      if: { properties: { table: { const: 'context' } } },
      then: {
        ...has('resource'),
        not: has('type'),
        properties: { resource: true, yes: rows(object), no: rows(object), unknown: rows(object) },
      },
    },
    {
      if: { properties: { table: { const: 'identifier' } } },
      then: {
        ...has('type'),
        not: { anyOf: [has('resource'), has('unknown')] },
        properties: { type: true, yes: rows({ type: 'string' }), no: rows({ type: 'string' }) },
      },
    },
    {
      if: { properties: { table: { const: 'action' } } },
      then: {
        ...has('resource'),
        not: { anyOf: [has('type'), has('unknown')] },
        properties: { resource: true, yes: rows(text), no: rows(text) },
      },
    },
  ],
} as const;

/** A file of `test/cases/engine/`. */
export const suiteFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rule', 'cases'],
  properties: {
    rule: text,
    world: text,
    ...worldProperties,
    cases: {
      type: 'array',
      minItems: 1,
      // An entry with `table` is a table; any other is one case (so a misspelt key of either
      // is reported against the schema it was meant for).
      items: {
        if: { type: 'object', properties: { table: true }, required: ['table'] },
        then: tableSchema,
        else: caseSchema,
      },
    },
  },
} as const;

/** A file of `test/cases/engine/worlds/`. */
export const worldFileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: worldProperties,
} as const;

// ---- loading ----

const UNITS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000 };

/** `now`, `now+30d`, `now-1h`, `now+5m` relative to `now`; anything else (RFC 3339) as written. */
export function resolveTime(value: string, now: number): string {
  const relative = /^now(?:([+-])([0-9]+)([dhm]))?$/.exec(value);
  if (!relative) return value;
  const [, sign, amount, unit] = relative;
  const offset = sign === undefined ? 0 : Number(amount) * UNITS[unit!]! * (sign === '-' ? -1 : 1);
  return new Date(now + offset).toISOString();
}

/**
 * Every file of `test/cases/engine/`, checked against the format, its times resolved against
 * `now` and its tables expanded (see `engineSuite`).
 */
export function loadEngineSuites(now = Date.now()): EngineSuite[] {
  const worlds = new Map(
    loadCases<WorldFile>(path.join('engine', 'worlds'), worldFileSchema).map((f) => [
      path.basename(f.file, '.yaml'),
      f.content,
    ]),
  );
  return loadCases<SuiteFile>('engine', suiteFileSchema).map(({ file, content }) =>
    engineSuite(file, content, worlds, now),
  );
}

/**
 * One file's suite, the file already checked against `suiteFileSchema`: its world added to the
 * shared one it names, its times resolved against `now`, its tables expanded. A file that names
 * a world that does not exist, defines an id twice (its own or its world's), gives two cases
 * the same name, or whose table names a policy it does not hold fails.
 */
export function engineSuite(
  file: string,
  content: SuiteFile,
  worlds: ReadonlyMap<string, WorldFile>,
  now: number,
): EngineSuite {
  const shared = content.world === undefined ? {} : worlds.get(content.world);
  if (!shared) throw new Error(`${file}: no world '${content.world}' in test/cases/engine/worlds`);
  const world: World = {
    principals: [...(shared.principals ?? []), ...(content.principals ?? [])],
    groups: [...(shared.groups ?? []), ...(content.groups ?? [])],
    resources: [...(shared.resources ?? []), ...(content.resources ?? [])],
    policies: [...(shared.policies ?? []), ...(content.policies ?? [])].map((p) => ({
      ...p,
      ...(p.valid_from !== undefined ? { valid_from: resolveTime(p.valid_from, now) } : {}),
      ...(p.valid_until !== undefined ? { valid_until: resolveTime(p.valid_until, now) } : {}),
    })),
    delegations: [...(shared.delegations ?? []), ...(content.delegations ?? [])],
  };
  onlyOnce(file, 'principal', world.principals, (p) => p.id);
  onlyOnce(file, 'group', world.groups, (g) => g.id);
  onlyOnce(file, 'resource', world.resources, (r) => r.resource);
  onlyOnce(file, 'policy', world.policies, (p) => p.id);
  const cases = content.cases.flatMap((entry) =>
    'table' in entry ? tableCases(file, world, entry) : [entry],
  );
  onlyOnce(file, 'case name', cases, (c) => c.name);
  return { file, rule: content.rule, world, cases };
}

function onlyOnce<T>(file: string, what: string, items: readonly T[], key: (item: T) => string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const k = key(item);
    if (seen.has(k)) throw new Error(`${file}: ${what} '${k}' is defined twice`);
    seen.add(k);
  }
}

const NO_MATCH = ['NO_MATCHING_POLICY'];

/** Long identifiers in case names: their start, their end and their length. */
const short = (id: string): string =>
  id.length > 24 ? `${id.slice(0, 12)}…${id.slice(-4)} (${id.length} chars)` : id;

type Outcome = 'yes' | 'no' | 'unknown';

/**
 * How the cases of a table are named, by the field it varies and its policy's effect: `{at}` is
 * the resource (or the type), `{row}` the row.
 */
const TITLES: Record<TableSpec['table'], Record<'allow' | 'deny', Record<Outcome, string>>> = {
  context: {
    allow: {
      yes: '{at} holds for {row}',
      no: '{at} does not hold for {row}',
      unknown: '{at} is unknown for {row}',
    },
    deny: {
      yes: '{at} is true for {row}: the deny applies',
      no: '{at} is false for {row}: the deny does not apply',
      unknown: '{at} is unknown for {row}: the deny applies',
    },
  },
  identifier: {
    allow: { yes: '{at}: matches {row}', no: '{at}: does not match {row}', unknown: '' },
    deny: { yes: '{at}: matches {row}', no: '{at}: does not match {row}', unknown: '' },
  },
  action: {
    allow: { yes: '{at}: {row} is granted', no: '{at}: {row} is not', unknown: '' },
    deny: { yes: '{at}: {row} is denied', no: '{at}: {row} is not denied', unknown: '' },
  },
};

/** The cases of a table, `yes` first, then `no`, then `unknown`, each in the order written. */
function tableCases(file: string, world: World, t: TableSpec): EngineCase[] {
  const policy = world.policies.find((p) => p.id === t.policy);
  if (!policy) throw new Error(`${file}: a table names policy '${t.policy}', which the world does not hold`);
  const fallback = t.otherwise === undefined ? undefined : world.policies.find((p) => p.id === t.otherwise);
  if (t.otherwise !== undefined && (fallback?.effect !== 'allow' || policy.effect !== 'deny')) {
    throw new Error(`${file}: a table's otherwise must be an allow of the world, beside a deny`);
  }
  const applies = {
    allowed: policy.effect === 'allow',
    reasons: [`${policy.effect === 'allow' ? 'POLICY_ALLOW' : 'POLICY_DENY'} ${policy.id}`],
  };
  const passes = fallback
    ? { allowed: true, reasons: [`POLICY_ALLOW ${fallback.id}`] }
    : { allowed: false, reasons: NO_MATCH };
  // A policy whose conditions are unknown applies if it denies and not if it allows: fail closed.
  const outcomes = { yes: applies, no: passes, unknown: policy.effect === 'deny' ? applies : passes };
  const out: EngineCase[] = [];
  for (const outcome of ['yes', 'no', 'unknown'] as const) {
    for (const row of t[outcome] ?? []) {
      const title = (at: string, shown: string): string =>
        TITLES[t.table][policy.effect][outcome].replace(/\{(at|row)\}/g, (_, key) =>
          key === 'at' ? at : shown,
        );
      const expected = { principal: t.principal, ...outcomes[outcome] };
      if (t.table === 'context') {
        const context = row as Record<string, unknown>;
        out.push({
          name: title(t.resource!, JSON.stringify(context)),
          resource: t.resource!,
          context,
          ...expected,
        });
      } else if (t.table === 'identifier') {
        const id = row as string;
        out.push({
          name: title(t.type!, JSON.stringify(short(id))),
          resource: `${t.type}:${id}`,
          ...expected,
        });
      } else {
        const action = row as string;
        out.push({ name: title(t.resource!, action), action, resource: t.resource!, ...expected });
      }
    }
  }
  return out;
}

// ---- building a world and asking it ----

const DAY = 86_400_000;

/** A policy as the store holds it, checked as the API checked it when it was written. */
export function storedPolicy(spec: PolicySpec, now: number): Policy {
  const at = '2026-01-01T00:00:00.000Z';
  // Written a month ago: a window that has closed since was still ahead then.
  const writtenAt = now - 30 * DAY;
  const body: PolicyBody = checkPolicyBody(
    {
      name: spec.id,
      effect: spec.effect,
      subjects: {
        ...(spec.principals?.length ? { principals: spec.principals } : {}),
        ...(spec.groups?.length ? { groups: spec.groups } : {}),
        ...(spec.match ? { match: spec.match } : {}),
      },
      actions: spec.actions ?? ['read'],
      resources: spec.resources.map(resourceOf),
      ...(spec.conditions ? { conditions: spec.conditions } : {}),
      status: spec.status ?? 'active',
      ...(spec.valid_from ? { valid_from: spec.valid_from } : {}),
      ...(spec.valid_until ? { valid_until: spec.valid_until } : {}),
    },
    '',
    writtenAt,
  );
  const fields = bodyFields(body);
  return {
    id: spec.id,
    ...fields,
    version: spec.version ?? 1,
    activated_at: fields.status === 'active' ? at : null,
    created_at: at,
    created_by: 'cli_test',
    updated_at: at,
    updated_by: 'cli_test',
  };
}

/** A principal of a world as the index holds it. */
export function ixPrincipalOf(p: World['principals'][number]): IxPrincipal {
  const at = '2025-06-01T00:00:00Z';
  return toIxPrincipal({
    id: p.id,
    type: p.type,
    status: p.status ?? 'active',
    name: p.name,
    email: p.type === 'USER' ? `${p.name.toLowerCase()}@example.com` : null,
    connector_source: p.type === 'USER' ? 'okta' : null,
    connector_id: p.type === 'USER' ? `okta-${p.id}` : null,
    created_at: at,
    updated_at: at,
    last_login: null,
    risk_score: p.risk_score ?? 0,
    privileges: null,
    fields: Object.entries(p.attributes ?? {}).map(([k, v]) => [`attr.${k}`, v]),
    groups: p.groups ?? [],
  });
}

/**
 * The index a world stands for. Every policy is checked as the API checks it at write time
 * (`checkPolicyBody`), so no case rests on a policy the service would refuse; delegations last a
 * day from `now`.
 */
export function buildIndex(world: World, now = Date.now()): PolicyIndex {
  const index = new PolicyIndex();
  for (const g of world.groups) index.putGroup(g.id, g.id, g.parents ?? []);
  for (const p of world.principals) index.putPrincipal(p.id, ixPrincipalOf(p));
  for (const r of world.resources) {
    const { type, identifier } = resourceOf(r.resource);
    index.putResource(type, identifier, { type, identifier, attributes: r.attributes });
  }
  for (const spec of world.policies) index.putPolicy(compilePolicy(storedPolicy(spec, now)));
  for (const { delegator, delegate } of world.delegations) {
    const id = `dlg_${delegator}_${delegate}`;
    index.putDelegation(id, {
      id,
      delegatorId: delegator,
      delegateId: delegate,
      actions: ['*'],
      resources: null,
      expiresAt: now + DAY,
    });
  }
  return index;
}

/** The request a case makes. */
export function requestOf(c: EngineCase): AccessRequest {
  const { type, identifier } = resourceOf(c.resource);
  return {
    principal_id: c.principal,
    action: c.action ?? 'read',
    resource: { type, identifier, ...(c.attributes ? { attributes: c.attributes } : {}) },
    ...(c.context ? { context: c.context } : {}),
    ...(c.subject_properties ? { subject_properties: c.subject_properties } : {}),
    ...(c.on_behalf_of !== undefined ? { on_behalf_of: c.on_behalf_of } : {}),
  };
}

/** A reason as the cases write it: `CODE`, ` <policy_id>`, ` @<principal_id>`. */
export const shownReason = (r: Reason): string =>
  [r.code, r.policy_id, r.principal_id === undefined ? undefined : `@${r.principal_id}`]
    .filter((part) => part !== undefined)
    .join(' ');

const sorted = (list: readonly string[]): string[] => [...list].sort();

/**
 * The reasons a case expects of an answer whose reasons (as shown) are `got`, sorted: the list of
 * `or` they equal if they equal one, else the case's own `reasons` (so that a mismatch is shown
 * against those).
 */
export function expectedReasons(c: EngineCase, got: readonly string[]): string[] {
  const answer = sorted(got).join('\n');
  return sorted([c.reasons, ...(c.or ?? [])].find((list) => sorted(list).join('\n') === answer) ?? c.reasons);
}

/** What is wrong with an answer to a case: its decision or its reasons; undefined when nothing is. */
export function answerProblem(c: EngineCase, verdict: Verdict): string | undefined {
  const got = verdict.reasons.map(shownReason);
  if (verdict.allowed !== c.allowed) {
    return `${c.allowed ? 'DENY' : 'ALLOW'} where ${c.allowed ? 'ALLOW' : 'DENY'} was expected (${got.join(', ')})`;
  }
  const expected = expectedReasons(c, got);
  if (sorted(got).join('\n') !== expected.join('\n')) {
    return `reasons ${JSON.stringify(sorted(got))} where ${JSON.stringify(expected)} were expected`;
  }
  return undefined;
}
