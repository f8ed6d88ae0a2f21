import { expect } from 'chai';
import fc from 'fast-check';
import {
  AccessService,
  grantsOf,
  registeredMatching,
  settleFor,
} from '../../src/decisions/access-service.js';
import { accessEntries } from '../../src/decisions/access.js';
import { decide, type Verdict } from '../../src/decisions/engine.js';
import {
  compilePolicy,
  toIxPrincipal,
  type IxDelegation,
  type IxPrincipal,
} from '../../src/decisions/model.js';
import { PolicyIndex } from '../../src/decisions/policy-index.js';
import type { Policy } from '../../src/policies/model.js';
import { compileGlob, isGlob } from '../../src/policies/patterns.js';
import { MemorySections } from '../../src/columnar/sections.js';
import { countPrivileges, privilegeFactors } from '../../src/risk/privileges.js';
import { MapIndex } from '../helpers/map-index.js';
import { asIndex, referenceEntries, referenceWhoCanAccess } from '../helpers/reference-access.js';

/**
 * The decision index as typed-array tables (src/decisions/policy-index.ts) against the map-based
 * index it replaced (test/helpers/map-index.ts): both are built from the same random graph and
 * given the same random changes, delegations among them (the columnar one written as a snapshot and read back half way
 * through, in half the runs), and every decision (explained or not), every access list, every
 * reverse lookup and every subject set must come out the same.
 */

const DAY = 86_400_000;
const NOW = Date.now();
const iso = (ms: number): string => new Date(ms).toISOString();

const TYPES = ['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT'] as const;
const STATUSES = ['active', 'active', 'active', 'suspended', 'deprovisioned', 'deleted'] as const;
/** Names that share their first letters, differ only by case, or are not ASCII: the order's hard cases. */
const NAMES = ['ann', 'Ann', 'anna', 'ann-b', 'bob', 'bo', 'émile', 'Zoë', 'zed', 'z', '日本'];
const TEAMS = ['a', 'b', 'c'];
const ENVS = ['prod', 'dev', 'restricted'];
const TOOLS = ['tool-1', 'tool-2', '*'];
const MATCHES: Record<string, unknown>[] = [
  { type: 'AI_AGENT' },
  { attributes: { team: 'a' } },
  { type: ['USER', 'SERVICE_ACCOUNT'], attributes: { env: 'prod' } },
  { name: { $startsWith: 'an' } },
  { status: ['active', 'suspended'], attributes: { tags: 'x' } },
  { risk_score: { $gte: 50 } },
  { created_at: { $gte: iso(NOW - 10 * DAY) } },
  { email: { $contains: 'EXAMPLE' } },
];
const CONDITIONS: Record<string, unknown>[] = [
  { 'principal.attributes.team': { $eq: 'a' } },
  { 'context.ip': { $cidr: '10.0.0.0/8' } },
  { 'resource.attributes.env': { $ne: 'restricted' } },
  { 'principal.attributes.env': { $in: ['prod', 'dev'] }, 'context.ip': { $cidr: '10.0.0.0/8' } },
];
const RESOURCE_TYPES = ['db', 'tool', 'repo'];
const IDENTIFIERS = ['a', 'a-1', 'a-2', 'a-*', '*', 'b', 'tool-1', 'tool-2', 'tool-*', 'a-*-1'];
const ACTIONS = ['read', 'write', 'repo:read', 'repo:*', '*'];

interface PrincipalSpec {
  id: string;
  type: (typeof TYPES)[number];
  status: string;
  name: string;
  email: string | null;
  connector: string | null;
  created: number;
  risk: number;
  attributes: Record<string, string | string[]>;
  metadata: Record<string, string>;
  groups: string[];
}

interface PolicySpec {
  id: string;
  effect: 'allow' | 'deny';
  principals: string[];
  groups: string[];
  match: number | null;
  actions: string[];
  resources: [string, string][];
  conditions: number | null;
  status: 'active' | 'disabled';
  window: 'none' | 'open' | 'closed' | 'ahead';
}

type Change =
  | { kind: 'principal'; spec: PrincipalSpec }
  | { kind: 'remove-principal'; id: string }
  | { kind: 'group'; id: string; parents: string[] }
  | { kind: 'remove-group'; id: string }
  | { kind: 'policy'; spec: PolicySpec }
  | { kind: 'remove-policy'; id: string }
  | { kind: 'resource'; type: string; identifier: string; env: string | null }
  | { kind: 'delegation'; spec: DelegationSpec }
  | { kind: 'revoke-delegation'; id: string };

interface DelegationSpec {
  id: string;
  from: string;
  to: string;
  actions: string[];
  resources: [string, string][] | null;
  expired: boolean;
}

const pid = (i: number): string => `prn_${i}`;
const gid = (i: number): string => `grp_${i}`;

const principalSpec = (id: string): fc.Arbitrary<PrincipalSpec> =>
  fc.record({
    id: fc.constant(id),
    type: fc.constantFrom(...TYPES),
    status: fc.constantFrom(...STATUSES),
    name: fc.constantFrom(...NAMES),
    email: fc.option(fc.constantFrom('a@example.com', 'A@Example.com', 'b@example.com'), { nil: null }),
    connector: fc.option(fc.constantFrom('ext-1', 'ext-2'), { nil: null }),
    created: fc.integer({ min: 0, max: 20 }).map((d) => NOW - d * DAY - 123),
    risk: fc.integer({ min: 0, max: 100 }),
    attributes: fc.record(
      {
        team: fc.constantFrom(...TEAMS),
        env: fc.constantFrom(...ENVS),
        tags: fc.array(fc.constantFrom('x', 'y', 'z'), { maxLength: 3 }),
        allowed_tools: fc.array(fc.constantFrom(...TOOLS), { maxLength: 2 }),
        client_id: fc.constantFrom('c-1', 'c-2'),
      },
      { requiredKeys: [] },
    ),
    metadata: fc.record({ source: fc.constantFrom('hr', 'it') }, { requiredKeys: [] }),
    groups: fc.uniqueArray(fc.integer({ min: 0, max: 7 }).map(gid), { maxLength: 3 }),
  });

const policySpec = (id: string, principals: number): fc.Arbitrary<PolicySpec> =>
  fc.record({
    id: fc.constant(id),
    effect: fc.constantFrom<'allow' | 'deny'>('allow', 'allow', 'deny'),
    principals: fc.uniqueArray(fc.integer({ min: 0, max: principals + 1 }).map(pid), { maxLength: 3 }),
    groups: fc.uniqueArray(fc.integer({ min: 0, max: 8 }).map(gid), { maxLength: 2 }),
    match: fc.option(fc.integer({ min: 0, max: MATCHES.length - 1 }), { nil: null }),
    actions: fc.uniqueArray(fc.constantFrom(...ACTIONS), { minLength: 1, maxLength: 2 }),
    resources: fc.uniqueArray(fc.tuple(fc.constantFrom(...RESOURCE_TYPES), fc.constantFrom(...IDENTIFIERS)), {
      minLength: 1,
      maxLength: 3,
    }),
    conditions: fc.option(fc.integer({ min: 0, max: CONDITIONS.length - 1 }), { nil: null, freq: 3 }),
    status: fc.constantFrom<'active' | 'disabled'>('active', 'active', 'active', 'disabled'),
    window: fc.constantFrom<PolicySpec['window']>('none', 'none', 'none', 'open', 'closed', 'ahead'),
  });

const delegationSpec = (id: string, principals: number): fc.Arbitrary<DelegationSpec> =>
  fc.record({
    id: fc.constant(id),
    from: fc.integer({ min: 0, max: principals + 1 }).map(pid),
    to: fc.integer({ min: 0, max: principals + 1 }).map(pid),
    actions: fc.uniqueArray(fc.constantFrom(...ACTIONS), { minLength: 1, maxLength: 2 }),
    resources: fc.option(
      fc.uniqueArray(fc.tuple(fc.constantFrom(...RESOURCE_TYPES), fc.constantFrom(...IDENTIFIERS)), {
        minLength: 1,
        maxLength: 2,
      }),
      { nil: null },
    ),
    expired: fc.constantFrom(false, false, false, true),
  });

const world = fc
  .record({ principals: fc.integer({ min: 1, max: 30 }), policies: fc.integer({ min: 1, max: 14 }) })
  .chain(({ principals, policies }) =>
    fc.record({
      snapshot: fc.boolean(),
      principals: fc.tuple(...Array.from({ length: principals }, (_, i) => principalSpec(pid(i)))),
      groups: fc.array(
        fc.tuple(
          fc.integer({ min: 0, max: 7 }).map(gid),
          fc.uniqueArray(fc.integer({ min: 0, max: 8 }).map(gid), { maxLength: 2 }),
        ),
        { maxLength: 8 },
      ),
      policies: fc.tuple(...Array.from({ length: policies }, (_, i) => policySpec(`pol_${i}`, principals))),
      delegations: fc.array(
        fc.integer({ min: 0, max: 9 }).chain((i) => delegationSpec(`dlg_${i}`, principals)),
        { maxLength: 10 },
      ),
      resources: fc.uniqueArray(
        fc.tuple(
          fc.constantFrom(...RESOURCE_TYPES),
          fc.constantFrom('a', 'a-1', 'a-2', 'b', 'tool-1', 'a-x-1'),
          fc.option(fc.constantFrom(...ENVS), { nil: null }),
        ),
        { selector: ([t, i]) => `${t}:${i}`, maxLength: 8 },
      ),
      changes: fc.array(
        fc.oneof(
          fc
            .integer({ min: 0, max: principals + 2 })
            .chain((i) => principalSpec(pid(i)).map((spec): Change => ({ kind: 'principal', spec }))),
          fc
            .integer({ min: 0, max: principals })
            .map((i): Change => ({ kind: 'remove-principal', id: pid(i) })),
          fc
            .tuple(
              fc.integer({ min: 0, max: 8 }),
              fc.uniqueArray(fc.integer({ min: 0, max: 8 }), { maxLength: 2 }),
            )
            .map(([g, parents]): Change => ({ kind: 'group', id: gid(g), parents: parents.map(gid) })),
          fc.integer({ min: 0, max: 8 }).map((g): Change => ({ kind: 'remove-group', id: gid(g) })),
          fc
            .integer({ min: 0, max: policies + 2 })
            .chain((i) =>
              policySpec(`pol_${i}`, principals).map((spec): Change => ({ kind: 'policy', spec })),
            ),
          fc
            .integer({ min: 0, max: policies })
            .map((i): Change => ({ kind: 'remove-policy', id: `pol_${i}` })),
          fc
            .tuple(
              fc.constantFrom(...RESOURCE_TYPES),
              fc.constantFrom('a', 'a-1', 'b', 'tool-2'),
              fc.option(fc.constantFrom(...ENVS), { nil: null }),
            )
            .map(([type, identifier, env]): Change => ({ kind: 'resource', type, identifier, env })),
          fc
            .integer({ min: 0, max: 11 })
            .chain((i) =>
              delegationSpec(`dlg_${i}`, principals).map((spec): Change => ({ kind: 'delegation', spec })),
            ),
          fc.integer({ min: 0, max: 11 }).map((i): Change => ({ kind: 'revoke-delegation', id: `dlg_${i}` })),
        ),
        { maxLength: 12 },
      ),
    }),
  );

function principalOf(spec: PrincipalSpec): IxPrincipal {
  return toIxPrincipal({
    id: spec.id,
    type: spec.type,
    status: spec.status,
    name: spec.name,
    email: spec.email,
    connector_source: spec.connector === null ? null : 'okta',
    connector_id: spec.connector,
    created_at: iso(spec.created),
    updated_at: iso(spec.created + 5),
    last_login: spec.risk > 50 ? iso(spec.created + 1000) : null,
    risk_score: spec.risk,
    privileges: null,
    fields: [
      ...Object.entries(spec.attributes).map(([k, v]): [string, unknown] => [`attr.${k}`, v]),
      ...Object.entries(spec.metadata).map(([k, v]): [string, unknown] => [`meta.${k}`, v]),
    ],
    groups: spec.groups,
  });
}

function policyOf(spec: PolicySpec): Policy {
  const at = iso(NOW - 40 * DAY);
  const window = {
    none: { valid_from: null, valid_until: null },
    open: { valid_from: iso(NOW - DAY), valid_until: iso(NOW + DAY) },
    closed: { valid_from: null, valid_until: iso(NOW - DAY) },
    ahead: { valid_from: iso(NOW + DAY), valid_until: null },
  }[spec.window];
  return {
    id: spec.id,
    name: spec.id,
    description: null,
    effect: spec.effect,
    subjects: {
      principals: spec.principals,
      groups: spec.groups,
      ...(spec.match !== null ? { match: MATCHES[spec.match] } : {}),
    },
    actions: spec.actions,
    resources: spec.resources.map(([type, identifier]) => ({ type, identifier })),
    conditions: spec.conditions === null ? {} : (CONDITIONS[spec.conditions] as never),
    status: spec.status,
    version: 1,
    activated_at: spec.status === 'active' ? at : null,
    ...window,
    created_at: at,
    created_by: 'cli_test',
    updated_at: at,
    updated_by: 'cli_test',
  };
}

function delegationOf(spec: DelegationSpec): IxDelegation {
  return {
    id: spec.id,
    delegatorId: spec.from,
    delegateId: spec.to,
    actions: spec.actions,
    resources:
      spec.resources?.map(([type, identifier]) => ({
        type,
        identifier,
        glob: isGlob(identifier) ? compileGlob(identifier) : null,
      })) ?? null,
    expiresAt: spec.expired ? NOW - DAY : NOW + DAY,
  };
}

/** Writes the same thing into both indexes. */
function both(indexes: [MapIndex, PolicyIndex], write: (index: MapIndex | PolicyIndex) => void): void {
  for (const index of indexes) write(index);
}

function build(w: World): [MapIndex, PolicyIndex] {
  const indexes: [MapIndex, PolicyIndex] = [new MapIndex(), new PolicyIndex()];
  for (const [id, parents] of w.groups) both(indexes, (ix) => ix.putGroup(id, id.toUpperCase(), parents));
  for (const spec of w.principals) both(indexes, (ix) => ix.putPrincipal(spec.id, principalOf(spec)));
  for (const [type, identifier, env] of w.resources)
    both(indexes, (ix) =>
      ix.putResource(type, identifier, { type, identifier, attributes: env ? { env } : {} }),
    );
  for (const spec of w.policies) both(indexes, (ix) => ix.putPolicy(compilePolicy(policyOf(spec))));
  for (const spec of w.delegations) both(indexes, (ix) => ix.putDelegation(spec.id, delegationOf(spec)));
  w.changes.forEach((change, i) => {
    // Half way through the changes, the index may be written as a snapshot and read back.
    if (w.snapshot && i === Math.floor(w.changes.length / 2)) {
      const sections = new MemorySections();
      indexes[1].save(sections);
      indexes[1] = PolicyIndex.restore(sections);
    }
    both(indexes, (ix) => {
      switch (change.kind) {
        case 'principal':
          return ix.putPrincipal(change.spec.id, principalOf(change.spec));
        case 'remove-principal':
          return ix.putPrincipal(change.id, undefined);
        case 'group':
          return void ix.putGroup(change.id, change.id, change.parents);
        case 'remove-group':
          return void ix.removeGroup(change.id);
        case 'policy':
          return ix.putPolicy(compilePolicy(policyOf(change.spec)));
        case 'remove-policy':
          return ix.removePolicy(change.id);
        case 'delegation':
          return ix.putDelegation(change.spec.id, delegationOf(change.spec));
        case 'revoke-delegation':
          return ix.putDelegation(change.id, undefined);
        case 'resource':
          return ix.putResource(
            change.type,
            change.identifier,
            change.env === 'restricted'
              ? undefined
              : {
                  type: change.type,
                  identifier: change.identifier,
                  attributes: change.env ? { env: change.env } : {},
                },
          );
      }
    });
  });
  return indexes;
}

type World = {
  snapshot: boolean;
  principals: PrincipalSpec[];
  groups: [string, string[]][];
  policies: PolicySpec[];
  delegations: DelegationSpec[];
  resources: [string, string, string | null][];
  changes: Change[];
};

const sorted = <T>(items: Iterable<T>): T[] => [...items].sort();

/** A verdict with each membership path cut to its length (two shortest paths may differ). */
function shape(verdict: Verdict): unknown {
  return JSON.parse(
    JSON.stringify(verdict, (key, value: unknown) =>
      key === 'path' && Array.isArray(value) ? value.length : value,
    ),
  );
}

const ALL = { page: 1, limit: 1_000, skip: 0 };

describe('decision index: columnar tables against the map-based index', () => {
  it('decide the same, list the same access and find the same principals on random graphs', function () {
    this.timeout(120_000);
    fc.assert(
      fc.property(world, (w) => {
        const [old, next] = build(w);
        const ids = [
          ...new Set([
            ...w.principals.map((p) => p.id),
            pid(99),
            ...w.changes.flatMap((c) => (c.kind === 'principal' ? [c.spec.id] : [])),
          ]),
        ];
        // The principals, as each index holds them.
        expect(next.principals.size).to.equal(old.principals.size);
        for (const id of ids) {
          const a = old.principals.get(id);
          const b = next.principals.get(id);
          expect(b === undefined, id).to.equal(a === undefined);
          if (!a || !b) continue;
          expect({ ...b, groups: sorted(b.groups) }, id).to.deep.equal({ ...a, groups: sorted(a.groups) });
          // As a decision reads it, a field at a time, every field the same.
          const view = next.principalView(id)!;
          const read = Object.fromEntries(
            Object.keys(a).map((k) => [k, (view as unknown as Record<string, unknown>)[k]]),
          );
          expect({ ...read, groups: sorted(view.groups) }, `${id}, field by field`).to.deep.equal({
            ...a,
            groups: sorted(a.groups),
          });
          expect(sorted(next.groupsOf(view)), `${id}, field by field`).to.deep.equal(sorted(old.groupsOf(a)));
          expect(sorted(next.groupsOf(b)), id).to.deep.equal(sorted(old.groupsOf(a)));
          expect(sorted([...next.policiesOf(b)].map((p) => p.id)), id).to.deep.equal(
            sorted([...old.policiesOf(a)].map((p) => p.id)),
          );
          expect(sorted(next.matchPoliciesOf(b)), id).to.deep.equal(sorted(old.matchPoliciesOf(a)));
          if (a.status === 'active') {
            const entries = accessEntries(settleFor(next, b, grantsOf(next, b)), registeredMatching(next), b);
            expect(entries, `access of ${id}`).to.deep.equal(referenceEntries(old, a));
          }
        }
        // Everyone's privilege risk factors at once, as one principal's at a time.
        const work = countPrivileges(next);
        let step = work.next();
        while (!step.done) step = work.next();
        for (const id of ids) {
          const p = next.principals.get(id);
          if (p)
            expect(step.value(next.table.rowOf(id)), id).to.equal(JSON.stringify(privilegeFactors(next, p)));
        }
        // Subject sets and group members.
        for (const policy of old.policies.values()) {
          const mine = next.policies.get(policy.id)!;
          expect(sorted(next.subjectsOf(mine)), policy.id).to.deep.equal(sorted(old.subjectsOf(policy)));
          for (const id of ids)
            expect(next.selects(mine, id), `${policy.id} ${id}`).to.equal(old.selects(policy, id));
        }
        for (let g = 0; g <= 8; g += 1) {
          expect(sorted(next.membersOf(gid(g))), gid(g)).to.deep.equal(sorted(old.membersOf(gid(g))));
          expect(next.groups.get(gid(g))?.name, gid(g)).to.equal(old.groups.get(gid(g))?.name);
        }
        // Delegations, by id and by either end.
        const byId = (list: Iterable<IxDelegation>) => [...list].sort((a, b) => a.id.localeCompare(b.id));
        expect(next.delegations.size).to.equal(old.delegations.size);
        expect(byId(next.delegations.values())).to.deep.equal(byId(old.delegations.values()));
        for (const from of ids) {
          expect(byId(next.delegationsGiven(from)), from).to.deep.equal(byId(old.delegationsGiven(from)));
          expect(byId(next.delegationsReceived(from)), from).to.deep.equal(
            byId(old.delegationsReceived(from)),
          );
          for (const to of ids)
            expect(byId(next.delegationsBetween(from, to)), `${from} ${to}`).to.deep.equal(
              byId(old.delegationsBetween(from, to)),
            );
        }
        // Lookups by name.
        for (const ref of ['a@example.com', 'A@EXAMPLE.COM', 'ext-1', 'ext-2', 'c-1']) {
          const names = (found: { byConnectorId: IxPrincipal[]; byEmail: IxPrincipal[] }) => ({
            byConnectorId: sorted(found.byConnectorId.map((p) => p.id)),
            byEmail: sorted(found.byEmail.map((p) => p.id)),
          });
          expect(names(next.principalsNamed(ref)), ref).to.deep.equal(names(old.principalsNamed(ref)));
          expect(sorted(next.agentsWithClientId(ref).map((p) => p.id)), ref).to.deep.equal(
            sorted(old.agentsWithClientId(ref).map((p) => p.id)),
          );
        }
        // Decisions, and who can reach each resource.
        const access = new AccessService(null as never, next);
        for (const type of RESOURCE_TYPES) {
          for (const identifier of ['a', 'a-1', 'a-x-1', 'b', 'tool-1', 'tool-2', 'a-*']) {
            for (const action of [undefined, 'read', 'repo:read', 'write']) {
              const expected = referenceWhoCanAccess(old, type, identifier, action);
              const found = access.whoCanAccess(type, identifier, action, ALL);
              expect(found.principals, `${type}:${identifier} ${action}`).to.deep.equal(expected);
              expect(found.pagination.total).to.equal(expected.length);
              const second = access.whoCanAccess(type, identifier, action, { page: 2, limit: 2, skip: 2 });
              expect(second.principals).to.deep.equal(expected.slice(2, 4));
              if (action === undefined) continue;
              for (const id of ids) {
                const request = {
                  principal_id: id,
                  action,
                  resource: { type, identifier },
                  context: { ip: id.endsWith('1') ? '10.1.2.3' : '192.168.0.1' },
                };
                expect(decide(next, request), `${id} ${action} ${type}:${identifier}`).to.deep.equal(
                  decide(asIndex(old), request),
                );
                expect(shape(decide(next, request, { explain: true }))).to.deep.equal(
                  shape(decide(asIndex(old), request, { explain: true })),
                );
                // Acting for another principal, through whatever delegations there are.
                const acting = { ...request, on_behalf_of: pid(0) };
                expect(shape(decide(next, acting, { explain: true })), `${id} for ${pid(0)}`).to.deep.equal(
                  shape(decide(asIndex(old), acting, { explain: true })),
                );
              }
            }
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});
