import type { GroupTable } from '../decisions/group-table.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { PrincipalTable } from '../decisions/principal-table.js';

/** What the reports about principals read of the decision index. */
export type PrincipalIndex = Pick<PolicyIndex, 'table' | 'groupTable' | 'delegationsReceived'>;

/** Principals of a page, as rows of the tables they were read from. */
export interface IndexPage {
  table: PrincipalTable;
  groups: GroupTable;
  rows: number[];
}

/** Steps of work between two looks at whether the event loop is due a turn. */
const STRIDE = 1_024;

/** Runs sorted by insertion before the merges begin. */
const RUN = 32;

/**
 * The principals of the decision index that a report reads, in id order, as Neo4j pages them:
 * the rows `reads` takes, gathered and sorted by id once per run (comparing the ids' bytes in
 * the table's pool, without a string made of each), a few milliseconds of work at a time. A page
 * is the principals after an id, found by binary search, so a run resumes after the last id it
 * stored whatever rows the index gives them; a full rebuild of the index, which numbers its rows
 * anew, makes the order again. A principal that arrives during a run may be missed, as with
 * pages read from Neo4j; one that is no longer read (deleted meanwhile, say) is left out when its
 * page is made.
 */
export class PrincipalOrder {
  private table: PrincipalTable | null = null;
  private order: Int32Array = new Int32Array(0);

  constructor(
    private readonly index: PrincipalIndex,
    private readonly reads: (table: PrincipalTable, row: number) => boolean,
    /** Between slices of work: answers a promise to wait for when the event loop is due a turn. */
    private readonly turn: () => Promise<void> | undefined,
  ) {}

  /** How many principals the report reads. */
  async count(): Promise<number> {
    await this.current();
    return this.order.length;
  }

  /** Up to `limit` principals the report reads, after the id `after` (from the first when null). */
  async after(after: string | null, limit: number): Promise<IndexPage> {
    for (;;) {
      await this.current();
      // The index may have been rebuilt while this waited: its order is made again.
      const table = this.index.table;
      if (table !== this.table) continue;
      const order = this.order;
      const rows: number[] = [];
      let at = after === null ? 0 : firstAfter(table, order, after);
      for (; at < order.length && rows.length < limit; at += 1) {
        const row = order[at]!;
        if (table.has(row) && this.reads(table, row)) rows.push(row);
      }
      return { table, groups: this.index.groupTable, rows };
    }
  }

  /** Makes the order of the index's table, unless it is made already. */
  private async current(): Promise<void> {
    for (;;) {
      const table = this.index.table;
      if (table === this.table) return;
      this.order = await this.make(table);
      this.table = table;
    }
  }

  private async make(table: PrincipalTable): Promise<Int32Array> {
    const n = table.rows;
    const found = new Int32Array(n);
    let count = 0;
    for (let row = 0; row < n; row += 1) {
      if (table.has(row) && this.reads(table, row)) found[count++] = row;
      if (row % STRIDE === STRIDE - 1) {
        const wait = this.turn();
        if (wait) await wait;
      }
    }
    return sortRows(found.slice(0, count), (a, b) => table.ids.compare(a, b), this.turn);
  }
}

/** Where the rows after the id `after` begin in an order of rows by id. */
function firstAfter(table: PrincipalTable, order: Int32Array, after: string): number {
  let low = 0;
  let high = order.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (table.ids.compareText(order[middle]!, after) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Rows sorted by `compare`: short runs by insertion, then merged in passes of doubling width,
 * the event loop turning between slices of the work. Answers the sorted rows (`rows` itself or a
 * second array of its length).
 */
export async function sortRows(
  rows: Int32Array,
  compare: (a: number, b: number) => number,
  turn: () => Promise<void> | undefined,
): Promise<Int32Array> {
  const n = rows.length;
  let work = 0;
  for (let start = 0; start < n; start += RUN) {
    const end = Math.min(start + RUN, n);
    for (let i = start + 1; i < end; i += 1) {
      const value = rows[i]!;
      let j = i - 1;
      for (; j >= start && compare(rows[j]!, value) > 0; j -= 1) rows[j + 1] = rows[j]!;
      rows[j + 1] = value;
    }
    // A run takes a few hundred comparisons.
    const wait = turn();
    if (wait) await wait;
  }
  let from: Int32Array = rows;
  let to: Int32Array = new Int32Array(n);
  for (let width = RUN; width < n; width *= 2) {
    for (let start = 0; start < n; start += 2 * width) {
      const middle = Math.min(start + width, n);
      const end = Math.min(start + 2 * width, n);
      let i = start;
      let j = middle;
      let k = start;
      while (i < middle && j < end) {
        to[k++] = compare(from[j]!, from[i]!) < 0 ? from[j++]! : from[i++]!;
        if (++work >= STRIDE) {
          work = 0;
          const wait = turn();
          if (wait) await wait;
        }
      }
      while (i < middle) to[k++] = from[i++]!;
      while (j < end) to[k++] = from[j++]!;
    }
    [from, to] = [to, from];
  }
  return from;
}
