import type { RequestAction } from '../decisions/engine.js';
import type { SearchQueryInput } from '../schemas/search.js';

/**
 * The format of a file of policy cases: a world (principals, nested groups, registered
 * resources, policies, delegations) and requests with the decision and the exact reasons
 * expected. The decision engine's own cases (test/cases/engine, described in its README) and the
 * tests of a folder of policies (docs/policies-as-code.md) are written in it; this module holds
 * its types and the JSON Schema a file is checked against, so that a key the format does not
 * know (a misspelt `alowed:`) fails the load, naming it.
 */

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
  /** A shared world, by the name of its file without `.yaml` (`worlds/` beside the cases). */
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

/** A file of cases (`test/cases/engine/*.yaml`). */
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

/** A file of a shared world (`test/cases/engine/worlds/*.yaml`). */
export const worldFileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: worldProperties,
} as const;
