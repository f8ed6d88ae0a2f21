import type { Reader } from '../db/database.js';
import { AppError, notFound } from '../errors/errors.js';
import type { Page } from '../pagination.js';
import { nowIso } from '../time.js';
import { evaluateConditions, readsOnlyPrincipal } from '../policies/conditions.js';
import type { Glob } from '../policies/patterns.js';
import { accessEntries, entryFor, entryGrants, type AccessEntry, type Grant } from './access.js';
import { coveringPolicies, groupPath, toolAllowed, type Overlay } from './engine.js';
import type { PolicyIndex } from './policy-index.js';
import type { PrincipalTable } from './principal-table.js';
import { intersectAccess } from './delegated-access.js';
import { inWindow, type IxDelegation, type IxPolicy, type IxPrincipal, type SubjectVia } from './model.js';
import { decisionRepository as repo, type PrincipalGrants } from './repository.js';

const grants = new WeakMap<IxPolicy, Grant>();

/** A compiled policy as a grant (the index does not know when it took effect). */
export function grantOf(policy: IxPolicy): Grant {
  let grant = grants.get(policy);
  if (!grant) {
    grant = {
      policyId: policy.id,
      effect: policy.effect,
      actions: policy.actions,
      conditional: policy.conditions !== null,
      resources: policy.resources,
      grantedAt: null,
      validUntil: policy.validUntilText,
      conditions: policy.conditions,
    };
    grants.set(policy, grant);
  }
  return grant;
}

const NO_RESOURCE = { type: '', identifier: '', attributes: {} };

/** Whether some condition of a grant reads the stored principal alone (`settleFor` decides those). */
function readsPrincipal(index: PolicyIndex, grant: Grant): boolean {
  if (!grant.conditional) return false;
  const conditions = grant.conditions ?? index.policies.get(grant.policyId)?.conditions;
  return conditions?.some(readsOnlyPrincipal) ?? false;
}
const settled = new WeakMap<Grant, Grant>();

/**
 * Grants as they stand for one principal. Conditions that read only the stored principal are
 * decided now: a policy with nothing else in its conditions grants unconditionally or not at all
 * (a deny applies unless its conditions are false, as decisions say), and one whose
 * principal-only conditions are false grants nothing whatever the request. So an entry is
 * `conditional` only where the request can change the answer.
 */
export function settleFor(index: PolicyIndex, p: IxPrincipal, grants: readonly Grant[]): Grant[] {
  const out: Grant[] = [];
  const input = { principal: p, resource: NO_RESOURCE, context: undefined };
  for (const grant of grants) {
    const conditions = grant.conditional
      ? (grant.conditions ?? index.policies.get(grant.policyId)?.conditions)
      : null;
    if (!conditions) {
      out.push(grant);
      continue;
    }
    const fixed = conditions.filter(readsOnlyPrincipal);
    if (fixed.length === 0) {
      out.push(grant);
      continue;
    }
    const outcome = evaluateConditions(fixed, input);
    if (outcome === 'false') continue;
    if (fixed.length < conditions.length) {
      out.push(grant);
      continue;
    }
    if (grant.effect === 'allow' && outcome !== 'true') continue;
    let unconditional = settled.get(grant);
    if (!unconditional) {
      unconditional = { ...grant, conditional: false };
      settled.set(grant, unconditional);
    }
    out.push(unconditional);
  }
  return out;
}

/**
 * Whether a policy takes effect at `now` (epoch milliseconds; read when first needed), as a
 * decision would see it: a time-bound policy outside its window does not.
 */
export function inEffect(policy: IxPolicy, now: () => number): boolean {
  return (policy.validFrom === null && policy.validUntil === null) || inWindow(policy, now());
}

/** Reads the clock once, when first asked, for everything one answer decides. */
export function clock(): () => number {
  let now: number | undefined;
  return () => (now ??= Date.now());
}

/**
 * The grants reaching a principal in the index now (policies outside their window left out),
 * seen through an overlay when one is given; with `at` (epoch ms), the windows are those of that
 * instant. With `among` (active policies of the index), only those of them that select it: a
 * caller that needs only the grants of a few policies checks each, rather than gathering every
 * policy the principal's groups and attributes reach.
 */
export function grantsOf(
  index: PolicyIndex,
  p: IxPrincipal,
  overlay?: Overlay,
  at?: number,
  among?: readonly IxPolicy[],
): Grant[] {
  const out: Grant[] = [];
  const now = at === undefined ? clock() : () => at;
  for (const policy of among ?? index.policiesOf(p)) {
    if (overlay?.has(policy.id) || !inEffect(policy, now)) continue;
    if (among && index.subjectVia(policy, p) === null) continue;
    out.push(grantOf(policy));
  }
  if (overlay) {
    for (const replacement of overlay.values()) {
      if (replacement?.active && inEffect(replacement, now) && index.subjectVia(replacement, p) !== null)
        out.push(grantOf(replacement));
    }
  }
  return out;
}

const NO_SUBJECTS: PrincipalGrants['subjects'] = new Map();

/** What the access of a principal is asked for: a resource type, an action. */
type AccessFilter = { resourceType?: string | undefined; action?: string | undefined };

/** A principal's access entries, with how the index knows it and how each policy selects it. */
interface Entries {
  known: IxPrincipal | undefined;
  subjects: PrincipalGrants['subjects'];
  entries: AccessEntry[];
}

/** Epoch ms as the API writes timestamps. */
const iso = (ms: number): string => new Date(ms).toISOString();

/** The later of two instants (epoch ms); an unknown one (undefined or NaN) does not count. */
const later = (a: number, b: number | undefined): number =>
  b === undefined || Number.isNaN(b) || b <= a ? a : b;

/**
 * The grants reaching a principal of the index now, each dated as the graph dates it
 * (cypher/access/principal.cypher): through each way the policy selects it, from the latest of
 * the principal's creation and the subject's coming to the policy (through a group, the
 * membership along the path that began latest, on the path that makes that earliest); over the
 * ways, the earliest; then no earlier than the policy's activation and the opening of its window.
 */
export function datedGrantsOf(index: PolicyIndex, p: IxPrincipal, row: number): Grant[] {
  const created = index.table.createdMs(row);
  const groups = index.groupTable;
  let joined: Map<number, number> | undefined;
  const now = clock();
  const out: Grant[] = [];
  for (const policy of index.policiesOf(p)) {
    if (!inEffect(policy, now)) continue;
    let since = Infinity;
    if (policy.principals.has(p.id)) since = later(created, policy.subjectSince.get(p.id));
    for (const g of policy.groups) {
      const n = groups.numberOf(g);
      if (n < 0) continue;
      joined ??= groups.sinceByGroup(row, created);
      const member = joined.get(n);
      if (member !== undefined) since = Math.min(since, later(member, policy.subjectSince.get(g)));
    }
    if (index.matchSelects(policy, row)) since = Math.min(since, created);
    if (since === Infinity) since = created;
    since = later(since, policy.activatedAt === null ? undefined : Date.parse(policy.activatedAt));
    since = later(since, policy.validFrom ?? undefined);
    out.push({ ...grantOf(policy), grantedAt: iso(since) });
  }
  return out;
}

/** Registered identifiers of a type that a glob matches, from the index. */
export function registeredMatching(index: PolicyIndex): (type: string, glob: Glob) => Iterable<string> {
  return (type, glob) => index.registeredMatching(type, glob);
}

/** How one policy of an entry's `granted_by` reaches the principal. */
export interface GrantExplained {
  policy_id: string;
  policy_name: string;
  /** `delegation` (the access history only): reached acting for another, the path delegate → delegator. */
  via: SubjectVia | 'delegation';
  /** For a group grant: principal → group → … → group, as the decision trace gives it. */
  path?: { id: string; name: string; type: string }[];
}

export interface AccessRecord {
  principal_id: string;
  access: (Omit<AccessEntry, 'granted_at'> & { granted_at: string; grants?: GrantExplained[] })[];
  total_resources: number;
  pagination?: { total: number; page: number; per_page: number; pages: number };
}

export interface ResourceAccess {
  resource: { type: string; identifier: string; registered: boolean };
  principals: {
    principal: { id: string; name: string; type: string; email: string | null };
    actions: string[];
    denied_actions?: string[];
    granted_by: string[];
    expires_at?: string;
    conditional: boolean;
  }[];
  pagination: { total: number; page: number; per_page: number; pages: number };
}

/** Principals by name, then id; the packed start of their names decides most comparisons at once. */
export function compareNames(a: IxPrincipal, b: IxPrincipal): number {
  if (a.order !== b.order) return a.order - b.order;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * One page of `items` in the order `compare` gives, without sorting them all when the page is
 * near the top: the first skip + limit are kept in a bounded heap.
 */
export function pageBy<T>(items: T[], page: Page, compare: (a: T, b: T) => number): T[] {
  const keep = page.skip + page.limit;
  if (keep >= items.length / 4) return items.sort(compare).slice(page.skip, keep);
  // A max-heap of the `keep` smallest so far: its top is the largest of them.
  const heap: T[] = [];
  const down = (at: number): void => {
    for (;;) {
      const l = 2 * at + 1;
      const r = l + 1;
      let top = at;
      if (l < heap.length && compare(heap[l]!, heap[top]!) > 0) top = l;
      if (r < heap.length && compare(heap[r]!, heap[top]!) > 0) top = r;
      if (top === at) return;
      [heap[at], heap[top]] = [heap[top]!, heap[at]!];
      at = top;
    }
  };
  for (const item of items) {
    if (heap.length < keep) {
      heap.push(item);
      for (let at = heap.length - 1; at > 0;) {
        const parent = (at - 1) >> 1;
        if (compare(heap[at]!, heap[parent]!) <= 0) break;
        [heap[at], heap[parent]] = [heap[parent]!, heap[at]!];
        at = parent;
      }
    } else if (compare(item, heap[0]!) < 0) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort(compare).slice(page.skip, keep);
}

const pagination = (total: number, page: Page) => ({
  total,
  page: page.page,
  per_page: page.limit,
  pages: Math.ceil(total / page.limit),
});

/**
 * Who can reach what: a principal's effective access, found by walking the graph in Neo4j
 * (docs/api.md §2), and everyone who can reach a resource (§5.6), from the decision index.
 */
export class AccessService {
  constructor(
    private readonly db: Reader,
    private readonly index: PolicyIndex,
  ) {}

  /**
   * With `explain`, each entry also says how each of its policies reaches the principal. With
   * `onBehalfOf` (a delegation chain, outermost delegator first), the entries are what the
   * principal may reach for them: the intersection of its own, each delegator's, and what the
   * delegations in force hand on (docs/api.md §10).
   */
  async principalAccess(
    id: string,
    filter: AccessFilter,
    page: Page | undefined,
    explain = false,
    onBehalfOf: readonly string[] = [],
  ): Promise<AccessRecord> {
    const own = await this.entriesFor(id, filter);
    if (!own) throw notFound('principal', id);
    const { known, subjects } = own;
    let entries = own.entries;
    if (onBehalfOf.length > 0 && !(onBehalfOf.length === 1 && onBehalfOf[0] === id)) {
      const delegators: AccessEntry[][] = [];
      for (const delegator of onBehalfOf) {
        const theirs = await this.entriesFor(delegator, filter);
        if (!theirs) {
          throw new AppError('REFERENCE_NOT_FOUND', `principal ${delegator} does not exist`, {
            errors: [{ pointer: '/on_behalf_of', message: `names no existing principal (${delegator})` }],
          });
        }
        delegators.push(theirs.entries);
      }
      const now = Date.now();
      const links = onBehalfOf.map((delegator, i) =>
        this.linkInForce(delegator, onBehalfOf[i + 1] ?? id, now),
      );
      entries = intersectAccess(entries, delegators, links);
    }
    const access = entries.map((e) => ({ ...e, granted_at: e.granted_at ?? '' }));
    const shown = page ? access.slice(page.skip, page.skip + page.limit) : access;
    let listed: AccessRecord['access'] = shown;
    if (explain) {
      const explained = this.explainer(known, subjects);
      listed = shown.map((e) => ({ ...e, grants: e.granted_by.map(explained) }));
    }
    if (!page) return { principal_id: id, access: listed, total_resources: access.length };
    return {
      principal_id: id,
      access: listed,
      total_resources: access.length,
      pagination: pagination(access.length, page),
    };
  }

  /**
   * A principal's entries: from the decision index, which holds every grant and when it took
   * effect, or, for a principal it does not hold yet (another instance made it a moment ago), from
   * a walk of the graph. Undefined when the principal does not exist.
   */
  private async entriesFor(id: string, filter: AccessFilter): Promise<Entries | undefined> {
    const row = this.index.table.rowOf(id);
    if (row < 0) return this.walkedEntries(id, filter);
    const known = this.index.principalAt(row);
    const entries =
      known.status !== 'active'
        ? []
        : accessEntries(
            settleFor(this.index, known, datedGrantsOf(this.index, known, row)),
            this.matchesNow(),
            known,
            filter,
          );
    return { known, subjects: NO_SUBJECTS, entries };
  }

  /**
   * A principal's entries as a walk of the graph finds them, whatever the index holds: what the
   * index's answer must agree with. Undefined when the principal does not exist.
   */
  async walkedAccess(id: string): Promise<AccessEntry[] | undefined> {
    return (await this.walkedEntries(id, {}))?.entries;
  }

  /** A principal's entries from its grants as the graph walk finds them; undefined when it does not exist. */
  private async walkedEntries(id: string, filter: AccessFilter): Promise<Entries | undefined> {
    const known = this.index.principals.get(id);
    const matched = known && known.status === 'active' ? this.index.matchPoliciesOf(known) : [];
    const found = await repo.principalGrants(this.db, id, matched, nowIso());
    if (!found) return undefined;
    const tools = found.allowedTools === null ? [] : [found.allowedTools].flat();
    const entries =
      found.status !== 'active'
        ? []
        : accessEntries(
            known ? settleFor(this.index, known, found.grants) : found.grants,
            (type, glob) => found.globMatches.get(`${type}:${glob.pattern}`) ?? [],
            { type: found.type, attributes: { allowed_tools: tools } },
            filter,
          );
    return { known, subjects: found.subjects, entries };
  }

  /** The delegations in force from one principal to another: unexpired, both principals active. */
  private linkInForce(delegatorId: string, delegateId: string, now: number): IxDelegation[] {
    const active = (pid: string): boolean => this.index.principalView(pid)?.status === 'active';
    if (!active(delegatorId) || !active(delegateId)) return [];
    return this.index.delegationsBetween(delegatorId, delegateId).filter((d) => d.expiresAt > now);
  }

  /**
   * How each policy reaches the principal, worked out once per policy however many entries it
   * grants. The decision index answers as an evaluation's trace does, path included, so the two
   * never tell different stories. Just after a change the index may not know the principal or
   * the policy yet (another instance made it): the walk of the graph that found the grant still
   * tells how, without a path, rather than failing the request.
   */
  private explainer(
    known: IxPrincipal | undefined,
    subjects: PrincipalGrants['subjects'],
  ): (policyId: string) => GrantExplained {
    const done = new Map<string, GrantExplained>();
    return (policyId) => {
      let explained = done.get(policyId);
      if (explained) return explained;
      const stored = subjects.get(policyId);
      const policy = this.index.policies.get(policyId);
      let via: SubjectVia = stored?.via ?? 'match';
      let path: GrantExplained['path'];
      const indexed = known && policy ? this.index.subjectVia(policy, known) : null;
      if (indexed) via = indexed;
      if (indexed === 'group' && known && policy) path = groupPath(this.index, policy, known);
      explained = {
        policy_id: policyId,
        policy_name: stored?.name ?? policy?.name ?? '',
        via,
        ...(path ? { path } : {}),
      };
      done.set(policyId, explained);
      return explained;
    };
  }

  /** Registered identifiers each glob matches, as of `matchedAt` (an index version). */
  private matched = new Map<string, readonly string[]>();
  private matchedAt = -1;

  /**
   * Registered identifiers a glob matches, remembered until the index changes: a review asks it
   * for every principal a glob policy reaches, and the answer depends on the glob alone.
   */
  private matchesNow(): (type: string, glob: Glob) => Iterable<string> {
    if (this.matchedAt !== this.index.version) {
      this.matched = new Map();
      this.matchedAt = this.index.version;
    }
    const scan = registeredMatching(this.index);
    return (type, glob) => {
      const key = `${type}\u0000${glob.pattern}`;
      let found = this.matched.get(key);
      if (found === undefined) {
        found = [...scan(type, glob)];
        if (this.matched.size >= 10_000) this.matched.clear();
        this.matched.set(key, found);
      }
      return found;
    };
  }

  /**
   * A principal's effective access from the decision index alone, without a round trip: what
   * the access review writes for every active principal. The access endpoint's traversal agrees
   * with it (the property tests hold the two together); only `granted_at` is not known here.
   */
  entriesOf(
    id: string,
  ):
    | { principal: { id: string; name: string; type: string; email: string | null }; entries: AccessEntry[] }
    | undefined {
    const p = this.index.principals.get(id);
    if (!p || p.status !== 'active') return undefined;
    const entries = accessEntries(settleFor(this.index, p, grantsOf(this.index, p)), this.matchesNow(), p);
    return { principal: { id: p.id, name: p.name, type: p.type, email: p.email }, entries };
  }

  /** Per principal row, the node of the tree of grant lists it has reached (0: none yet). */
  private scratch = new Int32Array(0);

  /**
   * Every active principal with access to a resource, and through which policies, from the
   * index's row sets: the principals the policies naming it select, each with the entry its own
   * grants make. Principals reached by the same list of policies share one node of a tree of
   * such lists (a row's node is a number in a scratch array, not an object), and an entry is
   * made once per node, unless a condition reading the principal may settle it differently for
   * each. Only the page is made into principal objects.
   */
  whoCanAccess(type: string, identifier: string, action: string | undefined, page: Page): ResourceAccess {
    const { resource, rows: found, entries } = this.reach(type, identifier, action);
    const table = this.index.table;
    const shown = pageBy(
      found.map((_, i) => i),
      page,
      (a, b) => table.compareRows(found[a]!, found[b]!),
    );
    return {
      resource,
      principals: shown.map((i) => resourceRow(principalAt(table, found[i]!), entries[i]!)),
      pagination: pagination(found.length, page),
    };
  }

  /**
   * The rows of every active principal with access to a resource (granting `action`, when
   * given), in no order, and beside each its entry for the resource (`whoCanAccess`).
   */
  reach(
    type: string,
    identifier: string,
    action: string | undefined,
  ): { resource: ResourceAccess['resource']; rows: number[]; entries: AccessEntry[] } {
    const { index } = this;
    const table = index.table;
    // Allows first: only principals some allow reaches can have access. Policies outside their
    // window take no part, as in a decision.
    const now = clock();
    const covering = coveringPolicies(index, type, identifier)
      .filter((policy) => inEffect(policy, now))
      .sort((a, b) => (a.effect === b.effect ? 0 : a.effect === 'allow' ? -1 : 1));
    const grants = covering.map(grantOf);
    const target = { type, identifier, pattern: false };
    if (this.scratch.length < table.rows) this.scratch = new Int32Array(Math.ceil(table.rows * 1.25));
    const node = this.scratch;
    // The tree: node 0 is the empty list; each other node is its parent's list and one grant more.
    const parent = [0];
    const last = [-1];
    const children = new Map<number, number>();
    const step = (from: number, grant: number): number => {
      const key = from * grants.length + grant;
      let to = children.get(key);
      if (to === undefined) {
        to = parent.length;
        parent.push(from);
        last.push(grant);
        children.set(key, to);
      }
      return to;
    };
    const touched: number[] = [];
    for (let i = 0; i < covering.length; i += 1) {
      const allow = grants[i]!.effect === 'allow';
      for (const rows of index.subjectRowSets(covering[i]!)) {
        rows.forEach((row) => {
          const at = node[row]!;
          if (at === 0) {
            if (!allow) return;
            node[row] = step(0, i);
            touched.push(row);
          } else if (last[at] !== i) node[row] = step(at, i);
        });
      }
    }
    const listOf = (at: number): Grant[] => {
      const list: Grant[] = [];
      for (; at !== 0; at = parent[at]!) list.push(grants[last[at]!]!);
      return list.reverse();
    };
    // Grants whose conditions read the principal settle differently for each principal.
    const personal = grants.map((g) => readsPrincipal(index, g));
    // Per node of the tree: whether a grant of its list reads the principal (-1: not yet known),
    // and the entry its list makes, with whether it grants the action asked for.
    const mine = new Int8Array(parent.length).fill(-1);
    const isMine = (at: number): boolean => {
      if (mine[at] === -1) {
        let found = 0;
        for (let n = at; n !== 0; n = parent[n]!) if (personal[last[n]!]) found = 1;
        mine[at] = found;
      }
      return mine[at] === 1;
    };
    const shared = new Array<AccessEntry | null | undefined>(parent.length);
    const sharedOf = (at: number): AccessEntry | null => {
      let entry = shared[at];
      if (entry === undefined) {
        entry = entryFor(target, listOf(at), true) ?? null;
        if (entry && action !== undefined && !entryGrants(entry, action)) entry = null;
        shared[at] = entry;
      }
      return entry;
    };
    // An AI agent reaches a tool only through its `allowed_tools` (toolAllowed's rule), read from
    // its row alone.
    const toolsKey = type === 'tool' ? table.strings.find('allowed_tools') : -2;
    const found: number[] = [];
    const entries: AccessEntry[] = [];
    for (const row of touched) {
      const at = node[row]!;
      if (!table.isActive(row)) continue;
      let entry: AccessEntry | null;
      let p: IxPrincipal | undefined;
      if (isMine(at)) {
        p = index.principalViewAt(row);
        entry = entryFor(target, settleFor(index, p, listOf(at)), true) ?? null;
        if (entry && action !== undefined && !entryGrants(entry, action)) entry = null;
      } else entry = sharedOf(at);
      if (!entry) continue;
      if (toolsKey !== -2 && table.typeOf(row) === 'AI_AGENT') {
        const tools = p
          ? p.attributes['allowed_tools']
          : toolsKey < 0
            ? undefined
            : table.attributeByCode(row, toolsKey);
        const attributes: Record<string, string | readonly string[]> =
          tools === undefined ? {} : { allowed_tools: tools };
        if (!toolAllowed({ type: 'AI_AGENT', attributes }, type, identifier)) continue;
      }
      found.push(row);
      entries.push(entry);
    }
    // The scratch array is left as it was found.
    for (const row of touched) node[row] = 0;
    return {
      resource: { type, identifier, registered: index.resourceTable.has(type, identifier) },
      rows: found,
      entries,
    };
  }
}

/** A principal of the index as a resource's access names it. */
export function principalAt(
  table: PrincipalTable,
  row: number,
): ResourceAccess['principals'][number]['principal'] {
  return { id: table.idOf(row), name: table.nameOf(row), type: table.typeOf(row), email: table.emailOf(row) };
}

/** What a resource's access says of one principal's entry for it. */
export type HolderEntry = Pick<
  AccessEntry,
  'actions' | 'denied_actions' | 'granted_by' | 'expires_at' | 'conditional'
>;

/** One principal with its entry for a resource, as a resource's access lists it. */
export function resourceRow(
  principal: ResourceAccess['principals'][number]['principal'],
  entry: HolderEntry,
): ResourceAccess['principals'][number] {
  return {
    principal,
    actions: entry.actions,
    ...(entry.denied_actions ? { denied_actions: entry.denied_actions } : {}),
    granted_by: entry.granted_by,
    ...(entry.expires_at !== undefined ? { expires_at: entry.expires_at } : {}),
    conditional: entry.conditional,
  };
}
