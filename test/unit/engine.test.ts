import { expect } from 'chai';
import { decide, type AccessRequest, type RequestAction } from '../../src/decisions/engine.js';
import { PolicyIndex } from '../../src/decisions/policy-index.js';
import { compilePolicy, toIxPrincipal } from '../../src/decisions/model.js';
import { checkPolicyBody, resourceOf, type Policy, type PolicyBody } from '../../src/policies/model.js';
import type { Reason } from '../../src/schemas/decisions.js';
import type { SearchQueryInput } from '../../src/schemas/search.js';

/**
 * The decision engine (`decide` over a `PolicyIndex`) on its own, without HTTP or Neo4j: each
 * rule of docs/policies.md (policies and decisions) is a table of cases — a world
 * (principals, nested groups, registered resources, policies) and requests with the decision
 * and the exact reasons expected — and one loop builds each world's index and decides each
 * case. Every policy is checked as the API checks it at write time (`checkPolicyBody`), so no
 * case rests on a policy the service would refuse.
 *
 * Cases where the engine does not (yet) do what the contract says keep the contract's answer
 * and are skipped, with the reason in the case.
 */

// ---- worlds ----

type Attributes = Record<string, string | string[]>;

interface PrincipalSpec {
  id: string;
  type: 'USER' | 'SERVICE_ACCOUNT' | 'AI_AGENT' | 'API_KEY';
  name: string;
  status?: 'active' | 'suspended' | 'deprovisioned' | 'deleted';
  attributes?: Attributes;
  /** Groups it is a direct member of. */
  groups?: string[];
  risk_score?: number;
}

interface GroupSpec {
  id: string;
  /** Groups it is nested in, directly. */
  parents?: string[];
}

interface PolicySpec {
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
  /** A time-bound policy's window (RFC 3339). */
  valid_from?: string;
  valid_until?: string;
}

interface ResourceSpec {
  /** `type:identifier`. */
  resource: string;
  attributes: Record<string, unknown>;
}

interface World {
  principals: PrincipalSpec[];
  groups: GroupSpec[];
  policies: PolicySpec[];
  resources?: ResourceSpec[];
  /** Who may act for whom (`delegator → delegate`): active delegations of every action and resource. */
  delegations?: [string, string][];
}

interface Case {
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

interface Suite {
  rule: string;
  world: World;
  cases: Case[];
}

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.now();
const daysFromNow = (days: number): string => new Date(NOW + days * DAY).toISOString();

/**
 * The organisation most suites share. Nesting: pay-eng → payments → eng → all, platform → eng,
 * oncall → all; cyc-a ⇄ cyc-b is a cycle (the API refuses one; the index must still end).
 */
const PRINCIPALS: PrincipalSpec[] = [
  {
    id: 'prn_alice',
    type: 'USER',
    name: 'Alice',
    attributes: { team: 'payments', role: 'admin', clearance: '3', tags: ['oncall', 'eu'] },
    groups: ['grp_pay_eng', 'grp_oncall'],
  },
  { id: 'prn_bob', type: 'USER', name: 'Bob', attributes: { team: 'platform' }, groups: ['grp_platform'] },
  {
    id: 'prn_carol',
    type: 'USER',
    name: 'Carol',
    status: 'suspended',
    attributes: { team: 'payments' },
    groups: ['grp_pay_eng'],
  },
  { id: 'prn_dave', type: 'USER', name: 'Dave', status: 'deprovisioned', groups: ['grp_pay_eng'] },
  { id: 'prn_erin', type: 'SERVICE_ACCOUNT', name: 'Erin', status: 'deleted' },
  { id: 'prn_frank', type: 'USER', name: 'Frank', groups: ['grp_cyc_a'] },
  { id: 'prn_gina', type: 'USER', name: 'Gina', groups: ['grp_pay_eng'] },
  {
    id: 'prn_svc',
    type: 'SERVICE_ACCOUNT',
    name: 'Build bot',
    attributes: { team: 'payments' },
    groups: ['grp_eng'],
  },
  { id: 'prn_key', type: 'API_KEY', name: 'Key', risk_score: 80 },
  {
    id: 'prn_agent',
    type: 'AI_AGENT',
    name: 'Agent',
    attributes: { team: 'payments', clearance: '5', allowed_tools: ['search', 'deploy'] },
  },
  {
    id: 'prn_agent_any',
    type: 'AI_AGENT',
    name: 'Agent any',
    attributes: { team: 'research', allowed_tools: ['*'] },
  },
  { id: 'prn_agent_none', type: 'AI_AGENT', name: 'Agent none', attributes: { team: 'payments' } },
  {
    id: 'prn_agent_off',
    type: 'AI_AGENT',
    name: 'Agent off',
    status: 'suspended',
    attributes: { allowed_tools: ['*'] },
  },
];

const GROUPS: GroupSpec[] = [
  { id: 'grp_all' },
  { id: 'grp_eng', parents: ['grp_all'] },
  { id: 'grp_payments', parents: ['grp_eng'] },
  { id: 'grp_pay_eng', parents: ['grp_payments'] },
  { id: 'grp_platform', parents: ['grp_eng'] },
  { id: 'grp_oncall', parents: ['grp_all'] },
  { id: 'grp_cyc_a', parents: ['grp_cyc_b'] },
  { id: 'grp_cyc_b', parents: ['grp_cyc_a'] },
  { id: 'grp_island' },
];

const org = (policies: PolicySpec[], resources: ResourceSpec[] = []): World => ({
  principals: PRINCIPALS,
  groups: GROUPS,
  policies,
  resources,
});

/** A policy allowing `read` to alice unless the fields say otherwise. */
const allow = (id: string, resources: string[], fields: Partial<PolicySpec> = {}): PolicySpec => ({
  id,
  effect: 'allow',
  principals: ['prn_alice'],
  resources,
  ...fields,
});

const deny = (id: string, resources: string[], fields: Partial<PolicySpec> = {}): PolicySpec => ({
  ...allow(id, resources, fields),
  effect: 'deny',
});

const NO_MATCH = ['NO_MATCHING_POLICY'];

// ---- the rules ----

const SUITES: Suite[] = [
  {
    rule: 'deny overrides allow',
    world: org([
      allow('pol_read', ['doc:plan']),
      deny('pol_block', ['doc:plan'], { version: 3 }),
      allow('pol_read_2', ['doc:two']),
      allow('pol_read_3', ['doc:two'], { principals: [], groups: ['grp_pay_eng'] }),
      allow('pol_grp', ['doc:grp'], { principals: [], groups: ['grp_eng'] }),
      deny('pol_not_alice', ['doc:grp']),
      deny('pol_write', ['doc:other-action'], { actions: ['write'] }),
      allow('pol_read_oa', ['doc:other-action']),
      deny('pol_bob', ['doc:other-principal'], { principals: ['prn_bob'] }),
      allow('pol_read_op', ['doc:other-principal']),
      allow('pol_read_many', ['doc:many']),
      deny('pol_many_1', ['doc:many']),
      deny('pol_many_2', ['doc:many'], { principals: [], groups: ['grp_all'] }),
      allow('pol_exact', ['doc:reports-1']),
      deny('pol_glob', ['doc:reports-*']),
      allow('pol_star_allow', ['doc:star']),
      deny('pol_star_deny', ['doc:star'], { actions: ['*'] }),
    ]),
    cases: [
      {
        name: 'an allow and a deny on the same request: DENY naming the deny',
        principal: 'prn_alice',
        resource: 'doc:plan',
        allowed: false,
        reasons: ['POLICY_DENY pol_block'],
      },
      {
        name: 'two allows and no deny: ALLOW naming both',
        principal: 'prn_alice',
        resource: 'doc:two',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_read_2', 'POLICY_ALLOW pol_read_3'],
      },
      {
        name: 'a deny naming the principal beats an allow through a group',
        principal: 'prn_alice',
        resource: 'doc:grp',
        allowed: false,
        reasons: ['POLICY_DENY pol_not_alice'],
      },
      {
        name: '… and leaves the other members of the group alone',
        principal: 'prn_bob',
        resource: 'doc:grp',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_grp'],
      },
      {
        name: 'a deny of another action does not take this one away',
        principal: 'prn_alice',
        resource: 'doc:other-action',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_read_oa'],
      },
      {
        name: '… and denies that action',
        principal: 'prn_alice',
        action: 'write',
        resource: 'doc:other-action',
        allowed: false,
        reasons: ['POLICY_DENY pol_write'],
      },
      {
        name: 'a deny of another principal does not apply',
        principal: 'prn_alice',
        resource: 'doc:other-principal',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_read_op'],
      },
      {
        name: 'several applying denies are all named',
        principal: 'prn_alice',
        resource: 'doc:many',
        allowed: false,
        reasons: ['POLICY_DENY pol_many_1', 'POLICY_DENY pol_many_2'],
      },
      {
        name: 'a glob deny beats an exact allow',
        principal: 'prn_alice',
        resource: 'doc:reports-1',
        allowed: false,
        reasons: ['POLICY_DENY pol_glob'],
      },
      {
        name: 'a deny of every action (`*`) beats an allow of read',
        principal: 'prn_alice',
        resource: 'doc:star',
        allowed: false,
        reasons: ['POLICY_DENY pol_star_deny'],
      },
    ],
  },
  {
    rule: 'no applicable allow is a deny (NO_MATCHING_POLICY)',
    world: org([
      allow('pol_read', ['doc:plan']),
      deny('pol_deny_only', ['doc:deny-only'], { conditions: { 'principal.attributes.team': 'platform' } }),
      allow('pol_cond', ['doc:cond'], { conditions: { 'principal.attributes.team': 'platform' } }),
    ]),
    cases: [
      {
        name: 'no policy names the resource',
        principal: 'prn_alice',
        resource: 'doc:nothing',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a policy names the resource for another action',
        principal: 'prn_alice',
        action: 'write',
        resource: 'doc:plan',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a policy names the resource for another principal',
        principal: 'prn_bob',
        resource: 'doc:plan',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a policy names the same identifier of another type',
        principal: 'prn_alice',
        resource: 'file:plan',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'the only allow has a false condition',
        principal: 'prn_alice',
        resource: 'doc:cond',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a deny that does not apply grants nothing',
        principal: 'prn_alice',
        resource: 'doc:deny-only',
        allowed: false,
        reasons: NO_MATCH,
      },
    ],
  },
  {
    rule: 'unknown and inactive principals fail closed',
    world: org([
      allow('pol_named', ['doc:plan'], {
        principals: ['prn_ghost', 'prn_carol', 'prn_dave', 'prn_erin', 'prn_alice'],
      }),
      allow('pol_group', ['doc:group'], { principals: [], groups: ['grp_pay_eng'] }),
      allow('pol_match', ['doc:match'], { principals: [], match: { attributes: { team: 'payments' } } }),
    ]),
    cases: [
      {
        name: 'an unknown principal, even one a policy names: PRINCIPAL_NOT_FOUND',
        principal: 'prn_ghost',
        resource: 'doc:plan',
        allowed: false,
        reasons: ['PRINCIPAL_NOT_FOUND'],
      },
      {
        name: 'an unknown principal on a resource nobody names: PRINCIPAL_NOT_FOUND',
        principal: 'prn_nobody',
        resource: 'doc:nothing',
        allowed: false,
        reasons: ['PRINCIPAL_NOT_FOUND'],
      },
      {
        name: 'a suspended principal a policy names: PRINCIPAL_INACTIVE',
        principal: 'prn_carol',
        resource: 'doc:plan',
        allowed: false,
        reasons: ['PRINCIPAL_INACTIVE'],
      },
      {
        name: 'a deprovisioned principal: PRINCIPAL_INACTIVE',
        principal: 'prn_dave',
        resource: 'doc:plan',
        allowed: false,
        reasons: ['PRINCIPAL_INACTIVE'],
      },
      {
        name: 'a deleted principal: PRINCIPAL_INACTIVE',
        principal: 'prn_erin',
        resource: 'doc:plan',
        allowed: false,
        reasons: ['PRINCIPAL_INACTIVE'],
      },
      {
        name: 'a suspended member of an allowed group: PRINCIPAL_INACTIVE',
        principal: 'prn_carol',
        resource: 'doc:group',
        allowed: false,
        reasons: ['PRINCIPAL_INACTIVE'],
      },
      {
        name: 'a suspended principal a match selects: PRINCIPAL_INACTIVE',
        principal: 'prn_carol',
        resource: 'doc:match',
        allowed: false,
        reasons: ['PRINCIPAL_INACTIVE'],
      },
      {
        name: 'the active principal of the same policy is allowed',
        principal: 'prn_alice',
        resource: 'doc:plan',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_named'],
      },
    ],
  },
  {
    rule: 'conditions: true, false and unknown (missing or wrongly typed paths)',
    world: org(
      [
        allow('pol_team', ['doc:team'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
          conditions: { 'principal.attributes.team': 'payments' },
        }),
        allow('pol_open', ['doc:deny-cond', 'doc:deny-exists', 'doc:deny-mixed', 'doc:deny-type'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
        }),
        deny('pol_no_platform', ['doc:deny-cond'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
          conditions: { 'principal.attributes.team': 'platform' },
        }),
        deny('pol_no_team', ['doc:deny-exists'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
          conditions: { 'principal.attributes.team': { $exists: true } },
        }),
        deny('pol_mixed', ['doc:deny-mixed'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
          // The unknown entry first: a false entry later must still make the whole false.
          conditions: { 'context.ip': { $cidr: '10.0.0.0/8' }, 'principal.attributes.team': 'platform' },
        }),
        allow('pol_type', ['doc:type'], { conditions: { 'principal.attributes.team': { $gt: 5 } } }),
        deny('pol_type_deny', ['doc:deny-type'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
          conditions: { 'principal.attributes.team': { $gt: 5 } },
        }),
        allow('pol_env', ['doc:env'], {
          conditions: { 'resource.attributes.environment': { $ne: 'restricted' } },
        }),
        allow('pol_region_open', ['doc:region']),
        deny('pol_region', ['doc:region'], { conditions: { 'context.region': { $nin: ['eu'] } } }),
      ],
      [{ resource: 'doc:env', attributes: { owner: 'payments' } }],
    ),
    cases: [
      {
        name: 'an allow whose condition is true applies',
        principal: 'prn_alice',
        resource: 'doc:team',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_team'],
      },
      {
        name: 'an allow whose condition is false does not',
        principal: 'prn_bob',
        resource: 'doc:team',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'an allow whose condition reads a missing attribute (unknown) does not',
        principal: 'prn_key',
        resource: 'doc:team',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a deny whose condition is false does not apply',
        principal: 'prn_alice',
        resource: 'doc:deny-cond',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_open'],
      },
      {
        name: 'a deny whose condition is true applies',
        principal: 'prn_bob',
        resource: 'doc:deny-cond',
        allowed: false,
        reasons: ['POLICY_DENY pol_no_platform'],
      },
      {
        name: 'a deny whose condition reads a missing attribute applies (fails closed)',
        principal: 'prn_key',
        resource: 'doc:deny-cond',
        allowed: false,
        reasons: ['POLICY_DENY pol_no_platform'],
      },
      {
        name: '$exists on a missing attribute is false, never unknown: the deny does not apply',
        principal: 'prn_key',
        resource: 'doc:deny-exists',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_open'],
      },
      {
        name: '$exists on a present attribute is true: the deny applies',
        principal: 'prn_alice',
        resource: 'doc:deny-exists',
        allowed: false,
        reasons: ['POLICY_DENY pol_no_team'],
      },
      {
        name: 'one false entry makes the conditions false though another is unknown: deny does not apply',
        principal: 'prn_alice',
        resource: 'doc:deny-mixed',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_open'],
      },
      {
        name: 'true and unknown entries make the conditions unknown: the deny applies',
        principal: 'prn_bob',
        resource: 'doc:deny-mixed',
        allowed: false,
        reasons: ['POLICY_DENY pol_mixed'],
      },
      {
        name: 'true and true: the deny applies',
        principal: 'prn_bob',
        resource: 'doc:deny-mixed',
        context: { ip: '10.1.2.3' },
        allowed: false,
        reasons: ['POLICY_DENY pol_mixed'],
      },
      {
        name: 'true and false: the deny does not apply',
        principal: 'prn_bob',
        resource: 'doc:deny-mixed',
        context: { ip: '192.168.0.1' },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_open'],
      },
      {
        name: 'a value of the wrong type for the operator is unknown: the allow does not apply',
        principal: 'prn_alice',
        resource: 'doc:type',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a value of the wrong type for the operator is unknown: the deny applies',
        principal: 'prn_alice',
        resource: 'doc:deny-type',
        allowed: false,
        reasons: ['POLICY_DENY pol_type_deny'],
      },
      {
        name: '$ne on a missing attribute is unknown (not true as in search): the allow does not apply',
        principal: 'prn_alice',
        resource: 'doc:env',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: '$ne on a present attribute that differs: the allow applies',
        principal: 'prn_alice',
        resource: 'doc:env',
        attributes: { environment: 'prod' },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_env'],
      },
      {
        name: '$ne on a present attribute that is equal: the allow does not apply',
        principal: 'prn_alice',
        resource: 'doc:env',
        attributes: { environment: 'restricted' },
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: '$nin on a missing context key is unknown: the deny applies',
        principal: 'prn_alice',
        resource: 'doc:region',
        allowed: false,
        reasons: ['POLICY_DENY pol_region'],
      },
      {
        name: '$nin on a context value in the list: the deny does not apply',
        principal: 'prn_alice',
        resource: 'doc:region',
        context: { region: 'eu' },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_region_open'],
      },
    ],
  },
  {
    rule: 'condition operators',
    world: org(
      [
        allow('pol_range', ['op:range'], { conditions: { 'context.n': { $gte: 1, $lt: 5 } } }),
        allow('pol_ref', ['op:ref', 'op:ref-missing'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
          conditions: { 'resource.attributes.owner_team': { $ref: 'principal.attributes.team' } },
        }),
        allow('pol_ref_op', ['op:ref-op'], {
          conditions: { 'context.level': { $gte: { $ref: 'resource.attributes.min_level' } } },
        }),
        allow('pol_tags', ['op:tags'], { conditions: { 'principal.attributes.tags': 'oncall' } }),
        allow('pol_tags_ne', ['op:tags-ne'], {
          conditions: { 'principal.attributes.tags': { $ne: 'oncall' } },
        }),
        allow('pol_tri_base', ['tri:*']),
        deny('pol_tri_gt', ['tri:gt'], { conditions: { 'context.n': { $gt: 10 } } }),
        deny('pol_tri_ref', ['tri:ref'], { conditions: { 'context.n': { $lt: { $ref: 'context.max' } } } }),
        allow('pol_risk', ['op:risk'], {
          principals: ['prn_alice', 'prn_key'],
          conditions: { 'principal.risk_score': { $lt: 50 } },
        }),
      ],
      [
        { resource: 'op:ref', attributes: { owner_team: 'payments' } },
        { resource: 'op:ref-op', attributes: { min_level: 3 } },
      ],
    ),
    cases: [
      // What each operator answers on values of every type is written in test/cases/operators
      // (test/unit/operators.test.ts); these cases are how those answers reach decisions.
      // Several operators on one path: all must hold.
      ...opCases('op:range', 'pol_range', { n: 3 }, [{ n: 5 }, { n: 0 }]),
      {
        name: '$ref as a plain value: equal to the path it names',
        principal: 'prn_alice',
        resource: 'op:ref',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_ref'],
      },
      {
        name: '$ref as a plain value: different from the path it names',
        principal: 'prn_bob',
        resource: 'op:ref',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: '$ref to a path the request gives (resource attributes of the request)',
        principal: 'prn_bob',
        resource: 'op:ref-missing',
        attributes: { owner_team: 'platform' },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_ref'],
      },
      {
        name: '$ref whose own path is missing is unknown',
        principal: 'prn_alice',
        resource: 'op:ref-missing',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: '$ref to a missing path is unknown',
        principal: 'prn_key',
        resource: 'op:ref-missing',
        attributes: { owner_team: 'payments' },
        allowed: false,
        reasons: NO_MATCH,
      },
      ...opCases('op:ref-op', 'pol_ref_op', { level: 3 }, [{ level: 2 }]),
      {
        name: '$ref inside an operator reads the request’s resource attributes over the registered ones',
        principal: 'prn_alice',
        resource: 'op:ref-op',
        attributes: { min_level: 1 },
        context: { level: 2 },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_ref_op'],
      },
      {
        name: 'a plain value on a list attribute holds when the list contains it',
        principal: 'prn_alice',
        resource: 'op:tags',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_tags'],
      },
      {
        name: '$ne on a list attribute that contains the value is false',
        principal: 'prn_alice',
        resource: 'op:tags-ne',
        allowed: false,
        reasons: NO_MATCH,
      },
      // True, false and unknown told apart: a deny applies when true or unknown, not when false.
      ...triCases(
        'tri:gt',
        'pol_tri_gt',
        { n: 11 },
        [{ n: 10 }, { n: '9' }],
        [{ n: 'abc' }, { n: true }, {}],
      ),
      ...triCases('tri:ref', 'pol_tri_ref', { n: 1, max: 2 }, [{ n: 2, max: 2 }], [{ n: 1 }, { max: 2 }]),
      {
        name: 'principal.risk_score compares numerically (0 < 50)',
        principal: 'prn_alice',
        resource: 'op:risk',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_risk'],
      },
      {
        name: 'principal.risk_score compares numerically (80 ≥ 50)',
        principal: 'prn_key',
        resource: 'op:risk',
        allowed: false,
        reasons: NO_MATCH,
      },
    ],
  },
  {
    rule: 'globs on resource identifiers',
    world: org([
      allow('pol_prefix', ['database:payments-prod-*']),
      allow('pol_suffix', ['cluster:*-prod']),
      allow('pol_middle', ['queue:pay*-1']),
      allow('pol_star', ['bucket:*']),
      allow('pol_stars', ['seq:a*b*c']),
      allow('pol_overlap', ['ovl:a*a']),
      allow('pol_literal', ['lit:a.b+(1)*']),
      allow('pol_backtrack', ['bt:*a*a*a*a*a*a*a*a*a*a*c']),
      allow('pol_exact', ['report:report-1']),
      allow('pol_any_svc', ['svc:*']),
      allow('pol_web_svc', ['svc:web-*']),
      allow('pol_logs', ['logs:*']),
      deny('pol_audit_logs', ['logs:audit-*']),
    ]),
    cases: [
      ...globCases(
        'database',
        'pol_prefix',
        ['payments-prod-1', 'payments-prod-'],
        ['payments-staging-1', 'xpayments-prod-1', 'pay'],
      ),
      ...globCases('cluster', 'pol_suffix', ['eu-prod', '-prod'], ['eu-prod-2', 'eu-production']),
      ...globCases('queue', 'pol_middle', ['payments-1', 'pay-1'], ['payments-12', 'pa-1', 'xpay-1']),
      ...globCases('bucket', 'pol_star', ['anything at all', '*', 'x'], []),
      ...globCases('seq', 'pol_stars', ['a-b-c', 'abc', 'aXbYbZc'], ['a-c-b', 'ab', 'bc', 'a-b-c-d']),
      ...globCases('ovl', 'pol_overlap', ['aa', 'aba'], ['a', 'ab']),
      // Characters a regular expression would read as operators are literal.
      ...globCases('lit', 'pol_literal', ['a.b+(1)x', 'a.b+(1)'], ['axb+(1)', 'a.bb(1)', 'a.b+1']),
      // Patterns that would backtrack a regular expression into exponential time.
      ...globCases(
        'bt',
        'pol_backtrack',
        ['a'.repeat(20) + 'c', 'a'.repeat(500) + 'c'],
        ['a'.repeat(511), 'a'.repeat(510) + 'b', 'a'.repeat(9) + 'c'],
      ),
      ...globCases('report', 'pol_exact', ['report-1'], ['report-10', 'report-']),
      {
        name: 'the type is exact: a glob of another type does not match',
        principal: 'prn_alice',
        resource: 'cache:payments-prod-1',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'every glob that matches is named',
        principal: 'prn_alice',
        resource: 'svc:web-1',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_any_svc', 'POLICY_ALLOW pol_web_svc'],
      },
      {
        name: 'only the globs that match are named',
        principal: 'prn_alice',
        resource: 'svc:api',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_any_svc'],
      },
      {
        name: 'a narrower glob deny carves out of a wider allow',
        principal: 'prn_alice',
        resource: 'logs:audit-2026',
        allowed: false,
        reasons: ['POLICY_DENY pol_audit_logs'],
      },
      {
        name: '… and leaves the rest allowed',
        principal: 'prn_alice',
        resource: 'logs:app-1',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_logs'],
      },
    ],
  },
  {
    rule: 'actions and wildcard actions',
    world: org([
      allow('pol_any', ['act:any'], { actions: ['*'] }),
      allow('pol_repo', ['act:repo'], { actions: ['repo:*'] }),
      allow('pol_mcp', ['act:mcp'], { actions: ['tools/*'] }),
      allow('pol_exact', ['act:exact'], { actions: ['read', 'query'] }),
      allow('pol_all', ['act:mixed'], { actions: ['*'] }),
      deny('pol_no_repo', ['act:mixed'], { actions: ['repo:*'] }),
    ]),
    cases: [
      ...actionCases('act:any', 'pol_any', ['read', 'tools/call', 'repo:push', 'a.b-c_d'], []),
      ...actionCases(
        'act:repo',
        'pol_repo',
        ['repo:push', 'repo:admin:delete'],
        ['repo', 'repository:push', 'repox', 'read'],
      ),
      ...actionCases(
        'act:mcp',
        'pol_mcp',
        ['tools/call', 'tools/list'],
        ['tools', 'prompts/get', 'toolsx/call'],
      ),
      ...actionCases('act:exact', 'pol_exact', ['read', 'query'], ['write', 'read:all', 'reader', 'rea']),
      {
        name: 'an action given as { name, properties } is matched by its name',
        principal: 'prn_alice',
        action: { name: 'query', properties: { method: 'GET' } },
        resource: 'act:exact',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_exact'],
      },
      {
        name: 'a deny of `repo:*` beats an allow of `*` for a repo action',
        principal: 'prn_alice',
        action: 'repo:push',
        resource: 'act:mixed',
        allowed: false,
        reasons: ['POLICY_DENY pol_no_repo'],
      },
      {
        name: '… and not for another action',
        principal: 'prn_alice',
        action: 'read',
        resource: 'act:mixed',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_all'],
      },
    ],
  },
  {
    rule: 'nested groups',
    world: org([
      allow('pol_direct', ['doc:direct'], { principals: [], groups: ['grp_pay_eng'] }),
      allow('pol_one_up', ['doc:one-up'], { principals: [], groups: ['grp_payments'] }),
      allow('pol_two_up', ['doc:two-up'], { principals: [], groups: ['grp_eng'] }),
      allow('pol_three_up', ['doc:three-up'], { principals: [], groups: ['grp_all'] }),
      allow('pol_cycle', ['doc:cycle'], { principals: [], groups: ['grp_cyc_b'] }),
      allow('pol_island', ['doc:island'], { principals: [], groups: ['grp_island'] }),
      allow('pol_missing', ['doc:missing-group'], { principals: [], groups: ['grp_never'] }),
      allow('pol_alice', ['doc:deny-up'], { principals: ['prn_alice', 'prn_gina'] }),
      deny('pol_deny_all', ['doc:deny-up'], { principals: [], groups: ['grp_all'] }),
      allow('pol_two_groups', ['doc:two-groups'], { principals: [], groups: ['grp_payments', 'grp_island'] }),
    ]),
    cases: [
      {
        name: 'a direct member of the policy’s group',
        principal: 'prn_alice',
        resource: 'doc:direct',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_direct'],
      },
      {
        name: 'principal → group → parent group',
        principal: 'prn_alice',
        resource: 'doc:one-up',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_one_up'],
      },
      {
        name: 'principal → group → parent → grandparent',
        principal: 'prn_alice',
        resource: 'doc:two-up',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_two_up'],
      },
      {
        name: 'principal → group → parent → grandparent → great-grandparent',
        principal: 'prn_gina',
        resource: 'doc:three-up',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_three_up'],
      },
      {
        name: 'a deny three levels up',
        principal: 'prn_gina',
        resource: 'doc:deny-up',
        allowed: false,
        reasons: ['POLICY_DENY pol_deny_all'],
      },
      {
        name: 'three levels up, reached by two paths (named once)',
        principal: 'prn_alice',
        resource: 'doc:three-up',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_three_up'],
      },
      {
        name: 'another branch of the tree meets at the grandparent',
        principal: 'prn_bob',
        resource: 'doc:two-up',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_two_up'],
      },
      {
        name: 'a sibling branch does not reach the parent group',
        principal: 'prn_bob',
        resource: 'doc:one-up',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'membership does not flow down: a member of the parent is not in the child',
        principal: 'prn_svc',
        resource: 'doc:one-up',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a nesting cycle: the other group of the cycle is reached',
        principal: 'prn_frank',
        resource: 'doc:cycle',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_cycle'],
      },
      {
        name: 'a nesting cycle: the walk ends without reaching an unrelated group',
        principal: 'prn_frank',
        resource: 'doc:island',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a group nobody is in (that does not exist) selects nobody',
        principal: 'prn_alice',
        resource: 'doc:missing-group',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a deny through an ancestor group beats an allow naming the principal',
        principal: 'prn_alice',
        resource: 'doc:deny-up',
        allowed: false,
        reasons: ['POLICY_DENY pol_deny_all'],
      },
      {
        name: 'a policy with several groups selects a member of any of them',
        principal: 'prn_alice',
        resource: 'doc:two-groups',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_two_groups'],
      },
    ],
  },
  {
    rule: 'match subjects (principals selected by a search query)',
    world: org([
      allow('pol_agents', ['db:ledger'], {
        principals: [],
        match: { type: ['AI_AGENT'], attributes: { team: 'payments' } },
      }),
      allow('pol_not_payments', ['db:wiki'], {
        principals: [],
        match: { attributes: { team: { $ne: 'payments' } } },
      }),
      allow('pol_cond_not_payments', ['db:wiki-cond'], {
        principals: ['prn_key', 'prn_bob'],
        conditions: { 'principal.attributes.team': { $ne: 'payments' } },
      }),
      allow('pol_oncall', ['db:pager'], { principals: [], match: { attributes: { tags: 'oncall' } } }),
      allow('pol_no_team', ['db:teamless'], {
        principals: [],
        match: { attributes: { team: { $exists: false } } },
      }),
      allow('pol_risky', ['db:quarantine'], { principals: [], match: { risk_score: { $gte: 70 } } }),
      allow('pol_bots', ['db:ci'], { principals: [], match: { name: { $startsWith: 'build' } } }),
      allow('pol_vault', ['db:vault'], { principals: ['prn_agent', 'prn_alice'] }),
      deny('pol_no_agents', ['db:vault'], { principals: [], match: { type: ['AI_AGENT'] } }),
    ]),
    cases: [
      {
        name: 'a principal of the type with the attribute',
        principal: 'prn_agent',
        resource: 'db:ledger',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_agents'],
      },
      {
        name: 'the type with another attribute value',
        principal: 'prn_agent_any',
        resource: 'db:ledger',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'the attribute on another type',
        principal: 'prn_svc',
        resource: 'db:ledger',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a missing attribute matches $ne in a match (search semantics)',
        principal: 'prn_key',
        resource: 'db:wiki',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_not_payments'],
      },
      {
        name: '… while the same test as a condition is unknown',
        principal: 'prn_key',
        resource: 'db:wiki-cond',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'another value matches $ne in a match',
        principal: 'prn_bob',
        resource: 'db:wiki',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_not_payments'],
      },
      {
        name: 'the value itself does not match $ne',
        principal: 'prn_alice',
        resource: 'db:wiki',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a list attribute matches a plain value it contains',
        principal: 'prn_alice',
        resource: 'db:pager',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_oncall'],
      },
      {
        name: 'a principal without the list attribute does not',
        principal: 'prn_bob',
        resource: 'db:pager',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: '$exists: false matches a principal without the attribute',
        principal: 'prn_key',
        resource: 'db:teamless',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_no_team'],
      },
      {
        name: '$exists: false does not match one with it',
        principal: 'prn_alice',
        resource: 'db:teamless',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a field of the principal (risk_score) in range',
        principal: 'prn_key',
        resource: 'db:quarantine',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_risky'],
      },
      {
        name: 'a field of the principal (risk_score) out of range',
        principal: 'prn_alice',
        resource: 'db:quarantine',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: '$startsWith on the name ignores case',
        principal: 'prn_svc',
        resource: 'db:ci',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_bots'],
      },
      {
        name: 'a deny selecting by match beats an allow naming the principal',
        principal: 'prn_agent',
        resource: 'db:vault',
        allowed: false,
        reasons: ['POLICY_DENY pol_no_agents'],
      },
      {
        name: '… and leaves principals it does not select alone',
        principal: 'prn_alice',
        resource: 'db:vault',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_vault'],
      },
    ],
  },
  {
    rule: 'policy status and time-bound policies',
    world: org([
      allow('pol_disabled', ['doc:disabled'], { status: 'disabled' }),
      allow('pol_draft', ['doc:draft'], { status: 'draft' }),
      allow('pol_on', ['doc:disabled-deny', 'doc:draft-deny']),
      deny('pol_disabled_deny', ['doc:disabled-deny'], { status: 'disabled' }),
      deny('pol_draft_deny', ['doc:draft-deny'], { status: 'draft' }),
      allow('pol_window', ['doc:window'], { valid_from: daysFromNow(-1), valid_until: daysFromNow(1) }),
      allow('pol_until', ['doc:until'], { valid_until: daysFromNow(1) }),
      allow('pol_from', ['doc:from'], { valid_from: daysFromNow(-1) }),
      allow('pol_future', ['doc:future'], { valid_from: daysFromNow(1), valid_until: daysFromNow(2) }),
      allow('pol_expired', ['doc:expired'], { valid_from: daysFromNow(-10), valid_until: daysFromNow(-1) }),
      allow('pol_base', ['doc:expired-deny', 'doc:future-deny']),
      deny('pol_expired_deny', ['doc:expired-deny'], { valid_until: daysFromNow(-1) }),
      deny('pol_future_deny', ['doc:future-deny'], { valid_from: daysFromNow(1) }),
    ]),
    cases: [
      {
        name: 'a disabled allow grants nothing',
        principal: 'prn_alice',
        resource: 'doc:disabled',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a draft allow grants nothing',
        principal: 'prn_alice',
        resource: 'doc:draft',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a disabled deny takes nothing away',
        principal: 'prn_alice',
        resource: 'doc:disabled-deny',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_on'],
      },
      {
        name: 'a draft deny takes nothing away',
        principal: 'prn_alice',
        resource: 'doc:draft-deny',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_on'],
      },
      {
        name: 'a time-bound allow inside its window applies',
        principal: 'prn_alice',
        resource: 'doc:window',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_window'],
      },
      {
        name: 'a time-bound allow with only an end ahead applies',
        principal: 'prn_alice',
        resource: 'doc:until',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_until'],
      },
      {
        name: 'a time-bound allow with only a start behind applies',
        principal: 'prn_alice',
        resource: 'doc:from',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_from'],
      },
      {
        name: 'a time-bound allow not yet valid is as if it were not there',
        principal: 'prn_alice',
        resource: 'doc:future',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'an expired time-bound allow is as if it were not there',
        principal: 'prn_alice',
        resource: 'doc:expired',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'an expired time-bound deny takes nothing away',
        principal: 'prn_alice',
        resource: 'doc:expired-deny',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_base'],
      },
      {
        name: 'a time-bound deny not yet valid takes nothing away',
        principal: 'prn_alice',
        resource: 'doc:future-deny',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_base'],
      },
    ],
  },
  {
    rule: 'request claims: context, resource attributes, action and subject properties',
    world: org(
      [
        allow('pol_method', ['api:orders'], { conditions: { 'action.properties.method': 'GET' } }),
        allow('pol_nested_method', ['api:nested'], {
          conditions: { 'action.properties.http.method': 'GET' },
        }),
        allow('pol_mfa', ['api:mfa'], { conditions: { 'subject.properties.mfa': true } }),
        allow('pol_claimed_role', ['api:claimed-role'], {
          conditions: { 'subject.properties.role': 'admin' },
        }),
        allow('pol_stored_team', ['api:stored-team'], {
          principals: ['prn_alice', 'prn_bob', 'prn_key'],
          conditions: { 'principal.attributes.team': 'payments' },
        }),
        allow('pol_session', ['api:session'], { conditions: { 'context.session.level': { $gte: 2 } } }),
        allow('pol_proto', ['api:proto']),
        deny('pol_proto_deny', ['api:proto'], { conditions: { 'context.constructor': { $exists: true } } }),
        allow('pol_action_name', ['api:named'], {
          actions: ['*'],
          conditions: { 'action.name': { $in: ['read', 'list'] } },
        }),
        allow('pol_env', ['db:*'], { conditions: { 'resource.attributes.env': 'prod' } }),
        allow('pol_ident', ['table:*'], {
          conditions: { 'resource.identifier': { $startsWith: 'ledger-' }, 'resource.type': 'table' },
        }),
        allow('pol_mfa_open', ['api:need-mfa']),
        deny('pol_need_mfa', ['api:need-mfa'], { conditions: { 'subject.properties.mfa': { $ne: true } } }),
      ],
      [{ resource: 'db:ledger', attributes: { env: 'prod', owner: 'payments' } }],
    ),
    cases: [
      {
        name: 'an action property the request claims',
        principal: 'prn_alice',
        action: { name: 'read', properties: { method: 'GET' } },
        resource: 'api:orders',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_method'],
      },
      {
        name: 'an action property with another value',
        principal: 'prn_alice',
        action: { name: 'read', properties: { method: 'POST' } },
        resource: 'api:orders',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'an action given as a name has no properties (unknown)',
        principal: 'prn_alice',
        resource: 'api:orders',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a nested action property, a segment per level',
        principal: 'prn_alice',
        action: { name: 'read', properties: { http: { method: 'GET' } } },
        resource: 'api:nested',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_nested_method'],
      },
      {
        name: 'a nested action property where the level is not an object (unknown)',
        principal: 'prn_alice',
        action: { name: 'read', properties: { http: 'GET' } },
        resource: 'api:nested',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a subject property the request claims',
        principal: 'prn_alice',
        resource: 'api:mfa',
        subject_properties: { mfa: true },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_mfa'],
      },
      {
        name: 'a subject property with another value',
        principal: 'prn_alice',
        resource: 'api:mfa',
        subject_properties: { mfa: false },
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a subject property not claimed (unknown)',
        principal: 'prn_alice',
        resource: 'api:mfa',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a stored attribute is not a claim: subject.properties reads only the request',
        principal: 'prn_alice',
        resource: 'api:claimed-role',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a claim does not stand in for a missing stored attribute',
        principal: 'prn_key',
        resource: 'api:stored-team',
        subject_properties: { team: 'payments' },
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'the stored attribute itself',
        principal: 'prn_alice',
        resource: 'api:stored-team',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_stored_team'],
      },
      {
        name: 'a claim is not stored identity: principal.attributes ignores subject_properties',
        principal: 'prn_bob',
        resource: 'api:stored-team',
        subject_properties: { team: 'payments' },
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a nested context value',
        principal: 'prn_alice',
        resource: 'api:session',
        context: { session: { level: 3 } },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_session'],
      },
      {
        name: 'a nested context value out of range',
        principal: 'prn_alice',
        resource: 'api:session',
        context: { session: { level: 1 } },
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a nested context path through a list (unknown)',
        principal: 'prn_alice',
        resource: 'api:session',
        context: { session: [{ level: 3 }] },
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a context path reads own keys only, never Object.prototype',
        principal: 'prn_alice',
        resource: 'api:proto',
        context: {},
        allowed: true,
        reasons: ['POLICY_ALLOW pol_proto'],
      },
      {
        name: 'action.name in the list',
        principal: 'prn_alice',
        action: 'list',
        resource: 'api:named',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_action_name'],
      },
      {
        name: 'action.name outside the list',
        principal: 'prn_alice',
        action: 'write',
        resource: 'api:named',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'the registered resource’s attributes',
        principal: 'prn_alice',
        resource: 'db:ledger',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_env'],
      },
      {
        name: 'the request’s resource attributes win over the registered ones',
        principal: 'prn_alice',
        resource: 'db:ledger',
        attributes: { env: 'dev' },
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'request attributes merge with the registered ones',
        principal: 'prn_alice',
        resource: 'db:ledger',
        attributes: { owner: 'platform' },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_env'],
      },
      {
        name: 'an unregistered resource has only the request’s attributes',
        principal: 'prn_alice',
        resource: 'db:scratch',
        attributes: { env: 'prod' },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_env'],
      },
      {
        name: 'an unregistered resource without attributes (unknown)',
        principal: 'prn_alice',
        resource: 'db:scratch',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'resource.identifier and resource.type',
        principal: 'prn_alice',
        resource: 'table:ledger-2026',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_ident'],
      },
      {
        name: 'resource.identifier that does not start so',
        principal: 'prn_alice',
        resource: 'table:audit-2026',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'a deny on a claim not made fails closed',
        principal: 'prn_alice',
        resource: 'api:need-mfa',
        allowed: false,
        reasons: ['POLICY_DENY pol_need_mfa'],
      },
      {
        name: 'a deny on a claim made otherwise',
        principal: 'prn_alice',
        resource: 'api:need-mfa',
        subject_properties: { mfa: false },
        allowed: false,
        reasons: ['POLICY_DENY pol_need_mfa'],
      },
      {
        name: 'a deny on a claim made as required does not apply',
        principal: 'prn_alice',
        resource: 'api:need-mfa',
        subject_properties: { mfa: true },
        allowed: true,
        reasons: ['POLICY_ALLOW pol_mfa_open'],
      },
    ],
  },
  {
    rule: 'AI agents and allowed_tools',
    world: org([
      allow('pol_tools', ['tool:*'], {
        principals: ['prn_agent', 'prn_agent_any', 'prn_agent_none', 'prn_agent_off', 'prn_svc'],
        actions: ['tools/call'],
      }),
      allow('pol_agent_db', ['database:*'], { principals: ['prn_agent'] }),
      deny('pol_no_deploy', ['tool:deploy', 'tool:shell'], {
        principals: ['prn_agent'],
        actions: ['tools/call'],
      }),
    ]),
    cases: [
      {
        name: 'a tool in the agent’s allowed_tools, allowed by policy',
        principal: 'prn_agent',
        action: 'tools/call',
        resource: 'tool:search',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_tools'],
      },
      {
        name: 'a tool outside allowed_tools, though a policy allows it',
        principal: 'prn_agent',
        action: 'tools/call',
        resource: 'tool:calendar',
        allowed: false,
        reasons: ['TOOL_NOT_ALLOWED'],
      },
      {
        name: 'allowed_tools are exact: another case is another tool',
        principal: 'prn_agent',
        action: 'tools/call',
        resource: 'tool:Search',
        allowed: false,
        reasons: ['TOOL_NOT_ALLOWED'],
      },
      {
        name: 'allowed_tools with `*` admit any tool',
        principal: 'prn_agent_any',
        action: 'tools/call',
        resource: 'tool:calendar',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_tools'],
      },
      {
        name: 'an agent without allowed_tools reaches no tool',
        principal: 'prn_agent_none',
        action: 'tools/call',
        resource: 'tool:search',
        allowed: false,
        reasons: ['TOOL_NOT_ALLOWED'],
      },
      {
        name: 'principals other than agents are not limited to allowed_tools',
        principal: 'prn_svc',
        action: 'tools/call',
        resource: 'tool:calendar',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_tools'],
      },
      {
        name: 'allowed_tools limit only resources of type tool',
        principal: 'prn_agent',
        resource: 'database:calendar',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_agent_db'],
      },
      {
        name: 'allowed_tools grant nothing: an allowed tool still needs a policy',
        principal: 'prn_agent',
        action: 'tools/list',
        resource: 'tool:search',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'an allowed tool is still subject to a deny',
        principal: 'prn_agent',
        action: 'tools/call',
        resource: 'tool:deploy',
        allowed: false,
        reasons: ['POLICY_DENY pol_no_deploy'],
      },
      {
        name: 'a tool outside allowed_tools and no policy: DENY for either cause',
        principal: 'prn_agent',
        action: 'tools/list',
        resource: 'tool:calendar',
        allowed: false,
        reasons: ['TOOL_NOT_ALLOWED'],
        or: [NO_MATCH, ['TOOL_NOT_ALLOWED', 'NO_MATCHING_POLICY']],
      },
      {
        name: 'a tool outside allowed_tools and a deny: DENY for either cause',
        principal: 'prn_agent',
        action: 'tools/call',
        resource: 'tool:shell',
        allowed: false,
        reasons: ['TOOL_NOT_ALLOWED'],
        or: [['POLICY_DENY pol_no_deploy'], ['TOOL_NOT_ALLOWED', 'POLICY_DENY pol_no_deploy']],
      },
      {
        name: 'a suspended agent, even with `*` tools: PRINCIPAL_INACTIVE',
        principal: 'prn_agent_off',
        action: 'tools/call',
        resource: 'tool:search',
        allowed: false,
        reasons: ['PRINCIPAL_INACTIVE'],
      },
    ],
  },
  {
    rule: 'delegation (on_behalf_of)',
    world: {
      ...org([
        allow('pol_agent_read', ['database:*'], { principals: ['prn_agent'] }),
        allow('pol_any_read', ['database:*'], { principals: ['prn_agent_any'] }),
        allow('pol_alice_read', ['database:ledger', 'database:vault']),
        allow('pol_bob_read', ['database:ledger', 'database:vault'], { principals: ['prn_bob'] }),
        deny('pol_bob_vault', ['database:vault'], { principals: ['prn_bob'] }),
        allow('pol_carol_read', ['database:*'], { principals: ['prn_carol'] }),
        allow('pol_key_read', ['database:ledger'], { principals: ['prn_key'] }),
        allow('pol_clearance', ['database:secret'], {
          principals: ['prn_agent', 'prn_alice', 'prn_bob'],
          conditions: { 'principal.attributes.clearance': { $gte: 3 } },
        }),
        allow('pol_tools', ['tool:*'], { principals: ['prn_agent', 'prn_alice'], actions: ['tools/call'] }),
      ]),
      delegations: [
        ['prn_alice', 'prn_agent'],
        ['prn_bob', 'prn_agent'],
        ['prn_svc', 'prn_agent'],
        ['prn_carol', 'prn_agent'],
        ['prn_alice', 'prn_svc'],
        ['prn_agent', 'prn_agent_any'],
        ['prn_svc', 'prn_agent_any'],
      ],
    },
    cases: [
      {
        name: 'both allowed: ALLOW, the delegator’s reasons naming it',
        principal: 'prn_agent',
        resource: 'database:ledger',
        on_behalf_of: 'prn_alice',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_agent_read', 'POLICY_ALLOW pol_alice_read @prn_alice'],
      },
      {
        name: 'a policy allowing both is granted once',
        principal: 'prn_agent',
        resource: 'database:secret',
        on_behalf_of: 'prn_alice',
        allowed: true,
        reasons: [
          'POLICY_ALLOW pol_agent_read',
          'POLICY_ALLOW pol_clearance',
          'POLICY_ALLOW pol_clearance @prn_alice',
        ],
      },
      {
        name: 'a delegator no policy allows: DELEGATOR_DENIED with its reason',
        principal: 'prn_agent',
        resource: 'database:ledger',
        on_behalf_of: 'prn_svc',
        allowed: false,
        reasons: ['DELEGATOR_DENIED @prn_svc', 'NO_MATCHING_POLICY @prn_svc'],
      },
      {
        name: 'a delegator a deny refuses: DELEGATOR_DENIED with the deny',
        principal: 'prn_agent',
        resource: 'database:vault',
        on_behalf_of: 'prn_bob',
        allowed: false,
        reasons: ['DELEGATOR_DENIED @prn_bob', 'POLICY_DENY pol_bob_vault @prn_bob'],
      },
      {
        name: 'conditions read each principal’s own attributes: the delegator’s are missing',
        principal: 'prn_agent',
        resource: 'database:secret',
        on_behalf_of: 'prn_bob',
        allowed: false,
        reasons: ['DELEGATOR_DENIED @prn_bob', 'NO_MATCHING_POLICY @prn_bob'],
      },
      // An inactive or unknown delegator has no delegation that applies either; the reasons here
      // are docs/policies.md's (the delegator is decided on the same request and is denied).
      {
        name: 'a suspended delegator: DELEGATOR_DENIED, PRINCIPAL_INACTIVE',
        principal: 'prn_agent',
        resource: 'database:ledger',
        on_behalf_of: 'prn_carol',
        allowed: false,
        reasons: ['DELEGATOR_DENIED @prn_carol', 'PRINCIPAL_INACTIVE @prn_carol'],
      },
      {
        name: 'an unknown delegator: DELEGATOR_DENIED, PRINCIPAL_NOT_FOUND',
        principal: 'prn_agent',
        resource: 'database:ledger',
        on_behalf_of: 'prn_ghost',
        allowed: false,
        reasons: ['DELEGATOR_DENIED @prn_ghost', 'PRINCIPAL_NOT_FOUND @prn_ghost'],
      },
      {
        name: 'the caller denied: its own reasons',
        principal: 'prn_svc',
        resource: 'database:ledger',
        on_behalf_of: 'prn_alice',
        allowed: false,
        reasons: NO_MATCH,
      },
      {
        name: 'an agent on behalf of someone is still limited to its allowed_tools',
        principal: 'prn_agent',
        action: 'tools/call',
        resource: 'tool:shell',
        on_behalf_of: 'prn_alice',
        allowed: false,
        reasons: ['TOOL_NOT_ALLOWED'],
      },
      {
        name: 'a tool in the agent’s allowed_tools, both allowed',
        principal: 'prn_agent',
        action: 'tools/call',
        resource: 'tool:search',
        on_behalf_of: 'prn_alice',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_tools', 'POLICY_ALLOW pol_tools @prn_alice'],
      },
      {
        name: 'on behalf of oneself is deciding for oneself',
        principal: 'prn_alice',
        resource: 'database:ledger',
        on_behalf_of: 'prn_alice',
        allowed: true,
        reasons: ['POLICY_ALLOW pol_alice_read'],
      },
      {
        name: 'no delegation from the delegator to the caller: NO_DELEGATION',
        principal: 'prn_agent',
        resource: 'database:ledger',
        on_behalf_of: 'prn_key',
        allowed: false,
        reasons: ['NO_DELEGATION @prn_key'],
      },
      {
        name: 'a chain, every link delegated and every principal allowed: ALLOW',
        principal: 'prn_agent_any',
        resource: 'database:ledger',
        on_behalf_of: ['prn_alice', 'prn_agent'],
        allowed: true,
        reasons: [
          'POLICY_ALLOW pol_any_read',
          'POLICY_ALLOW pol_agent_read @prn_agent',
          'POLICY_ALLOW pol_alice_read @prn_alice',
        ],
      },
      {
        name: 'a chain whose outermost delegator is denied: DELEGATOR_DENIED',
        principal: 'prn_agent_any',
        resource: 'database:ledger',
        on_behalf_of: ['prn_svc', 'prn_agent'],
        allowed: false,
        reasons: ['DELEGATOR_DENIED @prn_svc', 'NO_MATCHING_POLICY @prn_svc'],
      },
    ],
  },
];

// ---- case generators for the operator, glob and action tables ----

/** One ALLOW with context `yes`, and one NO_MATCHING_POLICY per context of `no`. */
function opCases(
  resource: string,
  policy: string,
  yes: Record<string, unknown>,
  no: Record<string, unknown>[],
): Case[] {
  const base = { principal: 'prn_alice', resource };
  return [
    {
      ...base,
      name: `${resource} holds for ${JSON.stringify(yes)}`,
      context: yes,
      allowed: true,
      reasons: [`POLICY_ALLOW ${policy}`],
    },
    ...no.map((context) => ({
      ...base,
      name: `${resource} does not hold for ${JSON.stringify(context)}`,
      context,
      allowed: false,
      reasons: NO_MATCH,
    })),
  ];
}

/**
 * A deny (`policy`) over the base allow of `tri:*`: it applies when its conditions are true
 * (`yes`) or unknown, not when they are false.
 */
function triCases(
  resource: string,
  policy: string,
  yes: Record<string, unknown>,
  no: Record<string, unknown>[],
  unknown: Record<string, unknown>[],
): Case[] {
  const base = { principal: 'prn_alice', resource };
  const denied = (context: Record<string, unknown>, outcome: string): Case => ({
    ...base,
    name: `${resource} is ${outcome} for ${JSON.stringify(context)}: the deny applies`,
    context,
    allowed: false,
    reasons: [`POLICY_DENY ${policy}`],
  });
  return [
    denied(yes, 'true'),
    ...no.map((context) => ({
      ...base,
      name: `${resource} is false for ${JSON.stringify(context)}: the deny does not apply`,
      context,
      allowed: true,
      reasons: ['POLICY_ALLOW pol_tri_base'],
    })),
    ...unknown.map((context) => denied(context, 'unknown')),
  ];
}

/** The glob of `policy` (of resource type `type`) matches each of `yes` and none of `no`. */
function globCases(type: string, policy: string, yes: string[], no: string[]): Case[] {
  const short = (id: string): string => (id.length > 24 ? `${id.slice(0, 12)}…(${id.length} chars)` : id);
  return [
    ...yes.map((id) => ({
      name: `${type}: matches ${JSON.stringify(short(id))}`,
      principal: 'prn_alice',
      resource: `${type}:${id}`,
      allowed: true,
      reasons: [`POLICY_ALLOW ${policy}`],
    })),
    ...no.map((id) => ({
      name: `${type}: does not match ${JSON.stringify(short(id))}`,
      principal: 'prn_alice',
      resource: `${type}:${id}`,
      allowed: false,
      reasons: NO_MATCH,
    })),
  ];
}

/** The actions of `policy` on `resource` stand for each of `yes` and none of `no`. */
function actionCases(resource: string, policy: string, yes: string[], no: string[]): Case[] {
  return [
    ...yes.map((action) => ({
      name: `${resource}: ${action} is granted`,
      principal: 'prn_alice',
      action,
      resource,
      allowed: true,
      reasons: [`POLICY_ALLOW ${policy}`],
    })),
    ...no.map((action) => ({
      name: `${resource}: ${action} is not`,
      principal: 'prn_alice',
      action,
      resource,
      allowed: false,
      reasons: NO_MATCH,
    })),
  ];
}

// ---- building a world and running its cases ----

function storedPolicy(spec: PolicySpec): Policy {
  const at = '2026-01-01T00:00:00.000Z';
  // Checked as the API checked it when it was written, a month ago: a window that has closed
  // since was still ahead then.
  const writtenAt = NOW - 30 * DAY;
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
  const status = body.status ?? 'active';
  return {
    id: spec.id,
    name: body.name,
    description: null,
    effect: body.effect,
    subjects: {
      principals: body.subjects.principals ?? [],
      groups: body.subjects.groups ?? [],
      ...(body.subjects.match ? { match: body.subjects.match } : {}),
    },
    actions: body.actions,
    resources: body.resources,
    conditions: body.conditions ?? {},
    status,
    version: spec.version ?? 1,
    activated_at: status === 'active' ? at : null,
    valid_from: body.valid_from ?? null,
    valid_until: body.valid_until ?? null,
    created_at: at,
    created_by: 'cli_test',
    updated_at: at,
    updated_by: 'cli_test',
  };
}

function buildIndex(world: World): PolicyIndex {
  const index = new PolicyIndex();
  for (const g of world.groups) index.putGroup(g.id, g.id, g.parents ?? []);
  for (const p of world.principals) {
    const at = '2025-06-01T00:00:00Z';
    index.putPrincipal(
      p.id,
      toIxPrincipal({
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
      }),
    );
  }
  for (const r of world.resources ?? []) {
    const { type, identifier } = resourceOf(r.resource);
    index.putResource(type, identifier, { type, identifier, attributes: r.attributes });
  }
  for (const spec of world.policies) index.putPolicy(compilePolicy(storedPolicy(spec)));
  for (const [delegator, delegate] of world.delegations ?? []) {
    const id = `dlg_${delegator}_${delegate}`;
    index.putDelegation(id, {
      id,
      delegatorId: delegator,
      delegateId: delegate,
      actions: ['*'],
      resources: null,
      expiresAt: NOW + DAY,
    });
  }
  return index;
}

function requestOf(c: Case): AccessRequest {
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

const shown = (r: Reason): string =>
  [r.code, r.policy_id, r.principal_id === undefined ? undefined : `@${r.principal_id}`]
    .filter((part) => part !== undefined)
    .join(' ');

const sorted = (list: readonly string[]): string[] => [...list].sort();

for (const suite of SUITES) {
  describe(`decision engine: ${suite.rule}`, () => {
    let index: PolicyIndex;
    const versions = new Map(suite.world.policies.map((p) => [p.id, p.version ?? 1]));

    before(() => {
      index = buildIndex(suite.world);
    });

    for (const c of suite.cases) {
      const title = c.skip ? `${c.name} (skipped: ${c.skip})` : c.name;
      (c.skip ? it.skip : it)(title, () => {
        const request = requestOf(c);
        const verdict = decide(index, request);
        const got = verdict.reasons.map(shown);
        const label = `${c.resource} as ${c.principal}: ${JSON.stringify(verdict.reasons)}`;

        expect(verdict.allowed, label).to.equal(c.allowed);
        // The reasons expected, or the alternative they match if one does (compared as lists so
        // that a failure shows the difference).
        const reasons = sorted(got);
        const same = (list: string[]): boolean => sorted(list).join('\n') === reasons.join('\n');
        expect(reasons, label).to.deep.equal(sorted([c.reasons, ...(c.or ?? [])].find(same) ?? c.reasons));
        for (const r of verdict.reasons) {
          if (r.policy_id !== undefined) expect(r.policy_version, label).to.equal(versions.get(r.policy_id));
        }
        const granted = verdict.allowed
          ? [
              ...new Set(verdict.reasons.flatMap((r) => (r.policy_id === undefined ? [] : [r.policy_id]))),
            ].sort()
          : [];
        expect(verdict.grantedBy, label).to.deep.equal(granted);

        // Asking for the trace changes nothing about the answer.
        const explained = decide(index, request, { explain: true });
        expect(explained.trace, label).to.not.equal(undefined);
        expect({ ...explained, trace: undefined }, label).to.deep.equal({ ...verdict, trace: undefined });
      });
    }
  });
}
