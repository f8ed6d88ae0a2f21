import {
  evaluateConditions,
  explainConditions,
  type Claims,
  type ConditionInput,
  type ConditionOutcome,
} from '../policies/conditions.js';
import { actionMatches, globMatches } from '../policies/patterns.js';
import type { Reason, TraceCandidate, TraceLink, TracePrincipal } from '../schemas/decisions.js';
import type { PolicyIndex } from './policy-index.js';
import { inWindow, type IxDelegation, type IxPolicy, type IxPrincipal } from './model.js';

/** An action as a request names it: its name, or its name with the properties the caller claims. */
export type RequestAction = string | { name: string; properties?: Claims | undefined };

/** What the engine is asked: a decision request without its bookkeeping. */
export interface AccessRequest {
  principal_id: string;
  action: RequestAction;
  resource: { type: string; identifier: string; attributes?: Readonly<Record<string, unknown>> | undefined };
  context?: Readonly<Record<string, unknown>> | undefined;
  /** What the caller claims about the subject (`subject.properties.*` conditions). */
  subject_properties?: Claims | undefined;
  /** Whom the principal acts for: a principal id, or a delegation chain, outermost delegator first. */
  on_behalf_of?: string | readonly string[] | undefined;
}

export const actionNameOf = (action: RequestAction): string =>
  typeof action === 'string' ? action : action.name;

/**
 * Policies to see differently from the index, for simulation: each id maps to the policy that
 * replaces it (null: it is gone). A replacement may be a policy the index does not hold.
 */
export type Overlay = ReadonlyMap<string, IxPolicy | null>;

/**
 * What a decision may be asked to take as true beyond the index, to try a change before it is
 * made (a denied request's remedies): policies replaced (`overlay`), groups a principal would
 * also be a direct member of (`joins`, principal id → group ids), and delegations that would
 * exist (`delegations`).
 */
export interface DecideOptions {
  explain?: boolean;
  overlay?: Overlay;
  joins?: ReadonlyMap<string, readonly string[]>;
  delegations?: readonly IxDelegation[];
}

export interface Verdict {
  allowed: boolean;
  reasons: Reason[];
  grantedBy: string[];
  trace?: {
    principals: TracePrincipal[];
    candidates: TraceCandidate[];
    links?: TraceLink[];
    verdicts?: { principal_id: string; allowed: boolean; reasons: Reason[] }[];
  };
}

const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

/** The AI-agent guardrail: a `tool` resource must be in the agent's `allowed_tools`. */
export function toolAllowed(
  p: Pick<IxPrincipal, 'type' | 'attributes'>,
  resourceType: string,
  identifier: string,
): boolean {
  if (p.type !== 'AI_AGENT' || resourceType !== 'tool') return true;
  const tools = p.attributes['allowed_tools'];
  if (tools === undefined) return false;
  const list = typeof tools === 'string' ? [tools] : tools;
  return list.includes('*') || list.includes(identifier);
}

/** Whether a policy's resources include this one, exactly or by a glob. */
export function names(policy: IxPolicy, type: string, identifier: string): boolean {
  return policy.resources.some(
    (r) => r.type === type && (r.glob ? globMatches(r.glob, identifier) : r.identifier === identifier),
  );
}

/** Active policies naming a resource (exactly or by a glob), seen through an overlay if one is given. */
export function coveringPolicies(
  index: PolicyIndex,
  type: string,
  identifier: string,
  overlay?: Overlay,
): readonly IxPolicy[] {
  const cached = index.candidates(type, identifier);
  if (!overlay) return cached;
  const found = cached.filter((p) => !overlay.has(p.id));
  for (const replacement of overlay.values()) {
    if (replacement?.active && names(replacement, type, identifier)) found.push(replacement);
  }
  return found;
}

/** Whether one of a policy's actions stands for this one. */
function grantsAction(policy: IxPolicy, action: string): boolean {
  for (const pattern of policy.actions) if (actionMatches(pattern, action)) return true;
  return false;
}

/**
 * Decides one principal's request: fails closed on an unknown or inactive principal and on a tool
 * outside an agent's `allowed_tools`; otherwise deny overrides allow and no applicable allow is a
 * deny. An allow applies when its conditions are true, a deny unless they are false.
 */
function decideFor(
  index: PolicyIndex,
  principalId: string,
  request: AccessRequest,
  explain: boolean,
  /**
   * The active policies naming the resource and the action, inside their window now: the same
   * for every principal of a chain, so they are found once.
   */
  candidates: readonly IxPolicy[],
  /** Set when deciding for a delegator: every reason names it. */
  about?: string,
  /** Groups the principal is taken to be a direct member of as well (see `DecideOptions.joins`). */
  joined?: readonly string[],
): Verdict {
  const p = index.principalView(principalId);
  const trace = explain
    ? { principals: [] as TracePrincipal[], candidates: [] as TraceCandidate[] }
    : undefined;
  if (!p) {
    trace?.principals.push({ id: principalId, found: false });
    return refusal(
      tagged({ code: 'PRINCIPAL_NOT_FOUND', message: `principal ${principalId} does not exist` }, about),
      trace,
    );
  }
  trace?.principals.push({
    id: p.id,
    found: true,
    type: p.type,
    status: p.status,
    groups: [...index.groupsOf(p)].sort(),
  });
  if (p.status !== 'active') {
    return refusal(
      tagged({ code: 'PRINCIPAL_INACTIVE', message: `principal ${p.id} is ${p.status}` }, about),
      trace,
    );
  }
  const { type, identifier } = request.resource;
  const action = actionNameOf(request.action);
  // What conditions read, made when the first candidate with conditions needs it.
  let input: ConditionInput | undefined;
  const allows: IxPolicy[] = [];
  const denies: IxPolicy[] = [];
  for (const policy of candidates) {
    const via = index.subjectVia(policy, p) ?? (joined ? joinedVia(index, policy, joined) : null);
    if (via === null) {
      trace?.candidates.push(
        candidate(policy, p, { matched: false }, [], false, 'the policy does not select this principal'),
      );
      continue;
    }
    const outcome = policy.conditions
      ? evaluateConditions(policy.conditions, (input ??= conditionInput(index, p, request, action)))
      : 'true';
    const applies = policy.effect === 'allow' ? outcome === 'true' : outcome !== 'false';
    if (applies) (policy.effect === 'allow' ? allows : denies).push(policy);
    if (trace) {
      const subject = {
        matched: true,
        via,
        ...(via === 'group' ? { path: groupPath(index, policy, p) } : {}),
      };
      const conditions = policy.conditions
        ? explainConditions(policy.conditions, (input ??= conditionInput(index, p, request, action)))
        : [];
      trace.candidates.push(
        candidate(policy, p, subject, conditions, applies, why(policy, outcome, applies)),
      );
    }
  }
  if (!toolAllowed(p, type, identifier)) {
    return refusal(
      tagged(
        {
          code: 'TOOL_NOT_ALLOWED',
          message: `tool ${identifier} is not among the allowed_tools of agent ${p.id}`,
        },
        about,
      ),
      trace,
    );
  }
  if (denies.length > 0) {
    return {
      allowed: false,
      reasons: policyReasons('POLICY_DENY', denies, about),
      grantedBy: [],
      ...(trace ? { trace } : {}),
    };
  }
  if (allows.length === 0) {
    return refusal(
      tagged({ code: 'NO_MATCHING_POLICY', message: 'no active policy allows this request' }, about),
      trace,
    );
  }
  sortById(allows);
  const grantedBy: string[] = [];
  for (const policy of allows) grantedBy.push(policy.id);
  return {
    allowed: true,
    reasons: policyReasons('POLICY_ALLOW', allows, about),
    grantedBy,
    ...(trace ? { trace } : {}),
  };
}

/**
 * The policies naming a resource that stand for an action now: one of their actions covers it,
 * and a time-bound one is inside its window (the clock is read once, and only when one is
 * time-bound; outside its window a policy is decided as if it were not there).
 */
function applicable(policies: readonly IxPolicy[], action: string): IxPolicy[] {
  const out: IxPolicy[] = [];
  let now: number | undefined;
  for (const policy of policies) {
    if (policy.validFrom !== null || policy.validUntil !== null) {
      now ??= Date.now();
      if (!inWindow(policy, now)) continue;
    }
    if (grantsAction(policy, action)) out.push(policy);
  }
  return out;
}

/** A DENY for one reason. */
function refusal(reason: Reason, trace: Verdict['trace']): Verdict {
  return { allowed: false, reasons: [reason], grantedBy: [], ...(trace ? { trace } : {}) };
}

/** A reason, naming the delegator it is about when there is one. */
function tagged(reason: Reason, about: string | undefined): Reason {
  if (about !== undefined) reason.principal_id = about;
  return reason;
}

/** One reason per policy that decided, each with its version. */
function policyReasons(
  code: 'POLICY_ALLOW' | 'POLICY_DENY',
  policies: readonly IxPolicy[],
  about: string | undefined,
): Reason[] {
  const out: Reason[] = [];
  for (const policy of policies) {
    out.push(tagged({ code, policy_id: policy.id, policy_version: policy.version }, about));
  }
  return out;
}

/**
 * Sorts policies by id in place. A decision has a handful of them: an insertion sort costs a
 * few comparisons, where `Array.prototype.sort` costs more to set up than to run.
 */
function sortById(policies: IxPolicy[]): void {
  for (let i = 1; i < policies.length; i += 1) {
    const policy = policies[i]!;
    let j = i - 1;
    for (; j >= 0 && policies[j]!.id > policy.id; j -= 1) policies[j + 1] = policies[j]!;
    policies[j + 1] = policy;
  }
}

/** Adds an id to a sorted list of ids, keeping it sorted and without repeats. */
function insertSorted(ids: string[], id: string): void {
  let i = ids.length;
  while (i > 0 && ids[i - 1]! > id) i -= 1;
  if (i > 0 && ids[i - 1] === id) return;
  if (i === ids.length) ids.push(id);
  else ids.splice(i, 0, id);
}

/**
 * A policy naming a group the principal would be in through groups it is taken to join: 'group'
 * when one of them is, or is nested in, one of the policy's groups.
 */
function joinedVia(index: PolicyIndex, policy: IxPolicy, joined: readonly string[]): 'group' | null {
  for (const id of joined) {
    const g = index.groupTable.numberOf(id);
    const reaches = g < 0 ? [id] : [...index.groupTable.ancestors(g)].map((a) => index.groupTable.idOf(a));
    if (policy.groups.some((x) => reaches.includes(x))) return 'group';
  }
  return null;
}

/** What the conditions of a principal's candidates read: the stored principal, the resource, the request's claims. */
export function conditionInput(
  index: PolicyIndex,
  p: IxPrincipal,
  request: AccessRequest,
  action: string,
): ConditionInput {
  const { type, identifier } = request.resource;
  const registered = index.registered(type, identifier)?.attributes;
  const requested = request.resource.attributes;
  return {
    principal: p,
    resource: {
      type,
      identifier,
      attributes: requested
        ? registered
          ? { ...registered, ...requested }
          : requested
        : (registered ?? EMPTY),
    },
    context: request.context,
    action: {
      name: action,
      properties: typeof request.action === 'string' ? undefined : request.action.properties,
    },
    subject: { properties: request.subject_properties },
  };
}

function why(policy: IxPolicy, outcome: string, applies: boolean): string {
  if (!policy.conditions) return applies ? `the ${policy.effect} applies` : 'does not apply';
  if (policy.effect === 'allow') {
    return outcome === 'true'
      ? 'the allow applies: its conditions hold'
      : outcome === 'false'
        ? 'the allow does not apply: a condition is false'
        : 'the allow does not apply: a condition is unknown (a path is missing or of the wrong type)';
  }
  return outcome === 'true'
    ? 'the deny applies: its conditions hold'
    : outcome === 'false'
      ? 'the deny does not apply: a condition is false'
      : 'the deny applies: a condition is unknown, and a deny fails closed';
}

function candidate(
  policy: IxPolicy,
  p: IxPrincipal,
  subject: TraceCandidate['subject'],
  conditions: ConditionOutcome[],
  applied: boolean,
  reason: string,
): TraceCandidate {
  return {
    policy_id: policy.id,
    policy_version: policy.version,
    name: policy.name,
    effect: policy.effect,
    principal_id: p.id,
    subject,
    conditions,
    applied,
    why: reason,
  };
}

/**
 * The membership path of a group grant, principal first, with names: the shortest through any of
 * the policy's groups. Explained access lists it too, so that both answers name the same path.
 */
export function groupPath(
  index: PolicyIndex,
  policy: IxPolicy,
  p: IxPrincipal,
): TraceCandidate['subject']['path'] {
  let best: string[] | undefined;
  for (const g of policy.groups) {
    const path = index.membershipPath(p, g);
    if (path && (!best || path.length < best.length)) best = path;
  }
  return (best ?? []).map((id, i) =>
    i === 0
      ? { id, name: p.name, type: p.type }
      : { id, name: index.groups.get(id)?.name ?? '', type: 'GROUP' },
  );
}

/** A request's delegation chain, outermost delegator first; empty when it acts for itself. */
export function chainOf(request: Pick<AccessRequest, 'principal_id' | 'on_behalf_of'>): readonly string[] {
  const chain = request.on_behalf_of;
  if (chain === undefined) return NO_CHAIN;
  const list = typeof chain === 'string' ? [chain] : chain;
  // On behalf of oneself is deciding for oneself.
  if (list.length === 1 && list[0] === request.principal_id) return NO_CHAIN;
  return list;
}

const NO_CHAIN: readonly string[] = Object.freeze([]);

/** Whether a delegation covers an action on a resource: one of its actions and its resources. */
export function delegationCovers(d: IxDelegation, action: string, type: string, identifier: string): boolean {
  let covers = false;
  for (const pattern of d.actions) {
    if (actionMatches(pattern, action)) {
      covers = true;
      break;
    }
  }
  if (!covers || d.resources === null) return covers;
  return d.resources.some(
    (r) => r.type === type && (r.glob ? globMatches(r.glob, identifier) : r.identifier === identifier),
  );
}

/** Why a principal cannot take part in a delegation now, if it cannot: unknown, or not active. */
function inactivePrincipal(index: PolicyIndex, id: string): string | undefined {
  const p = index.principalView(id);
  if (!p) return `principal ${id} does not exist`;
  return p.status === 'active' ? undefined : `principal ${id} is ${p.status}`;
}

/**
 * The delegation that lets `delegateId` act for `delegatorId` on this request now, or why none
 * does: it must be active and unexpired, cover the action and the resource, and both principals
 * must be active (a suspended, deprovisioned or deleted principal's delegations stop at once).
 */
export function coveringDelegation(
  index: PolicyIndex,
  delegatorId: string,
  delegateId: string,
  action: string,
  resource: { type: string; identifier: string },
  now: number,
  /** Delegations taken to exist besides those of the index (see `DecideOptions.delegations`). */
  extra?: readonly IxDelegation[],
): { delegation: IxDelegation } | { why: string } {
  const inactive = inactivePrincipal(index, delegatorId) ?? inactivePrincipal(index, delegateId);
  if (inactive !== undefined) return { why: inactive };
  let all = index.delegationsBetween(delegatorId, delegateId);
  if (extra) {
    const more = extra.filter((d) => d.delegatorId === delegatorId && d.delegateId === delegateId);
    if (more.length > 0) all = [...all, ...more];
  }
  let sawLive = false;
  for (const d of all) {
    if (d.expiresAt <= now) continue;
    sawLive = true;
    if (delegationCovers(d, action, resource.type, resource.identifier)) return { delegation: d };
  }
  if (sawLive)
    return { why: `no delegation from ${delegatorId} to ${delegateId} covers ${action} on this resource` };
  return {
    why:
      all.length > 0
        ? `the delegation from ${delegatorId} to ${delegateId} has expired`
        : `${delegatorId} has not delegated to ${delegateId}`,
  };
}

/**
 * Decides a request (docs/api.md §5.2, §10). With `on_behalf_of` (a principal id or a chain,
 * outermost delegator first), the request is allowed only if the caller is allowed, every link
 * of the chain (each delegator to the next, the last to the caller) is an active delegation
 * covering the request, and every delegator is allowed too.
 */
export function decide(index: PolicyIndex, request: AccessRequest, options: DecideOptions = {}): Verdict {
  const explain = options.explain ?? false;
  const { type, identifier } = request.resource;
  const candidates = applicable(
    options.overlay
      ? coveringPolicies(index, type, identifier, options.overlay)
      : index.candidates(type, identifier),
    actionNameOf(request.action),
  );
  const joins = options.joins;
  const own = decideFor(
    index,
    request.principal_id,
    request,
    explain,
    candidates,
    undefined,
    joins?.get(request.principal_id),
  );
  const chain = chainOf(request);
  if (chain.length === 0) return own;
  // The caller's own answer comes first; then each delegator's, innermost first; then the
  // links. Without `explain` the work stops at the first refusal. (Plain loops: this runs on
  // every request an agent makes for someone.)
  const ids: string[] = [];
  const verdicts: Verdict[] = [];
  let denied = -1;
  if (explain || own.allowed) {
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const id = chain[i]!;
      const verdict = decideFor(index, id, request, explain, candidates, id, joins?.get(id));
      ids.push(id);
      verdicts.push(verdict);
      if (!verdict.allowed && denied === -1) {
        denied = verdicts.length - 1;
        if (!explain) break;
      }
    }
  }
  const links: TraceLink[] | undefined = explain ? [] : undefined;
  let missing: Reason | undefined;
  if (explain || (own.allowed && denied === -1)) {
    const action = actionNameOf(request.action);
    const now = Date.now();
    for (let i = 0; i < chain.length; i += 1) {
      const delegator = chain[i]!;
      const delegate = chain[i + 1] ?? request.principal_id;
      const found = coveringDelegation(
        index,
        delegator,
        delegate,
        action,
        request.resource,
        now,
        options.delegations,
      );
      if (links) links.push(traceLink(delegator, delegate, found));
      if (!('delegation' in found) && missing === undefined) {
        missing = {
          code: 'NO_DELEGATION',
          principal_id: delegator,
          delegate_id: delegate,
          message: found.why,
        };
        if (!links) break;
      }
    }
  }
  let verdict: Verdict;
  if (!own.allowed) verdict = { allowed: false, reasons: own.reasons, grantedBy: own.grantedBy };
  else if (denied !== -1) {
    const id = ids[denied]!;
    verdict = {
      allowed: false,
      reasons: [
        {
          code: 'DELEGATOR_DENIED',
          principal_id: id,
          message: `${id}, on whose behalf the request is made, is not allowed`,
        },
        ...verdicts[denied]!.reasons,
      ],
      grantedBy: [],
    };
  } else if (missing) verdict = { allowed: false, reasons: [missing], grantedBy: [] };
  else {
    const reasons = own.reasons.slice();
    const granted = own.grantedBy.slice();
    for (const v of verdicts) {
      for (const reason of v.reasons) reasons.push(reason);
      for (const policy of v.grantedBy) insertSorted(granted, policy);
    }
    verdict = { allowed: true, reasons, grantedBy: granted };
  }
  if (links) verdict.trace = chainTrace(request.principal_id, own, ids, verdicts, links);
  return verdict;
}

/** A link of a chain as the trace shows it: the delegation covering it, or why none does. */
function traceLink(
  delegator: string,
  delegate: string,
  found: { delegation: IxDelegation } | { why: string },
): TraceLink {
  if (!('delegation' in found))
    return { delegator_id: delegator, delegate_id: delegate, covered: false, why: found.why };
  return {
    delegator_id: delegator,
    delegate_id: delegate,
    delegation_id: found.delegation.id,
    expires_at: new Date(found.delegation.expiresAt).toISOString(),
    covered: true,
    why: 'an active delegation covers the action and the resource',
  };
}

/** The trace of a decision along a chain: every principal's, every link, each principal's own answer. */
function chainTrace(
  caller: string,
  own: Verdict,
  ids: readonly string[],
  verdicts: readonly Verdict[],
  links: TraceLink[],
): NonNullable<Verdict['trace']> {
  const all = [own, ...verdicts];
  return {
    principals: all.flatMap((v) => v.trace?.principals ?? []),
    candidates: all.flatMap((v) => v.trace?.candidates ?? []),
    links,
    verdicts: [
      { principal_id: caller, allowed: own.allowed, reasons: own.reasons },
      ...verdicts.map((v, k) => ({ principal_id: ids[k]!, allowed: v.allowed, reasons: v.reasons })),
    ],
  };
}
