import type { SectionSink, SectionSource } from '../columnar/sections.js';
import { codes, NONE, StringPool } from '../columnar/strings.js';
import { u8 } from '../columnar/column.js';
import { ListArena } from '../columnar/lists.js';
import { RowSet } from '../columnar/row-set.js';

/**
 * The groups of the decision index and membership in both directions: each group a dense number
 * (its id's code), its nesting as sorted lists of group numbers up and down, its direct members
 * as a sorted list of principal rows, and each principal's direct groups as a sorted list of
 * group numbers, all in typed arrays. What is derived from them is kept beside: each group with
 * the groups it is nested in at any depth (small), and, once asked for, each group's members at
 * any depth as a row set, kept in step with every change of membership after that.
 */
export class GroupTable {
  readonly ids = new StringPool(1 << 16);
  /** 1 for a group that exists; 0 for one only named (as a parent or a membership) or removed. */
  private readonly exists = u8();
  private readonly name = codes();
  /** Group → the groups it is nested in, each with when it was nested (epoch ms). */
  private readonly parents = new ListArena(true);
  private readonly children = new ListArena();
  /** Group → principal rows that are direct members. */
  private readonly members = new ListArena();
  /** Principal row → groups it is a direct member of, each with when it joined (epoch ms). */
  private readonly memberOf = new ListArena(true);
  /** Numbers of removed groups (a group put again takes its number back). */
  private readonly removed = new Set<number>();

  private readonly ancestorCache = new Map<number, Int32Array>();
  private readonly transitiveCache = new Map<number, RowSet>();

  constructor(private readonly strings: StringPool) {}

  /** Groups known (existing or named), less those removed. */
  get size(): number {
    return this.ids.size - this.removed.size;
  }

  /** Bytes held off the heap (the transitive member sets included). */
  get bytes(): number {
    let n =
      this.ids.bytesHeld +
      this.exists.bytes +
      this.name.bytes +
      this.parents.bytes +
      this.children.bytes +
      this.members.bytes +
      this.memberOf.bytes;
    for (const set of this.transitiveCache.values()) n += set.bytes;
    return n;
  }

  /** Writes the table as sections named `groups.*`. */
  save(out: SectionSink): void {
    const n = this.ids.size;
    this.ids.save(out, 'groups.ids');
    out.u8('groups.exists', this.exists.array.subarray(0, n));
    out.i32('groups.name', this.name.array.subarray(0, n));
    this.parents.save(out, 'groups.parents');
    this.children.save(out, 'groups.children');
    this.members.save(out, 'groups.members');
    this.memberOf.save(out, 'groups.memberOf');
    out.json('groups.removed', [...this.removed]);
  }

  /** Reads back what `save` wrote, into an empty table. */
  restore(source: SectionSource): void {
    this.ids.restore(source, 'groups.ids');
    const n = this.ids.size;
    this.exists.load(source.u8('groups.exists'), n);
    this.name.load(source.i32('groups.name'), n);
    this.parents.restore(source, 'groups.parents');
    this.children.restore(source, 'groups.children');
    this.members.restore(source, 'groups.members');
    this.memberOf.restore(source, 'groups.memberOf');
    for (const g of source.json<number[]>('groups.removed')) this.removed.add(g);
  }

  /** The number of a group, or −1 when the index has never heard of it (or it was removed). */
  numberOf(id: string): number {
    const g = this.recent.get(id) ?? this.ids.find(id);
    return g >= 0 && !this.removed.has(g) ? g : -1;
  }

  idOf(g: number): string {
    return this.ids.text(g);
  }

  nameOf(g: number): string {
    return this.strings.textOrNull(this.name.array[g]!) ?? '';
  }

  parentsOf(g: number): number[] {
    return this.parents.values(g);
  }

  /** Every group number in use, existing or named. */
  forEach(visit: (g: number) => void): void {
    for (let g = 0; g < this.ids.size; g += 1) if (!this.removed.has(g)) visit(g);
  }

  /**
   * A group as now stored: its name and the groups it is nested in (with when it was nested in
   * each, epoch ms; null or missing: unknown). True when its nesting changed.
   */
  put(id: string, name: string, parentIds: readonly string[], since?: readonly (number | null)[]): boolean {
    const g = this.numberFor(id);
    this.exists.array[g] = 1;
    this.name.array[g] = this.strings.intern(name);
    const next = sortedPairs(
      parentIds.map((p) => this.numberFor(p)),
      since,
    );
    if (this.parents.same(g, next.values, next.times)) return false;
    const before = this.parents.values(g);
    this.parents.set(g, next.values, next.times);
    if (sameValues(before, next.values)) return false;
    for (const p of before) this.children.delete(p, g);
    for (const p of next.values) this.children.add(p, g);
    this.nestingChanged();
    return true;
  }

  /**
   * A deleted group: its members and nested groups leave it. Returns the principal rows that were
   * in it, at any depth.
   */
  remove(id: string): RowSet {
    const g = this.numberOf(id);
    if (g < 0) return new RowSet();
    const was = this.transitive(g);
    for (let i = this.members.size(g) - 1; i >= 0; i -= 1) this.memberOf.delete(this.members.at(g, i), g);
    this.members.clear(g);
    for (const c of this.children.values(g)) this.parents.delete(c, g);
    for (const p of this.parents.values(g)) this.children.delete(p, g);
    this.children.clear(g);
    this.parents.clear(g);
    this.exists.array[g] = 0;
    this.name.array[g] = NONE;
    this.removed.add(g);
    this.nestingChanged();
    return was;
  }

  /** The groups a principal row is a direct member of, by number. */
  directGroupsOf(row: number): number[] {
    return this.memberOf.values(row);
  }

  directGroupCount(row: number): number {
    return this.memberOf.size(row);
  }

  /** The direct groups of a principal row, by id. */
  directGroupIds(row: number): string[] {
    const n = this.memberOf.size(row);
    const out = new Array<string>(n);
    for (let i = 0; i < n; i += 1) out[i] = this.ids.text(this.memberOf.at(row, i));
    return out;
  }

  /**
   * Sets the direct groups of a principal row (none when it leaves the index). Returns whether they
   * changed. Transitive member sets already made follow at once.
   */
  setMemberships(row: number, groupIds: readonly string[], since?: readonly (number | null)[]): boolean {
    const { values: next, times } = sortedPairs(
      groupIds.map((id) => this.numberFor(id)),
      since,
    );
    if (this.memberOf.same(row, next, times)) return false;
    const before = this.memberOf.values(row);
    this.memberOf.set(row, next, times);
    if (sameValues(before, next)) return false;
    for (const g of before) this.members.delete(g, row);
    for (const g of next) this.members.add(g, row);
    if (this.transitiveCache.size > 0) {
      const touched = new Set<number>();
      for (const g of before) for (const a of this.ancestors(g)) touched.add(a);
      for (const g of next) for (const a of this.ancestors(g)) touched.add(a);
      for (const a of touched) {
        const set = this.transitiveCache.get(a);
        if (!set) continue;
        if (this.inGroup(row, a)) set.add(row);
        else set.delete(row);
      }
    }
    return true;
  }

  /**
   * When a principal row came to be in each group it is in, at any depth (epoch ms): along a path
   * of memberships, the latest of its own creation (`created`) and each membership's start; over
   * the paths, the earliest. A membership of unknown start does not move it.
   */
  sinceByGroup(row: number, created: number): Map<number, number> {
    const best = new Map<number, number>();
    const open: number[] = [];
    const reach = (g: number, at: number): void => {
      const known = best.get(g);
      if (known !== undefined && known <= at) return;
      best.set(g, at);
      open.push(g);
    };
    const later = (a: number, b: number): number => (Number.isNaN(b) || b <= a ? a : b);
    const n = this.memberOf.size(row);
    for (let i = 0; i < n; i += 1)
      reach(this.memberOf.at(row, i), later(created, this.memberOf.timeAt(row, i)));
    // Relaxed until nothing improves: the nesting above a principal is a handful of groups.
    while (open.length > 0) {
      const g = open.pop()!;
      const at = best.get(g)!;
      const m = this.parents.size(g);
      for (let i = 0; i < m; i += 1) reach(this.parents.at(g, i), later(at, this.parents.timeAt(g, i)));
    }
    return best;
  }

  /** Whether a principal row is in a group, directly or through nesting. */
  inGroup(row: number, g: number): boolean {
    const n = this.memberOf.size(row);
    for (let i = 0; i < n; i += 1) {
      const ancestors = this.ancestors(this.memberOf.at(row, i));
      for (let j = 0; j < ancestors.length; j += 1) if (ancestors[j] === g) return true;
    }
    return false;
  }

  /** Every group a principal row is in, through nesting. */
  groupsOf(row: number): Set<number> {
    const out = new Set<number>();
    const n = this.memberOf.size(row);
    for (let i = 0; i < n; i += 1) for (const a of this.ancestors(this.memberOf.at(row, i))) out.add(a);
    return out;
  }

  /** A group and every group it is nested in, at any depth. */
  ancestors(g: number): Int32Array {
    let found = this.ancestorCache.get(g);
    if (found) return found;
    const seen = new Set<number>([g]);
    const queue = [g];
    while (queue.length > 0) {
      const at = queue.pop()!;
      const n = this.parents.size(at);
      for (let i = 0; i < n; i += 1) {
        const p = this.parents.at(at, i);
        if (!seen.has(p)) {
          seen.add(p);
          queue.push(p);
        }
      }
    }
    found = Int32Array.from(seen);
    this.ancestorCache.set(g, found);
    return found;
  }

  /** Every principal row in a group, through nested groups (made once, then kept in step). */
  transitive(g: number): RowSet {
    let set = this.transitiveCache.get(g);
    if (set) return set;
    const rows: number[] = [];
    const seen = new Set<number>([g]);
    const queue = [g];
    while (queue.length > 0) {
      const at = queue.pop()!;
      const m = this.members.size(at);
      for (let i = 0; i < m; i += 1) rows.push(this.members.at(at, i));
      const n = this.children.size(at);
      for (let i = 0; i < n; i += 1) {
        const c = this.children.at(at, i);
        if (!seen.has(c)) {
          seen.add(c);
          queue.push(c);
        }
      }
    }
    set = RowSet.of(rows);
    this.transitiveCache.set(g, set);
    return set;
  }

  /**
   * The shortest membership path from a principal row to a group: the groups from a direct one up
   * to `g`, by number. Undefined when the row is not in it.
   */
  pathTo(row: number, g: number): number[] | undefined {
    const previous = new Map<number, number>();
    const queue: number[] = [];
    for (const d of this.memberOf.values(row)) {
      if (!previous.has(d)) {
        previous.set(d, -1);
        queue.push(d);
      }
    }
    for (let i = 0; i < queue.length; i += 1) {
      const at = queue[i]!;
      if (at === g) {
        const path: number[] = [];
        for (let step = at; step !== -1; step = previous.get(step)!) path.unshift(step);
        return path;
      }
      const n = this.parents.size(at);
      for (let k = 0; k < n; k += 1) {
        const p = this.parents.at(at, k);
        if (!previous.has(p)) {
          previous.set(p, at);
          queue.push(p);
        }
      }
    }
    return undefined;
  }

  private numberFor(id: string): number {
    let g = this.recent.get(id);
    if (g === undefined) {
      g = this.ids.intern(id);
      this.exists.ensure(g + 1);
      this.name.ensure(g + 1);
      if (this.recent.size >= 65_536) this.recent.clear();
      this.recent.set(id, g);
    }
    if (this.removed.size > 0) this.removed.delete(g);
    return g;
  }

  /** Numbers of the groups named lately: memberships name the same groups over and over. */
  private readonly recent = new Map<string, number>();

  /** Nesting changed: what was derived from it is made again when next asked for. */
  private nestingChanged(): void {
    this.ancestorCache.clear();
    this.transitiveCache.clear();
  }
}

/** Values sorted without repeats, each with its time (NaN: none), as a timed list arena keeps them. */
function sortedPairs(
  values: readonly number[],
  times: readonly (number | null)[] | undefined,
): { values: Int32Array; times: Float64Array } {
  if (values.length <= 1) {
    return { values: Int32Array.from(values), times: Float64Array.from(values, (_, i) => times?.[i] ?? NaN) };
  }
  const order = values.map((_, i) => i).sort((a, b) => values[a]! - values[b]! || a - b);
  const outValues: number[] = [];
  const outTimes: number[] = [];
  for (const i of order) {
    if (outValues.length > 0 && outValues[outValues.length - 1] === values[i]) continue;
    outValues.push(values[i]!);
    outTimes.push(times?.[i] ?? NaN);
  }
  return { values: Int32Array.from(outValues), times: Float64Array.from(outTimes) };
}

function sameValues(a: readonly number[], b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}
