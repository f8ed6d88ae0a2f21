import { expect } from 'chai';
import fc from 'fast-check';
import { accessEntries, entryFor } from '../../src/decisions/access.js';
import { grantsOf, settleFor } from '../../src/decisions/access-service.js';
import { decide, type AccessRequest } from '../../src/decisions/engine.js';
import type { PolicyIndex } from '../../src/decisions/policy-index.js';
import { whyNot } from '../../src/decisions/why-not.js';
import { globMatches, type Glob } from '../../src/policies/patterns.js';
import type { Remedy, RemedyStep } from '../../src/schemas/decisions.js';
import { buildIndex, type World } from '../helpers/engine-cases.js';
import { smallWorld } from '../helpers/small-worlds.js';

/**
 * Remedies of denied decisions on random small worlds (nested groups, `match` subjects, globs,
 * denies, windows open, closed and ahead, conditions on the principal): each remedy, applied to
 * the world as a client would apply it and decided again, lets the request through, and its
 * blast radius is what comparing everyone's effective access before and after the change finds.
 */

const NOW = Date.now();
const PRINCIPALS = ['u0', 'u1', 'u2', 'u3'];
const GROUPS = ['g0', 'g1', 'g2'];
const RESOURCES = ['doc:r0', 'doc:r1', 'doc:r2', 'doc:r3'];

const worldArb: fc.Arbitrary<World> = smallWorld(
  { principals: PRINCIPALS, groups: GROUPS, resources: RESOURCES },
  NOW,
  { maxPolicies: 6 },
);

const requestArb: fc.Arbitrary<AccessRequest> = fc
  .record({
    principal: fc.constantFrom(...PRINCIPALS),
    action: fc.constantFrom('read', 'write'),
    resource: fc.constantFrom('r0', 'r1', 'r2', 'r3'),
  })
  .map(({ principal, action, resource }) => ({
    principal_id: principal,
    action,
    resource: { type: 'doc', identifier: resource },
  }));

/** The world with a remedy applied as a client would apply it: its change, then each of `also`. */
function applied(w: World, remedy: Remedy | RemedyStep): World {
  const next = appliedOne(w, remedy);
  return ('also' in remedy ? (remedy.also ?? []) : []).reduce(appliedOne, next);
}

function appliedOne(w: World, remedy: Remedy | RemedyStep): World {
  const next: World = structuredClone(w);
  if (remedy.kind === 'add_to_group') {
    const p = next.principals.find((x) => x.id === remedy.change.member_id)!;
    p.groups = [...(p.groups ?? []), remedy.target.id];
  } else if (remedy.kind === 'add_to_policy') {
    next.policies.find((x) => x.id === remedy.target.id)!.principals = remedy.change.subjects.principals;
  } else if (remedy.kind === 'extend_window') {
    const policy = next.policies.find((x) => x.id === remedy.target.id)!;
    delete policy.valid_from;
    delete policy.valid_until;
    if (remedy.change.valid_from !== null) policy.valid_from = remedy.change.valid_from;
    if (remedy.change.valid_until !== null) policy.valid_until = remedy.change.valid_until;
  } else throw new Error(`no ${remedy.kind} remedy is expected here`);
  return next;
}

/**
 * Everyone's effective access: principal → resource → actions, over the entries the access
 * endpoint shows and every glob an allow of the world names (each glob one resource, as a
 * simulation lists it), with the policies that reach each principal now.
 */
function everyonesAccess(
  world: World,
  index: PolicyIndex,
): Map<string, { access: Map<string, Set<string>>; policies: Set<string> }> {
  const registered = (type: string, glob: Glob): string[] =>
    [...index.registeredOf(type)].map((r) => r.identifier).filter((id) => globMatches(glob, id));
  const globs = [
    ...new Set(world.policies.filter((p) => p.effect === 'allow').flatMap((p) => p.resources)),
  ].filter((r) => r.includes('*'));
  const out = new Map<string, { access: Map<string, Set<string>>; policies: Set<string> }>();
  for (const p of index.principals.values()) {
    const grants = grantsOf(index, p);
    const settled = settleFor(index, p, grants);
    const entries = accessEntries(settled, registered, p);
    for (const glob of globs) {
      const [type, identifier] = [glob.slice(0, glob.indexOf(':')), glob.slice(glob.indexOf(':') + 1)];
      const entry = entryFor({ type, identifier, pattern: true }, settled);
      if (entry && !entries.some((e) => e.pattern && e.resource.identifier === identifier))
        entries.push(entry);
    }
    out.set(p.id, {
      access: new Map(
        entries.map((e) => [
          `${e.pattern ? 'p' : 'r'}${e.resource.type}:${e.resource.identifier}`,
          new Set(e.actions),
        ]),
      ),
      policies: new Set(grants.map((g) => g.policyId)),
    });
  }
  return out;
}

/**
 * Who gains what from one world to the next, counted as a blast radius is: the principals other
 * than the one let through that gain an action, and the resources other than the requested one
 * that anyone gains an action on. A glob counts as a resource when the change brings it (an allow
 * changed, or newly reaching the principal, names it); another policy's glob that a wider one now
 * covers is not a resource of its own.
 */
function gains(
  before: { world: World; index: PolicyIndex },
  after: { world: World; index: PolicyIndex },
  principalId: string,
  requested: string,
) {
  const was = everyonesAccess(before.world, before.index);
  const changed = new Set(
    after.world.policies
      .filter((p) => JSON.stringify(p) !== JSON.stringify(before.world.policies.find((q) => q.id === p.id)))
      .map((p) => p.id),
  );
  const principals = new Set<string>();
  const resources = new Set<string>();
  for (const [pid, now] of everyonesAccess(after.world, after.index)) {
    const previous = was.get(pid);
    const brought = new Set(
      after.world.policies
        .filter(
          (p) =>
            p.effect === 'allow' &&
            now.policies.has(p.id) &&
            (changed.has(p.id) || !previous?.policies.has(p.id)),
        )
        .flatMap((p) => p.resources.filter((r) => r.includes('*')).map((r) => `p${r}`)),
    );
    for (const [resource, actions] of now.access) {
      if (resource.startsWith('p') && !brought.has(resource)) continue;
      const had = previous?.access.get(resource) ?? new Set<string>();
      if (![...actions].some((a) => !had.has(a))) continue;
      if (pid !== principalId) principals.add(pid);
      if (resource !== `r${requested}`) resources.add(resource);
    }
  }
  return { principals: principals.size, resources: resources.size };
}

describe('why not: remedies on random worlds', () => {
  it('every remedy offered lets the request through, with the blast radius the change has', function () {
    this.timeout(120_000);
    let offered = 0;
    let together = 0;
    fc.assert(
      fc.property(worldArb, requestArb, (w, request) => {
        const index = buildIndex(w, NOW);
        const verdict = decide(index, request, { explain: true });
        fc.pre(!verdict.allowed);
        const { near_misses: misses, remedies } = whyNot(index, request, verdict, NOW);
        expect(remedies.length).to.be.at.most(5);
        for (const miss of misses) {
          const policy = w.policies.find((p) => p.id === miss.policy_id)!;
          expect(policy.effect).to.equal('allow');
        }
        for (const remedy of remedies) {
          const label = JSON.stringify({ remedy, request, world: w });
          if (remedy.kind === 'none') {
            expect(
              verdict.reasons.map((r) => r.policy_id),
              label,
            ).to.include(remedy.target.id);
            continue;
          }
          offered += 1;
          if ('also' in remedy && remedy.also) together += 1;
          const next = applied(w, remedy);
          const changed = buildIndex(next, NOW);
          expect(decide(changed, request).allowed, label).to.equal(true);
          const requested = `${request.resource.type}:${request.resource.identifier}`;
          expect(remedy.blast_radius, label).to.deep.equal(
            gains({ world: w, index }, { world: next, index: changed }, remedy.principal_id, requested),
          );
        }
        // Fewest other grants first.
        const radii = remedies.map((r) => [r.blast_radius.principals, r.blast_radius.resources]);
        const sorted = [...radii].sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
        expect(radii).to.deep.equal(sorted);
      }),
      { numRuns: 300 },
    );
    // The worlds are not so sparse that the property says nothing.
    expect(offered).to.be.greaterThan(50);
    expect(together, 'remedies of two changes').to.be.greaterThan(0);
  });
});
