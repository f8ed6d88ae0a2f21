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
export function toolAllowed(p: IxPrincipal, resourceType: string, identifier: string): boolean {
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
  overlay: Overlay | undefined,
): Verdict {
  const p = index.principals.get(principalId);
  const trace = explain
    ? { principals: [] as TracePrincipal[], candidates: [] as TraceCandidate[] }
    : undefined;
  if (!p) {
    trace?.principals.push({ id: principalId, found: false });
    return {
      allowed: false,
      reasons: [{ code: 'PRINCIPAL_NOT_FOUND', message: `principal ${principalId} does not exist` }],
      grantedBy: [],
      ...(trace ? { trace } : {}),
    };
  }
  trace?.principals.push({
    id: p.id,
    found: true,
    type: p.type,
    status: p.status,
    groups: [...index.groupsOf(p)].sort(),
  });
  if (p.status !== 'active') {
    return {
      allowed: false,
      reasons: [{ code: 'PRINCIPAL_INACTIVE', message: `principal ${p.id} is ${p.status}` }],
      grantedBy: [],
      ...(trace ? { trace } : {}),
    };
  }
  const { type, identifier } = request.resource;
  const action = actionNameOf(request.action);
  // What conditions read, made when the first candidate with conditions needs it.
  let input: ConditionInput | undefined;
  const inputOf = (): ConditionInput => {
    if (input) return input;
    const registered = index.registered(type, identifier)?.attributes;
    const requested = request.resource.attributes;
    input = {
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
    return input;
  };
  const allows: IxPolicy[] = [];
  const denies: IxPolicy[] = [];
  const candidates = overlay
    ? coveringPolicies(index, type, identifier, overlay)
    : index.candidates(type, identifier);
  // The clock is read once per decision, and only when a time-bound policy is among the
  // candidates: a policy outside its window is decided as if it were not there.
  let now: number | undefined;
  for (const policy of candidates) {
    if (policy.validFrom !== null || policy.validUntil !== null) {
      now ??= Date.now();
      if (!inWindow(policy, now)) continue;
    }
    if (!grantsAction(policy, action)) continue;
    const via = index.subjectVia(policy, p);
    if (via === null) {
      trace?.candidates.push(
        candidate(policy, p, { matched: false }, [], false, 'the policy does not select this principal'),
      );
      continue;
    }
    const outcome = policy.conditions ? evaluateConditions(policy.conditions, inputOf()) : 'true';
    const applies = policy.effect === 'allow' ? outcome === 'true' : outcome !== 'false';
    if (applies) (policy.effect === 'allow' ? allows : denies).push(policy);
    if (trace) {
      const subject = {
        matched: true,
        via,
        ...(via === 'group' ? { path: groupPath(index, policy, p) } : {}),
      };
      const conditions = policy.conditions ? explainConditions(policy.conditions, inputOf()) : [];
      trace.candidates.push(
        candidate(policy, p, subject, conditions, applies, why(policy, outcome, applies)),
      );
    }
  }
  if (!toolAllowed(p, type, identifier)) {
    return {
      allowed: false,
      reasons: [
        {
          code: 'TOOL_NOT_ALLOWED',
          message: `tool ${identifier} is not among the allowed_tools of agent ${p.id}`,
        },
      ],
      grantedBy: [],
      ...(trace ? { trace } : {}),
    };
  }
  if (denies.length > 0) {
    return {
      allowed: false,
      reasons: denies.map((d) => ({
        code: 'POLICY_DENY' as const,
        policy_id: d.id,
        policy_version: d.version,
      })),
      grantedBy: [],
      ...(trace ? { trace } : {}),
    };
  }
  if (allows.length === 0) {
    return {
      allowed: false,
      reasons: [{ code: 'NO_MATCHING_POLICY', message: 'no active policy allows this request' }],
      grantedBy: [],
      ...(trace ? { trace } : {}),
    };
  }
  allows.sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    allowed: true,
    reasons: allows.map((a) => ({
      code: 'POLICY_ALLOW' as const,
      policy_id: a.id,
      policy_version: a.version,
    })),
    grantedBy: allows.map((a) => a.id),
    ...(trace ? { trace } : {}),
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
): { delegation: IxDelegation } | { why: string } {
  for (const id of [delegatorId, delegateId]) {
    const p = index.principals.get(id);
    if (!p) return { why: `principal ${id} does not exist` };
    if (p.status !== 'active') return { why: `principal ${id} is ${p.status}` };
  }
  const all = index.delegationsBetween(delegatorId, delegateId);
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
export function decide(
  index: PolicyIndex,
  request: AccessRequest,
  options: { explain?: boolean; overlay?: Overlay } = {},
): Verdict {
  const explain = options.explain ?? false;
  const own = decideFor(index, request.principal_id, request, explain, options.overlay);
  const chain = chainOf(request);
  if (chain.length === 0) return own;
  // The caller's own answer comes first; then each delegator's, innermost first; then the
  // links. Without `explain` the work stops at the first refusal.
  const theirs: { id: string; verdict: Verdict }[] = [];
  let refused = !own.allowed;
  if (explain || !refused) {
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const id = chain[i]!;
      const verdict = decideFor(index, id, request, explain, options.overlay);
      theirs.push({ id, verdict });
      if (!verdict.allowed) {
        refused = true;
        if (!explain) break;
      }
    }
  }
  const links: TraceLink[] = [];
  let missing: Reason | undefined;
  if (explain || !refused) {
    const action = actionNameOf(request.action);
    const now = Date.now();
    for (let i = 0; i < chain.length; i += 1) {
      const delegator = chain[i]!;
      const delegate = chain[i + 1] ?? request.principal_id;
      const found = coveringDelegation(index, delegator, delegate, action, request.resource, now);
      if ('delegation' in found) {
        if (explain) {
          links.push({
            delegator_id: delegator,
            delegate_id: delegate,
            delegation_id: found.delegation.id,
            expires_at: new Date(found.delegation.expiresAt).toISOString(),
            covered: true,
            why: 'an active delegation covers the action and the resource',
          });
        }
        continue;
      }
      missing ??= {
        code: 'NO_DELEGATION',
        principal_id: delegator,
        delegate_id: delegate,
        message: found.why,
      };
      if (!explain) break;
      links.push({ delegator_id: delegator, delegate_id: delegate, covered: false, why: found.why });
    }
  }
  const trace = explain
    ? {
        principals: [own, ...theirs.map((t) => t.verdict)].flatMap((v) => v.trace?.principals ?? []),
        candidates: [own, ...theirs.map((t) => t.verdict)].flatMap((v) => v.trace?.candidates ?? []),
        links,
        verdicts: [
          { principal_id: request.principal_id, allowed: own.allowed, reasons: own.reasons },
          ...theirs.map((t) => ({
            principal_id: t.id,
            allowed: t.verdict.allowed,
            reasons: about(t.verdict.reasons, t.id),
          })),
        ],
      }
    : undefined;
  const traced = trace ? { trace } : {};
  if (!own.allowed) return { ...own, ...traced };
  const denied = theirs.find((t) => !t.verdict.allowed);
  if (denied) {
    return {
      allowed: false,
      reasons: [
        {
          code: 'DELEGATOR_DENIED',
          principal_id: denied.id,
          message: `${denied.id}, on whose behalf the request is made, is not allowed`,
        },
        ...about(denied.verdict.reasons, denied.id),
      ],
      grantedBy: [],
      ...traced,
    };
  }
  if (missing) return { allowed: false, reasons: [missing], grantedBy: [], ...traced };
  const granted = new Set(own.grantedBy);
  for (const t of theirs) for (const id of t.verdict.grantedBy) granted.add(id);
  return {
    allowed: true,
    reasons: [...own.reasons, ...theirs.flatMap((t) => about(t.verdict.reasons, t.id))],
    grantedBy: [...granted].sort(),
    ...traced,
  };
}

/** Reasons of a delegator's decision, each naming the delegator. */
const about = (reasons: Reason[], id: string): Reason[] => reasons.map((r) => ({ ...r, principal_id: id }));
