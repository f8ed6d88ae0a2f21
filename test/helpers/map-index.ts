import { addTo, removeFrom, ResourcePolicies } from '../../src/decisions/policy-lookup.js';
import type { Predicate } from '../../src/principals/search/evaluate.js';
import type { IxDelegation, IxPolicy, IxPrincipal, IxResource } from '../../src/decisions/model.js';

export interface IxGroup {
  readonly id: string;
  name: string;
  /** Groups this group is nested in, directly. */
  readonly parents: Set<string>;
  /** Groups nested in this group, directly. */
  readonly children: Set<string>;
  /** Principals that are direct members. */
  readonly members: Set<string>;
}

/**
 * The decision index: every policy (active ones indexed for lookup by resource and by subject),
 * every principal with its direct groups, the group nesting, and the registered resources —
 * all in memory, so that a decision needs no database round trip. It is built from Neo4j at
 * start and kept current by src/decisions/sync.ts; `version` counts the changes applied.
 */
export class MapIndex {
  version = 0;
  readonly principals = new Map<string, IxPrincipal>();
  readonly groups = new Map<string, IxGroup>();
  readonly policies = new Map<string, IxPolicy>();
  /** Registered resources by type, then identifier. */
  readonly resources = new Map<string, Map<string, IxResource>>();
  /** Active delegations (revoked and expired ones leave the index). */
  private readonly book = new DelegationBook();
  get delegations(): ReadonlyMap<string, IxDelegation> {
    return this.book.byId;
  }

  /**
   * Principals by lower-cased email and by connector id, for standard interfaces naming them so.
   * Neither is unique (two connectors may provision the same person, a connector may repeat an
   * externalId): each names every principal that holds it, and the caller decides.
   */
  private readonly byEmail = new Map<string, Set<string>>();
  private readonly byConnectorId = new Map<string, Set<string>>();
  /**
   * AI agents by `attributes.client_id`, the OAuth client an agent's tokens are issued to: how an
   * MCP gateway names the agent (AuthZEN `context.agent`). Not unique either.
   */
  private readonly byClientId = new Map<string, Set<string>>();
  private readonly byResource = new ResourcePolicies();
  /**
   * The principals each `match` query of an active policy selects, computed on first use and
   * then kept in step one principal at a time as principals change.
   */
  private readonly matchSets = new Map<string, Set<string>>();
  private readonly byPrincipal = new Map<string, Set<IxPolicy>>();
  private readonly byGroup = new Map<string, Set<IxPolicy>>();
  /** Active policies with a `match` query, grouped by query: each query is evaluated once. */
  private readonly matching = new Map<string, { match: Predicate; policies: Set<IxPolicy> }>();
  /** Each group with every group it is nested in, at any depth (itself included). */
  private readonly ancestorCache = new Map<string, ReadonlySet<string>>();
  /** Each group with every principal inside it, at any depth. */
  private readonly memberCache = new Map<string, ReadonlySet<string>>();

  // ---- lookups ----

  principalView(id: string): IxPrincipal | undefined {
    return this.principals.get(id);
  }

  /**
   * The principals (deleted ones aside) whose connector id is `ref`, and those whose email is
   * `ref` ignoring case: what a standard interface naming principals so may mean.
   */
  principalsNamed(ref: string): { byConnectorId: IxPrincipal[]; byEmail: IxPrincipal[] } {
    const of = (ids: ReadonlySet<string> | undefined): IxPrincipal[] => {
      const out: IxPrincipal[] = [];
      for (const id of ids ?? []) {
        const p = this.principals.get(id);
        if (p) out.push(p);
      }
      return out;
    };
    return {
      byConnectorId: of(this.byConnectorId.get(ref)),
      byEmail: of(this.byEmail.get(ref.toLowerCase())),
    };
  }

  /** The AI agents (deleted ones aside) whose `attributes.client_id` is `clientId`. */
  agentsWithClientId(clientId: string): IxPrincipal[] {
    const out: IxPrincipal[] = [];
    for (const id of this.byClientId.get(clientId) ?? []) {
      const p = this.principals.get(id);
      if (p) out.push(p);
    }
    return out;
  }

  /**
   * Active policies naming this resource (exactly or by a glob), in no particular order. The
   * list is shared: callers must not change it. A glob's own text asks for the globs covering it.
   */
  candidates(type: string, identifier: string): readonly IxPolicy[] {
    return this.byResource.candidates(type, identifier);
  }

  /**
   * Whether a policy selects a principal, from its subject sets: the same answer as
   * `subjectVia`, cheaper when many principals are asked about one policy.
   */
  selects(policy: IxPolicy, id: string): boolean {
    if (policy.principals.has(id)) return true;
    for (const g of policy.groups) if (this.membersOf(g).has(id)) return true;
    return policy.match !== null && this.matchSet(policy).has(id);
  }

  /** The principals a `match` policy selects (kept in step as principals change). */
  private matchSet(policy: IxPolicy): ReadonlySet<string> {
    const key = policy.matchKey!;
    let set = this.matchSets.get(key);
    if (!set) {
      set = new Set();
      for (const p of this.principals.values()) if (policy.match!(p)) set.add(p.id);
      // Only queries of indexed policies are kept in step; a proposed policy's is computed anew.
      if (this.matching.has(key)) this.matchSets.set(key, set);
    }
    return set;
  }

  /** How a policy selects a principal, if it does. */
  subjectVia(policy: IxPolicy, p: IxPrincipal): 'principal' | 'group' | 'match' | null {
    if (policy.principals.has(p.id)) return 'principal';
    for (const g of policy.groups) if (this.inGroup(p, g)) return 'group';
    if (policy.match && policy.match(p)) return 'match';
    return null;
  }

  /** Whether the principal is in the group, directly or through nested groups. */
  inGroup(p: IxPrincipal, groupId: string): boolean {
    for (const direct of p.groups) if (this.ancestors(direct).has(groupId)) return true;
    return false;
  }

  /** Every group the principal is in, through nesting. */
  groupsOf(p: IxPrincipal): Set<string> {
    const out = new Set<string>();
    for (const direct of p.groups) for (const g of this.ancestors(direct)) out.add(g);
    return out;
  }

  ancestors(groupId: string): ReadonlySet<string> {
    let set = this.ancestorCache.get(groupId);
    if (set) return set;
    const found = new Set<string>([groupId]);
    const queue = [groupId];
    while (queue.length > 0) {
      const g = this.groups.get(queue.pop()!);
      if (!g) continue;
      for (const parent of g.parents) {
        if (!found.has(parent)) {
          found.add(parent);
          queue.push(parent);
        }
      }
    }
    set = found;
    this.ancestorCache.set(groupId, set);
    return set;
  }

  /** Every principal in the group, through nested groups. */
  membersOf(groupId: string): ReadonlySet<string> {
    let set = this.memberCache.get(groupId);
    if (set) return set;
    const members = new Set<string>();
    const seen = new Set<string>([groupId]);
    const queue = [groupId];
    while (queue.length > 0) {
      const g = this.groups.get(queue.pop()!);
      if (!g) continue;
      for (const m of g.members) members.add(m);
      for (const child of g.children) {
        if (!seen.has(child)) {
          seen.add(child);
          queue.push(child);
        }
      }
    }
    set = members;
    this.memberCache.set(groupId, set);
    return set;
  }

  /**
   * The shortest membership path from a principal to a group: principal → group → … → group,
   * for `explain`. Undefined when the principal is not in it.
   */
  membershipPath(p: IxPrincipal, groupId: string): string[] | undefined {
    const previous = new Map<string, string | null>();
    const queue: string[] = [];
    for (const g of p.groups) {
      if (!previous.has(g)) {
        previous.set(g, null);
        queue.push(g);
      }
    }
    for (let i = 0; i < queue.length; i += 1) {
      const id = queue[i]!;
      if (id === groupId) {
        const path: string[] = [];
        for (let at: string | null = id; at !== null; at = previous.get(at) ?? null) path.unshift(at);
        return [p.id, ...path];
      }
      for (const parent of this.groups.get(id)?.parents ?? []) {
        if (!previous.has(parent)) {
          previous.set(parent, id);
          queue.push(parent);
        }
      }
    }
    return undefined;
  }

  /** Active policies selecting the principal: by id, through its groups, or by `match`. */
  policiesOf(p: IxPrincipal): Set<IxPolicy> {
    const out = new Set<IxPolicy>(this.byPrincipal.get(p.id) ?? []);
    for (const g of this.groupsOf(p)) for (const policy of this.byGroup.get(g) ?? []) out.add(policy);
    for (const { match, policies } of this.matching.values()) {
      if (match(p)) for (const policy of policies) out.add(policy);
    }
    return out;
  }

  /** Ids of the active policies whose `match` query selects the principal. */
  matchPoliciesOf(p: IxPrincipal): string[] {
    const out: string[] = [];
    for (const { match, policies } of this.matching.values()) {
      if (match(p)) for (const policy of policies) out.push(policy.id);
    }
    return out;
  }

  /**
   * Calls `visit` with each principal a policy selects (a principal in several of its groups may
   * come more than once, one after another within each group's turn).
   */
  forEachSubject(policy: IxPolicy, visit: (id: string) => void): void {
    for (const ids of this.subjectSets(policy)) for (const id of ids) visit(id);
  }

  /**
   * The sets a policy's subjects come from: its principals (some may not exist), each group's
   * members, its `match` query's principals. A principal may be in more than one.
   */
  subjectSets(policy: IxPolicy): ReadonlySet<string>[] {
    const sets: ReadonlySet<string>[] = [policy.principals];
    for (const g of policy.groups) sets.push(this.membersOf(g));
    if (policy.match) sets.push(this.matchSet(policy));
    return sets;
  }

  /** Every principal a policy selects, active or not. */
  subjectsOf(policy: IxPolicy): Set<string> {
    const out = new Set<string>();
    for (const id of policy.principals) if (this.principals.has(id)) out.add(id);
    for (const g of policy.groups) for (const id of this.membersOf(g)) out.add(id);
    if (policy.match) for (const id of this.matchSet(policy)) out.add(id);
    return out;
  }

  get activePolicyCount(): number {
    let n = 0;
    for (const p of this.policies.values()) if (p.active) n += 1;
    return n;
  }

  registered(type: string, identifier: string): IxResource | undefined {
    return this.resources.get(type)?.get(identifier);
  }

  /** Registered identifiers of a type, for globs to match. */
  registeredOf(type: string): Iterable<IxResource> {
    return this.resources.get(type)?.values() ?? [];
  }

  delegationsBetween(delegatorId: string, delegateId: string): readonly IxDelegation[] {
    return this.book.between(delegatorId, delegateId);
  }

  delegationsReceived(delegateId: string): Iterable<IxDelegation> {
    return this.book.received(delegateId);
  }

  delegationsGiven(delegatorId: string): ReadonlySet<IxDelegation> {
    return this.book.given(delegatorId);
  }

  // ---- changes ----

  putDelegation(id: string, next: IxDelegation | undefined): void {
    this.book.put(id, next);
  }

  putPolicy(policy: IxPolicy): void {
    this.removePolicy(policy.id);
    this.policies.set(policy.id, policy);
    if (!policy.active) return;
    this.byResource.add(policy);
    for (const id of policy.principals) addTo(this.byPrincipal, id, policy);
    for (const id of policy.groups) addTo(this.byGroup, id, policy);
    if (policy.match) {
      const group = this.matching.get(policy.matchKey!);
      if (group) group.policies.add(policy);
      else this.matching.set(policy.matchKey!, { match: policy.match, policies: new Set([policy]) });
    }
  }

  removePolicy(id: string): void {
    const old = this.policies.get(id);
    if (!old) return;
    this.policies.delete(id);
    if (!old.active) return;
    this.byResource.remove(old);
    for (const pid of old.principals) removeFrom(this.byPrincipal, pid, old);
    for (const gid of old.groups) removeFrom(this.byGroup, gid, old);
    if (old.matchKey !== null) {
      const group = this.matching.get(old.matchKey);
      group?.policies.delete(old);
      if (group?.policies.size === 0) {
        this.matching.delete(old.matchKey);
        this.matchSets.delete(old.matchKey);
      }
    }
  }

  /** A principal as now stored (undefined: it no longer exists), with its direct groups. */
  putPrincipal(id: string, next: IxPrincipal | undefined): void {
    const old = this.principals.get(id);
    this.reindexNames(id, old, next);
    const before = old?.groups ?? [];
    const after = next?.groups ?? [];
    if (next) this.principals.set(id, next);
    else this.principals.delete(id);
    for (const [key, set] of this.matchSets) {
      if (next && this.matching.get(key)?.match(next)) set.add(id);
      else set.delete(id);
    }
    if (before.length === after.length && before.every((g) => after.includes(g))) return;
    for (const g of before) this.groups.get(g)?.members.delete(id);
    for (const g of after) this.groupOrStub(g).members.add(id);
    this.memberCache.clear();
  }

  private reindexNames(id: string, old: IxPrincipal | undefined, next: IxPrincipal | undefined): void {
    const drop = (map: Map<string, Set<string>>, key: string | null | undefined): void => {
      if (key) removeFrom(map, key, id);
    };
    drop(this.byEmail, old?.email?.toLowerCase());
    drop(this.byConnectorId, old?.connector_id);
    drop(this.byClientId, clientIdOf(old));
    // Deleted principals keep their id only: a name that comes back belongs to someone new.
    if (!next || next.status === 'deleted') return;
    if (next.email) addTo(this.byEmail, next.email.toLowerCase(), id);
    if (next.connector_id) addTo(this.byConnectorId, next.connector_id, id);
    const clientId = clientIdOf(next);
    if (clientId) addTo(this.byClientId, clientId, id);
  }

  /** A group as now stored: its name and the groups it is nested in. True when its nesting changed. */
  putGroup(id: string, name: string, parents: readonly string[]): boolean {
    const group = this.groupOrStub(id);
    group.name = name;
    const same = parents.length === group.parents.size && parents.every((p) => group.parents.has(p));
    if (same) return false;
    for (const p of group.parents) this.groups.get(p)?.children.delete(id);
    group.parents.clear();
    for (const p of parents) {
      group.parents.add(p);
      this.groupOrStub(p).children.add(id);
    }
    this.ancestorCache.clear();
    this.memberCache.clear();
    return true;
  }

  /** A deleted group: its members and nested groups leave it. Returns the principals that were in it. */
  removeGroup(id: string): ReadonlySet<string> {
    const group = this.groups.get(id);
    if (!group) return new Set();
    const members = this.membersOf(id);
    for (const m of group.members) {
      const p = this.principals.get(m);
      if (p) p.groups = p.groups.filter((g) => g !== id);
    }
    for (const c of group.children) this.groups.get(c)?.parents.delete(id);
    for (const p of group.parents) this.groups.get(p)?.children.delete(id);
    this.groups.delete(id);
    this.ancestorCache.clear();
    this.memberCache.clear();
    return members;
  }

  putResource(type: string, identifier: string, resource: IxResource | undefined): void {
    let byId = this.resources.get(type);
    if (!resource) {
      byId?.delete(identifier);
      if (byId?.size === 0) this.resources.delete(type);
      return;
    }
    if (!byId) {
      byId = new Map();
      this.resources.set(type, byId);
    }
    byId.set(identifier, resource);
  }

  private groupOrStub(id: string): IxGroup {
    let group = this.groups.get(id);
    if (!group) {
      group = { id, name: '', parents: new Set(), children: new Set(), members: new Set() };
      this.groups.set(id, group);
    }
    return group;
  }
}

/** An AI agent's OAuth client id, when its attributes give one. */
function clientIdOf(p: IxPrincipal | undefined): string | undefined {
  const value = p?.type === 'AI_AGENT' ? p.attributes['client_id'] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

const NO_DELEGATIONS: readonly IxDelegation[] = Object.freeze([]);
const NO_DELEGATION_SET: ReadonlySet<IxDelegation> = new Set();

/**
 * Active delegations (revoked and expired ones leave), by id, by delegate then delegator (what
 * a link of a chain looks up), and by delegator (the chains that start at a principal).
 */
class DelegationBook {
  readonly byId = new Map<string, IxDelegation>();
  private readonly to = new Map<string, Map<string, IxDelegation[]>>();
  private readonly from = new Map<string, Set<IxDelegation>>();

  /** The active delegations from `delegatorId` to `delegateId` (expired ones may still be held). */
  between(delegatorId: string, delegateId: string): readonly IxDelegation[] {
    return this.to.get(delegateId)?.get(delegatorId) ?? NO_DELEGATIONS;
  }

  /** The active delegations a principal receives. */
  *received(delegateId: string): Iterable<IxDelegation> {
    for (const list of this.to.get(delegateId)?.values() ?? []) yield* list;
  }

  /** The active delegations a principal gives. */
  given(delegatorId: string): ReadonlySet<IxDelegation> {
    return this.from.get(delegatorId) ?? NO_DELEGATION_SET;
  }

  /** Puts an active delegation, or takes one out (undefined: revoked, expired or gone). */
  put(id: string, next: IxDelegation | undefined): void {
    const old = this.byId.get(id);
    if (old) {
      this.byId.delete(id);
      const byDelegator = this.to.get(old.delegateId);
      const list = byDelegator?.get(old.delegatorId)?.filter((d) => d.id !== id);
      if (byDelegator && list) {
        if (list.length > 0) byDelegator.set(old.delegatorId, list);
        else byDelegator.delete(old.delegatorId);
        if (byDelegator.size === 0) this.to.delete(old.delegateId);
      }
      const given = this.from.get(old.delegatorId);
      given?.delete(old);
      if (given?.size === 0) this.from.delete(old.delegatorId);
    }
    if (!next) return;
    this.byId.set(id, next);
    let byDelegator = this.to.get(next.delegateId);
    if (!byDelegator) this.to.set(next.delegateId, (byDelegator = new Map<string, IxDelegation[]>()));
    byDelegator.set(next.delegatorId, [...(byDelegator.get(next.delegatorId) ?? []), next]);
    let given = this.from.get(next.delegatorId);
    if (!given) this.from.set(next.delegatorId, (given = new Set<IxDelegation>()));
    given.add(next);
  }

  clear(): void {
    this.byId.clear();
    this.to.clear();
    this.from.clear();
  }
}
