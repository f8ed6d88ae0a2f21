import { RowSet } from '../columnar/row-set.js';
import type { SectionSink, SectionSource } from '../columnar/sections.js';
import type { Policy } from '../policies/model.js';
import type { Glob } from '../policies/patterns.js';
import { GroupTable } from './group-table.js';
import {
  compilePolicy,
  policySource,
  type IxDelegation,
  type IxPolicy,
  type IxPrincipal,
  type IxResource,
} from './model.js';
import { DelegationTable } from './delegation-table.js';
import { addTo, removeFrom, ResourcePolicies } from './policy-lookup.js';
import type { PrincipalFields } from './model.js';
import { MatchSets } from './match-sets.js';
import { fieldsOf, PrincipalTable, TablePrincipal } from './principal-table.js';
import { ResourceTable } from './resource-table.js';

const NO_ENTRIES: readonly never[] = Object.freeze([]);

/** A group as the index shows it. */
export interface IxGroupView {
  readonly id: string;
  readonly name: string;
  /** Groups it is nested in, directly. */
  readonly parents: ReadonlySet<string>;
}

/**
 * The decision index: every policy (active ones indexed for lookup by resource and by subject),
 * every principal with its direct groups, the group nesting, the registered resources and the
 * active delegations, all in memory, so that a decision needs no database round trip. It is
 * built from Neo4j at start and kept current by src/decisions/sync.ts; `version` counts the
 * changes applied.
 *
 * Principals, groups, memberships and resources are tables of typed arrays outside the
 * JavaScript heap (src/decisions/principal-table.ts, group-table.ts, resource-table.ts); the
 * principals each `match` query selects, and the members of a group at any depth, are row sets.
 * Delegations are a table too (src/decisions/delegation-table.ts); policies, which are few, are
 * objects. `principals` and `groups` answer as maps
 * do, making the object asked for from the tables.
 */
/** Everything the index holds, replaced as one when a full build is swapped in. */
class IndexData {
  readonly table = new PrincipalTable();
  readonly groupTable = new GroupTable(this.table.strings);
  readonly resourceTable = new ResourceTable();
  readonly policies = new Map<string, IxPolicy>();
  readonly byResource = new ResourcePolicies();
  readonly book = new DelegationTable(this.table);
  /** Active policies naming a principal by id, and naming a group. */
  readonly byPrincipal = new Map<string, Set<IxPolicy>>();
  readonly byGroup = new Map<string, Set<IxPolicy>>();
  /** Active policies with a `match` query, grouped by query, with the rows it selects. */
  readonly matching = new MatchSets(this.table);
  /** The group numbers of each policy's groups (numbers never change once given). */
  readonly groupNumbers = new WeakMap<IxPolicy, Int32Array>();
}

export class PolicyIndex {
  version = 0;
  private data = new IndexData();
  /** The principal last made from a row, and that row: what a decision asks about next. */
  private lastMade: IxPrincipal | undefined;
  private lastRow = -1;

  get table(): PrincipalTable {
    return this.data.table;
  }
  get groupTable(): GroupTable {
    return this.data.groupTable;
  }
  get resourceTable(): ResourceTable {
    return this.data.resourceTable;
  }
  get policies(): Map<string, IxPolicy> {
    return this.data.policies;
  }
  private get byResource(): ResourcePolicies {
    return this.data.byResource;
  }
  private get book(): DelegationTable {
    return this.data.book;
  }
  private get byPrincipal(): Map<string, Set<IxPolicy>> {
    return this.data.byPrincipal;
  }
  private get byGroup(): Map<string, Set<IxPolicy>> {
    return this.data.byGroup;
  }
  private get matching(): MatchSets {
    return this.data.matching;
  }
  private get groupNumbers(): WeakMap<IxPolicy, Int32Array> {
    return this.data.groupNumbers;
  }

  /**
   * Takes everything another index holds (one built beside this one from the database), at
   * once: a decision sees either all of the old contents or all of the new. The other index is
   * left empty.
   */
  replaceWith(built: PolicyIndex): void {
    this.data = built.data;
    built.data = new IndexData();
    this.lastMade = undefined;
    this.lastRow = -1;
    this.version += 1;
  }

  /** Principals by id, as a read-only map. */
  readonly principals = {
    get: (id: string): IxPrincipal | undefined => {
      const row = this.table.rowOf(id);
      return row < 0 ? undefined : this.principalAt(row);
    },
    has: (id: string): boolean => this.table.rowOf(id) >= 0,
    get size(): number {
      return this.owner.table.size;
    },
    keys: (): IterableIterator<string> => this.ids(),
    values: (): IterableIterator<IxPrincipal> => this.everyPrincipal(),
    owner: this as PolicyIndex,
  };

  /** Groups by id (a group only named by a membership or a nesting shows with no name). */
  readonly groups = {
    get: (id: string): IxGroupView | undefined => {
      const g = this.groupTable.numberOf(id);
      return g < 0 ? undefined : this.groupAt(g);
    },
    get size(): number {
      return this.owner.groupTable.size;
    },
    values: (): IterableIterator<IxGroupView> => this.everyGroup(),
    owner: this as PolicyIndex,
  };

  /** Active delegations by id, as a read-only map does. */
  get delegations(): Pick<DelegationTable, 'get' | 'has' | 'size' | 'values' | 'received' | 'given'> {
    return this.book;
  }

  /** Bytes the tables hold outside the JavaScript heap. */
  get offHeapBytes(): number {
    return (
      this.table.bytes +
      this.groupTable.bytes +
      this.resourceTable.bytes +
      this.matching.bytes +
      this.book.bytes
    );
  }

  /**
   * A principal by id as one decision reads it: its fields decoded only when read (see
   * `TablePrincipal`); undefined when the index does not hold it.
   */
  principalView(id: string): IxPrincipal | undefined {
    const row = this.table.rowOf(id);
    return row < 0 ? undefined : this.principalViewAt(row);
  }

  /** The principal of a row as `principalView` makes it. */
  principalViewAt(row: number): IxPrincipal {
    return new TablePrincipal(this.table, row, this.directGroups);
  }

  private readonly directGroups = (row: number): string[] => this.groupTable.directGroupIds(row);

  /** The principal of a row as the engine reads it. */
  principalAt(row: number): IxPrincipal {
    const p = this.table.principal(row, this.groupTable.directGroupIds(row));
    this.lastMade = p;
    this.lastRow = row;
    return p;
  }

  // ---- lookups ----

  /**
   * The principals (deleted ones aside) whose connector id is `ref`, and those whose email is
   * `ref` ignoring case: what a standard interface naming principals so may mean.
   */
  principalsNamed(ref: string): { byConnectorId: IxPrincipal[]; byEmail: IxPrincipal[] } {
    return {
      byConnectorId: this.table.rowsWithConnectorId(ref).map((row) => this.principalAt(row)),
      byEmail: this.table.rowsWithEmail(ref.toLowerCase()).map((row) => this.principalAt(row)),
    };
  }

  /** The AI agents (deleted ones aside) whose `attributes.client_id` is `clientId`. */
  agentsWithClientId(clientId: string): IxPrincipal[] {
    return this.table.rowsWithClientId(clientId).map((row) => this.principalAt(row));
  }

  /**
   * Active policies naming this resource (exactly or by a glob), in no particular order. The
   * list is shared: callers must not change it. A glob's own text asks for the globs covering it.
   */
  candidates(type: string, identifier: string): readonly IxPolicy[] {
    return this.byResource.candidates(type, identifier);
  }

  /** Whether a policy selects a principal (by id). */
  selects(policy: IxPolicy, id: string): boolean {
    if (policy.principals.has(id)) return true;
    const row = this.table.rowOf(id);
    return row >= 0 && this.selectsRow(policy, row);
  }

  /** Whether a policy selects a principal's row through its groups or its `match` query. */
  selectsRow(policy: IxPolicy, row: number): boolean {
    if (this.inPolicyGroups(policy, row)) return true;
    return policy.match !== null && this.matchHas(policy, row);
  }

  /** Whether a policy's `match` query selects a principal's row. */
  matchSelects(policy: IxPolicy, row: number): boolean {
    return policy.match !== null && this.matchHas(policy, row);
  }

  /** How a policy selects a principal, if it does. */
  subjectVia(policy: IxPolicy, p: IxPrincipal): 'principal' | 'group' | 'match' | null {
    if (policy.principals.has(p.id)) return 'principal';
    const row = this.rowOfPrincipal(p);
    if (row >= 0) {
      if (policy.groups.length > 0 && this.inPolicyGroups(policy, row)) return 'group';
      if (policy.match !== null) return this.matchHas(policy, row) ? 'match' : null;
      return null;
    }
    // A principal the index does not hold: decided from the object alone.
    for (const g of policy.groups) if (this.inGroup(p, g)) return 'group';
    return policy.match && policy.match(p) ? 'match' : null;
  }

  /** Whether the principal is in the group, directly or through nested groups. */
  inGroup(p: IxPrincipal, groupId: string): boolean {
    const g = this.groupTable.numberOf(groupId);
    if (g < 0) return false;
    for (const direct of p.groups) {
      const d = this.groupTable.numberOf(direct);
      if (d >= 0 && this.groupTable.ancestors(d).includes(g)) return true;
    }
    return false;
  }

  /** Every group the principal is in, through nesting. */
  groupsOf(p: IxPrincipal): Set<string> {
    const out = new Set<string>();
    for (const direct of p.groups) {
      const d = this.groupTable.numberOf(direct);
      if (d < 0) continue;
      for (const a of this.groupTable.ancestors(d)) out.add(this.groupTable.idOf(a));
    }
    return out;
  }

  /** Every principal in the group, through nested groups, as rows. */
  memberRows(groupId: string): RowSet {
    const g = this.groupTable.numberOf(groupId);
    return g < 0 ? new RowSet() : this.groupTable.transitive(g);
  }

  /** Every principal in the group, through nested groups. */
  membersOf(groupId: string): ReadonlySet<string> {
    const out = new Set<string>();
    this.memberRows(groupId).forEach((row) => out.add(this.table.idOf(row)));
    return out;
  }

  /**
   * The shortest membership path from a principal to a group: principal → group → … → group,
   * for `explain`. Undefined when the principal is not in it.
   */
  membershipPath(p: IxPrincipal, groupId: string): string[] | undefined {
    const g = this.groupTable.numberOf(groupId);
    const row = this.rowOfPrincipal(p);
    if (g < 0 || row < 0) return undefined;
    const path = this.groupTable.pathTo(row, g);
    return path && [p.id, ...path.map((n) => this.groupTable.idOf(n))];
  }

  /** Active policies selecting the principal: by id, through its groups, or by `match`. */
  policiesOf(p: IxPrincipal): Set<IxPolicy> {
    const out = new Set<IxPolicy>(this.byPrincipal.get(p.id) ?? []);
    for (const g of this.groupsOf(p)) for (const policy of this.byGroup.get(g) ?? []) out.add(policy);
    const row = this.rowOfPrincipal(p);
    for (const entry of this.matching.entries.values()) {
      if (row >= 0 ? entry.rows.has(row) : entry.match(p))
        for (const policy of entry.policies) out.add(policy);
    }
    return out;
  }

  /**
   * Active policies a member of the group would be selected by through it: those naming the
   * group or one it is nested in, at any depth.
   */
  policiesThroughGroup(groupId: string): Set<IxPolicy> {
    const out = new Set<IxPolicy>(this.byGroup.get(groupId) ?? []);
    const g = this.groupTable.numberOf(groupId);
    if (g >= 0) {
      for (const a of this.groupTable.ancestors(g))
        for (const policy of this.byGroup.get(this.groupTable.idOf(a)) ?? []) out.add(policy);
    }
    return out;
  }

  /** Ids of the active policies whose `match` query selects the principal. */
  matchPoliciesOf(p: IxPrincipal): string[] {
    const out: string[] = [];
    const row = this.rowOfPrincipal(p);
    for (const entry of this.matching.entries.values()) {
      if (row >= 0 ? entry.rows.has(row) : entry.match(p))
        for (const policy of entry.policies) out.push(policy.id);
    }
    return out;
  }

  /**
   * The row sets a policy's subjects come from: its principals, each group's members at any
   * depth, its `match` query's principals. A principal may be in more than one.
   */
  subjectRowSets(policy: IxPolicy): RowSet[] {
    const sets: RowSet[] = [];
    if (policy.principals.size > 0) {
      const rows: number[] = [];
      for (const id of policy.principals) {
        const row = this.table.rowOf(id);
        if (row >= 0) rows.push(row);
      }
      sets.push(RowSet.of(rows));
    }
    for (const g of policy.groups) sets.push(this.memberRows(g));
    if (policy.match) sets.push(this.matchRows(policy));
    return sets;
  }

  /**
   * Whether `subjectRowSets` of a policy is at hand: false for a `match` no active policy has
   * any more (a version replaced or deleted), which it evaluates over every principal at once.
   */
  subjectsAtHand(policy: IxPolicy): boolean {
    return !policy.match || this.matching.kept(policy);
  }

  /** Every principal a policy selects, active or not, as rows. */
  subjectRows(policy: IxPolicy): RowSet {
    const sets = this.subjectRowSets(policy);
    if (sets.length === 1) return sets[0]!;
    const out = new RowSet();
    for (const set of sets) set.forEach((row) => out.add(row));
    return out;
  }

  /** Every principal a policy selects, active or not. */
  subjectsOf(policy: IxPolicy): Set<string> {
    const out = new Set<string>();
    this.subjectRows(policy).forEach((row) => out.add(this.table.idOf(row)));
    return out;
  }

  get activePolicyCount(): number {
    let n = 0;
    for (const p of this.policies.values()) if (p.active) n += 1;
    return n;
  }

  registered(type: string, identifier: string): IxResource | undefined {
    return this.resourceTable.get(type, identifier);
  }

  /** Registered identifiers of a type that a glob matches. */
  registeredMatching(type: string, glob: Glob): string[] {
    return this.resourceTable.matching(type, glob);
  }

  /** Registered resources of a type. */
  registeredOf(type: string): Iterable<IxResource> {
    return this.resourceTable.ofType(type);
  }

  /** The active delegations from `delegatorId` to `delegateId` (expired ones may still be held). */
  delegationsBetween(delegatorId: string, delegateId: string): readonly IxDelegation[] {
    return this.book.between(delegatorId, delegateId);
  }

  /** The active delegations a principal receives. */
  delegationsReceived(delegateId: string): Iterable<IxDelegation> {
    return this.book.received(delegateId);
  }

  /** The active delegations a principal gives. */
  delegationsGiven(delegatorId: string): ReadonlySet<IxDelegation> {
    return this.book.given(delegatorId);
  }

  // ---- changes ----

  /** Puts an active delegation, or takes one out (undefined: revoked, expired or gone). */
  putDelegation(id: string, next: IxDelegation | undefined): void {
    this.book.put(id, next);
  }

  /**
   * Makes, together, the sets of the `match` queries of these policies that the index does not
   * keep yet, so that putting the policies costs no pass of its own. `turn` is called between
   * slices of the work and may return a promise to wait for (the event loop turning); principals
   * must not change until the policies are put.
   */
  prepareMatches(policies: Iterable<IxPolicy>, turn: () => Promise<void> | undefined): Promise<void> {
    return this.matching.addQueries(policies, turn);
  }

  /** Writes everything the index holds as sections (src/decisions/snapshot.ts makes the file). */
  save(out: SectionSink): void {
    this.table.save(out);
    this.groupTable.save(out);
    this.resourceTable.save(out);
    this.matching.save(out);
    out.json(
      'policies',
      [...this.policies.values()].map((p) => ({ source: policySource(p), since: [...p.subjectSince] })),
    );
    this.book.save(out);
    out.json('index', { version: this.version });
  }

  /** An index made from what `save` wrote. */
  static restore(source: SectionSource): PolicyIndex {
    const index = new PolicyIndex();
    const { data } = index;
    data.table.restore(source);
    data.groupTable.restore(source);
    data.resourceTable.restore(source);
    data.matching.restore(source);
    for (const { source: policy, since } of source.json<{ source: Policy; since: [string, number][] }[]>(
      'policies',
    ))
      index.putPolicy(compilePolicy(policy, since));
    data.book.restore(source);
    index.version = source.json<{ version: number }>('index').version;
    return index;
  }

  /** Empties the index (a benchmark measuring a build from nothing; the service swaps builds in). */
  clear(): void {
    this.replaceWith(new PolicyIndex());
  }

  putPolicy(policy: IxPolicy): void {
    this.removePolicy(policy.id);
    this.policies.set(policy.id, policy);
    if (!policy.active) return;
    this.byResource.add(policy);
    for (const id of policy.principals) addTo(this.byPrincipal, id, policy);
    for (const id of policy.groups) addTo(this.byGroup, id, policy);
    if (policy.match) this.matching.addPolicy(policy);
  }

  removePolicy(id: string): void {
    const old = this.policies.get(id);
    if (!old) return;
    this.policies.delete(id);
    if (!old.active) return;
    this.byResource.remove(old);
    for (const pid of old.principals) removeFrom(this.byPrincipal, pid, old);
    for (const gid of old.groups) removeFrom(this.byGroup, gid, old);
    if (old.matchKey !== null) this.matching.removePolicy(old);
  }

  /** A principal as now stored (undefined: it no longer exists), with its direct groups. */
  putPrincipal(id: string, next: IxPrincipal | undefined): void {
    this.putFields(id, next ? fieldsOf(next) : undefined, next?.groups ?? []);
  }

  /**
   * A principal as now stored, from the fields the index reads (undefined: it no longer exists),
   * with its direct groups. Returns its row (−1 when it left).
   */
  putFields(
    id: string,
    next: PrincipalFields | undefined,
    groups: readonly string[],
    /** When it joined each of `groups` (epoch ms; null or missing: unknown). */
    since?: readonly (number | null)[],
  ): number {
    this.lastMade = undefined;
    if (!next) {
      const known = this.table.rowOf(id);
      if (known < 0) return -1;
      const before = this.matching.candidates(known);
      this.groupTable.setMemberships(known, []);
      this.table.remove(known);
      this.matching.update(known, before);
      return -1;
    }
    const row = this.table.rowFor(id);
    const before = this.table.has(row) ? this.matching.candidates(row) : NO_ENTRIES;
    this.table.put(next, row);
    this.groupTable.setMemberships(row, groups, since);
    this.matching.update(row, before);
    return row;
  }

  /**
   * A principal's direct groups as now stored, its fields unchanged (a principal the index does
   * not hold is left alone). True when they changed.
   */
  putMemberships(id: string, groups: readonly string[], since?: readonly (number | null)[]): boolean {
    const row = this.table.rowOf(id);
    if (row < 0) return false;
    this.lastMade = undefined;
    return this.groupTable.setMemberships(row, groups, since);
  }

  /** A principal's privilege risk factors as now stored (JSON text). */
  setPrivileges(id: string, privileges: string): void {
    const row = this.table.rowOf(id);
    if (row >= 0) this.table.setPrivileges(row, privileges);
  }

  /**
   * A group as now stored: its name and the groups it is nested in (with when it was nested in
   * each, epoch ms). True when its nesting changed.
   */
  putGroup(
    id: string,
    name: string,
    parents: readonly string[],
    since?: readonly (number | null)[],
  ): boolean {
    return this.groupTable.put(id, name, parents, since);
  }

  /** A deleted group: its members and nested groups leave it. Returns the principals that were in it. */
  removeGroup(id: string): ReadonlySet<string> {
    this.lastMade = undefined;
    const out = new Set<string>();
    this.groupTable.remove(id).forEach((row) => out.add(this.table.idOf(row)));
    return out;
  }

  putResource(type: string, identifier: string, resource: IxResource | undefined): void {
    this.resourceTable.put(type, identifier, resource);
  }

  // ---- internals ----

  /** The row of a principal object, made by this index or not (−1: the index does not hold it). */
  private rowOfPrincipal(p: IxPrincipal): number {
    if (p === this.lastMade) return this.lastRow;
    if (p instanceof TablePrincipal && p.table === this.table) return p.row;
    return this.table.rowOf(p.id);
  }

  private inPolicyGroups(policy: IxPolicy, row: number): boolean {
    if (policy.groups.length === 0) return false;
    let numbers = this.groupNumbers.get(policy);
    if (!numbers || numbers.includes(-1)) {
      numbers = Int32Array.from(policy.groups, (g) => this.groupTable.numberOf(g));
      this.groupNumbers.set(policy, numbers);
    }
    for (let i = 0; i < numbers.length; i += 1) {
      const g = numbers[i]!;
      if (g >= 0 && this.groupTable.inGroup(row, g)) return true;
    }
    return false;
  }

  /** Whether a policy's `match` query selects a row: from the kept set, or evaluated. */
  private matchHas(policy: IxPolicy, row: number): boolean {
    return this.matching.has(policy, row);
  }

  /** The rows a policy's `match` query selects (computed anew for a query the index does not keep). */
  private matchRows(policy: IxPolicy): RowSet {
    return this.matching.rowsOf(policy);
  }

  private *ids(): IterableIterator<string> {
    for (let row = 0; row < this.table.rows; row += 1) if (this.table.has(row)) yield this.table.idOf(row);
  }

  private *everyPrincipal(): IterableIterator<IxPrincipal> {
    for (let row = 0; row < this.table.rows; row += 1) if (this.table.has(row)) yield this.principalAt(row);
  }

  private groupAt(g: number): IxGroupView {
    const groups = this.groupTable;
    return {
      id: groups.idOf(g),
      name: groups.nameOf(g),
      parents: new Set(groups.parentsOf(g).map((p) => groups.idOf(p))),
    };
  }

  private *everyGroup(): IterableIterator<IxGroupView> {
    const numbers: number[] = [];
    this.groupTable.forEach((g) => numbers.push(g));
    for (const g of numbers) yield this.groupAt(g);
  }
}
