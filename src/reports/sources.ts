import type { AccessEntry } from '../decisions/access.js';
import type { PrincipalTable } from '../decisions/principal-table.js';
import { resourceOf } from '../policies/model.js';
import { timeSlices } from '../time.js';
import { PrincipalOrder, type IndexPage, type PrincipalIndex } from './principal-order.js';
import { riskCodes, type ActsFor, type ReportRow } from './principal-rows.js';

/**
 * What the report types' row sources are made of: the page and reader shapes they share, and the
 * ways of paging that several of them use (principals in id order from Neo4j, principals of the
 * decision index in id order). The types themselves are in ./types/.
 */

/** A report's parameters once checked, with their defaults filled in (so a resumed run sees the same). */
export type ReportParameters = Record<string, string | number>;

export interface SourcePage {
  rows: Record<string, unknown>[];
  /** What the page read from its source (for progress), which may be more than the rows it gave. */
  scanned: number;
  /** Where the next page starts; null when the source is exhausted. */
  cursor: string | null;
}

/**
 * One page of a source's query: how many items it read, the last one's id (where the next page
 * starts) and the rows it gave, which may be fewer than it read.
 */
export interface SourceRows<R> {
  scanned: number;
  last: string | null;
  rows: R[];
}

/** A principal's risk as stored: its score and its factors (JSON text). */
export interface StoredRisk {
  score: number | null;
  factors: string | null;
}

/**
 * A delegation a principal holds, as the reports show it: whom it acts for and with what
 * (`resources` as stored, `type:identifier` texts; null: every resource).
 */
export interface HeldDelegation {
  delegation_id: string;
  delegator_id: string;
  delegator_name: string;
  delegator_status: string;
  actions: string[];
  resources: string[] | null;
  expires_at: string;
}

/**
 * What a source reads from the database, answered by the report repository: the queries its type
 * names (`Q`, files of cypher/reports/), and the reads the reports about principals share. A
 * source is handed this rather than a transaction, so that queries stay where they are declared.
 */
export interface SourceReader<Q extends string = string> {
  /** The `total` that a counting query of the type returns (0 when it returns no row). */
  total(query: Q, params?: Record<string, unknown>): Promise<number>;
  /**
   * The one row a paging query of the type returns, `T`: `scanned`, `last` and `rows` as in
   * `SourceRows` (an empty page when it returns no row), and whatever else the query returns.
   */
  page<T extends SourceRows<unknown>>(query: Q, params: Record<string, unknown>): Promise<T>;
  /** The stored risk of each of `ids`, by id. */
  risks(ids: readonly string[]): Promise<Map<string, StoredRisk>>;
  /** The delegations each of `ids` holds at `now`, by principal id; those holding none are left out. */
  actsFor(ids: readonly string[], now: string): Promise<Map<string, HeldDelegation[]>>;
}

/** Where a report's rows come from: a source read in pages, each starting where the last ended. */
export interface RowSource<Q extends string = string> {
  /** How much the source holds, in the units of `scanned`: the measure of progress. */
  total(read: SourceReader<Q>): Promise<number>;
  page(read: SourceReader<Q>, cursor: string | null): Promise<SourcePage>;
}

/** What the access review needs of the decision engine: a principal's effective access. */
export interface AccessOracle {
  entriesOf(
    principalId: string,
  ):
    | { principal: { id: string; name: string; type: string; email: string | null }; entries: AccessEntry[] }
    | undefined;
}

/** What a source may read besides the database, and how much it reads per page. */
export interface SourceContext {
  access: AccessOracle;
  /** The decision index, which the reports about principals read. */
  index: PrincipalIndex;
  /** Rows read per page (principals, or events), and principals per page of an access review. */
  pageSize: { principals: number; review: number };
}

/**
 * Pages of principals in id order: the cursor is the last id read. `read` gives the `limit`
 * principals after the id `after`.
 */
export function byPrincipalId<R, Q extends string>(
  read: (reader: SourceReader<Q>, after: string, limit: number) => Promise<SourceRows<R>>,
  limit: number,
  map: (row: R) => Record<string, unknown>[],
): RowSource<Q>['page'] {
  const turn = timeSlices();
  return async (reader, cursor) => {
    const page = await read(reader, cursor ?? '', limit);
    // A principal's rows (its access, say) can be many: the event loop turns between principals.
    const rows: Record<string, unknown>[] = [];
    for (const row of page.rows) {
      for (const made of map(row)) rows.push(made);
      const wait = turn();
      if (wait) await wait;
    }
    return {
      rows,
      scanned: page.scanned,
      cursor: page.scanned < limit ? null : page.last,
    };
  };
}

/** Rows made between two looks at whether the event loop is due a turn. */
const ROWS_PER_LOOK = 64;

/**
 * Pages of the principals of the decision index that `reads` takes, in id order: the cursor is
 * the last id read, so a run cut short resumes after it even once the index has been rebuilt.
 * `make` gives the report's row of a principal of a page read at `now` (undefined: none); the
 * stored risk of the rows, their score and with `factors` their factors' codes, is read from
 * Neo4j. The event loop turns between slices of the rows, and between slices of the work of
 * putting the principals in order, once per run.
 */
export function byIndexOrder<Q extends string>(
  index: PrincipalIndex,
  reads: (table: PrincipalTable, row: number) => boolean,
  limit: number,
  make: (page: IndexPage, row: number, now: number) => ReportRow | undefined,
  factors: boolean,
): RowSource<Q> {
  const turn = timeSlices();
  const order = new PrincipalOrder(index, reads, turn);
  return {
    total: () => order.count(),
    page: async (read, cursor) => {
      const page = await order.after(cursor, limit);
      const now = Date.now();
      const rows: ReportRow[] = [];
      for (let i = 0; i < page.rows.length; i += 1) {
        const row = make(page, page.rows[i]!, now);
        if (row) rows.push(row);
        if (i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1) {
          const wait = turn();
          if (wait) await wait;
        }
      }
      const scanned = page.rows.length;
      return {
        rows: await withRisk(read, rows, factors),
        scanned,
        cursor: scanned < limit ? null : page.table.idOf(page.rows[scanned - 1]!),
      };
    },
  };
}

/** Rows with the risk of their principal as stored: its score and, with `factors`, their codes. */
async function withRisk(
  read: Pick<SourceReader, 'risks'>,
  rows: ReportRow[],
  factors: boolean,
): Promise<ReportRow[]> {
  const ids = rows.map((r) => r['id'] as string);
  const risks = await read.risks(ids);
  for (const row of rows) {
    const risk = risks.get(row['id'] as string);
    row['risk_score'] = risk?.score ?? null;
    if (factors) row['risk_factors'] = riskCodes(risk?.factors);
  }
  return rows;
}

/**
 * The delegations a principal holds, as its rows show them: resources written as the API writes
 * them, members in the order docs/api.md lists them (as `orphaned_principals` writes them too).
 */
export const actsFor = (held: readonly HeldDelegation[]): ActsFor[] =>
  held.map((h) => ({
    delegation_id: h.delegation_id,
    delegator_id: h.delegator_id,
    delegator_name: h.delegator_name,
    delegator_status: h.delegator_status,
    actions: h.actions,
    resources: h.resources ? h.resources.map(resourceOf) : null,
    expires_at: h.expires_at,
  }));

/** Rows read per page of a source, unless the generator is told otherwise. */
export const PAGE_ROWS = 1_000;
/** Principals per page of the access review: each brings all of its entries. */
export const REVIEW_PRINCIPALS = 200;
/** The columns that say who a principal is, first in the reports about principals. */
export const WHO = ['id', 'type', 'name', 'email', 'status', 'connector_source', 'owner'] as const;
