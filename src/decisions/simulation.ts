import type { Static } from '@sinclair/typebox';
import type { SimulationResultSchema } from '../schemas/policies.js';
import { conflict, validationFailed } from '../errors/errors.js';
import { bodyFields, checkPolicyBody, type Policy, type PolicyBody } from '../policies/model.js';
import type { SimulateBody, SimulateNewBody } from '../schemas/policies.js';
import { newId } from '../ids.js';
import type { DecisionRequest } from '../schemas/decisions.js';
import { ThreadLost } from '../threads/thread.js';
import { timeSlices } from '../time.js';
import { candidatesOf, entryFor, toolFilter, type Candidate } from './access.js';
import { clock, grantOf, inEffect, registeredMatching, settleFor } from './access-service.js';
import { coveringPolicies, decide, type Overlay } from './engine.js';
import type { PolicyIndex } from './policy-index.js';
import { compilePolicy, type IxPolicy } from './model.js';

/** Changes listed at most; the summary counts them all. */
export const MAX_LISTED_CHANGES = 10_000;

export interface SimulationInput {
  /** The policy as stored. */
  current: Policy;
  /** A checked body replacing it, `null` to simulate its deletion, undefined to make it active. */
  proposed: PolicyBody | null | undefined;
  requests?: readonly DecisionRequest[] | undefined;
}

export type SimulationResult = Static<typeof SimulationResultSchema>;
/** How one principal's access to one resource changes. */
export type AccessChange = NonNullable<SimulationResult['access_changes']>[number];

/** The proposed policy compiled as it would be stored (id and bookkeeping kept). */
function proposedPolicy(current: Policy, proposed: PolicyBody | null | undefined): IxPolicy | null {
  if (proposed === null) return null;
  if (proposed === undefined) return compilePolicy({ ...current, status: 'active' });
  return compilePolicy({
    ...current,
    ...bodyFields(proposed),
    version: current.version + 1,
  });
}

/**
 * What a change to one policy would do (docs/api.md §5.5), on an overlay of the decision index:
 * nothing is written and the index itself is untouched. With requests, each is decided both
 * ways. Without, the blast radius: every principal the current or the proposed policy selects,
 * on every resource either names (exactly, by glob pattern, and each registered resource a glob
 * matches), with the actions gained and lost.
 */
export async function simulate(index: PolicyIndex, input: SimulationInput): Promise<SimulationResult> {
  const { current } = input;
  const proposed = proposedPolicy(current, input.proposed);
  const overlay = new Map([[current.id, proposed]]);
  const before =
    index.policies.get(current.id) ?? (current.status === 'active' ? compilePolicy(current) : null);
  // The index may not hold the stored version yet (another instance wrote it a moment ago):
  // the comparison is against what is stored.
  const baseOverlay = new Map([[current.id, before?.active ? before : null]]);

  // A blast radius over thousands of principals takes a while: other requests are served between
  // slices of it.
  const turn = timeSlices();
  if (input.requests) {
    const results = [];
    for (const request of input.requests) {
      await turn();
      const was = decide(index, request, { overlay: baseOverlay }).allowed;
      const will = decide(index, request, { overlay }).allowed;
      results.push({
        request,
        current: was ? ('ALLOW' as const) : ('DENY' as const),
        simulated: will ? ('ALLOW' as const) : ('DENY' as const),
        changed: was !== will,
      });
    }
    const changed = results.filter((r) => r.changed);
    return {
      policy_id: current.id,
      results,
      summary: {
        evaluated: results.length,
        changed: changed.length,
        newly_allowed: changed.filter((r) => r.simulated === 'ALLOW').length,
        newly_denied: changed.filter((r) => r.simulated === 'DENY').length,
        principals_affected: new Set(changed.map((r) => r.request.principal_id)).size,
      },
    };
  }

  // What grants now, as a decision now would see it: a version whose window is not open (the
  // proposed one included) grants nothing, and neither does any other policy outside its window.
  const now = clock();
  const versions = [before?.active ? before : null, proposed?.active ? proposed : null].filter(
    (p): p is IxPolicy => p !== null,
  );
  const scope = changeScope(index, versions, baseOverlay, overlay, now);
  const changes: AccessChange[] = [];
  let evaluated = 0;
  for (const pid of scope.principals) {
    await turn();
    evaluated += principalChanges(index, pid, scope, changes);
  }
  changes.sort(
    (x, y) =>
      cmp(x.principal.name, y.principal.name) ||
      cmp(x.principal_id, y.principal_id) ||
      cmp(x.resource.type, y.resource.type) ||
      cmp(x.resource.identifier, y.resource.identifier),
  );
  return {
    policy_id: current.id,
    access_changes: changes.slice(0, MAX_LISTED_CHANGES),
    ...(changes.length > MAX_LISTED_CHANGES ? { truncated: true as const } : {}),
    summary: {
      evaluated,
      changed: changes.length,
      newly_allowed: changes.filter((c) => c.gained.length > 0).length,
      newly_denied: changes.filter((c) => c.lost.length > 0).length,
      principals_affected: new Set(changes.map((c) => c.principal_id)).size,
    },
  };
}

/**
 * What a change of policies reaches: the principals its versions select, the resources they
 * name (and the registered ones their globs match) grouped by the policies covering them before
 * and after, and how to tell whether a version selects a principal.
 */
export interface ChangeScope {
  principals: ReadonlySet<string>;
  groups: readonly { was: readonly IxPolicy[]; will: readonly IxPolicy[]; resources: Candidate[] }[];
  selects(policy: IxPolicy, id: string): boolean;
}

/**
 * The scope of replacing policies: `versions` are the changed policies as they are and as they
 * would be (either side may be missing), `baseOverlay` and `overlay` the index seen before and
 * after. Versions not in effect at `now` grant nothing. `only` narrows the principals looked at
 * to those the caller knows are the only ones the change touches.
 */
export function changeScope(
  index: PolicyIndex,
  versions: readonly IxPolicy[],
  baseOverlay: Overlay,
  overlay: Overlay,
  now: () => number,
  only?: ReadonlySet<string>,
  /**
   * Whose resources are looked at: every version's (`any`, what a simulation lists, losses to a
   * deny included), or only the allows' (`allow`: enough to find what a change gains).
   */
  effects: 'allow' | 'any' = 'any',
): ChangeScope {
  const live = (policies: readonly IxPolicy[]): IxPolicy[] => policies.filter((p) => inEffect(p, now));
  const inEffectNow = live(versions);
  // Subject sets of the changed versions, computed once (a proposed one is not in the index, so
  // the index could not remember it).
  const sets = new Map<IxPolicy, ReadonlySet<string>>();
  const principals = new Set<string>();
  for (const v of inEffectNow) {
    const set = only
      ? new Set([...only].filter((id) => v.principals.has(id) || index.selects(v, id)))
      : index.subjectsOf(v);
    sets.set(v, set);
    for (const id of set) principals.add(id);
  }
  const selects = (policy: IxPolicy, id: string): boolean =>
    sets.get(policy)?.has(id) ?? index.selects(policy, id);
  // Resources covered by the same policies, before and after, get the same entries: each group
  // is worked out once per principal (a glob matching a thousand registered resources is one).
  const groups = new Map<
    string,
    { was: readonly IxPolicy[]; will: readonly IxPolicy[]; resources: Candidate[] }
  >();
  for (const resource of candidatesOf(inEffectNow.map(grantOf), registeredMatching(index), effects)) {
    const was = live(coveringPolicies(index, resource.type, resource.identifier, baseOverlay));
    const will = live(coveringPolicies(index, resource.type, resource.identifier, overlay));
    const key = `${resource.pattern ? 'p' : 'r'}${was.map((x) => x.id).join()}|${will.map((x) => `${x.id}.${x.version}`).join()}`;
    const group = groups.get(key);
    if (group) group.resources.push(resource);
    else groups.set(key, { was, will, resources: [resource] });
  }
  return { principals, groups: [...groups.values()], selects };
}

/**
 * How one principal's access changes within a scope, added to `changes`; returns the number of
 * resources looked at. A principal that is unknown or not active has no access either way.
 */
export function principalChanges(
  index: PolicyIndex,
  pid: string,
  scope: ChangeScope,
  changes: AccessChange[],
): number {
  const p = index.principalView(pid);
  if (!p || p.status !== 'active') return 0;
  const tools = toolFilter(p);
  let evaluated = 0;
  for (const group of scope.groups) {
    evaluated += group.resources.length;
    const was = settleFor(index, p, group.was.filter((policy) => scope.selects(policy, pid)).map(grantOf));
    const will = settleFor(index, p, group.will.filter((policy) => scope.selects(policy, pid)).map(grantOf));
    if (was.length === 0 && will.length === 0) continue;
    const a = entryFor(group.resources[0]!, was);
    const b = entryFor(group.resources[0]!, will);
    for (const resource of group.resources) {
      const at = { resource, ...(resource.pattern ? { pattern: true as const } : {}) };
      const had = a && tools({ ...a, ...at }) ? a.actions : [];
      const has = b && tools({ ...b, ...at }) ? b.actions : [];
      const gained = has.filter((x) => !had.includes(x));
      const lost = had.filter((x) => !has.includes(x));
      if (gained.length === 0 && lost.length === 0) continue;
      changes.push({
        principal_id: p.id,
        principal: { id: p.id, name: p.name, type: p.type, email: p.email },
        resource: {
          type: resource.type,
          identifier: resource.identifier,
          ...(resource.pattern ? { pattern: true as const } : {}),
        },
        gained,
        lost,
      });
    }
  }
  return evaluated;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Where simulations run off the event loop (src/decisions/decision-thread.ts): undefined when no
 * thread can take one; rejects with `ThreadLost` when the thread stops first.
 */
export interface SimulationThreads {
  simulate(input: SimulationInput): Promise<SimulationResult> | undefined;
}

/** Simulation of a stored policy: the request side of docs/api.md §5.5. */
export class SimulationService {
  constructor(
    /** Where the policy simulated is read: its owner (src/policies/service.ts). */
    private readonly policies: { get(id: string): Promise<Policy> },
    private readonly index: PolicyIndex,
    /** Where simulations run, when there are decision threads (src/decisions/decision-thread.ts). */
    private readonly threads?: SimulationThreads,
  ) {}

  async simulate(id: string, body: SimulateBody): Promise<SimulationResult> {
    if (body.policy !== undefined && body.delete !== undefined) {
      throw validationFailed('a simulation changes the policy one way', [
        { pointer: '/delete', message: 'cannot be given with policy: simulate a replacement or a deletion' },
      ]);
    }
    const current = await this.policies.get(id);
    if (current.status === 'deleted') throw conflict(`policy ${id} is deleted`);
    const proposed = body.delete ? null : body.policy ? checkPolicyBody(body.policy, '/policy') : undefined;
    return await this.run({ current, proposed, requests: body.requests });
  }

  /**
   * A policy not created yet, simulated as if it were: against a draft of the same body, which
   * grants nothing now, so the blast radius is all the creation would add. Nothing is written and
   * the id the draft carries is never shown.
   */
  async simulateNew(body: SimulateNewBody): Promise<SimulationResult> {
    const proposed = checkPolicyBody(body.policy, '/policy');
    const at = new Date().toISOString();
    const draft: Policy = {
      ...bodyFields(proposed),
      id: newId('policy'),
      status: 'draft',
      version: 1,
      activated_at: null,
      created_at: at,
      created_by: 'simulation',
      updated_at: at,
      updated_by: 'simulation',
    };
    const { policy_id: _unused, ...result } = await this.run({
      current: draft,
      proposed,
      requests: body.requests,
    });
    return result;
  }

  private async run(input: SimulationInput): Promise<SimulationResult> {
    try {
      const onThread = this.threads?.simulate(input);
      if (onThread) return await onThread;
    } catch (err) {
      if (!(err instanceof ThreadLost)) throw err;
    }
    return await simulate(this.index, input);
  }
}
