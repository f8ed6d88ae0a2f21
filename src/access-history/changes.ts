import {
  grantOf,
  grantsOf,
  registeredMatching,
  settleFor,
  type GrantExplained,
} from '../decisions/access-service.js';
import {
  accessEntries,
  coveredBy,
  toolsOf,
  type AccessEntry,
  type CandidateFilter,
  type Grant,
} from '../decisions/access.js';
import { intersectAccess } from '../decisions/delegated-access.js';
import type { Pending } from '../decisions/apply.js';
import { groupPath, type Overlay } from '../decisions/engine.js';
import type { IxDelegation, IxPolicy, IxPrincipal } from '../decisions/model.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import { resourceOf } from '../policies/model.js';
import { globsMatching } from '../policies/patterns.js';

/**
 * Access changes computed from the decision index (docs/api.md §11): for each principal a batch
 * of committed changes can have touched, what `GET /v1/principals/{id}/access` answers before
 * the batch is applied and after, compared entry by entry. Only the principals a batch can reach
 * are looked at — those it names, the members of the groups it names, the subjects of the
 * policies it names (old and new versions), and the subjects of the policies covering the
 * resources it names — never everyone. Beside it, what each delegate reaches acting for its
 * delegator (`/access?on_behalf_of=`), for the delegations the batch names and those the
 * principals it reaches give or receive.
 */

/**
 * One principal's access to one resource (or policy glob) that a batch moved. With no action
 * gained or lost it is quiet: the entry is held otherwise (through other policies or paths), which
 * the history keeps for `as_of` but does not list or announce.
 */
export interface AccessDelta {
  principal_id: string;
  /** The principal as the index holds it after the batch (as it held it before, when gone since). */
  principal: PrincipalSummary;
  resource: { type: string; identifier: string; pattern?: true };
  actions_gained: string[];
  actions_lost: string[];
  /**
   * How the policies behind the gains (as they are after) and the losses (as they were before)
   * reached the principal, in policy id order.
   */
  via: GrantExplained[];
  /** The whole entry before and after (null where there was none): what `as_of` reads back. */
  before: EntryState | null;
  after: EntryState | null;
  /**
   * For access while acting for another principal (`/access?on_behalf_of=`), which a delegation
   * made, revoked or expired moved: that principal. Its `via` then says `delegation`.
   */
  on_behalf_of?: PrincipalSummary;
  /** Keys of the batch that named it, beyond those its principal, policies and resource give. */
  named_by?: string[];
}

/** What a principal holds on one resource: the actions, and how each policy reaches it. */
export interface EntryState {
  actions: string[];
  /** Actions an unconditional deny removes from a wildcard of `actions`, when there are. */
  denied_actions?: string[];
  via: GrantExplained[];
  conditional: boolean;
}

export interface PrincipalSummary {
  id: string;
  name: string;
  type: string;
}

/** One entry of what `/access` answers for one principal. */
export interface ViewEntry extends EntryState {
  type: string;
  identifier: string;
  pattern: boolean;
}

/** What `/access` answers for one principal, keyed by resource. */
export type AccessView = Map<string, ViewEntry>;

export const keyOf = (type: string, identifier: string, pattern: boolean): string =>
  `${type}\u0000${identifier}\u0000${pattern ? 1 : 0}`;

/**
 * A principal's access as the index holds it now (an inactive or unknown principal has none),
 * through `overlay` when given: the policies it names as they were; with `at` (epoch ms), the
 * policies' windows as they stood at that instant.
 */
export function accessView(
  index: PolicyIndex,
  id: string,
  overlay?: Overlay,
  at?: number,
  /** The principal as `principalView` read it, when the caller has it: it is not read again. */
  known?: IxPrincipal,
  /** Only the entries of what a batch of policies alone touches: the view of those alone. */
  touched?: Touched,
  /** Views made for other principals while the index stands as it is, to take again (`ViewMemo`). */
  memo?: ViewMemo,
): AccessView {
  const p = known ?? index.principalView(id);
  if (!p || p.status !== 'active') return new Map();
  if (memo) return memo.view(index, p, overlay, at, touched);
  return viewOf(entriesOf(index, p, overlay, at, touched), explainer(index, p, overlay));
}

/**
 * The views of many principals, each made once per way of holding access, for as long as the
 * index stands as it is. What `/access` lists for a principal is a function of the grants
 * reaching it (the same versions of the same policies, settled alike) and, for an AI agent, of
 * its tools: principals holding the same ones share their entries. Where each policy behind
 * them reaches the principals the same way without a group path (a path names the principal),
 * they share the view too, which `ViewDiffs` then compares once: a policy reaching 50,000
 * principals by `match` makes one view before, one after, and one difference.
 */
export class ViewMemo {
  private readonly numbers = new WeakMap<Grant, number>();
  private numbered = 0;
  private readonly entries = new Map<string, AccessEntry[]>();
  private readonly views = new Map<string, AccessView>();

  /** A principal's view as `accessView` makes it (the principal active). */
  view(index: PolicyIndex, p: IxPrincipal, overlay?: Overlay, at?: number, touched?: Touched): AccessView {
    const grants = grantsFor(index, p, overlay, at, touched);
    let key = '';
    for (const grant of grants) key += `${this.numberOf(grant)},`;
    const tools = toolsOf(p);
    if (tools !== undefined) key += `|${JSON.stringify(tools)}`;
    let entries = this.entries.get(key);
    if (!entries) {
      entries = entriesFrom(index, p, grants, touched);
      this.entries.set(key, entries);
    }
    const explain = explainer(index, p, overlay);
    key += '|';
    for (const e of entries) {
      for (const id of e.granted_by) {
        const how = explain(id);
        if (how.path) return viewOf(entries, explain);
        key += how.via === 'principal' ? 'p' : 'm';
      }
    }
    let view = this.views.get(key);
    if (!view) {
      view = viewOf(entries, explain);
      this.views.set(key, view);
      sharedViews.add(view);
    }
    return view;
  }

  private numberOf(grant: Grant): number {
    let n = this.numbers.get(grant);
    if (n === undefined) {
      n = this.numbered++;
      this.numbers.set(grant, n);
    }
    return n;
  }
}

/** Views `ViewMemo` made for many principals: they name none of them, and nothing changes them. */
const sharedViews = new WeakSet<AccessView>();

/** `diffViews`, worked out once for each pair of views `ViewMemo` shares and named for each principal. */
class ViewDiffs {
  private readonly diffs = new Map<AccessView, Map<AccessView, AccessDelta[]>>();

  diff(principal: PrincipalSummary, before: AccessView, after: AccessView): AccessDelta[] {
    if (!sharedViews.has(before) || !sharedViews.has(after)) return diffViews(principal, before, after);
    let from = this.diffs.get(before);
    if (!from) {
      from = new Map();
      this.diffs.set(before, from);
    }
    let deltas = from.get(after);
    if (!deltas) {
      deltas = diffViews(ANYONE, before, after);
      from.set(after, deltas);
    }
    return deltas.length === 0
      ? deltas
      : deltas.map((d) => ({ ...d, principal_id: principal.id, principal }));
  }
}

/** Who a difference worked out for many principals is made for, until each is named. */
const ANYONE: PrincipalSummary = { id: '', name: '', type: '' };

/** The grants reaching an active principal, settled for it, through `overlay` and at `at` when given. */
const grantsFor = (
  index: PolicyIndex,
  p: IxPrincipal,
  overlay?: Overlay,
  at?: number,
  touched?: Touched,
): Grant[] => settleFor(index, p, grantsOf(index, p, overlay, at, touched?.among));

/** What `/access` lists for an active principal holding `grants` (its tools read, for an agent). */
const entriesFrom = (index: PolicyIndex, p: IxPrincipal, grants: readonly Grant[], touched?: Touched) =>
  accessEntries(grants, registeredMatching(index), p, { only: touched?.only });

/** What `/access` lists for an active principal, through `overlay` and at `at` when given. */
const entriesOf = (
  index: PolicyIndex,
  p: IxPrincipal,
  overlay?: Overlay,
  at?: number,
  touched?: Touched,
): AccessEntry[] => entriesFrom(index, p, grantsFor(index, p, overlay, at, touched), touched);

/** What a batch of policies alone can move, for every principal it reaches. */
export interface Touched {
  /** The resources (and globs) some version of the policies names. */
  only: CandidateFilter;
  /**
   * The active policies of the index that name one of them (exactly or by a glob covering it),
   * when those resources are all exact and the policies few: only these can make an entry `only`
   * keeps, so each is checked against a principal instead of gathering all that select it.
   */
  among?: readonly IxPolicy[];
}

/** Beyond this many policies naming what a batch touches, each principal's are gathered instead. */
const CHECKED_ONE_BY_ONE = 64;

/**
 * What a batch changing these policies alone touches: the resources (and globs) some version of
 * them names. An entry is made of the grants covering its resource (`entryFor`), so an entry
 * none of them covers is made of the same grants before and after.
 */
function touchedBy(index: PolicyIndex, policies: Iterable<IxPolicy | null | undefined>): Touched {
  const versions = [...policies].filter((p): p is IxPolicy => !!p);
  const only = coveredBy(versions.map(grantOf));
  const among = new Set<IxPolicy>();
  for (const policy of versions) {
    for (const r of policy.resources) {
      // A glob also touches what narrower globs and exact identifiers under it name.
      if (r.glob) return { only };
      for (const named of index.candidates(r.type, r.identifier)) among.add(named);
      if (among.size > CHECKED_ONE_BY_ONE) return { only };
    }
  }
  return { only, among: [...among] };
}

/**
 * What bears on one resource: its own entry and the globs of its type covering it, which only
 * the active policies naming it (exactly or by such a glob) make. A view through it holds those
 * entries alone, as the whole view holds them.
 */
export function touchedOn(index: PolicyIndex, type: string, identifier: string): Touched {
  const covers = globsMatching(identifier);
  const only: CandidateFilter = {
    types: new Set([type]),
    keeps: (t, id, pattern) => t === type && (pattern ? covers(id) : id === identifier),
  };
  const among = index.candidates(type, identifier);
  return among.length > CHECKED_ONE_BY_ONE ? { only } : { only, among };
}

/** `/access` entries as a view, each policy behind an entry said by `explain`. */
function viewOf(entries: readonly AccessEntry[], explain: (policyId: string) => GrantExplained): AccessView {
  const view: AccessView = new Map();
  for (const e of entries) {
    const pattern = e.pattern === true;
    view.set(keyOf(e.resource.type, e.resource.identifier, pattern), {
      type: e.resource.type,
      identifier: e.resource.identifier,
      pattern,
      actions: e.actions,
      ...(e.denied_actions ? { denied_actions: e.denied_actions } : {}),
      via: e.granted_by.map(explain),
      conditional: e.conditional,
    });
  }
  return view;
}

/**
 * What a delegate may reach acting for its delegator, as `/access?on_behalf_of=<delegator>`
 * answers it (one link), at `at` (epoch ms; now when not given): nothing when either is not
 * active or no delegation between them is in force. `without` leaves out delegations and
 * `overlay` puts policies back as they were (what a batch changed, for the access before it).
 */
export function delegatedView(
  index: PolicyIndex,
  delegateId: string,
  delegatorId: string,
  at?: number,
  without?: ReadonlySet<string>,
  /** The policies it names as they were (see `accessView`). */
  overlay?: Overlay,
): AccessView {
  const agent = index.principalView(delegateId);
  const delegator = index.principalView(delegatorId);
  if (agent?.status !== 'active' || delegator?.status !== 'active') return new Map();
  const instant = at ?? Date.now();
  const link = index
    .delegationsBetween(delegatorId, delegateId)
    .filter((d) => d.expiresAt > instant && !without?.has(d.id));
  if (link.length === 0) return new Map();
  const path = [agent, delegator].map((p, i) => ({
    id: i === 0 ? delegateId : delegatorId,
    name: p.name,
    type: p.type,
  }));
  const entries = intersectAccess(
    entriesOf(index, agent, overlay, at),
    [entriesOf(index, delegator, overlay, at)],
    [link],
  );
  return viewOf(entries, (id) => ({
    policy_id: id,
    policy_name: (overlay?.has(id) ? overlay.get(id) : index.policies.get(id))?.name ?? '',
    via: 'delegation',
    path,
  }));
}

/**
 * How each policy reaches a principal as the index holds it now (a policy of the overlay as it
 * was), worked out once per policy: as an explained `/access` answer says it, path included.
 */
function explainer(index: PolicyIndex, p: IxPrincipal, overlay?: Overlay): (id: string) => GrantExplained {
  const done = new Map<string, GrantExplained>();
  return (id) => {
    let explained = done.get(id);
    if (explained) return explained;
    const policy = overlay?.has(id) ? overlay.get(id) : index.policies.get(id);
    const via = policy ? index.subjectVia(policy, p) : null;
    explained = {
      policy_id: id,
      policy_name: policy?.name ?? '',
      via: via ?? 'match',
      ...(via === 'group' && policy ? { path: groupPath(index, policy, p) } : {}),
    };
    done.set(id, explained);
    return explained;
  };
}

/** The entries of one principal that differ between two views, in resource order. */
export function diffViews(principal: PrincipalSummary, before: AccessView, after: AccessView): AccessDelta[] {
  const out: AccessDelta[] = [];
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const was = before.get(key);
    const now = after.get(key);
    const had = new Set(was?.actions ?? []);
    const has = new Set(now?.actions ?? []);
    const gained = [...has].filter((a) => !had.has(a)).sort();
    const lost = [...had].filter((a) => !has.has(a)).sort();
    // The same actions: no access change, but one `as_of` must know of when how the entry is held
    // changed (the policies behind it, their paths, a deny, a condition): a quiet one.
    if (gained.length === 0 && lost.length === 0 && (!was || !now || sameHold(was, now))) continue;
    const entry = (now ?? was)!;
    out.push({
      principal_id: principal.id,
      principal,
      resource: {
        type: entry.type,
        identifier: entry.identifier,
        ...(entry.pattern ? { pattern: true as const } : {}),
      },
      actions_gained: gained,
      actions_lost: lost,
      via:
        gained.length + lost.length === 0
          ? now!.via
          : viaOf(gained.length > 0 ? now : undefined, lost.length > 0 ? was : undefined),
      before: was ? stateOf(was) : null,
      after: now ? stateOf(now) : null,
    });
  }
  return out;
}

/**
 * Whether an entry is held the same way in two views (the actions aside): what `stateOf` gives
 * of each is equal, field by field (the same as comparing their JSON, without making it).
 */
export const sameHold = (a: EntryState, b: EntryState): boolean =>
  a.conditional === b.conditional &&
  sameList(a.actions, b.actions) &&
  (a.denied_actions && b.denied_actions
    ? sameList(a.denied_actions, b.denied_actions)
    : !a.denied_actions && !b.denied_actions) &&
  sameVia(a.via, b.via);

/** Whether two lists of how policies reach a principal are equal, field by field. */
export const sameVia = (a: readonly GrantExplained[], b: readonly GrantExplained[]): boolean =>
  a.length === b.length && a.every((v, i) => sameGrant(v, b[i]!));

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

const sameGrant = (a: GrantExplained, b: GrantExplained): boolean =>
  a.policy_id === b.policy_id &&
  a.policy_name === b.policy_name &&
  a.via === b.via &&
  (a.path && b.path
    ? a.path.length === b.path.length &&
      a.path.every(
        (s, i) => s.id === b.path![i]!.id && s.name === b.path![i]!.name && s.type === b.path![i]!.type,
      )
    : !a.path && !b.path);

const stateOf = (e: ViewEntry): EntryState => ({
  actions: e.actions,
  ...(e.denied_actions ? { denied_actions: e.denied_actions } : {}),
  via: e.via,
  conditional: e.conditional,
});

/** What the first change of one entry after an instant says it was before: null when none. */
export interface EntryBefore {
  type: string;
  identifier: string;
  pattern: boolean;
  before: EntryState | null;
}

/**
 * A principal's access at an earlier instant, from its access now and, for each entry that
 * changed since (keyed as `keyOf` keys them), the first change after the instant: what that
 * change found before it held at the instant, and every other entry is as it is now.
 */
export function rewind(now: AccessView, firstAfter: ReadonlyMap<string, EntryBefore>): AccessView {
  const then: AccessView = new Map(now);
  for (const [key, { type, identifier, pattern, before }] of firstAfter) {
    if (before === null) then.delete(key);
    else then.set(key, { type, identifier, pattern, ...before });
  }
  return then;
}

/** The policies behind the gains and the losses, each once (as it is after when in both). */
function viaOf(gains: ViewEntry | undefined, losses: ViewEntry | undefined): GrantExplained[] {
  const out = new Map<string, GrantExplained>();
  for (const v of losses?.via ?? []) out.set(v.policy_id, v);
  for (const v of gains?.via ?? []) out.set(v.policy_id, v);
  return [...out.values()].sort((a, b) =>
    a.policy_id < b.policy_id ? -1 : a.policy_id > b.policy_id ? 1 : 0,
  );
}

/** The principals a batch naming `work` can move the access of, as the index stands. */
function reached(
  index: PolicyIndex,
  work: Pending,
  policies: Iterable<IxPolicy | null | undefined>,
  /** The rows some of `policies` selected, taken before the batch (`AccessChangeTracker.before`). */
  selected?: ReadonlyMap<IxPolicy, Int32Array>,
): Set<string> {
  const out = new Set<string>([...work.principals, ...work.memberships]);
  const add = (ids: Iterable<string>): void => {
    for (const id of ids) out.add(id);
  };
  for (const g of [...work.groups, ...work.removedGroups]) add(index.membersOf(g));
  for (const policy of policies) {
    if (!policy) continue;
    const rows = selected?.get(policy);
    if (rows) for (const row of rows) out.add(index.table.idOf(row));
    else add(index.subjectsOf(policy));
  }
  for (const key of work.resources) {
    const { type, identifier } = resourceOf(key);
    for (const policy of index.candidates(type, identifier)) add(index.subjectsOf(policy));
  }
  return out;
}

/** Whether a batch names policies and nothing else. */
const policiesAlone = (work: Pending): boolean =>
  work.principals.size === 0 &&
  work.memberships.size === 0 &&
  work.groups.size === 0 &&
  work.removedGroups.size === 0 &&
  work.resources.size === 0 &&
  work.delegations.size === 0;

const pairKey = (delegateId: string, delegatorId: string): string => `${delegateId}\u0000${delegatorId}`;
const splitPair = (key: string): [string, string] => key.split('\u0000') as [string, string];

/** Changes taken at a time while they are found (`AccessChangeTracker.after`), at least. */
const TAKEN_AT = 1_000;

/** Lets the event loop turn now and then (see `timeSlices`); never, when not given. */
export type Turn = () => Promise<void> | undefined;

/** A principal's id, name and type as the index holds it, when it does. */
export function summaryOf(index: PolicyIndex, id: string): PrincipalSummary | undefined {
  const p = index.principalView(id);
  return p && { id, name: p.name, type: p.type };
}

/**
 * Follows one batch through an index: `before` is called before the batch is applied, `after`
 * once it is, and answers the access the batch moved. Both take turns of the event loop between
 * principals when given `turn`: a policy reaching tens of thousands holds requests up by a slice
 * at most.
 */
export class AccessChangeTracker {
  private readonly views = new Map<string, AccessView>();
  private readonly summaries = new Map<string, PrincipalSummary | undefined>();
  private readonly previous = new Map<string, IxPolicy | null>();
  /**
   * The rows the policies with a `match` that a batch of policies alone names selected before it,
   * where the index kept them: once the batch is applied, a `match` no policy has any more would be
   * evaluated over every principal again to tell whom it selected.
   */
  private readonly selected = new Map<IxPolicy, Int32Array>();
  /** Delegate and delegator pairs the batch can reach, with what the delegate held acting for the other. */
  private readonly delegated = new Map<string, { view: AccessView; who: PrincipalSummary[] }>();
  private reachedCount = 0;
  /** The instant the access before the batch is taken at (undefined: now). */
  private readonly then: number | undefined;

  constructor(
    private readonly index: PolicyIndex,
    private readonly work: Pending,
    private readonly turn: Turn = () => undefined,
    /**
     * The instant (epoch ms) whose windows the access before the batch is taken at, when not now:
     * just before a window the batch records opening or closing did.
     */
    beforeAt?: number,
    /**
     * The instant (epoch ms) the batch was applied at, whose windows the access after it (and
     * before it, without `beforeAt`) is taken at: now when not given. Where the access is read
     * later than the batch was applied (on a decision thread), a window that opened meanwhile
     * belongs to its own change, not to this batch.
     */
    private readonly at?: number,
  ) {
    this.then = beforeAt ?? at;
  }

  /**
   * Notes the policies the batch names as they are, and what the principals it can reach have
   * now. A batch of policies alone changes nothing else: what anyone had before it is what they
   * have after it with those policies as they were, which `after` reads then (without holding the
   * batch up here, and one principal at a time as it goes); of those policies, only whom they
   * select is taken now, where the index holds it.
   */
  async before(): Promise<void> {
    const { index, work } = this;
    for (const id of work.policies) this.previous.set(id, index.policies.get(id) ?? null);
    if (policiesAlone(work)) {
      // Only a `match` loses its set with its policy: groups and listed principals stay at hand.
      for (const policy of this.previous.values()) {
        if (policy?.match && index.subjectsAtHand(policy))
          this.selected.set(policy, index.subjectRows(policy).toArray());
      }
      return;
    }
    const ids = reached(index, work, this.previous.values());
    const memo = new ViewMemo();
    for (const id of ids) {
      const p = index.principalView(id);
      this.views.set(id, accessView(index, id, undefined, this.then, p, undefined, memo));
      this.summaries.set(id, p && { id, name: p.name, type: p.type });
      await this.turn();
    }
    for (const [key, [delegateId, delegatorId]] of this.pairs(ids)) {
      this.delegated.set(key, {
        view: delegatedView(index, delegateId, delegatorId, this.then),
        who: [delegateId, delegatorId].map((id) => summaryOf(index, id) ?? { id, name: '', type: '' }),
      });
      await this.turn();
    }
  }

  /**
   * Whose access acting for another the batch can move, as delegate and delegator: the pairs its
   * delegations join, and those of every delegation the principals it reaches give or receive
   * (what an agent reaches for someone is also what each of them reaches).
   */
  private pairs(ids: Iterable<string>): Map<string, [string, string]> {
    const out = new Map<string, [string, string]>();
    const add = (d: IxDelegation | undefined): void => {
      if (d) out.set(pairKey(d.delegateId, d.delegatorId), [d.delegateId, d.delegatorId]);
    };
    const { delegations } = this.index;
    if (delegations.size === 0) return out;
    for (const id of this.work.delegations) add(delegations.get(id));
    for (const id of ids) {
      for (const d of delegations.received(id)) add(d);
      for (const d of delegations.given(id)) add(d);
    }
    return out;
  }

  /** How many principals the batch reaches, before or after it: known once `after` has begun. */
  get reached(): number {
    return this.reachedCount;
  }

  /**
   * What moved. A principal the batch reaches only now (a new policy selects it) had, before, what
   * it has now with the policies the batch names as they were: nothing else of it changed, or it
   * would have been reached before.
   */
  async after(
    /**
     * Takes the changes as they are found, a few thousand at a time, in order; the rest (those of
     * acting for another among them) are answered.
     */
    take?: (deltas: AccessDelta[]) => Promise<void>,
  ): Promise<AccessDelta[]> {
    const { index, work } = this;
    const now = [...work.policies].map((id) => index.policies.get(id));
    const alone = policiesAlone(work);
    const ids = new Set([
      ...(alone ? reached(index, work, this.previous.values(), this.selected) : this.views.keys()),
      ...reached(index, work, now),
    ]);
    this.reachedCount = ids.size;
    const overlay: Overlay = this.previous;
    // Policies alone move only the entries of what they name: the rest are not read.
    const touched = alone ? touchedBy(index, [...this.previous.values(), ...now]) : undefined;
    const memo = new ViewMemo();
    const diffs = new ViewDiffs();
    let out: AccessDelta[] = [];
    for (const id of [...ids].sort()) {
      // Read once, for both views and the summary.
      const p = index.principalView(id);
      const before = this.views.get(id) ?? accessView(index, id, overlay, this.then, p, touched, memo);
      const who = (p && { id, name: p.name, type: p.type }) ??
        this.summaries.get(id) ?? { id, name: '', type: '' };
      const now = accessView(index, id, undefined, this.at, p, touched, memo);
      for (const delta of diffs.diff(who, before, now)) out.push(delta);
      if (take && out.length >= TAKEN_AT) {
        await take(out);
        out = [];
      }
      await this.turn();
    }
    out.push(...(await this.delegatedChanges(ids)));
    return out;
  }

  /** What acting for another moved, for the pairs the batch can reach before or after it. */
  private async delegatedChanges(ids: Iterable<string>): Promise<AccessDelta[]> {
    const { index, work } = this;
    const pairs = this.pairs(ids);
    for (const [key] of this.delegated) if (!pairs.has(key)) pairs.set(key, splitPair(key));
    const out: AccessDelta[] = [];
    for (const [key, [delegateId, delegatorId]] of [...pairs].sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    )) {
      const known = this.delegated.get(key);
      // A pair first reached now (a delegation the batch makes, or a policy that selects one of
      // them only now) held before it what it holds without them: nothing else of it changed.
      const before =
        known?.view ??
        delegatedView(index, delegateId, delegatorId, this.then, work.delegations, this.previous);
      const after = delegatedView(index, delegateId, delegatorId, this.at);
      const [agent, delegator] = [delegateId, delegatorId].map(
        (id, i) => summaryOf(index, id) ?? known?.who[i] ?? { id, name: '', type: '' },
      );
      // Beyond the agent's own keys: the delegator's, and the batch's delegations.
      const named = [
        `principals:${delegatorId}`,
        `memberships:${delegatorId}`,
        ...[...work.delegations].map((id) => `delegations:${id}`),
      ];
      for (const delta of diffViews(agent!, before, after)) {
        out.push({ ...delta, on_behalf_of: delegator!, named_by: named });
      }
      await this.turn();
    }
    return out;
  }
}
