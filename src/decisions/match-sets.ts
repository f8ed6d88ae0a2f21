import { RowSet } from '../columnar/row-set.js';
import type { SectionSink, SectionSource } from '../columnar/sections.js';
import type { Predicate } from '../principals/search/evaluate.js';
import { isAttribute, type Query } from '../principals/search/model.js';
import type { IxPolicy } from './model.js';
import { RowSubject, type PrincipalTable } from './principal-table.js';

/**
 * What every principal a `match` query selects must have, read from the query's top-level
 * conjuncts: attributes each equal to one of some values, and a type among some. Only principals
 * holding every one of them are candidates; the query itself decides among them.
 */
interface Anchor {
  /** At most 30: one bit each in a candidate's mask. */
  readonly attributes: readonly { key: string; values: readonly string[] }[];
  readonly types: readonly string[] | null;
}

function conjuncts(query: Query): Query[] {
  return query.kind === 'and' ? query.of.flatMap(conjuncts) : [query];
}

function anchorOf(query: Query): Anchor {
  const attributes: { key: string; values: string[] }[] = [];
  let types: string[] | null = null;
  for (const c of conjuncts(query)) {
    if (c.kind !== 'condition' || (c.op !== '$eq' && c.op !== '$in')) continue;
    const values = [c.operand].flat();
    if (!values.every((v): v is string => typeof v === 'string')) continue;
    if (isAttribute(c.target)) {
      if (attributes.length < 30) attributes.push({ key: c.target.attribute, values });
    } else if (c.target.field === 'type') types = types ? types.filter((t) => values.includes(t)) : values;
  }
  return { attributes, types };
}

/** The principals one distinct `match` query selects, and the active policies sharing it. */
export interface MatchEntry {
  readonly match: Predicate;
  readonly policies: Set<IxPolicy>;
  readonly rows: RowSet;
  readonly anchor: Anchor;
  /** The type codes its principals may have; null: any. */
  readonly typeCodes: ReadonlySet<number> | null;
  /** The row whose anchors are being counted, and which of them it holds (a bit each). */
  stamp: number;
  hits: number;
}

/** Where an entry is filed for one value of one of its attribute anchors. */
interface Filed<E> {
  readonly entry: E;
  readonly bit: number;
}

/**
 * The principals each `match` query of the active policies selects, as row sets kept in step
 * with every change of a principal. No query is evaluated over every principal: each entry is
 * filed under its anchors (attribute keys and values, else types), and a principal is evaluated
 * only against the queries whose every anchor it holds, before and after its change. The sets of
 * new queries are made together, in one pass over the attribute arena (and the type column).
 */
export class MatchSets {
  readonly entries = new Map<string, MatchEntry>();
  private readonly anchors = new Anchors<MatchEntry>();
  private readonly subject: RowSubject;
  private stamp = 0;
  /** Sets read back from a snapshot, by query, until their first policy comes. */
  private readonly restored = new Map<string, RowSet>();

  constructor(private readonly table: PrincipalTable) {
    this.subject = new RowSubject(table);
  }

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    let n = 0;
    for (const entry of this.entries.values()) n += entry.rows.bytes;
    return n;
  }

  get(key: string): MatchEntry | undefined {
    return this.entries.get(key);
  }

  /**
   * Adds the queries of these policies that have no entry yet (each policy then joins its query's
   * entry by `addPolicy`), their sets made together; `turn` is called between slices of rows and
   * may return a promise to wait for. Principals must not change meanwhile.
   */
  async addQueries(policies: Iterable<IxPolicy>, turn: () => Promise<void> | undefined): Promise<void> {
    for (const _ of this.adding(policies)) {
      const wait = turn();
      if (wait) await wait;
    }
  }

  /** `addQueries` at once, without turns of the event loop. */
  addQueriesNow(policies: Iterable<IxPolicy>): void {
    for (const _ of this.adding(policies));
  }

  /** Adds an active policy to its query's entry, making the entry (in one pass) if need be. */
  addPolicy(policy: IxPolicy): void {
    const key = policy.matchKey!;
    if (!this.entries.has(key)) {
      const rows = this.restored.get(key);
      if (rows) {
        this.restored.delete(key);
        this.file(key, this.entryOf(policy, rows));
      } else this.addQueriesNow([policy]);
    }
    this.entries.get(key)!.policies.add(policy);
  }

  /** Writes the set of every query as sections named `matches.*`. */
  save(out: SectionSink): void {
    const keys: string[] = [];
    const lengths: number[] = [];
    const sets: Int32Array[] = [];
    for (const [key, entry] of this.entries) {
      const rows = entry.rows.toArray();
      keys.push(key);
      lengths.push(rows.length);
      sets.push(rows);
    }
    const all = new Int32Array(lengths.reduce((a, b) => a + b, 0));
    let at = 0;
    for (const rows of sets) {
      all.set(rows, at);
      at += rows.length;
    }
    out.json('matches.keys', { keys, lengths });
    out.i32('matches.rows', all);
  }

  /** Reads back what `save` wrote: each set waits for the first policy of its query. */
  restore(source: SectionSource): void {
    const { keys, lengths } = source.json<{ keys: string[]; lengths: number[] }>('matches.keys');
    const all = source.i32('matches.rows');
    let at = 0;
    keys.forEach((key, i) => {
      this.restored.set(key, RowSet.of(all.subarray(at, at + lengths[i]!)));
      at += lengths[i]!;
    });
    if (at !== all.length) throw new Error('the sets of match queries do not add up');
  }

  removePolicy(policy: IxPolicy): void {
    const key = policy.matchKey!;
    const entry = this.entries.get(key);
    if (!entry) return;
    entry.policies.delete(policy);
    if (entry.policies.size > 0) return;
    this.entries.delete(key);
    this.anchors.remove(entry, this.table);
  }

  /** The entries whose every anchor a row holds now: the only ones that can select it. */
  candidates(row: number): MatchEntry[] {
    if (this.entries.size === 0 || !this.table.has(row)) return [];
    return this.anchors.candidates(row, (this.stamp += 1), this.table);
  }

  /**
   * Brings the sets in step with a row that changed: `before` are the candidates it had (from
   * `candidates`, taken before the change). A row that left the table leaves every set.
   */
  update(row: number, before: readonly MatchEntry[]): void {
    const present = this.table.has(row);
    const after = present ? this.candidates(row) : [];
    const stamp = (this.stamp += 1);
    for (const entry of after) entry.stamp = stamp;
    const subject = present ? this.subject.at(row) : undefined;
    for (const entry of before) if (entry.stamp !== stamp) entry.rows.delete(row);
    for (const entry of after) {
      if (entry.match(subject!)) entry.rows.add(row);
      else entry.rows.delete(row);
    }
  }

  /** Whether a query selects a row: from its entry, or evaluated when the query has none. */
  has(policy: IxPolicy, row: number): boolean {
    const entry = this.entries.get(policy.matchKey!);
    if (entry) return entry.rows.has(row);
    return policy.match!(this.subject.at(row));
  }

  /** Whether a policy's query has its set kept (else `rowsOf` evaluates it over every principal). */
  kept(policy: IxPolicy): boolean {
    return this.entries.has(policy.matchKey!);
  }

  /** The rows a policy's query selects (computed, over every principal, for a query without an entry). */
  rowsOf(policy: IxPolicy): RowSet {
    const entry = this.entries.get(policy.matchKey!);
    if (entry) return entry.rows;
    const rows: number[] = [];
    for (let row = 0; row < this.table.rows; row += 1) {
      if (this.table.has(row) && policy.match!(this.subject.at(row))) rows.push(row);
    }
    return RowSet.of(rows);
  }

  /**
   * The work of `addQueries`, yielding every 256 rows (a row evaluated against its candidate
   * queries costs a few microseconds: between two yields, a millisecond at most, so a slice ends
   * close to its length).
   */
  private *adding(policies: Iterable<IxPolicy>): Generator<void> {
    const fresh = new Map<string, MatchEntry>();
    for (const policy of policies) {
      const key = policy.matchKey;
      if (!policy.active || key === null || this.entries.has(key) || fresh.has(key)) continue;
      if (this.restored.has(key)) continue;
      fresh.set(key, this.entryOf(policy, new RowSet()));
    }
    if (fresh.size === 0) return;
    const filed = new Anchors<MatchEntry>();
    for (const entry of fresh.values()) filed.add(entry, this.table);
    // One pass over the principals, each evaluated against the new queries whose every anchor it
    // holds (its attributes decoded at most once, however many queries read them).
    const subject = this.subject;
    const selected = new Map<MatchEntry, number[]>([...fresh.values()].map((e) => [e, []]));
    const rows = this.table.rows;
    for (let row = 0; row < rows; row += 1) {
      if ((row & 255) === 255) yield;
      if (!this.table.has(row)) continue;
      const candidates = filed.candidates(row, (this.stamp += 1), this.table);
      if (candidates.length === 0) continue;
      subject.at(row);
      for (const entry of candidates) if (entry.match(subject)) selected.get(entry)!.push(row);
    }
    for (const [key, entry] of fresh) this.file(key, { ...entry, rows: RowSet.of(selected.get(entry)!) });
  }

  private entryOf(policy: IxPolicy, rows: RowSet): MatchEntry {
    const anchor = anchorOf(policy.matchQuery!);
    return {
      match: policy.match!,
      policies: new Set(),
      rows,
      anchor,
      typeCodes: anchor.types && new Set(anchor.types.map((t) => this.table.typeCode(t))),
      stamp: 0,
      hits: 0,
    };
  }

  private file(key: string, entry: MatchEntry): void {
    this.entries.set(key, entry);
    this.anchors.add(entry, this.table);
  }
}

/**
 * Entries filed by their anchors: under each value of each attribute anchor (with the anchor's
 * bit), else under each type, else with every row.
 */
class Anchors<E extends MatchEntry> {
  /** Attribute key code, then value code: the entries with an anchor on it, and its bit. */
  private readonly byPair = new Map<number, Map<number, Filed<E>[]>>();
  private readonly byType = new Map<number, E[]>();
  private readonly everyone: E[] = [];

  add(entry: E, table: PrincipalTable): void {
    const { attributes } = entry.anchor;
    if (attributes.length > 0) {
      attributes.forEach((a, i) => {
        const key = table.strings.intern(a.key);
        let byValue = this.byPair.get(key);
        if (!byValue) this.byPair.set(key, (byValue = new Map<number, Filed<E>[]>()));
        for (const v of new Set(a.values)) {
          const code = table.strings.intern(v);
          const list = byValue.get(code);
          const filed = { entry, bit: 1 << i };
          if (list) list.push(filed);
          else byValue.set(code, [filed]);
        }
      });
    } else if (entry.typeCodes) {
      for (const code of entry.typeCodes) {
        const list = this.byType.get(code);
        if (list) list.push(entry);
        else this.byType.set(code, [entry]);
      }
    } else this.everyone.push(entry);
  }

  remove(entry: E, table: PrincipalTable): void {
    const drop = <T>(list: T[] | undefined, is: (t: T) => boolean): void => {
      if (!list) return;
      for (let i = list.length - 1; i >= 0; i -= 1) if (is(list[i]!)) list.splice(i, 1);
    };
    const { attributes } = entry.anchor;
    if (attributes.length > 0) {
      for (const a of attributes) {
        const byValue = this.byPair.get(table.strings.find(a.key));
        for (const v of a.values) drop(byValue?.get(table.strings.find(v)), (f) => f.entry === entry);
      }
    } else if (entry.typeCodes) {
      for (const code of entry.typeCodes) drop(this.byType.get(code), (e) => e === entry);
    } else drop(this.everyone, (e) => e === entry);
  }

  /** The entries whose every anchor the row holds, its type among theirs. */
  candidates(row: number, stamp: number, table: PrincipalTable): E[] {
    const out: E[] = [];
    const type = table.typeCodeOf(row);
    const fits = (entry: E): boolean => entry.typeCodes === null || entry.typeCodes.has(type);
    if (this.byPair.size > 0) {
      const hit: E[] = [];
      table.forEachAttributeCode(row, (key, value) => {
        const list = this.byPair.get(key)?.get(value);
        if (!list) return;
        for (const { entry, bit } of list) {
          if (entry.stamp !== stamp) {
            entry.stamp = stamp;
            entry.hits = 0;
            hit.push(entry);
          }
          entry.hits |= bit;
        }
      });
      for (const entry of hit) {
        if (entry.hits === (1 << entry.anchor.attributes.length) - 1 && fits(entry)) out.push(entry);
      }
    }
    const typed = this.byType.get(type);
    if (typed) for (const entry of typed) out.push(entry);
    for (const entry of this.everyone) out.push(entry);
    return out;
  }
}
