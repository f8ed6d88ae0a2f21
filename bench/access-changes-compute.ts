/**
 * What computing access changes costs on its own, without Neo4j or HTTP (docs/access-history.md,
 * Costs): the work of the thread that records them, timed apart from the store.
 *
 * An index of BENCH_REACH principals (50,000) in departments of 20; each department is granted
 * BENCH_HELD resources (8) by policies of its own, which every principal holds beside the change.
 * With BENCH_WORLD=org, the graph of `npm run bench:access-history` instead: the organisation of
 * `generateOrg` (BENCH_PRINCIPALS, 100,000: people, service accounts, keys and agents, in nested
 * groups), each group granted BENCH_HELD resources, the change selecting the first BENCH_REACH.
 * Then, BENCH_ROUNDS times (5), a policy that selects them (by `match`, or with
 * BENCH_SUBJECT=group, departments only, through a group holding every department) is created,
 * then deleted: one cause each, whose changes are computed from the index and cut into parts ready
 * to store, handed on as the recorder's thread hands them (src/access-history/compute.ts).
 * Reported: changes/s of each, and when the first parts were handed on (the store's first wait),
 * and their medians.
 *
 *   npm run bench:access-changes-compute
 *
 * A CPU profile: `node --import tsx --cpu-prof --cpu-prof-dir=<dir> bench/access-changes-compute.ts`.
 */
import { performance } from 'node:perf_hooks';
import { watchBatch } from '../src/access-history/compute.js';
import type { ReadyPart } from '../src/access-history/repository.js';
import { nothing } from '../src/decisions/apply.js';
import { compilePolicy } from '../src/decisions/model.js';
import type { PolicyIndex } from '../src/decisions/policy-index.js';
import type { ChangeEvent } from '../src/events/feed.js';
import { buildIndex, storedPolicy } from '../src/policy-cases/world.js';
import type { PolicySpec, World } from '../src/policy-cases/format.js';
import { benchMain, env, fmt, log, median } from './harness.js';
import { generateOrg } from './org.js';

const REACH = env('BENCH_REACH', 50_000);
const HELD = env('BENCH_HELD', 8);
const ROUNDS = Math.max(1, env('BENCH_ROUNDS', 5));
const SUBJECT = process.env['BENCH_SUBJECT'] === 'group' ? 'group' : 'match';
const DEPARTMENT = 20;
const WORLD = process.env['BENCH_WORLD'] === 'org' ? 'org' : 'departments';
const PRINCIPALS = Math.max(REACH, env('BENCH_PRINCIPALS', 100_000));

/** The graph `bench/access-history.ts` loads, as a world: `generateOrg`, each group granted HELD resources. */
function orgWorld(now: number): World {
  const org = generateOrg({ principals: PRINCIPALS, groups: Math.ceil(PRINCIPALS / 20), seed: 34, now });
  const groupsOf = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, value: string): void => {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  };
  for (const m of org.memberships) add(groupsOf, m.memberId, m.groupId);
  const parents = new Map<string, string[]>();
  for (const n of org.nesting) add(parents, n.memberId, n.groupId);
  return {
    groups: org.groups.map((g) => ({ id: g.id, parents: parents.get(g.id) ?? [] })),
    principals: org.principals.map((p, i) => ({
      id: p.id,
      type: p.type,
      name: p.name,
      attributes: { ...p.attributes, reach: i < REACH ? 'yes' : 'no' },
      groups: groupsOf.get(p.id) ?? [],
    })),
    resources: [],
    policies: org.groups.map((g) => ({
      id: `pol_${g.id}`,
      effect: 'allow' as const,
      groups: [g.id],
      actions: ['read', 'write'],
      resources: Array.from({ length: HELD }, (_, r) => `doc:${g.id}-${r}`),
    })),
    delegations: [],
  };
}

function world(now: number): World {
  if (WORLD === 'org') return orgWorld(now);
  const departments = Math.ceil(REACH / DEPARTMENT);
  const groups = Array.from({ length: departments }, (_, d) => ({
    id: `dep${d}`,
    parents: SUBJECT === 'group' ? ['everyone'] : [],
  }));
  const principals = Array.from({ length: REACH }, (_, i) => ({
    id: `p${String(i).padStart(6, '0')}`,
    type: 'USER' as const,
    name: `principal ${i}`,
    groups: [`dep${Math.floor(i / DEPARTMENT)}`],
    attributes: { reach: 'yes' },
  }));
  const policies: PolicySpec[] = groups.map((g, d) => ({
    id: `pol_dep${d}`,
    effect: 'allow',
    groups: [g.id],
    actions: ['read', 'write'],
    resources: Array.from({ length: HELD }, (_, r) => `doc:dep${d}-${r}`),
  }));
  return {
    groups: [...(SUBJECT === 'group' ? [{ id: 'everyone' }] : []), ...groups],
    principals,
    resources: [],
    policies,
    delegations: [],
  };
}

const reaching: PolicySpec = {
  id: 'pol_reach',
  effect: 'allow',
  ...(SUBJECT === 'group' ? { groups: ['everyone'] } : { match: { attributes: { reach: 'yes' } } }),
  actions: ['read'],
  resources: ['doc:shared'],
};

/** One cause through the tracker: `change` applies it to the index between before and after. */
async function recordOne(
  index: PolicyIndex,
  type: 'policy.created' | 'policy.deleted',
  change: () => void,
  now: number,
): Promise<{ seconds: number; changes: number; firstSeconds: number }> {
  const cause = {
    id: `evt_${type}_${performance.now()}`,
    type,
    occurred_at: new Date(now).toISOString(),
    actor: { type: 'client', id: 'cli_bench' },
  } as unknown as ChangeEvent;
  const work = nothing();
  work.policies.add(reaching.id);
  const started = performance.now();
  const after = await watchBatch(index, work, new Map([[`policies:${reaching.id}`, cause]]), now);
  change();
  let changes = 0;
  let firstSeconds: number | undefined;
  const count = (parts: readonly ReadyPart[]): void => {
    firstSeconds ??= (performance.now() - started) / 1000;
    for (const p of parts) changes += p.rows;
  };
  count(await after(count));
  const seconds = (performance.now() - started) / 1000;
  return { seconds, changes, firstSeconds: firstSeconds ?? seconds };
}

async function main(): Promise<void> {
  // The organisation's groups are its own: none holds every department for a policy to name.
  if (WORLD === 'org' && SUBJECT === 'group')
    throw new Error('BENCH_SUBJECT=group takes the departments world (leave BENCH_WORLD unset)');
  const now = Date.now();
  log(
    WORLD === 'org'
      ? `the organisation of ${PRINCIPALS} principals, each group granted ${HELD} resources, the change reaching ${REACH} by ${SUBJECT}`
      : `${REACH} principals, ${HELD} resources held each beside the change, the change by ${SUBJECT}`,
  );
  const index = buildIndex(world(now), now);
  const rates: Record<string, number[]> = { created: [], deleted: [] };
  const firsts: Record<string, number[]> = { created: [], deleted: [] };
  for (let round = 0; round <= ROUNDS; round += 1) {
    const created = await recordOne(
      index,
      'policy.created',
      () => index.putPolicy(compilePolicy(storedPolicy(reaching, now))),
      now,
    );
    const deleted = await recordOne(index, 'policy.deleted', () => index.removePolicy(reaching.id), now);
    for (const [name, r] of [
      ['created', created],
      ['deleted', deleted],
    ] as const) {
      // A change that moved nothing measured nothing.
      if (r.changes === 0) throw new Error(`the policy ${name} moved no access: nothing was measured`);
      const rate = r.changes / r.seconds;
      log(
        `${round === 0 ? 'warm-up' : `round ${round}`}: ${name} ${r.changes} changes in ${fmt(r.seconds)} s: ${Math.round(rate)}/s, the first handed on after ${fmt(r.firstSeconds)} s`,
      );
      if (round > 0) rates[name]!.push(rate);
      if (round > 0) firsts[name]!.push(r.firstSeconds);
    }
  }
  for (const [name, list] of Object.entries(rates)) {
    log(
      `${name}: median ${Math.round(median(list))} changes/s over ${list.length} rounds, the first handed on after ${fmt(median(firsts[name]!))} s`,
    );
  }
}

benchMain(main);
