import fc from 'fast-check';
import { resolveTime, type PolicySpec, type World } from './engine-cases.js';

/**
 * Random policies over a small world, for the property tests of what the index derives from
 * policies (remedies, access changes): allows and some denies, named principals, groups and
 * `match` subjects on a `team` attribute, exact resources and globs, windows open, closed and
 * ahead, and conditions on the principal's team.
 */
export function smallPolicy(
  id: string,
  world: { principals: readonly string[]; groups: readonly string[]; resources: readonly string[] },
  now: number,
): fc.Arbitrary<PolicySpec> {
  const subset = <T>(items: readonly T[]) => fc.subarray([...items]);
  const type = world.resources[0]!.slice(0, world.resources[0]!.indexOf(':'));
  return fc
    .record({
      deny: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      principals: subset(world.principals),
      groups: subset(world.groups),
      match: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
      actions: fc.constantFrom(['read'], ['write'], ['read', 'write'], ['*']),
      resources: fc.oneof(
        subset(world.resources).filter((r) => r.length > 0),
        fc.constant([`${type}:r*`]),
        fc.constant([`${type}:*`]),
      ),
      window: fc.constantFrom('none', 'none', 'closed', 'ahead'),
      teamCondition: fc.option(fc.constantFrom('a', 'b'), { nil: undefined, freq: 4 }),
    })
    .filter((r) => r.principals.length > 0 || r.groups.length > 0 || r.match !== undefined)
    .map((r): PolicySpec => ({
      id,
      effect: r.deny ? 'deny' : 'allow',
      ...(r.principals.length > 0 ? { principals: r.principals } : {}),
      ...(r.groups.length > 0 ? { groups: r.groups } : {}),
      ...(r.match ? { match: { attributes: { team: r.match } } } : {}),
      actions: [...r.actions],
      resources: [...r.resources],
      ...(r.teamCondition ? { conditions: { 'principal.attributes.team': r.teamCondition } } : {}),
      ...(r.window === 'closed'
        ? { valid_from: resolveTime('now-2d', now), valid_until: resolveTime('now-1h', now) }
        : r.window === 'ahead'
          ? { valid_from: resolveTime('now+1h', now) }
          : {}),
    }));
}

/**
 * A random small world: principals with a `team` attribute in random groups (nested in a chain,
 * or not), registered resources (all of them, or a random few with `someRegistered`) and 1 to
 * `maxPolicies` policies from `smallPolicy`.
 */
export function smallWorld(
  names: { principals: readonly string[]; groups: readonly string[]; resources: readonly string[] },
  now: number,
  options: { maxPolicies: number; someRegistered?: boolean },
): fc.Arbitrary<World> {
  const { principals, groups, resources } = names;
  const subset = <T>(items: readonly T[]) => fc.subarray([...items]);
  return fc
    .record({
      nested: fc.boolean(),
      members: fc.tuple(...principals.map(() => subset(groups))),
      teams: fc.tuple(...principals.map(() => fc.constantFrom('a', 'b'))),
      registered: options.someRegistered ? subset(resources) : fc.constant([...resources]),
      policies: fc
        .integer({ min: 1, max: options.maxPolicies })
        .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => smallPolicy(`pol${i}`, names, now)))),
    })
    .map(({ nested, members, teams, registered, policies }) => ({
      groups: groups.map((id, i) => ({ id, ...(nested && i > 0 ? { parents: [groups[i - 1]!] } : {}) })),
      principals: principals.map((id, i) => ({
        id,
        type: 'USER' as const,
        name: id,
        groups: members[i]!,
        attributes: { team: teams[i]! },
      })),
      resources: registered.map((resource) => ({ resource, attributes: {} })),
      policies,
      delegations: [],
    }));
}
