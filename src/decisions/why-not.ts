import { failingTest, type CompiledCondition } from '../policies/conditions.js';
import { actionMatches } from '../policies/patterns.js';
import type { Policy } from '../policies/model.js';
import type { Condition, Query } from '../principals/search/model.js';
import { compilePredicate } from '../principals/search/evaluate.js';
import type { NearMiss, Remedy, RemedyStep, TraceCandidate, TraceLink } from '../schemas/decisions.js';
import {
  actionNameOf,
  conditionInput,
  decide,
  type AccessRequest,
  type DecideOptions,
  type Verdict,
} from './engine.js';
import {
  compilePolicy,
  inWindow,
  policySource,
  type IxDelegation,
  type IxPolicy,
  type IxPrincipal,
} from './model.js';
import type { PolicyIndex } from './policy-index.js';
import { changeScope, principalChanges, type AccessChange } from './simulation.js';

/**
 * Why a request was denied, and what would let it through (docs/api.md §5.2, "Why not"): the
 * allow policies that came close, each with what stopped it first, and the smallest single
 * changes that would make the decision ALLOW, each tried on the decision index before it is
 * offered. It runs only for a DENY asked with `explain`, and reads the trace the engine made for
 * it rather than deciding again; what it tries is bounded by the constants below, so a denial
 * never walks the whole graph.
 */

/** Remedies offered at most. */
export const MAX_REMEDIES = 5;
/** Groups tried as `add_to_group` at most, over every near-miss policy. */
export const MAX_GROUPS = 8;
/** Changes simulated at most (each is one decision, and a blast radius if it lets the request through). */
const MAX_TRIES = 24;
/**
 * A window extension whose policy selects more principals than this is not offered: its blast
 * radius is a simulation of its own (§5.5), not something to compute while answering a decision.
 */
export const MAX_BLAST_SUBJECTS = 10_000;
/**
 * How long a proposed window stays open, and a proposed delegation lasts, from the decision: long
 * enough to apply the change and use it, short enough to be just-in-time access.
 */
export const REMEDY_SPAN_MS = 3_600_000;

export interface WhyNot {
  near_misses: NearMiss[];
  remedies: Remedy[];
}

/** Orders remedy kinds for ties of blast radius: the narrower kind of change first. */
const KIND_RANK: Record<Remedy['kind'], number> = {
  none: 0,
  delegate: 1,
  add_to_policy: 2,
  add_to_group: 3,
  extend_window: 4,
};

const iso = (ms: number): string => new Date(ms).toISOString();
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The near misses and remedies of a denied, explained decision (`verdict` must carry its trace). */
export function whyNot(
  index: PolicyIndex,
  request: AccessRequest,
  verdict: Verdict,
  now = Date.now(),
): WhyNot {
  const trace = verdict.trace;
  if (verdict.allowed || !trace) return { near_misses: [], remedies: [] };
  const caller = request.principal_id;
  // An unknown or inactive principal is refused before any policy is looked at: no policy came
  // close, and no policy change would let it through.
  const self = trace.principals.find((p) => p.id === caller);
  if (!self?.found || self.status !== 'active') return { near_misses: [], remedies: [] };
  // Each principal's own answer: the caller's alone without a chain.
  const verdicts = trace.verdicts ?? [{ principal_id: caller, allowed: false, reasons: verdict.reasons }];
  const denied = new Set(verdicts.filter((v) => !v.allowed).map((v) => v.principal_id));
  const uncovered = (trace.links ?? []).filter((l) => !l.covered);

  const nearMisses: NearMiss[] = [];
  for (const policy of closedWindows(index, request, now)) {
    nearMisses.push({
      policy_id: policy.id,
      policy_name: policy.name,
      principal_id: caller,
      failed: { kind: 'window', detail: windowDetail(policy, now) },
    });
  }
  const candidates = trace.candidates;
  for (const c of candidates) {
    if (c.effect !== 'allow') continue;
    const policy = index.policies.get(c.policy_id);
    if (!policy) continue;
    const failed = denied.has(c.principal_id)
      ? failureOf(index, request, policy, c, candidates)
      : c.applied && c.principal_id === caller && uncovered.length > 0
        ? delegationFailure(index, uncovered[0]!, now)
        : undefined;
    if (failed)
      nearMisses.push({ policy_id: c.policy_id, policy_name: c.name, principal_id: c.principal_id, failed });
  }

  // The policy first, then whom it was decided for, so that the list reads the same every time.
  nearMisses.sort((a, b) => cmp(a.policy_id, b.policy_id) || cmp(a.principal_id, b.principal_id));
  return { near_misses: nearMisses, remedies: remediesOf(index, request, verdict, nearMisses, now) };
}

/**
 * Allow policies naming the resource and the action (exactly or by a glob) that are bound to a
 * window not holding `now`: the engine leaves them out, so the trace does not show them.
 */
function closedWindows(index: PolicyIndex, request: AccessRequest, now: number): IxPolicy[] {
  const action = actionNameOf(request.action);
  return index
    .candidates(request.resource.type, request.resource.identifier)
    .filter(
      (p) =>
        p.effect === 'allow' &&
        (p.validFrom !== null || p.validUntil !== null) &&
        !inWindow(p, now) &&
        p.actions.some((pattern) => actionMatches(pattern, action)),
    )
    .sort((a, b) => cmp(a.id, b.id));
}

function windowDetail(
  policy: IxPolicy,
  now: number,
): Extract<NearMiss['failed'], { kind: 'window' }>['detail'] {
  const closed = policy.validUntil !== null && now >= policy.validUntil;
  const at = closed ? policy.validUntilText! : policy.validFromText!;
  return {
    message: closed
      ? `policy ${policy.name} stopped applying at ${at}`
      : `policy ${policy.name} applies only from ${at}`,
    state: closed ? 'closed' : 'not_yet_open',
    at,
    valid_from: policy.validFromText,
    valid_until: policy.validUntilText,
  };
}

/**
 * What stopped an allow candidate of a denied principal first, from its trace: its subjects, then
 * its conditions, then a deny that applied to the same principal. Undefined for an allow that
 * applied with no deny against it (the principal was refused for another reason, such as a tool
 * outside an agent's `allowed_tools`, which no policy change lifts).
 */
function failureOf(
  index: PolicyIndex,
  request: AccessRequest,
  policy: IxPolicy,
  c: TraceCandidate,
  candidates: readonly TraceCandidate[],
): NearMiss['failed'] | undefined {
  if (!c.subject.matched) return notSubject(index, policy, c.principal_id);
  if (!c.applied) {
    const outcome = c.conditions.find((o) => o.result !== 'true');
    const condition = policy.conditions?.find((x) => x.path === outcome?.path);
    const p = index.principals.get(c.principal_id);
    if (!outcome || !condition || !p) return undefined;
    return conditionFailure(
      policy,
      condition,
      conditionInput(index, p, request, actionNameOf(request.action)),
      outcome.missing,
    );
  }
  const denies = candidates
    .filter((d) => d.effect === 'deny' && d.applied && d.principal_id === c.principal_id)
    .sort((a, b) => cmp(a.policy_id, b.policy_id))
    .map((d) => ({ policy_id: d.policy_id, policy_name: d.name }));
  if (denies.length === 0) return undefined;
  return {
    kind: 'denied_by',
    detail: {
      message: `policy ${policy.name} applies, but ${denies.map((d) => `deny ${d.policy_name}`).join(' and ')} overrides it`,
      denies,
    },
  };
}

/** Why a policy does not select a principal: the groups it is not in, naming, and `match`. */
function notSubject(index: PolicyIndex, policy: IxPolicy, principalId: string): NearMiss['failed'] {
  const groups = policy.groups.map((id) => ({ id, name: index.groups.get(id)?.name ?? '' }));
  const named = policy.principals.size > 0;
  const p = index.principals.get(principalId);
  const match = policy.matchQuery && p ? failingMatch(policy.matchQuery, p) : undefined;
  const parts: string[] = [];
  if (groups.length > 0)
    parts.push(
      `it is in none of the groups ${groups.map((g) => (g.name ? `${g.name} (${g.id})` : g.id)).join(', ')}`,
    );
  if (named) parts.push('the policy names other principals by id');
  if (match) {
    parts.push(
      `match needs ${match.target} ${match.op} ${JSON.stringify(match.operand)}, and it has ${JSON.stringify(match.value)}`,
    );
  }
  return {
    kind: 'not_subject',
    detail: {
      message: `policy ${policy.name} does not select ${principalId}: ${parts.join('; ')}`,
      groups,
      named,
      ...(match ? { match } : {}),
    },
  };
}

/** The first test of a `match` query (an `and` of tests, as policies write it) the principal fails. */
function failingMatch(
  query: Query,
  p: IxPrincipal,
): { target: string; op: string; operand: unknown; value: unknown } | undefined {
  const tests: Condition[] = [];
  const collect = (q: Query): void => {
    if (q.kind === 'condition') tests.push(q);
    else if (q.kind === 'and') q.of.forEach(collect);
  };
  collect(query);
  for (const test of tests) {
    if (compilePredicate(test)(p)) continue;
    const target = 'field' in test.target ? test.target.field : `attributes.${test.target.attribute}`;
    const value =
      'field' in test.target
        ? (p as unknown as Record<string, unknown>)[test.target.field]
        : p.attributes[test.target.attribute];
    return { target, op: test.op, operand: test.operand, value: value ?? null };
  }
  return undefined;
}

/** A condition that kept an allow from applying: its operator, the operand as written, the value read. */
function conditionFailure(
  policy: IxPolicy,
  condition: CompiledCondition,
  input: Parameters<typeof failingTest>[1],
  missing: string[] | undefined,
): NearMiss['failed'] | undefined {
  const failing = failingTest(condition, input);
  if (!failing) return undefined;
  const spec = policy.conditionsSource?.[condition.path];
  const operatorObject =
    spec !== null && typeof spec === 'object' && !Array.isArray(spec) && !('$ref' in spec);
  const operand = operatorObject ? (spec as Record<string, unknown>)[failing.op] : spec;
  const value = failing.value === undefined ? null : failing.value;
  const shown = failing.value === undefined ? 'nothing' : JSON.stringify(failing.value);
  return {
    kind: 'condition',
    detail: {
      message:
        failing.result === 'false'
          ? `policy ${policy.name} needs ${condition.path} ${failing.op} ${JSON.stringify(operand)}, and the request has ${shown}`
          : `policy ${policy.name} needs ${condition.path} ${failing.op} ${JSON.stringify(operand)}, which cannot be decided: ${missing && missing.length > 0 ? `${missing.join(', ')} missing` : `the value is ${shown}`}`,
      path: condition.path,
      op: failing.op,
      operand,
      result: failing.result,
      value,
      ...(missing && missing.length > 0 ? { missing } : {}),
    },
  };
}

function delegationFailure(index: PolicyIndex, link: TraceLink, now: number): NearMiss['failed'] {
  const all = index.delegationsBetween(link.delegator_id, link.delegate_id);
  return {
    kind: 'delegation',
    detail: {
      message: `the policy applies, but ${link.why}`,
      delegator_id: link.delegator_id,
      delegate_id: link.delegate_id,
      expired: all.length > 0 && all.every((d) => d.expiresAt <= now),
    },
  };
}

// ---- remedies ----

/** A remedy without its blast radius (of each kind). */
type Proposed = Remedy extends infer R ? (R extends unknown ? Omit<R, 'blast_radius'> : never) : never;

/** A change to try: how to decide with it, and how to show it if it lets the request through. */
interface Trial {
  key: string;
  options: DecideOptions;
  /** The remedy without its blast radius. */
  remedy: Proposed;
  /** Its blast radius, worked out only once the change is known to let the request through. */
  blast(): Remedy['blast_radius'] | undefined;
}

function remediesOf(
  index: PolicyIndex,
  request: AccessRequest,
  verdict: Verdict,
  nearMisses: readonly NearMiss[],
  now: number,
): Remedy[] {
  const trace = verdict.trace!;
  // A deny that applied to the principal, or to one it acts for, outweighs any allow a change could
  // add: nothing short of removing it lets the request through, and weakening a deny is a choice
  // to be made by a person, so the remedy is `none`, naming it.
  const denies = new Map<string, TraceCandidate>();
  for (const c of trace.candidates) if (c.effect === 'deny' && c.applied) denies.set(c.policy_id, c);
  if (denies.size > 0) {
    return [...denies.values()]
      .sort((a, b) => cmp(a.policy_id, b.policy_id))
      .slice(0, MAX_REMEDIES)
      .map((d) => ({
        kind: 'none',
        target: { type: 'policy', id: d.policy_id, name: d.name, version: d.policy_version },
        change: null,
        principal_id: d.principal_id,
        message: `deny ${d.name} applies to ${d.principal_id}: only removing it would let the request through`,
        blast_radius: { principals: 0, resources: 0 },
      }));
  }

  const trials = new Map<string, Trial>();
  const add = (trial: Trial): void => {
    if (!trials.has(trial.key)) trials.set(trial.key, trial);
  };
  const groupsTried = new Set<string>();
  for (const miss of nearMisses) {
    const policy = index.policies.get(miss.policy_id);
    if (!policy) continue;
    const who = miss.principal_id;
    if (miss.failed.kind === 'not_subject') {
      add(addToPolicy(index, policy, who, request, now));
      for (const g of policy.groups) {
        if (index.groups.get(g) === undefined) continue;
        if (!groupsTried.has(g) && groupsTried.size >= MAX_GROUPS) continue;
        groupsTried.add(g);
        add(addToGroup(index, g, who, request, now));
      }
    } else if (miss.failed.kind === 'window') {
      add(extendWindow(index, policy, who, request, now));
    }
  }
  for (const link of trace.links ?? []) if (!link.covered) add(delegate(link, request, now));

  const offered: Remedy[] = [];
  let tries = 0;
  const tryAll = (some: Iterable<Trial>): void => {
    for (const trial of some) {
      if (tries >= MAX_TRIES) break;
      tries += 1;
      if (!decide(index, request, trial.options).allowed) continue;
      const blast = trial.blast();
      if (blast) offered.push({ ...trial.remedy, blast_radius: blast });
    }
  };
  tryAll(trials.values());
  if (offered.length === 0) tryAll(combined(index, request, nearMisses, trials, now));
  return offered.sort(fewestOtherGrants).slice(0, MAX_REMEDIES);
}

/**
 * Where no one change lets the request through, changes made together: a policy whose window
 * is closed, and which does not name the principal either, both named and opened; and, acting
 * for someone, each change on the subjects' side with a delegation for every link that lacks one.
 */
function combined(
  index: PolicyIndex,
  request: AccessRequest,
  nearMisses: readonly NearMiss[],
  singles: ReadonlyMap<string, Trial>,
  now: number,
): Trial[] {
  const out: Trial[] = [];
  for (const miss of nearMisses) {
    const policy = index.policies.get(miss.policy_id);
    if (!policy || miss.failed.kind !== 'window') continue;
    if (index.selects(policy, miss.principal_id)) continue;
    out.push(addToPolicyInWindow(index, policy, miss.principal_id, request, now));
  }
  const links = [...singles.values()].filter((t) => t.remedy.kind === 'delegate');
  if (links.length > 0) {
    const sides = [...singles.values()].filter((t) => t.remedy.kind !== 'delegate');
    out.push(...[...sides, ...out].map((side) => withAlso(side, links)));
  }
  return out;
}

/** `trial` with `more` made with it: a delegation hands on nothing else, so the blast radius stays. */
function withAlso(trial: Trial, more: readonly Trial[]): Trial {
  const options = [trial.options, ...more.map((t) => t.options)];
  const joins = new Map<string, string[]>();
  for (const o of options)
    for (const [id, groups] of o.joins ?? []) joins.set(id, [...(joins.get(id) ?? []), ...groups]);
  return {
    key: [trial.key, ...more.map((t) => t.key)].join('+'),
    options: {
      overlay: new Map(options.flatMap((o) => [...(o.overlay ?? [])])),
      joins,
      delegations: options.flatMap((o) => o.delegations ?? []),
    },
    remedy: {
      ...trial.remedy,
      also: [...(('also' in trial.remedy && trial.remedy.also) || []), ...more.map((t) => stepOf(t.remedy))],
    } as Proposed,
    blast: () => trial.blast(),
  };
}

/** A remedy as one step of another. */
const stepOf = (remedy: Proposed): RemedyStep => {
  const { also: _, ...step } = remedy as Proposed & { also?: unknown };
  return step as RemedyStep;
};

/** A policy naming the principal and holding now, for one whose window is closed and which names it not. */
function addToPolicyInWindow(
  index: PolicyIndex,
  policy: IxPolicy,
  principalId: string,
  request: AccessRequest,
  now: number,
): Trial {
  const named = addToPolicy(index, policy, principalId, request, now);
  const opened = extendWindow(index, policy, principalId, request, now);
  if (named.remedy.kind !== 'add_to_policy' || opened.remedy.kind !== 'extend_window') {
    throw new Error('a policy named and opened is made of those two remedies');
  }
  const changed = variant(policy, { ...named.remedy.change, ...opened.remedy.change });
  return {
    key: `policy-window:${policy.id}:${principalId}`,
    options: { overlay: new Map([[policy.id, changed]]) },
    remedy: { ...named.remedy, also: [stepOf(opened.remedy)] },
    // The window opens for every subject of the policy, not only the principal.
    blast: () => windowBlast(index, policy, changed, principalId, request, now),
  };
}

/** What a policy whose window opens grants besides the request: undefined past `MAX_BLAST_SUBJECTS`. */
const windowBlast = (
  index: PolicyIndex,
  policy: IxPolicy,
  changed: IxPolicy,
  principalId: string,
  request: AccessRequest,
  now: number,
): Remedy['blast_radius'] | undefined =>
  index.subjectRows(changed).size > MAX_BLAST_SUBJECTS
    ? undefined
    : blastRadius(index, [[policy, changed]], principalId, request, now);

/**
 * "Fewest other grants first": by the principals other than the one let through that would gain
 * access, then by the other resources anyone would gain, then the narrower kind of change, then
 * the target's id, so that the order is the same every time.
 */
export function fewestOtherGrants(a: Remedy, b: Remedy): number {
  return (
    a.blast_radius.principals - b.blast_radius.principals ||
    a.blast_radius.resources - b.blast_radius.resources ||
    KIND_RANK[a.kind] - KIND_RANK[b.kind] ||
    cmp(targetId(a), targetId(b))
  );
}

const targetId = (r: Remedy): string =>
  r.target.type === 'delegation' ? `${r.target.delegator_id}>${r.target.delegate_id}` : r.target.id;

/** A policy as it would be with some of its body replaced (its version unchanged: it is a trial). */
function variant(policy: IxPolicy, body: Partial<ReturnType<typeof policySource>>): IxPolicy {
  return compilePolicy({ ...policySource(policy), ...body }, policy.subjectSince);
}

/** The policy naming the principal as well, and the subjects that says it with. */
function namingAlso(
  policy: IxPolicy,
  principalId: string,
): { subjects: Policy['subjects']; changed: IxPolicy } {
  const source = policySource(policy);
  const subjects = { ...source.subjects, principals: [...source.subjects.principals, principalId] };
  return { subjects, changed: variant(policy, { subjects }) };
}

function addToPolicy(
  index: PolicyIndex,
  policy: IxPolicy,
  principalId: string,
  request: AccessRequest,
  now: number,
): Trial {
  const { subjects, changed } = namingAlso(policy, principalId);
  return {
    key: `policy:${policy.id}:${principalId}`,
    options: { overlay: new Map([[policy.id, changed]]) },
    remedy: {
      kind: 'add_to_policy',
      target: { type: 'policy', id: policy.id, name: policy.name, version: policy.version },
      change: { subjects },
      principal_id: principalId,
      message: `add ${principalId} to the principals of policy ${policy.name}`,
    },
    blast: () => blastRadius(index, [[policy, changed]], principalId, request, now, new Set([principalId])),
  };
}

/**
 * Joining a group is, for decisions, being named by every active policy that reaches the group
 * (naming it or a group it is nested in): the trial decides with the membership itself, the
 * blast radius simulates those policies each naming the principal. Only the principal joining
 * gains anything.
 */
function addToGroup(
  index: PolicyIndex,
  groupId: string,
  principalId: string,
  request: AccessRequest,
  now: number,
): Trial {
  const name = index.groups.get(groupId)?.name ?? '';
  return {
    key: `group:${groupId}:${principalId}`,
    options: { joins: new Map([[principalId, [groupId]]]) },
    remedy: {
      kind: 'add_to_group',
      target: { type: 'group', id: groupId, name },
      change: { member_id: principalId },
      principal_id: principalId,
      message: `add ${principalId} to group ${name || groupId}`,
    },
    blast: () => {
      const pairs: [IxPolicy, IxPolicy][] = [];
      for (const policy of index.policiesThroughGroup(groupId)) {
        if (!index.selects(policy, principalId))
          pairs.push([policy, namingAlso(policy, principalId).changed]);
      }
      return blastRadius(index, pairs, principalId, request, now, new Set([principalId]));
    },
  };
}

/** The window of a policy moved to hold `now`, and whether it had closed (else it was ahead). */
function windowAt(
  policy: IxPolicy,
  now: number,
): { window: { valid_from: string | null; valid_until: string | null }; closed: boolean } {
  const closed = policy.validUntil !== null && now >= policy.validUntil;
  const window = closed
    ? { valid_from: policy.validFromText, valid_until: iso(now + REMEDY_SPAN_MS) }
    : { valid_from: iso(now), valid_until: policy.validUntilText };
  return { window, closed };
}

const windowMessage = (
  policy: IxPolicy,
  window: { valid_from: string | null; valid_until: string | null },
  closed: boolean,
): string =>
  closed
    ? `extend policy ${policy.name} until ${window.valid_until}`
    : `open policy ${policy.name} from ${window.valid_from}`;

/**
 * A window moved to hold the decision's instant: a window that has closed stays open until
 * `REMEDY_SPAN_MS` after it, one not yet open opens at it.
 */
function extendWindow(
  index: PolicyIndex,
  policy: IxPolicy,
  principalId: string,
  request: AccessRequest,
  now: number,
): Trial {
  const { window, closed } = windowAt(policy, now);
  const changed = variant(policy, window);
  return {
    key: `window:${policy.id}`,
    options: { overlay: new Map([[policy.id, changed]]) },
    remedy: {
      kind: 'extend_window',
      target: { type: 'policy', id: policy.id, name: policy.name, version: policy.version },
      change: window,
      principal_id: principalId,
      message: windowMessage(policy, window, closed),
    },
    blast: () => windowBlast(index, policy, changed, principalId, request, now),
  };
}

/**
 * The missing link of a chain, made: a delegation of this action on this resource alone, so it
 * hands on nothing else (its blast radius is nothing).
 */
function delegate(link: TraceLink, request: AccessRequest, now: number): Trial {
  const action = actionNameOf(request.action);
  const { type, identifier } = request.resource;
  const expiresAt = now + REMEDY_SPAN_MS;
  const delegation: IxDelegation = {
    id: `dlg_remedy_${link.delegator_id}_${link.delegate_id}`,
    delegatorId: link.delegator_id,
    delegateId: link.delegate_id,
    actions: [action],
    resources: [{ type, identifier, glob: null }],
    expiresAt,
  };
  return {
    key: `delegation:${link.delegator_id}:${link.delegate_id}`,
    options: { delegations: [delegation] },
    remedy: {
      kind: 'delegate',
      target: { type: 'delegation', delegator_id: link.delegator_id, delegate_id: link.delegate_id },
      change: {
        delegator_id: link.delegator_id,
        delegate_id: link.delegate_id,
        actions: [action],
        resources: [{ type, identifier }],
        expires_at: iso(expiresAt),
      },
      principal_id: request.principal_id,
      message: `${link.delegator_id} delegates ${action} on ${type}:${identifier} to ${link.delegate_id}`,
    },
    blast: () => ({ principals: 0, resources: 0 }),
  };
}

/**
 * The blast radius of replacing policies, the way a simulation (§5.5) finds it: every principal
 * the replacements select (or only those of `only`, when the caller knows no one else is
 * touched), on every resource their allows name (exactly, each glob as one, and the registered
 * resources a glob matches), its access before and after. It counts the principals other than
 * `principalId` that gain an action anywhere, and the resources other than the requested one
 * that anyone gains an action on.
 */
export function blastRadius(
  index: PolicyIndex,
  pairs: readonly (readonly [IxPolicy, IxPolicy])[],
  principalId: string,
  request: AccessRequest,
  now: number,
  only?: ReadonlySet<string>,
): Remedy['blast_radius'] {
  const base = new Map(pairs.map(([before]) => [before.id, before]));
  const overlay = new Map(pairs.map(([before, after]) => [before.id, after]));
  const versions = pairs.flatMap(([before, after]) => [before, after]);
  // A remedy only widens what allows reach (it never takes a deny away): whatever it grants is on
  // a resource one of its allows names, so those are the resources looked at.
  const scope = changeScope(index, versions, base, overlay, () => now, only, 'allow');
  const changes: AccessChange[] = [];
  for (const id of scope.principals) principalChanges(index, id, scope, changes);
  return countGains(changes, principalId, request.resource);
}

/** The principals other than `principalId`, and the resources other than `resource`, with a gain. */
export function countGains(
  changes: readonly Pick<AccessChange, 'principal_id' | 'resource' | 'gained'>[],
  principalId: string,
  resource: { type: string; identifier: string },
): Remedy['blast_radius'] {
  const principals = new Set<string>();
  const resources = new Set<string>();
  for (const c of changes) {
    if (c.gained.length === 0) continue;
    if (c.principal_id !== principalId) principals.add(c.principal_id);
    const r = c.resource;
    if (!r.pattern && r.type === resource.type && r.identifier === resource.identifier) continue;
    resources.add(`${r.pattern ? 'p' : 'r'}${r.type}:${r.identifier}`);
  }
  return { principals: principals.size, resources: resources.size };
}
