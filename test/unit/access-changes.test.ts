import { expect } from 'chai';
import fc from 'fast-check';
import {
  AccessChangeTracker,
  delegatedView,
  summaryOf,
  accessView,
  diffViews,
  keyOf,
  rewind,
  touchedOn,
  type AccessDelta,
  type EntryBefore,
} from '../../src/access-history/changes.js';
import { watchBatch } from '../../src/access-history/compute.js';
import {
  PRINCIPAL_KEYS_PER_PART,
  principalKeys,
  principalSearch,
  type ReadyPart,
} from '../../src/access-history/repository.js';
import { nothing, type Pending } from '../../src/decisions/apply.js';
import type { ChangeEvent } from '../../src/events/feed.js';
import { compilePolicy } from '../../src/decisions/model.js';
import type { PolicyIndex } from '../../src/decisions/policy-index.js';
import { resourceOf } from '../../src/policies/model.js';
import { compileGlob, globMatches } from '../../src/policies/patterns.js';
import {
  buildIndex,
  ixPrincipalOf,
  storedPolicy,
  type PolicySpec,
  type World,
} from '../helpers/engine-cases.js';
import { smallPolicy, smallWorld } from '../helpers/small-worlds.js';

/**
 * Access changes on random small worlds and random changes (memberships, nesting, a principal's
 * attributes or status, policies created, replaced and deleted, resources registered and
 * unregistered): what the tracker reports, looking only at the principals the change can reach,
 * equals the difference of everyone's `/access` before and after.
 */

const NOW = Date.now();
const PRINCIPALS = ['u0', 'u1', 'u2', 'u3', 'u4'];
const GROUPS = ['g0', 'g1', 'g2'];
const RESOURCES = ['doc:r0', 'doc:r1', 'doc:r2', 'doc:s0'];

const subset = <T>(items: readonly T[]) => fc.subarray([...items]);

const policyArb = (id: string): fc.Arbitrary<PolicySpec> =>
  smallPolicy(id, { principals: PRINCIPALS, groups: GROUPS, resources: RESOURCES }, NOW);

const worldArb: fc.Arbitrary<World> = smallWorld(
  { principals: PRINCIPALS, groups: GROUPS, resources: RESOURCES },
  NOW,
  { maxPolicies: 5, someRegistered: true },
);

/** One committed change, as the index receives it: what it does to the index and the keys it names. */
type Change =
  | { kind: 'membership'; principal: string; groups: string[] }
  | { kind: 'nesting'; group: string; parents: string[] }
  | { kind: 'principal'; principal: string; team: string; status: 'active' | 'suspended' }
  | { kind: 'policy'; policy: PolicySpec }
  | { kind: 'delete_policy'; id: string }
  | { kind: 'resource'; resource: string; registered: boolean }
  | { kind: 'delegate'; delegator: string; delegate: string; actions: string[]; resources: string[] | null }
  | { kind: 'revoke'; delegator: string; delegate: string };

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.record({
    kind: fc.constant('membership' as const),
    principal: fc.constantFrom(...PRINCIPALS),
    groups: subset(GROUPS),
  }),
  fc.record({
    kind: fc.constant('nesting' as const),
    group: fc.constant('g2'),
    parents: subset(['g0', 'g1']),
  }),
  fc.record({
    kind: fc.constant('principal' as const),
    principal: fc.constantFrom(...PRINCIPALS),
    team: fc.constantFrom('a', 'b'),
    status: fc.constantFrom('active' as const, 'suspended' as const),
  }),
  fc
    .integer({ min: 0, max: 6 })
    .chain((i) => policyArb(`pol${i}`))
    .map((policy) => ({ kind: 'policy' as const, policy })),
  fc.record({ kind: fc.constant('delete_policy' as const), id: fc.constantFrom('pol0', 'pol1', 'pol2') }),
  fc.record({
    kind: fc.constant('resource' as const),
    resource: fc.constantFrom(...RESOURCES),
    registered: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('delegate' as const),
    delegator: fc.constantFrom(...PRINCIPALS),
    delegate: fc.constantFrom(...PRINCIPALS),
    actions: fc.constantFrom<string[]>(['*'], ['read']),
    resources: fc.constantFrom<string[] | null>(null, ['doc:r0'], ['doc:r*']),
  }),
  fc.record({
    kind: fc.constant('revoke' as const),
    delegator: fc.constantFrom(...PRINCIPALS),
    delegate: fc.constantFrom(...PRINCIPALS),
  }),
);

const delegationId = (delegator: string, delegate: string): string => `dlg_${delegator}_${delegate}`;

/** Applies a change to the world (kept in step, to rebuild a principal) and to the index. */
function apply(world: World, index: PolicyIndex, change: Change): Pending {
  const work = nothing();
  if (change.kind === 'membership') {
    world.principals.find((p) => p.id === change.principal)!.groups = change.groups;
    index.putMemberships(change.principal, change.groups);
    work.memberships.add(change.principal);
  } else if (change.kind === 'nesting') {
    index.putGroup(change.group, change.group, change.parents);
    work.groups.add(change.group);
  } else if (change.kind === 'principal') {
    const p = world.principals.find((x) => x.id === change.principal)!;
    p.attributes = { team: change.team };
    p.status = change.status;
    index.putPrincipal(p.id, ixPrincipalOf(p));
    work.principals.add(p.id);
  } else if (change.kind === 'policy') {
    index.putPolicy(compilePolicy(storedPolicy(change.policy, NOW)));
    work.policies.add(change.policy.id);
  } else if (change.kind === 'delete_policy') {
    index.removePolicy(change.id);
    work.policies.add(change.id);
  } else if (change.kind === 'delegate' || change.kind === 'revoke') {
    const id = delegationId(change.delegator, change.delegate);
    index.putDelegation(
      id,
      change.kind === 'revoke' || change.delegator === change.delegate
        ? undefined
        : {
            id,
            delegatorId: change.delegator,
            delegateId: change.delegate,
            actions: change.actions,
            resources:
              change.resources?.map((r) => {
                const { type, identifier } = resourceOf(r);
                return { type, identifier, glob: identifier.includes('*') ? compileGlob(identifier) : null };
              }) ?? null,
            expiresAt: NOW + 86_400_000,
          },
    );
    work.delegations.add(id);
  } else {
    const { type, identifier } = resourceOf(change.resource);
    index.putResource(type, identifier, change.registered ? { type, identifier, attributes: {} } : undefined);
    work.resources.add(change.resource);
  }
  return work;
}

/**
 * Everyone's access before and after, compared, and then everyone's access acting for each other
 * principal (`/access?on_behalf_of=`), pair by pair in the order of delegate then delegator: what
 * the tracker must find.
 */
function everyonesDiff(before: Everyone, index: PolicyIndex): AccessDelta[] {
  const who = (id: string) => summaryOf(index, id) ?? { id, name: '', type: '' };
  const plain = PRINCIPALS.flatMap((id) => diffViews(who(id), before.own.get(id)!, accessView(index, id)));
  const delegated = PAIRS.flatMap(([agent, delegator]) =>
    diffViews(
      who(agent),
      before.delegated.get(`${agent}/${delegator}`)!,
      delegatedView(index, agent, delegator),
    ).map((d) => ({ ...d, on_behalf_of: who(delegator) })),
  );
  return [...plain, ...delegated];
}

/** Every ordered pair of two principals, delegate first. */
const PAIRS = PRINCIPALS.flatMap((a) => PRINCIPALS.filter((d) => d !== a).map((d) => [a, d] as const)).sort(
  ([a1, d1], [a2, d2]) => (a1 !== a2 ? (a1 < a2 ? -1 : 1) : d1 < d2 ? -1 : d1 > d2 ? 1 : 0),
);

interface Everyone {
  own: Map<string, ReturnType<typeof accessView>>;
  delegated: Map<string, ReturnType<typeof accessView>>;
}

const everyone = (index: PolicyIndex): Everyone => ({
  own: new Map(PRINCIPALS.map((id) => [id, accessView(index, id)])),
  delegated: new Map(PAIRS.map(([a, d]) => [`${a}/${d}`, delegatedView(index, a, d)])),
});

/** A policy created (or replaced) in the index, followed by a tracker: the changes it reports. */
async function putTracked(index: PolicyIndex, policy: PolicySpec): Promise<AccessDelta[]> {
  const work = nothing();
  work.policies.add(policy.id);
  const tracker = new AccessChangeTracker(index, work);
  await tracker.before();
  index.putPolicy(compilePolicy(storedPolicy(policy, NOW)));
  return tracker.after();
}

/** The tracker's changes without what it names them by (the expectation names nothing). */
const found = (deltas: AccessDelta[]): AccessDelta[] => deltas.map(({ named_by: _, ...d }) => d);

describe('access changes', () => {
  it('reports what moved for each principal a change reaches, and nothing that did not move', async () => {
    const world = buildWorld();
    const index = buildIndex(world, NOW);
    // u0 is in g0; pol_g0 grants g0 read on doc:r*: u0 gains read on the glob and each match.
    const before = everyone(index);
    const work = nothing();
    const tracker = new AccessChangeTracker(index, work);
    work.policies.add('pol_g0');
    await tracker.before();
    index.putPolicy(
      compilePolicy(
        storedPolicy(
          { id: 'pol_g0', effect: 'allow', groups: ['g0'], actions: ['read'], resources: ['doc:r*'] },
          NOW,
        ),
      ),
    );
    const deltas = found(await tracker.after());
    expect(deltas).to.deep.equal(everyonesDiff(before, index));
    expect(
      deltas.map((d) => `${d.principal_id} ${d.resource.identifier} +${d.actions_gained.join(',')}`),
    ).to.deep.equal(['u0 r* +read', 'u0 r0 +read']);
    // The same change again moves nothing.
    const again = new AccessChangeTracker(index, work);
    await again.before();
    expect(await again.after()).to.deep.equal([]);
  });

  it('reads, for a change of policies alone, the tools an agent may use that they name and nothing else', async () => {
    const world: World = {
      groups: [],
      principals: [
        {
          id: 'agent',
          type: 'AI_AGENT',
          name: 'agent',
          attributes: { allowed_tools: ['search', 'mail'] },
        },
      ],
      resources: [],
      policies: [
        {
          id: 'pol_mail',
          effect: 'allow',
          principals: ['agent'],
          actions: ['use'],
          resources: ['tool:mail'],
        },
        { id: 'pol_docs', effect: 'allow', principals: ['agent'], actions: ['read'], resources: ['doc:*'] },
      ],
      delegations: [],
    };
    const index = buildIndex(world, NOW);
    const before = accessView(index, 'agent');
    const deltas = await putTracked(index, {
      id: 'pol_tools',
      effect: 'allow',
      principals: ['agent'],
      actions: ['*'],
      resources: ['tool:*'],
    });
    expect(deltas).to.deep.equal(diffViews(summaryOf(index, 'agent')!, before, accessView(index, 'agent')));
    // The glob stands for the tools the agent may use, listed by another policy or not.
    expect(deltas.map((d) => `${d.resource.identifier} +${d.actions_gained.join(',')}`)).to.deep.equal([
      'mail +*',
      'search +*',
    ]);
  });

  it('reads each principal a policy selects by match apart where their access differs: agents by their tools', async () => {
    const agent = (id: string, tools: string[]) => ({
      id,
      type: 'AI_AGENT' as const,
      name: id,
      attributes: { team: 'a', allowed_tools: tools },
    });
    const world: World = {
      groups: [],
      principals: [
        agent('a1', ['search']),
        agent('a2', ['mail']),
        agent('a3', ['search']),
        { id: 'u1', type: 'USER', name: 'u1', attributes: { team: 'a' } },
        { id: 'u2', type: 'USER', name: 'u2', attributes: { team: 'b' } },
      ],
      resources: [],
      policies: [],
      delegations: [],
    };
    const index = buildIndex(world, NOW);
    const ids = world.principals.map((p) => p.id);
    const before = new Map(ids.map((id) => [id, accessView(index, id)]));
    const deltas = await putTracked(index, {
      id: 'pol_tools',
      effect: 'allow',
      match: { attributes: { team: 'a' } },
      actions: ['use'],
      resources: ['tool:*'],
    });
    expect(deltas).to.deep.equal(
      ids.flatMap((id) => diffViews(summaryOf(index, id)!, before.get(id)!, accessView(index, id))),
    );
    expect(
      deltas.map((d) => `${d.principal.id} ${d.resource.identifier} +${d.actions_gained.join(',')}`),
    ).to.deep.equal(['a1 search +use', 'a2 mail +use', 'a3 search +use', 'u1 * +use']);
  });

  it('equals the difference of everyone’s access, over random worlds and changes', async () => {
    await fc.assert(
      fc.asyncProperty(
        worldArb,
        fc.array(changeArb, { minLength: 1, maxLength: 6 }),
        async (start, changes) => {
          const world: World = structuredClone(start);
          const index = buildIndex(world, NOW);
          for (const change of changes) {
            const before = everyone(index);
            // The keys a change names are known before it is applied, as the change feed names them.
            const work = nothing();
            const tracker = new AccessChangeTracker(index, work);
            const keys = keysOf(change);
            for (const [set, id] of keys) work[set].add(id);
            await tracker.before();
            const applied = apply(world, index, change);
            expect(applied).to.deep.equal(work);
            expect(found(await tracker.after())).to.deep.equal(everyonesDiff(before, index));
          }
        },
      ),
      { numRuns: Number(process.env['ACCESS_CHANGES_RUNS'] ?? 300) },
    );
  });
});

describe('access as of an earlier step', () => {
  it('is everyone’s access now rewound by the first recorded change after it, over random worlds and changes', async () => {
    await fc.assert(
      fc.asyncProperty(
        worldArb,
        fc.array(changeArb, { minLength: 1, maxLength: 8 }),
        async (start, changes) => {
          const world: World = structuredClone(start);
          const index = buildIndex(world, NOW);
          // What was live after each step (step 0: before any change), and what each step recorded.
          const live = [everyone(index).own];
          const recorded: { step: number; delta: AccessDelta }[] = [];
          for (const [n, change] of changes.entries()) {
            const work = nothing();
            for (const [set, id] of keysOf(change)) work[set].add(id);
            const tracker = new AccessChangeTracker(index, work);
            await tracker.before();
            apply(world, index, change);
            for (const delta of await tracker.after()) recorded.push({ step: n + 1, delta });
            live.push(everyone(index).own);
          }
          for (let step = 0; step < live.length; step += 1) {
            for (const id of PRINCIPALS) {
              const firstAfter = new Map<string, EntryBefore>();
              for (const { step: at, delta } of recorded) {
                // Access acting for another is not `/access`: `as_of` leaves it out.
                if (at <= step || delta.principal_id !== id || delta.on_behalf_of) continue;
                const { type, identifier, pattern } = delta.resource;
                const key = keyOf(type, identifier, pattern === true);
                if (!firstAfter.has(key))
                  firstAfter.set(key, { type, identifier, pattern: pattern === true, before: delta.before });
              }
              const then = rewind(accessView(index, id), firstAfter);
              expect(then, `${id} after step ${step}`).to.deep.equal(live[step]!.get(id));
            }
          }
        },
      ),
      { numRuns: Number(process.env['ACCESS_CHANGES_RUNS'] ?? 300) },
    );
  });
});

describe('a principal’s access about one resource', () => {
  it('is the entries of its whole access about it, made from the policies naming it alone, over random worlds', () => {
    fc.assert(
      fc.property(worldArb, (world) => {
        const index = buildIndex(world, NOW);
        // Each resource the worlds name, and one none names.
        for (const resource of [...RESOURCES, 'doc:zz']) {
          const { type, identifier } = resourceOf(resource);
          const touched = touchedOn(index, type, identifier);
          for (const id of PRINCIPALS) {
            const about = [...accessView(index, id)].filter(
              ([, e]) =>
                e.type === type &&
                (e.pattern
                  ? globMatches(compileGlob(e.identifier), identifier)
                  : e.identifier === identifier),
            );
            const made = accessView(index, id, undefined, undefined, undefined, touched);
            expect([...made], `${id} on ${resource}`).to.deep.equal(about);
          }
        }
      }),
      { numRuns: Number(process.env['ACCESS_CHANGES_RUNS'] ?? 300) },
    );
  });
});

/** The keys a change names, before it is applied. */
function keysOf(change: Change): [keyof Pending, string][] {
  switch (change.kind) {
    case 'membership':
      return [['memberships', change.principal]];
    case 'nesting':
      return [['groups', change.group]];
    case 'principal':
      return [['principals', change.principal]];
    case 'policy':
      return [['policies', change.policy.id]];
    case 'delete_policy':
      return [['policies', change.id]];
    case 'resource':
      return [['resources', change.resource]];
    case 'delegate':
    case 'revoke':
      return [['delegations', delegationId(change.delegator, change.delegate)]];
  }
}

function buildWorld(): World {
  return {
    groups: GROUPS.map((id) => ({ id })),
    principals: PRINCIPALS.map((id, i) => ({
      id,
      type: 'USER' as const,
      name: id,
      groups: i === 0 ? ['g0'] : [],
      attributes: { team: 'a' },
    })),
    resources: [{ resource: 'doc:r0', attributes: {} }],
    policies: [],
    delegations: [],
  };
}

describe('access changes made ready to store', () => {
  /** A ready part as the store statement reads it. */
  const elementOf = (
    part: ReadyPart,
  ): {
    columns: { principals: string; principal_keys: string };
    sep: string;
    message: { part: number; parts: number | null } | null;
  } => JSON.parse(new TextDecoder().decode(part.json));
  /** The principals of a ready part, in the order it holds them. */
  const principalsOf = (part: ReadyPart): string[] => {
    const { columns, sep } = elementOf(part);
    return columns.principals.split(sep);
  };
  /** Which `access.changed` message of its cause a ready part is. */
  const messageOf = (part: ReadyPart) => elementOf(part).message;
  /** The principal keys of a ready part. */
  const keysOf = (part: ReadyPart): string[] => {
    const { columns, sep } = elementOf(part);
    return columns.principal_keys.split(sep);
  };

  /**
   * `count` principals of one group (and `others` not in it), and the watch of a batch creating a
   * policy on that group: its parts, when they are asked for, with what they are handed on to.
   */
  async function createdFor(
    count: number,
    others = 0,
  ): Promise<{ many: string[]; after: (handOn?: (parts: ReadyPart[]) => void) => Promise<ReadyPart[]> }> {
    const many = Array.from({ length: count }, (_, i) => `m${String(i).padStart(5, '0')}`);
    const rest = Array.from({ length: others }, (_, i) => `o${String(i).padStart(5, '0')}`);
    const world: World = {
      groups: [{ id: 'g0' }],
      principals: [
        ...many.map((id) => ({ id, type: 'USER' as const, name: id, groups: ['g0'], attributes: {} })),
        ...rest.map((id) => ({ id, type: 'USER' as const, name: id, groups: [], attributes: {} })),
      ],
      resources: [],
      policies: [],
      delegations: [],
    };
    const index = buildIndex(world, NOW);
    const cause = {
      id: 'evt_many',
      type: 'policy.created',
      occurred_at: new Date(NOW).toISOString(),
      actor: { type: 'client', id: 'cli_x' },
    } as unknown as ChangeEvent;
    const work = nothing();
    work.policies.add('pol_many');
    const after = await watchBatch(index, work, new Map([['policies:pol_many', cause]]), NOW);
    index.putPolicy(
      compilePolicy(
        storedPolicy(
          { id: 'pol_many', effect: 'allow', groups: ['g0'], actions: ['read'], resources: ['doc:r0'] },
          NOW,
        ),
      ),
    );
    return { many, after };
  }

  it('hands a large batch’s parts on as they are made, in order, a few thousand changes at a time', async () => {
    const { many, after } = await createdFor(12_345);
    const handed: ReadyPart[][] = [];
    const rest = await after((parts) => handed.push(parts));
    const rows = (parts: ReadyPart[]) => parts.reduce((n, p) => n + p.rows, 0);
    // 25 parts of at most 500: the first handed on alone as soon as it is made, then two pieces
    // of ten parts, and the last four answered.
    expect(handed.map(rows)).to.deep.equal([500, 5_000, 5_000]);
    expect(rows(rest)).to.equal(1_845);
    const all = [...handed.flat(), ...rest];
    expect(all.map((p) => p.rows)).to.deep.equal([...Array<number>(24).fill(500), 345]);
    expect(all.flatMap(principalsOf)).to.deep.equal(many);
    const ids = all.map((p) => p.id);
    expect(ids).to.deep.equal([...ids].sort());
    // Cut as they were read: the count of the messages is said by the last alone.
    expect(all.map(messageOf)).to.deep.equal([
      ...Array.from({ length: 24 }, (_, i) => ({ part: i + 1, parts: null })),
      { part: 25, parts: 25 },
    ]);
  });

  it('says the count of the messages in each part where they are not handed on as they are made', async () => {
    const { many, after } = await createdFor(1_234);
    const all = await after();
    expect(all.map((p) => p.rows)).to.deep.equal([500, 500, 234]);
    expect(all.map(messageOf)).to.deep.equal([
      { part: 1, parts: 3 },
      { part: 2, parts: 3 },
      { part: 3, parts: 3 },
    ]);
    expect(all.flatMap(principalsOf)).to.deep.equal(many);
  });

  it('keys the parts of a cause reaching a large share of the principals by prefixes, and the others by principal', async () => {
    // 1,234 of 1,334: a few prefixes a part, each that of neighbours in id order.
    const wide = await (await createdFor(1_234, 100)).after();
    for (const part of wide) {
      const keys = keysOf(part);
      expect(keys.length).to.be.within(1, PRINCIPAL_KEYS_PER_PART);
      for (const id of principalsOf(part))
        expect(
          keys.some((k) => k.endsWith('*') && id.startsWith(k.slice(0, -1))),
          id,
        ).to.equal(true);
    }
    // 300 of 1,300: the last six characters of each principal's id.
    const { many, after } = await createdFor(300, 1_000);
    const [narrow] = await after();
    expect(keysOf(narrow!)).to.deep.equal([...new Set(many.map((id) => id.slice(-6)))]);
  });
});

describe('principal keys of a part', () => {
  const ULID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  /** Principal ids drawn close together, as a cause reaching neighbours in id order has them. */
  const idsArb = fc
    .tuple(
      fc.integer({ min: 0, max: 30 }),
      fc.array(fc.nat({ max: 32 ** 4 - 1 }), { minLength: 1, maxLength: 300 }),
    )
    .map(([shared, tails]) =>
      tails.map((tail, i) => {
        const digits = Array.from(
          { length: 26 },
          (_, k) => ULID[(tail * 7 + k * 13 + i * (k < shared ? 0 : 1)) % 32],
        );
        for (let k = 0; k < Math.min(shared, 26); k += 1) digits[k] = ULID[k % 32]!;
        return `prn_${digits.join('')}`;
      }),
    );

  it('gives every principal of the part a key, at most the cap of them, each as long as the cap allows', () => {
    fc.assert(
      fc.property(idsArb, (ids) => {
        const keys = principalKeys(ids);
        expect(keys.length).to.be.at.most(PRINCIPAL_KEYS_PER_PART);
        expect(new Set(keys).size).to.equal(keys.length);
        for (const key of keys) expect(key.endsWith('*')).to.equal(true);
        const prefixes = keys.map((k) => k.slice(0, -1));
        for (const id of ids)
          expect(
            prefixes.some((p) => id.startsWith(p)),
            id,
          ).to.equal(true);
        const distinct = [...new Set(ids)];
        if (distinct.length <= PRINCIPAL_KEYS_PER_PART) {
          expect([...keys].sort()).to.deep.equal(distinct.map((id) => `${id}*`).sort());
        } else {
          // One character longer would take more keys than the cap.
          const length = prefixes[0]!.length;
          expect(prefixes.every((p) => p.length === length)).to.equal(true);
          expect(new Set(distinct.map((id) => id.slice(0, length + 1))).size).to.be.above(
            PRINCIPAL_KEYS_PER_PART,
          );
        }
      }),
    );
  });

  it('is found by the search for each of its principals, and the search for another finds only keys it shares', () => {
    fc.assert(
      fc.property(idsArb, idsArb, (ids, others) => {
        const keys = principalKeys(ids);
        const tokens = (id: string): string[] =>
          [...principalSearch(id).matchAll(/principal_keys:"([^"]*)"/g)].map((m) => m[1]!);
        for (const id of ids)
          expect(
            keys.some((k) => tokens(id).includes(k)),
            id,
          ).to.equal(true);
        for (const other of others) {
          const found = keys.filter((k) => tokens(other).includes(k));
          for (const k of found) expect(other.startsWith(k.slice(0, -1))).to.equal(true);
        }
      }),
    );
  });
});
