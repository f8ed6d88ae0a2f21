import { expect } from 'chai';
import fc from 'fast-check';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import {
  actionMatches,
  globRegExp,
  oracleDecide,
  type OracleAnswer,
  type OracleRequest,
} from '../helpers/oracle.js';
import { insertPrincipal } from '../helpers/principals.js';

/**
 * Four views of one authorization model must agree (docs/api.md §2 "the access endpoint", §5.1-5.7):
 *
 * - the index: `POST /v1/decisions/evaluate`, answered from memory and kept current by the
 *   change feed;
 * - the oracle (test/helpers/oracle.ts): the same request answered straight from Neo4j by
 *   plain, separately written Cypher and code;
 * - the access endpoint `GET /v1/principals/{id}/access`, which reads the decision index, and gives
 *   the same entries, dated the same, as a walk of the graph (`AccessService.walkedAccess`);
 * - the reverse lookup `GET /v1/resources/access`, which reads the index from the resource side.
 *
 * Random small worlds (principals of every type and status, nested groups, policies with every
 * kind of subject, action and resource pattern, conditions, registered resources) are built
 * through the API, then random requests are put to all four, also after random writes.
 *
 * Where the four may differ, and so what is compared:
 * - index and oracle answer the same question: decision, allowing policies and the reasons of a
 *   DENY are compared on every request, with and without context. The only slack is the reason
 *   of a DENY with several causes (an inactive principal aside, the contract does not rank a
 *   tool outside `allowed_tools`, an applying deny and no applying allow): the index must name
 *   some of the causes the oracle finds, and the applying denies exactly when it names those.
 * - the access endpoint lists per resource what a principal may do whatever the request says.
 *   An entry marked `conditional` depends on the request, so it says nothing about one request:
 *   entries are compared only when not conditional, and only with the request without context
 *   or resource attributes. A glob's own entry (`pattern: true`) stands for every identifier it
 *   matches, of which a deny may still take some out: so it is only required to exist (and to
 *   grant the action) when an ALLOW of an identifier nobody registered has no entry of its own —
 *   globs list registered resources only. The tool guardrail removes the entries of tools an
 *   agent may not use, which both directions cover — except one case the contract leaves open:
 *   for an agent whose `allowed_tools` lack `*`, the service drops every `tool` glob entry (it
 *   would stand for tools the agent may not use), so an ALLOW of an allowed tool that nobody
 *   registered, granted through a glob, has no entry at all, although §2 says access to
 *   unregistered resources is never hidden. That ALLOW is not required to have an entry.
 * - the reverse lookup lists every active principal with access to one identifier, registered
 *   or not, and its row is the same entry the access endpoint gives that identifier: a row that
 *   is not conditional grants the action iff the decision without context is ALLOW, an ALLOW
 *   always has a row, and a row equals the principal's access entry for the identifier whenever
 *   the access endpoint has one (always, for a registered identifier).
 * - a principal that is not active has no access and no row; an unknown one has no access record.
 * - besides the sampled requests, every exact entry and every row read in a check phase is put,
 *   for each action of the vocabulary, to the index (as one batch): the two directions above
 *   again, on many more requests (the oracle is kept to the sampled ones, being one statement
 *   per request).
 * The service marks every entry a policy with conditions contributes to as `conditional`, even
 * when the conditions read only the stored principal and so cannot depend on the request; the
 * restriction to entries that are not conditional follows the service's flag.
 * Over a run the comparisons must have covered both outcomes of every kind, so that none of the
 * restrictions above leaves a property that holds vacuously.
 */

// ---- the vocabulary of generated worlds ----

const PRINCIPAL_TYPES = ['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT'] as const;
type PrincipalType = (typeof PRINCIPAL_TYPES)[number];
const ACTIONS = ['read', 'write', 'delete', 'repo:push', 'tools/call', 'tools/list'] as const;
const ACTION_PATTERNS = [...ACTIONS, 'repo:*', 'tools/*', '*'] as const;
const TEAMS = ['payments', 'platform', 'research'] as const;
const ENVS = ['prod', 'staging'] as const;
const TOOLS = ['search', 'shell', 'deploy'] as const;
/**
 * Identifiers of each resource type (the third is `tool`, whose names carry the world's tag),
 * some with characters that regular expressions and URLs treat specially, and globs over them.
 */
const IDENTIFIERS: readonly (readonly string[])[] = [
  ['prod-1', 'prod-2', 'staging-1', 'x', 'X-1', 'a.b', 'a+b(1)', 'dir/file', 'ü-1'],
  ['core', 'web', 'infra', 'c++'],
  TOOLS,
];
const GLOBS: readonly (readonly string[])[] = [
  ['*', 'prod-*', 'prod-1*', '*-1', 's*-*', 'x*', 'a.*', '*(1)', 'dir/*', '*ü*'],
  ['*', 'c*', '*e*', 'c+*'],
  ['*', 's*'],
];
const UNKNOWN_PRINCIPAL = 'prn_01JD0000000000000000000000';

type Attrs = Record<string, string | string[]>;

interface PrincipalSpec {
  type: PrincipalType;
  /** `deprovisioned` is a connector's: other types are suspended instead. */
  status: 'active' | 'suspended' | 'deprovisioned';
  attributes: Attrs;
}

interface PolicySpec {
  effect: 'allow' | 'deny';
  /** Indices, taken modulo the number of principals / groups. */
  principals: number[];
  groups: number[];
  match: Record<string, unknown> | null;
  actions: string[];
  /** `type` indexes the world's resource types; tool identifiers get the world's tag. */
  resources: { type: number; identifier: string }[];
  conditions: Record<string, unknown> | null;
  status: 'active' | 'disabled' | 'draft';
}

interface ResourceSpec {
  type: number;
  identifier: number;
  attributes: Attrs;
}

interface RequestSpec {
  /** A random request, or one aimed at a policy so that ALLOWs come up often enough. */
  aim: { policy: number; subject: number; resource: number; action: number | null } | null;
  /** -1: a principal that does not exist. */
  principal: number;
  action: string;
  type: number;
  identifier: number;
  context: Record<string, unknown> | null;
  attributes: Attrs | null;
  /** Claims the caller sends about the action and the subject. */
  actionProperties: Record<string, unknown> | null;
  subjectProperties: Record<string, unknown> | null;
}

type Write =
  | { kind: 'addMember'; group: number; principal: number }
  | { kind: 'nest'; parent: number; child: number }
  | { kind: 'removeMembership'; edge: number }
  | { kind: 'patchAttributes'; principal: number; attributes: Record<string, string | string[] | null> }
  | { kind: 'setStatus'; principal: number; status: 'active' | 'suspended' }
  | { kind: 'deletePrincipal'; principal: number }
  | { kind: 'deleteGroup'; group: number }
  | { kind: 'replacePolicy'; policy: number; body: PolicySpec }
  | { kind: 'setPolicyStatus'; policy: number; status: 'active' | 'disabled' }
  | { kind: 'deletePolicy'; policy: number }
  | { kind: 'addPolicy'; body: PolicySpec }
  | { kind: 'register'; resource: ResourceSpec }
  | { kind: 'unregister'; type: number; identifier: number };

type Step = Write | { kind: 'check'; requests: RequestSpec[] };

interface WorldSpec {
  principals: PrincipalSpec[];
  groups: number;
  memberships: { group: number; principal: number }[];
  nestings: { parent: number; child: number }[];
  policies: PolicySpec[];
  resources: ResourceSpec[];
  steps: Step[];
}

// ---- arbitraries ----

/** An index into some list of the world, taken modulo its length: uniform, not biased to 0. */
const nat = fc.noBias(fc.nat({ max: 999 }));
/** A value with the given probability, else null. */
const sometimes = <T>(arb: fc.Arbitrary<T>, probability: number): fc.Arbitrary<T | null> =>
  fc.oneof(
    { weight: Math.round(probability * 100), arbitrary: arb },
    { weight: Math.round((1 - probability) * 100), arbitrary: fc.constant(null) },
  );
const subset = <T>(values: readonly T[], min = 1, max = values.length) =>
  fc.uniqueArray(fc.constantFrom(...values), { minLength: min, maxLength: max });

const attributesArb = (type: PrincipalType): fc.Arbitrary<Attrs> =>
  fc.record(
    {
      team: fc.constantFrom(...TEAMS),
      env: fc.constantFrom(...ENVS),
      level: fc.constantFrom('1', '5', '10', 'n/a'),
      tags: subset(['a', 'b', 'c']),
      ...(type === 'AI_AGENT' ? { allowed_tools: subset(['search', 'shell', '*'], 1, 2) } : {}),
    },
    { requiredKeys: [] },
  );

const principalArb: fc.Arbitrary<PrincipalSpec> = fc.constantFrom(...PRINCIPAL_TYPES).chain((type) =>
  fc.record({
    type: fc.constant(type),
    status: fc.oneof(
      { weight: 6, arbitrary: fc.constant('active' as const) },
      { weight: 1, arbitrary: fc.constant('suspended' as const) },
      { weight: 1, arbitrary: fc.constant('deprovisioned' as const) },
    ),
    attributes: attributesArb(type),
  }),
);

/** `match` queries of §2 over the attribute vocabulary (the world's own tag is added to each). */
const matchArb: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    type: fc.oneof(fc.constantFrom(...PRINCIPAL_TYPES), subset(PRINCIPAL_TYPES, 1, 2)),
    status: fc.constantFrom<unknown>('active', ['active', 'suspended']),
    attributes: fc.record(
      {
        team: fc.oneof(
          fc.constantFrom<unknown>(...TEAMS),
          fc.constantFrom(...TEAMS).map((t) => ({ $ne: t })),
          subset(TEAMS, 1, 2).map((ts) => ({ $in: ts })),
        ),
        env: fc.constantFrom<unknown>('prod', { $exists: false }, { $nin: ['prod'] }),
        tags: fc.constantFrom<unknown>('a', { $exists: true }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

/**
 * Condition entries: context (IPs, numbers, text, presence), principal, resource, the claims of
 * the request (action name and properties, subject properties) and `$ref`.
 */
const CONDITIONS: [string, unknown][] = [
  ['context.ip', { $cidr: '10.0.0.0/8' }],
  ['context.ip', { $cidr: ['10.0.0.0/8', '192.168.0.0/16'] }],
  ['context.risk', { $gt: 50 }],
  ['context.risk', { $lte: 20 }],
  ['context.risk', 90],
  ['context.session.level', { $gte: 2 }],
  ['context.env', 'prod'],
  ['context.env', { $in: ['prod', 'staging'] }],
  ['context.env', { $ne: 'prod' }],
  ['context.mfa', { $exists: true }],
  ['context.mfa', { $exists: false }],
  ['principal.attributes.team', 'payments'],
  ['principal.attributes.team', { $ne: 'research' }],
  ['principal.attributes.level', { $gt: 4 }],
  ['principal.attributes.tags', 'a'],
  ['principal.attributes.env', { $exists: false }],
  ['principal.type', { $in: ['AI_AGENT', 'SERVICE_ACCOUNT'] }],
  ['resource.attributes.team', { $ref: 'principal.attributes.team' }],
  ['resource.attributes.env', { $ne: { $ref: 'context.env' } }],
  ['resource.attributes.env', 'prod'],
  ['resource.attributes.team', { $exists: true }],
  ['resource.identifier', { $ne: 'x' }],
  ['action.name', { $in: ['read', 'tools/call'] }],
  ['action.name', { $ne: 'delete' }],
  ['action.properties.soft', true],
  ['action.properties.soft', { $exists: false }],
  ['action.properties.scope.level', { $lt: 3 }],
  ['subject.properties.role', 'admin'],
  ['subject.properties.role', { $ne: 'guest' }],
  ['subject.properties.team', { $ref: 'principal.attributes.team' }],
  ['resource.attributes.team', { $ref: 'subject.properties.team' }],
];
/** An entry of each root as likely as one of another. */
const conditionArb = fc.oneof(
  ...['context.', 'principal.', 'resource.', 'action.', 'subject.'].map((root) =>
    fc.constantFrom(...CONDITIONS.filter(([path]) => path.startsWith(root))),
  ),
);
const conditionsArb = fc
  .uniqueArray(conditionArb, { minLength: 1, maxLength: 2, selector: ([path]) => path })
  .map((entries) => Object.fromEntries(entries));

const resourcePatternArb = fc
  .nat({ max: 2 })
  .chain((type) =>
    fc
      .oneof(
        { weight: 3, arbitrary: fc.constantFrom(...IDENTIFIERS[type]!) },
        { weight: 2, arbitrary: fc.constantFrom(...GLOBS[type]!) },
      )
      .map((identifier) => ({ type, identifier })),
  );

const policyArb: fc.Arbitrary<PolicySpec> = fc.record({
  effect: fc.oneof(
    { weight: 5, arbitrary: fc.constant('allow' as const) },
    { weight: 2, arbitrary: fc.constant('deny' as const) },
  ),
  principals: fc.uniqueArray(nat, { maxLength: 2 }),
  groups: fc.uniqueArray(nat, { maxLength: 2 }),
  match: sometimes(matchArb, 0.35),
  actions: subset(ACTION_PATTERNS, 1, 3),
  resources: fc.array(resourcePatternArb, { minLength: 1, maxLength: 3 }),
  conditions: sometimes(conditionsArb, 0.35),
  status: fc.oneof(
    { weight: 12, arbitrary: fc.constant('active' as const) },
    { weight: 1, arbitrary: fc.constant('disabled' as const) },
    { weight: 1, arbitrary: fc.constant('draft' as const) },
  ),
});

const resourceAttributesArb: fc.Arbitrary<Attrs> = fc.record(
  { team: fc.constantFrom(...TEAMS), env: fc.constantFrom(...ENVS, 'dev') },
  { requiredKeys: [] },
);

const resourceArb: fc.Arbitrary<ResourceSpec> = fc.record({
  type: fc.nat({ max: 2 }),
  identifier: nat,
  attributes: resourceAttributesArb,
});

const contextArb = fc.record(
  {
    ip: fc.constantFrom('10.1.2.3', '192.168.4.5', '172.16.0.1', 'nonsense'),
    risk: fc.constantFrom<unknown>(10, 90, 'high'),
    env: fc.constantFrom('prod', 'staging', 'dev'),
    mfa: fc.constant(true),
    session: fc.constantFrom<unknown>({ level: 1 }, { level: 3 }, 'none'),
  },
  { requiredKeys: [] },
);

const actionPropertiesArb = fc.record(
  {
    soft: fc.constantFrom<unknown>(true, false, 'yes'),
    scope: fc.constantFrom<unknown>({ level: 1 }, { level: 5 }, 'all'),
  },
  { requiredKeys: [] },
);

const subjectPropertiesArb = fc.record(
  { role: fc.constantFrom('admin', 'guest', 'member'), team: fc.constantFrom(...TEAMS) },
  { requiredKeys: [] },
);

const requestArb: fc.Arbitrary<RequestSpec> = fc.record({
  aim: sometimes(fc.record({ policy: nat, subject: nat, resource: nat, action: sometimes(nat, 0.5) }), 0.65),
  principal: fc.oneof({ weight: 12, arbitrary: nat }, { weight: 1, arbitrary: fc.constant(-1) }),
  action: fc.constantFrom(...ACTIONS),
  type: fc.nat({ max: 2 }),
  identifier: nat,
  context: sometimes(contextArb, 0.4),
  attributes: sometimes(resourceAttributesArb, 0.25),
  actionProperties: sometimes(actionPropertiesArb, 0.3),
  subjectProperties: sometimes(subjectPropertiesArb, 0.3),
});

const writeArb: fc.Arbitrary<Write> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('addMember' as const), group: nat, principal: nat }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('nest' as const), parent: nat, child: nat }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('removeMembership' as const), edge: nat }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('patchAttributes' as const),
      principal: nat,
      attributes: fc.record(
        {
          team: fc.constantFrom(...TEAMS, null),
          env: fc.constantFrom(...ENVS, null),
          level: fc.constantFrom('1', '10', 'n/a', null),
          tags: fc.oneof(subset(['a', 'b', 'c']), fc.constant(null)),
          allowed_tools: fc.oneof(subset(['search', 'shell', '*'], 1, 2), fc.constant(null)),
        },
        { requiredKeys: [] },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('setStatus' as const),
      principal: nat,
      status: fc.constantFrom('active' as const, 'suspended' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deletePrincipal' as const), principal: nat }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteGroup' as const), group: nat }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('replacePolicy' as const), policy: nat, body: policyArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('setPolicyStatus' as const),
      policy: nat,
      status: fc.constantFrom('active' as const, 'disabled' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deletePolicy' as const), policy: nat }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('addPolicy' as const), body: policyArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('register' as const), resource: resourceArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('unregister' as const),
      type: fc.nat({ max: 2 }),
      identifier: nat,
    }),
  },
);

const checkArb = (min: number, max: number): fc.Arbitrary<Step> =>
  fc
    .array(requestArb, { minLength: min, maxLength: max })
    .map((requests) => ({ kind: 'check' as const, requests }));

const worldArb = (steps: fc.Arbitrary<Step[]>): fc.Arbitrary<WorldSpec> =>
  fc.record({
    principals: fc.array(principalArb, { minLength: 5, maxLength: 15 }),
    groups: fc.integer({ min: 3, max: 8 }),
    memberships: fc.array(fc.record({ group: nat, principal: nat }), { maxLength: 20 }),
    nestings: fc.array(fc.record({ parent: nat, child: nat }), { maxLength: 8 }),
    policies: fc.array(policyArb, { minLength: 3, maxLength: 10 }),
    resources: fc.array(resourceArb, { maxLength: 10 }),
    steps,
  });

// ---- the world, built through the API ----

interface AccessEntryView {
  resource: { type: string; identifier: string };
  pattern?: true;
  actions: string[];
  denied_actions?: string[];
  granted_by: string[];
  conditional: boolean;
}

/** What an entry or a reverse-lookup row grants: an action pattern matches, no denied one does. */
const grants = (entry: Pick<AccessEntryView, 'actions' | 'denied_actions'>, action: string): boolean =>
  entry.actions.some((a) => actionMatches(a, action)) &&
  !(entry.denied_actions ?? []).some((d) => actionMatches(d, action));

/** How often each kind of comparison was made over a run, by outcome. */
class Coverage {
  readonly counts: Record<string, number> = {};
  note(kind: string): void {
    this.counts[kind] = (this.counts[kind] ?? 0) + 1;
  }
  get(kind: string): number {
    return this.counts[kind] ?? 0;
  }
}

interface PrincipalState {
  id: string;
  type: PrincipalType;
  status: 'active' | 'suspended' | 'deprovisioned' | 'deleted';
}

interface PolicyState {
  id: string;
  name: string;
  spec: PolicySpec;
  deleted: boolean;
}

class World {
  readonly principals: PrincipalState[] = [];
  readonly groups: { id: string; deleted: boolean }[] = [];
  /** Direct memberships: [group index, member] with the member a principal or group index. */
  readonly edges: { group: number; principal?: number; child?: number }[] = [];
  readonly policies: PolicyState[] = [];
  readonly types: string[];
  private policyCount = 0;

  constructor(
    readonly app: TestApp,
    readonly api: HttpClient,
    readonly tag: string,
    readonly coverage: Coverage,
  ) {
    this.types = [`${tag}-db`, `${tag}-repo`, 'tool'];
  }

  /** Tool names carry the world's tag, so that worlds never share a `tool` resource. */
  identifier(type: number, symbolic: string): string {
    return type === 2 ? `${this.tag}.${symbolic}` : symbolic;
  }

  private tools(attributes: Record<string, unknown>): Record<string, unknown> {
    const out = { ...attributes };
    const tools = out['allowed_tools'];
    if (Array.isArray(tools))
      out['allowed_tools'] = tools.map((t: string) => (t === '*' ? t : this.identifier(2, t)));
    return out;
  }

  /** Builds the world through the API; independent writes go in parallel. */
  async build(spec: WorldSpec): Promise<void> {
    const principals = await Promise.all(
      spec.principals.map(async (p, i): Promise<PrincipalState> => {
        const attributes = this.tools({ ...p.attributes, world: this.tag }) as Attrs;
        if (p.type === 'USER') {
          const created = await insertPrincipal(this.app, {
            name: `${this.tag}-u${i}`,
            attributes,
            status: p.status,
          });
          return { id: created.id, type: 'USER', status: p.status };
        }
        const res = await this.api.post('/v1/principals', {
          type: p.type,
          name: `${this.tag}-p${i}`,
          attributes,
        });
        expect(res.status, res.text).to.equal(201);
        const state: PrincipalState = { id: res.body.id, type: p.type, status: 'active' };
        if (p.status !== 'active') await this.setStatus(state, 'suspended');
        return state;
      }),
    );
    this.principals.push(...principals);
    const groups = await Promise.all(
      Array.from({ length: spec.groups }, async (_, i) => {
        const res = await this.api.post('/v1/groups', { name: `${this.tag}-g${i}` });
        expect(res.status, res.text).to.equal(201);
        return { id: res.body.id as string, deleted: false };
      }),
    );
    this.groups.push(...groups);
    for (const m of spec.memberships) await this.write({ kind: 'addMember', ...m });
    for (const n of spec.nestings) await this.write({ kind: 'nest', ...n });
    const policies = await Promise.all(
      spec.policies.map(async (body, i) => {
        const name = `${this.tag}-pol${i}`;
        const res = await this.api.post('/v1/policies', this.policyBody(body, name));
        expect(res.status, res.text).to.equal(201);
        return { id: res.body.id as string, name, spec: body, deleted: false };
      }),
    );
    this.policies.push(...policies);
    this.policyCount = policies.length;
    // One write per resource (the last registration of each wins, as it would in sequence).
    const resources = new Map(
      spec.resources.map((r) => [`${r.type}:${r.identifier % IDENTIFIERS[r.type]!.length}`, r]),
    );
    await Promise.all([...resources.values()].map((r) => this.write({ kind: 'register', resource: r })));
  }

  /** Deletes the world's policies, so that nothing of it reaches later worlds. */
  async cleanUp(): Promise<void> {
    await Promise.all(
      this.policies
        .filter((p) => !p.deleted)
        .map(async (p) => expect((await this.api.delete(`/v1/policies/${p.id}`)).status).to.equal(200)),
    );
  }

  private pick<T>(list: readonly T[], index: number): T {
    return list[index % list.length]!;
  }

  private async setStatus(p: PrincipalState, status: 'active' | 'suspended'): Promise<void> {
    const res = await this.api.patch(`/v1/principals/${p.id}`, { status });
    expect(res.status, res.text).to.equal(200);
    p.status = status;
  }

  policyBody(spec: PolicySpec, name: string): Record<string, unknown> {
    const principals = [...new Set(spec.principals.map((i) => this.pick(this.principals, i).id))];
    const groups = [...new Set(spec.groups.map((i) => this.pick(this.groups, i).id))];
    const subjects: Record<string, unknown> = {};
    if (principals.length > 0) subjects['principals'] = principals;
    if (groups.length > 0) subjects['groups'] = groups;
    if (spec.match) {
      const attributes = (spec.match['attributes'] as Record<string, unknown> | undefined) ?? {};
      subjects['match'] = { ...spec.match, attributes: { ...attributes, world: this.tag } };
    }
    if (Object.keys(subjects).length === 0) subjects['principals'] = [this.principals[0]!.id];
    return {
      name,
      effect: spec.effect,
      subjects,
      actions: spec.actions,
      resources: spec.resources.map((r) => ({
        type: this.types[r.type]!,
        identifier: this.identifier(r.type, r.identifier),
      })),
      ...(spec.conditions ? { conditions: spec.conditions } : {}),
      status: spec.status,
    };
  }

  async write(w: Write): Promise<void> {
    switch (w.kind) {
      case 'addMember': {
        const g = w.group % this.groups.length;
        const p = w.principal % this.principals.length;
        if (this.groups[g]!.deleted || this.principals[p]!.status === 'deleted') return;
        const res = await this.api.put(`/v1/groups/${this.groups[g]!.id}/members/${this.principals[p]!.id}`);
        expect(res.status, res.text).to.equal(200);
        if (!this.edges.some((e) => e.group === g && e.principal === p))
          this.edges.push({ group: g, principal: p });
        return;
      }
      case 'nest': {
        // Only a later group goes into an earlier one: the nesting stays a DAG, as the API insists.
        const parent = Math.min(w.parent % this.groups.length, w.child % this.groups.length);
        const child = Math.max(w.parent % this.groups.length, w.child % this.groups.length);
        if (parent === child || this.groups[parent]!.deleted || this.groups[child]!.deleted) return;
        const res = await this.api.put(
          `/v1/groups/${this.groups[parent]!.id}/members/${this.groups[child]!.id}`,
        );
        expect(res.status, res.text).to.equal(200);
        if (!this.edges.some((e) => e.group === parent && e.child === child))
          this.edges.push({ group: parent, child });
        return;
      }
      case 'removeMembership': {
        if (this.edges.length === 0) return;
        const index = w.edge % this.edges.length;
        const edge = this.edges[index]!;
        const member =
          edge.principal !== undefined ? this.principals[edge.principal]!.id : this.groups[edge.child!]!.id;
        const res = await this.api.delete(`/v1/groups/${this.groups[edge.group]!.id}/members/${member}`);
        expect(res.status, res.text).to.equal(200);
        this.edges.splice(index, 1);
        return;
      }
      case 'patchAttributes': {
        const p = this.pick(this.principals, w.principal);
        if (p.status === 'deleted' || Object.keys(w.attributes).length === 0) return;
        const res = await this.api.patch(`/v1/principals/${p.id}`, { attributes: this.tools(w.attributes) });
        expect(res.status, res.text).to.equal(200);
        return;
      }
      case 'setStatus': {
        const p = this.pick(this.principals, w.principal);
        if (p.type === 'USER' || p.status === 'deleted') return;
        await this.setStatus(p, w.status);
        return;
      }
      case 'deletePrincipal': {
        const index = w.principal % this.principals.length;
        const p = this.principals[index]!;
        if (p.type === 'USER' || p.status === 'deleted') return;
        const res = await this.api.delete(`/v1/principals/${p.id}`);
        expect(res.status, res.text).to.equal(200);
        p.status = 'deleted';
        // A deleted principal leaves every group.
        for (let i = this.edges.length - 1; i >= 0; i -= 1)
          if (this.edges[i]!.principal === index) this.edges.splice(i, 1);
        return;
      }
      case 'deleteGroup': {
        const index = w.group % this.groups.length;
        const g = this.groups[index]!;
        if (g.deleted) return;
        const res = await this.api.delete(`/v1/groups/${g.id}`);
        expect(res.status, res.text).to.equal(200);
        g.deleted = true;
        for (let i = this.edges.length - 1; i >= 0; i -= 1) {
          const e = this.edges[i]!;
          if (e.group === index || e.child === index) this.edges.splice(i, 1);
        }
        return;
      }
      case 'addPolicy': {
        const name = `${this.tag}-pol${(this.policyCount += 1)}-added`;
        const res = await this.api.post('/v1/policies', this.policyBody(w.body, name));
        expect(res.status, res.text).to.equal(201);
        this.policies.push({ id: res.body.id, name, spec: w.body, deleted: false });
        return;
      }
      case 'replacePolicy':
      case 'setPolicyStatus': {
        if (this.policies.length === 0) return;
        const p = this.pick(this.policies, w.policy);
        if (p.deleted) return;
        const spec = w.kind === 'replacePolicy' ? w.body : { ...p.spec, status: w.status };
        const res = await this.api.put(`/v1/policies/${p.id}`, this.policyBody(spec, p.name));
        expect(res.status, res.text).to.equal(200);
        p.spec = spec;
        return;
      }
      case 'deletePolicy': {
        if (this.policies.length === 0) return;
        const p = this.pick(this.policies, w.policy);
        if (p.deleted) return;
        expect((await this.api.delete(`/v1/policies/${p.id}`)).status).to.equal(200);
        p.deleted = true;
        return;
      }
      case 'register': {
        const { type, identifier, attributes } = w.resource;
        const id = this.identifier(type, this.pick(IDENTIFIERS[type]!, identifier));
        const res = await this.api.put(`/v1/resources/${this.types[type]}/${encodeURIComponent(id)}`, {
          attributes,
        });
        expect(res.status, res.text).to.be.oneOf([200, 201]);
        return;
      }
      case 'unregister': {
        const id = this.identifier(w.type, this.pick(IDENTIFIERS[w.type]!, w.identifier));
        const res = await this.api.delete(`/v1/resources/${this.types[w.type]}/${encodeURIComponent(id)}`);
        expect(res.status, res.text).to.be.oneOf([200, 404]);
        return;
      }
    }
  }

  /** Principals a policy names, directly or as members of its groups (nested), by index. */
  private namedBy(spec: PolicySpec): number[] {
    const out = new Set(spec.principals.map((i) => i % this.principals.length));
    const groups = new Set(spec.groups.map((i) => i % this.groups.length));
    for (let grew = true; grew;) {
      grew = false;
      for (const e of this.edges) {
        if (e.child !== undefined && groups.has(e.group) && !groups.has(e.child)) {
          groups.add(e.child);
          grew = true;
        }
      }
    }
    for (const e of this.edges) if (e.principal !== undefined && groups.has(e.group)) out.add(e.principal);
    return [...out];
  }

  /** The request a spec stands for in the world as it now is. */
  resolve(r: RequestSpec): OracleRequest {
    let principal = r.principal < 0 ? UNKNOWN_PRINCIPAL : this.pick(this.principals, r.principal).id;
    let action: string = r.action;
    let type = r.type;
    let identifier = this.identifier(type, this.pick(IDENTIFIERS[type]!, r.identifier));
    const live = this.policies.filter((p) => !p.deleted);
    if (r.aim && live.length > 0) {
      const spec = this.pick(live, r.aim.policy).spec;
      const named = this.namedBy(spec);
      principal = this.pick(
        this.principals,
        named.length > 0 ? this.pick(named, r.aim.subject) : r.aim.subject,
      ).id;
      const target = this.pick(spec.resources, r.aim.resource);
      type = target.type;
      const pattern = globRegExp(target.identifier);
      const fits = IDENTIFIERS[type]!.filter((i) => pattern.test(i));
      identifier = this.identifier(
        type,
        fits.length > 0 ? this.pick(fits, r.aim.resource) : target.identifier.replace(/\*/g, 'zz'),
      );
      if (r.aim.action !== null) {
        const actions = ACTIONS.filter((a) => spec.actions.some((p) => actionMatches(p, a)));
        action = this.pick(actions, r.aim.action);
      }
    }
    return {
      principal_id: principal,
      action: r.actionProperties ? { name: action, properties: r.actionProperties } : action,
      resource: {
        type: this.types[type]!,
        identifier,
        ...(r.attributes ? { attributes: r.attributes } : {}),
      },
      ...(r.context ? { context: r.context } : {}),
      ...(r.subjectProperties ? { subject_properties: r.subjectProperties } : {}),
    };
  }

  // ---- the comparisons ----

  /** The index against the oracle, on one request. */
  async decide(request: OracleRequest): Promise<OracleAnswer> {
    const [res, oracle] = await Promise.all([
      this.api.post('/v1/decisions/evaluate', request),
      oracleDecide(this.app, request),
    ]);
    expect(res.status, res.text).to.equal(200);
    const got = res.body;
    const about = `request ${JSON.stringify(request)}\nindex: ${JSON.stringify({
      decision: got.decision,
      reasons: got.reasons,
      granted_by: got.granted_by,
    })}\noracle: ${JSON.stringify(oracle)}`;
    expect(
      oracle.edgeDisagreements,
      `APPLIES_TO edges disagree with the stored subjects; ${about}`,
    ).to.deep.equal([]);
    expect(got.decision, about).to.equal(oracle.decision);
    if (oracle.decision === 'ALLOW') {
      expect(got.granted_by, about).to.deep.equal(oracle.allowedBy);
      expect(
        got.reasons.map((r: any) => r.policy_id),
        about,
      ).to.deep.equal(oracle.allowedBy);
    } else {
      const codes = [...new Set<string>(got.reasons.map((r: any) => r.code))];
      expect(codes, about).to.not.be.empty;
      for (const code of codes) expect(oracle.causes, about).to.include(code);
      if (codes.includes('POLICY_DENY')) {
        expect(got.reasons.map((r: any) => r.policy_id).sort(), about).to.deep.equal(oracle.deniedBy);
      }
    }
    this.coverage.note(`decision ${oracle.decision}${request.context ? ' with context' : ''}`);
    if (typeof request.action !== 'string' || request.subject_properties)
      this.coverage.note(`decision ${oracle.decision} with claims`);
    if (oracle.decision === 'DENY') this.coverage.note(`deny ${oracle.causes.join('+')}`);
    return oracle;
  }

  /** Every check of one request; `access` and `reverse` cache the phase's reads. */
  async checkRequest(
    request: OracleRequest,
    access: Map<string, Promise<{ status: number; entries: AccessEntryView[] }>>,
    reverse: Map<string, Promise<any[]>>,
  ): Promise<void> {
    // Access and reverse lookup say nothing about context, request attributes or claims: they
    // are compared with the request without them.
    const action = typeof request.action === 'string' ? request.action : request.action.name;
    const bare = {
      principal_id: request.principal_id,
      action,
      resource: { type: request.resource.type, identifier: request.resource.identifier },
    };
    const { type, identifier } = bare.resource;
    const key = `${type}\u0000${identifier}`;
    if (!access.has(bare.principal_id)) access.set(bare.principal_id, this.accessOf(bare.principal_id));
    if (!reverse.has(key)) reverse.set(key, this.whoCanAccess(type, identifier));
    const extras =
      request.context !== undefined ||
      request.resource.attributes !== undefined ||
      typeof request.action !== 'string' ||
      request.subject_properties !== undefined;
    const [, decision, record, rows] = await Promise.all([
      extras ? this.decide(request) : undefined,
      this.decide(bare),
      access.get(bare.principal_id)!,
      reverse.get(key)!,
    ]);
    const allowed = decision.decision === 'ALLOW';
    const inactive = decision.causes.includes('PRINCIPAL_INACTIVE');
    const unknown = decision.causes.includes('PRINCIPAL_NOT_FOUND');
    const about = `request ${JSON.stringify(bare)}, oracle ${JSON.stringify(decision)}`;

    // The access endpoint.
    expect(record.status, about).to.equal(unknown ? 404 : 200);
    const entries = record.entries;
    if (inactive) expect(entries, `an inactive principal has no access; ${about}`).to.deep.equal([]);
    const entry = entries.find(
      (e) => !e.pattern && e.resource.type === type && e.resource.identifier === identifier,
    );
    const seen = `${about}\naccess entry: ${JSON.stringify(entry)}`;
    if (entry && !entry.conditional) {
      expect(grants(entry, bare.action), `a non-conditional access entry grants iff ALLOW; ${seen}`).to.equal(
        allowed,
      );
      this.coverage.note(`access entry ${allowed ? 'grants' : 'refuses'}`);
    } else if (entry) this.coverage.note('access entry conditional');
    if (allowed) {
      if (entry) {
        expect(entry.granted_by, seen).to.include.members(decision.allowedBy);
      } else if (!decision.toolGuarded) {
        // Globs list registered resources only; for another identifier a glob's own entry must
        // stand for the grant. (Not for an agent's tools under the guardrail: see the note at
        // the top.)
        expect(decision.registered, `an ALLOW of a registered resource has an entry; ${seen}`).to.equal(
          false,
        );
        const patterns = entries.filter(
          (e) =>
            e.pattern &&
            e.resource.type === type &&
            globRegExp(e.resource.identifier).test(identifier) &&
            (e.conditional || grants(e, bare.action)),
        );
        expect(patterns, `an ALLOW has an exact or a pattern entry; ${seen}\n${JSON.stringify(entries)}`).to
          .not.be.empty;
        this.coverage.note('allow through a pattern entry');
      } else this.coverage.note('allow of an unregistered tool under the guardrail, no entry');
    }

    // The reverse lookup.
    const row = rows.find((r: any) => r.principal.id === bare.principal_id);
    const both = `${seen}\nreverse row: ${JSON.stringify(row)}`;
    if (unknown || inactive) expect(row, `only active principals have access; ${both}`).to.equal(undefined);
    if (allowed) {
      expect(row, `an ALLOW has a reverse-lookup row; ${both}`).to.not.equal(undefined);
      expect(row.granted_by, both).to.include.members(decision.allowedBy);
    }
    if (row && !row.conditional) {
      expect(grants(row, bare.action), `a non-conditional row grants iff ALLOW; ${both}`).to.equal(allowed);
      this.coverage.note(`reverse row ${allowed ? 'grants' : 'refuses'}`);
    } else if (row) this.coverage.note('reverse row conditional');
    // Both read the same grants: the row is the access endpoint's entry for the identifier.
    if (entry || (row && decision.registered)) {
      expect(entry, `a row of a registered resource has its access entry; ${both}`).to.not.equal(undefined);
      expect(row, `an access entry has its reverse-lookup row; ${both}`).to.not.equal(undefined);
      const view = (e: any) => ({
        actions: e.actions,
        denied_actions: e.denied_actions ?? [],
        granted_by: e.granted_by,
        conditional: e.conditional,
      });
      expect(view(row), both).to.deep.equal(view(entry));
      this.coverage.note('access entry equals reverse row');
    }
  }

  private async accessOf(id: string): Promise<{ status: number; entries: AccessEntryView[] }> {
    const res = await this.api.get(`/v1/principals/${id}/access`);
    expect(res.status, res.text).to.be.oneOf([200, 404]);
    // The endpoint answers from the index: the same entries, dated the same, as the graph's walk.
    const walked = await this.app.runtime.services.access.walkedAccess(id);
    expect(walked === undefined, `${id} exists for the walk as for the endpoint`).to.equal(
      res.status === 404,
    );
    if (walked) {
      const dated = walked.map((e) => ({ ...e, granted_at: e.granted_at ?? '' }));
      expect(res.body.access, `access of ${id}: the index and the walk of the graph`).to.deep.equal(dated);
      this.coverage.note('access from the index equals the walk');
    }
    return { status: res.status, entries: res.status === 200 ? res.body.access : [] };
  }

  /** Every row of the reverse lookup, page by page. */
  private async whoCanAccess(type: string, identifier: string): Promise<any[]> {
    const rows: any[] = [];
    for (let page = 1; ; page += 1) {
      const query = new URLSearchParams({ type, identifier, limit: '100', page: String(page) });
      const res = await this.api.get(`/v1/resources/access?${query.toString()}`);
      expect(res.status, res.text).to.equal(200);
      rows.push(...res.body.principals);
      if (page >= res.body.pagination.pages) return rows;
    }
  }

  async check(requests: RequestSpec[]): Promise<void> {
    const access = new Map<string, Promise<{ status: number; entries: AccessEntryView[] }>>();
    const reverse = new Map<string, Promise<any[]>>();
    await Promise.all(requests.map((r) => this.checkRequest(this.resolve(r), access, reverse)));
    await this.sweep(access, reverse);
  }

  /**
   * Every exact entry and every row read in a check phase, against the index's decision on each
   * action of the vocabulary (as a batch; the index's agreement with the oracle is what
   * `decide` checks): a non-conditional one grants an action iff the decision is ALLOW, and
   * lists at least the policies that allowed it.
   */
  private async sweep(
    access: Map<string, Promise<{ status: number; entries: AccessEntryView[] }>>,
    reverse: Map<string, Promise<any[]>>,
  ): Promise<void> {
    const cases: { request: OracleRequest & { action: string }; entry: AccessEntryView; side: string }[] = [];
    for (const [principal, record] of access) {
      for (const entry of (await record).entries) {
        if (entry.pattern) continue;
        for (const action of ACTIONS) {
          cases.push({
            request: { principal_id: principal, action, resource: entry.resource },
            entry,
            side: 'access entry',
          });
        }
      }
    }
    for (const [key, rows] of reverse) {
      const [type, identifier] = key.split('\u0000') as [string, string];
      for (const row of await rows) {
        for (const action of ACTIONS) {
          cases.push({
            request: { principal_id: row.principal.id, action, resource: { type, identifier } },
            entry: row,
            side: 'reverse row',
          });
        }
      }
    }
    for (let at = 0; at < cases.length; at += 1000) {
      const chunk = cases.slice(at, at + 1000);
      const res = await this.api.post('/v1/decisions/batch', { requests: chunk.map((c) => c.request) });
      expect(res.status, res.text).to.equal(200);
      chunk.forEach(({ request, entry, side }, i) => {
        const result = res.body.results[i];
        const allowed = result.decision === 'ALLOW';
        const about = `${side} ${JSON.stringify(entry)}, request ${JSON.stringify(request)}, index ${JSON.stringify(result)}`;
        if (allowed) expect(entry.granted_by, about).to.include.members(result.granted_by);
        if (entry.conditional) return;
        expect(
          grants(entry, request.action),
          `a non-conditional ${side} grants iff ALLOW; ${about}`,
        ).to.equal(allowed);
        this.coverage.note(`${side} ${allowed ? 'grants' : 'refuses'}`);
      });
    }
  }

  async run(spec: WorldSpec): Promise<void> {
    await this.build(spec);
    for (const step of spec.steps) {
      if (step.kind === 'check') await this.check(step.requests);
      else await this.write(step);
    }
  }
}

describe('decisions: index, oracle, access endpoint and reverse lookup agree', () => {
  let app: TestApp;
  let api: HttpClient;
  const run = Math.random()
    .toString(36)
    .slice(2, 7)
    .replace(/[^a-z0-9]/g, 'a');
  let worlds = 0;
  const tag = (): string => `pw${run}${(worlds += 1)}`;

  const steps = (middle: fc.Arbitrary<Step[]>): fc.Arbitrary<Step[]> =>
    middle.chain((writes) => checkArb(4, 8).map((last) => [...writes, last]));
  const withWrites = worldArb(
    steps(
      fc.array(fc.oneof({ weight: 3, arbitrary: writeArb }, { weight: 1, arbitrary: checkArb(2, 6) }), {
        minLength: 4,
        maxLength: 14,
      }),
    ),
  );

  const fx = useApp({ env: { RATE_LIMIT_BULK: '1000000', RATE_LIMIT_DECISIONS: '1000000' } });

  before(async function () {
    this.timeout(90_000);
    // Every world sends a few batches and hundreds of decisions: no rate limit may cut in.
    app = fx.app;
    api = fx.api;
    // One world first, outside the properties' time budgets: Neo4j plans every statement the
    // worlds use once, and the first world would otherwise take many times what the others do.
    const [warmUp] = fc.sample(withWrites, { seed: 1, numRuns: 1 });
    const world = new World(app, api, tag(), new Coverage());
    await world.run(warmUp!);
    await world.cleanUp();
  });

  /**
   * Replays a failure: PROPERTY_SEED and PROPERTY_PATH as fast-check printed them. PROPERTY_RUNS
   * and PROPERTY_TIME_MS make a longer search.
   */
  const replay = (): { seed?: number; path?: string } => ({
    ...(process.env['PROPERTY_SEED'] ? { seed: Number(process.env['PROPERTY_SEED']) } : {}),
    ...(process.env['PROPERTY_PATH'] ? { path: process.env['PROPERTY_PATH'] } : {}),
  });

  /**
   * Runs up to `numRuns` worlds, fewer if `timeLimitMs` runs out first (this machine is shared;
   * the coverage check below then says whether what ran was enough). A failure is shrunk within
   * the same time limit and reported with its seed and path.
   */
  const property = async (
    arbitrary: fc.Arbitrary<WorldSpec>,
    numRuns: number,
    timeLimitMs: number,
  ): Promise<{ coverage: Coverage; worlds: number }> => {
    const coverage = new Coverage();
    let done = 0;
    await fc.assert(
      fc.asyncProperty(arbitrary, async (spec) => {
        const world = new World(app, api, tag(), coverage);
        await world.run(spec);
        await world.cleanUp();
        done += 1;
      }),
      {
        numRuns: Number(process.env['PROPERTY_RUNS'] ?? numRuns),
        interruptAfterTimeLimit: timeLimitMs,
        markInterruptAsFailure: false,
        ...replay(),
      },
    );
    return { coverage, worlds: done };
  };

  /** Every kind of comparison met both of its outcomes: the restrictions left something to check. */
  const expectCoverage = (coverage: Coverage, worldsDone: number): void => {
    const summary = JSON.stringify(coverage.counts);
    console.log(`      ${worldsDone} worlds: ${summary}`);
    expect(worldsDone, `worlds checked; ${summary}`).to.be.at.least(4);
    for (const kind of [
      'decision ALLOW',
      'decision DENY',
      'decision ALLOW with context',
      'decision DENY with context',
      'decision ALLOW with claims',
      'decision DENY with claims',
      'access entry grants',
      'access entry refuses',
      'access entry conditional',
      'reverse row grants',
      'reverse row refuses',
      'access entry equals reverse row',
    ]) {
      expect(coverage.get(kind), `${kind}; ${summary}`).to.be.greaterThan(0);
    }
    for (const cause of ['PRINCIPAL_INACTIVE', 'POLICY_DENY', 'NO_MATCHING_POLICY']) {
      expect(
        Object.keys(coverage.counts).some((k) => k.startsWith('deny ') && k.includes(cause)),
        `a DENY for ${cause}; ${summary}`,
      ).to.equal(true);
    }
  };

  /** The time a property may take (PROPERTY_TIME_MS overrides), and the test's timeout with it. */
  const budget = (context: Mocha.Context, ms: number): number => {
    const limit = Number(process.env['PROPERTY_TIME_MS'] ?? ms);
    context.timeout(limit + 30_000);
    return limit;
  };

  it('the oracle answers known cases as the contract says, and the index with it', async function () {
    this.timeout(30_000);
    const t = tag();
    const db = `${t}-db`;
    const created = async (path: string, body: unknown): Promise<string> => {
      const res = await api.post(path, body);
      expect(res.status, res.text).to.equal(201);
      return res.body.id;
    };
    const account = await created('/v1/principals', {
      type: 'SERVICE_ACCOUNT',
      name: `${t}-sa`,
      attributes: { team: 'research', world: t },
    });
    const agent = await created('/v1/principals', {
      type: 'AI_AGENT',
      name: `${t}-agent`,
      attributes: { team: 'payments', allowed_tools: [`${t}.search`], world: t },
    });
    const outer = await created('/v1/groups', { name: `${t}-outer` });
    const inner = await created('/v1/groups', { name: `${t}-inner` });
    expect((await api.put(`/v1/groups/${outer}/members/${inner}`)).status).to.equal(200);
    expect((await api.put(`/v1/groups/${inner}/members/${account}`)).status).to.equal(200);
    const policy = (name: string, body: Record<string, unknown>) =>
      created('/v1/policies', { name: `${t}-${name}`, effect: 'allow', ...body });
    const nested = await policy('nested', {
      subjects: { groups: [outer] },
      actions: ['read'],
      resources: [{ type: db, identifier: 'prod-*' }],
    });
    const risky = await policy('risky', {
      effect: 'deny',
      subjects: { principals: [account] },
      actions: ['read', 'repo:*'],
      resources: [{ type: db, identifier: 'prod-2' }],
      conditions: { 'context.risk': { $gt: 50 } },
    });
    const tools = await policy('tools', {
      subjects: { principals: [agent] },
      actions: ['*'],
      resources: [{ type: 'tool', identifier: `${t}.*` }],
    });
    const team = await policy('team', {
      subjects: { match: { type: 'AI_AGENT', attributes: { world: t } } },
      actions: ['write'],
      resources: [{ type: db, identifier: '*' }],
      conditions: { 'principal.attributes.team': 'payments' },
    });
    const cases: [OracleRequest, Partial<OracleAnswer>][] = [
      [
        { principal_id: account, action: 'read', resource: { type: db, identifier: 'prod-1' } },
        { decision: 'ALLOW', allowedBy: [nested] },
      ],
      // A deny whose condition is unknown applies (fail closed); a wrong type is unknown too.
      [
        { principal_id: account, action: 'read', resource: { type: db, identifier: 'prod-2' } },
        { decision: 'DENY', allowedBy: [nested], deniedBy: [risky], causes: ['POLICY_DENY'] },
      ],
      [
        {
          principal_id: account,
          action: 'read',
          resource: { type: db, identifier: 'prod-2' },
          context: { risk: 'high' },
        },
        { decision: 'DENY', deniedBy: [risky] },
      ],
      [
        {
          principal_id: account,
          action: 'read',
          resource: { type: db, identifier: 'prod-2' },
          context: { risk: 10 },
        },
        { decision: 'ALLOW', allowedBy: [nested], deniedBy: [] },
      ],
      [
        { principal_id: account, action: 'write', resource: { type: db, identifier: 'prod-1' } },
        { decision: 'DENY', causes: ['NO_MATCHING_POLICY'] },
      ],
      [
        { principal_id: account, action: 'read', resource: { type: db, identifier: 'staging-1' } },
        { decision: 'DENY', causes: ['NO_MATCHING_POLICY'] },
      ],
      [
        { principal_id: agent, action: 'invoke', resource: { type: 'tool', identifier: `${t}.search` } },
        { decision: 'ALLOW', allowedBy: [tools] },
      ],
      [
        { principal_id: agent, action: 'invoke', resource: { type: 'tool', identifier: `${t}.shell` } },
        { decision: 'DENY', allowedBy: [tools], causes: ['TOOL_NOT_ALLOWED'] },
      ],
      [
        { principal_id: agent, action: 'write', resource: { type: db, identifier: 'x' } },
        { decision: 'ALLOW', allowedBy: [team] },
      ],
      [
        { principal_id: UNKNOWN_PRINCIPAL, action: 'read', resource: { type: db, identifier: 'prod-1' } },
        { decision: 'DENY', causes: ['PRINCIPAL_NOT_FOUND'] },
      ],
    ];
    const expectCase = async ([request, want]: (typeof cases)[number]): Promise<void> => {
      const oracle = await oracleDecide(app, request);
      expect(oracle, JSON.stringify(request)).to.deep.include({ edgeDisagreements: [], ...want });
      const index = await api.post('/v1/decisions/evaluate', request);
      expect(index.body.decision, JSON.stringify(request)).to.equal(oracle.decision);
    };
    for (const c of cases) await expectCase(c);
    // The oracle reads the graph as it is now: the agent leaves the team, the account is suspended.
    expect(
      (await api.patch(`/v1/principals/${agent}`, { attributes: { team: 'research' } })).status,
    ).to.equal(200);
    expect((await api.patch(`/v1/principals/${account}`, { status: 'suspended' })).status).to.equal(200);
    await expectCase([
      { principal_id: agent, action: 'write', resource: { type: db, identifier: 'x' } },
      { decision: 'DENY', allowedBy: [], causes: ['NO_MATCHING_POLICY'] },
    ]);
    await expectCase([
      { principal_id: account, action: 'read', resource: { type: db, identifier: 'prod-1' } },
      { decision: 'DENY', causes: ['PRINCIPAL_INACTIVE'] },
    ]);
    for (const id of [nested, risky, tools, team])
      expect((await api.delete(`/v1/policies/${id}`)).status).to.equal(200);
  });

  it('agree on random worlds of principals, nested groups, policies and resources', async function () {
    const { coverage, worlds: done } = await property(
      worldArb(checkArb(12, 24).map((check) => [check])),
      20,
      budget(this, 20_000),
    );
    expectCoverage(coverage, done);
  });

  it('agree after random sequences of writes', async function () {
    const { coverage, worlds: done } = await property(withWrites, 20, budget(this, 25_000));
    expectCoverage(coverage, done);
  });
});
