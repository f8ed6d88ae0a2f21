import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { ReportView } from '../schemas/reports.js';
import type { ReportFormat } from './encoding.js';
import type { HeldDelegation, SourceReader, SourceRows, StoredRisk } from './sources.js';
import { REPORT_TYPE_SPECS } from './types/index.js';
import type { ReportType } from '../vocabulary/report-types.js';

const Q = defineQueries('reports', [
  'create',
  'get',
  'count',
  'page',
  'chunks',
  'purge',
  'start',
  'append',
  'complete',
  'fail',
  'acts_for',
  'risks',
]);

/**
 * The queries the report types name for their sources (src/reports/types/), declared here with
 * the others so that the catalogue checks at boot that each has its file.
 */
const SOURCE_QUERIES: Readonly<Record<string, string>> = defineQueries(
  'reports',
  REPORT_TYPE_SPECS.flatMap((spec) => spec.queries),
);

/** The declared name of a query a report type names; a name no type declares is a mistake. */
function sourceQuery(name: string): string {
  const query = SOURCE_QUERIES[name];
  if (query === undefined) throw new Error(`no report type declares the query reports/${name}`);
  return query;
}

/** A report node as the queries return it; `parameters` is the checked parameters as JSON. */
export interface StoredReport {
  id: string;
  type: ReportType;
  format: ReportFormat;
  parameters: string;
  status: ReportView['status'];
  requested_at: string;
  requested_by: string;
  started_at?: string | null;
  completed_at?: string | null;
  progress: number;
  row_count: number;
  error?: string | null;
  expires_at?: string | null;
  bytes?: number | null;
}

/** A report as a run of its job finds it: what it is, and how far earlier runs got. */
export interface ReportState {
  id: string;
  type: ReportType;
  format: ReportFormat;
  parameters: string;
  status: string;
  requested_at: string;
  requested_by: string;
  cursor: string | null;
  row_count: number;
  chunks: number;
  total: number | null;
  scanned: number | null;
  exhausted: boolean | null;
}

export interface NewReport {
  id: string;
  type: ReportType;
  format: ReportFormat;
  /** The checked parameters as JSON. */
  parameters: string;
  requestedBy: string;
}

export interface ReportFilter {
  type: ReportType | null;
  status: ReportView['status'] | null;
}

/** The next piece of a report's file, stored with how far the report has got. */
export interface ReportPiece {
  id: string;
  seq: number;
  data: Int8Array;
  bytes: number;
  cursor: string | null;
  rowCount: number;
  total: number;
  scanned: number;
  progress: number;
  exhausted: boolean;
}

/** The last piece of a report's file, stored with the report's completion. */
export interface LastReportPiece {
  id: string;
  seq: number;
  data: Int8Array;
  bytes: number;
  now: string;
  expiresAt: string;
}

function sourceRows<R>(row: SourceRows<R> | undefined): SourceRows<R> {
  return { scanned: row?.scanned ?? 0, last: row?.last ?? null, rows: row?.rows ?? [] };
}

/** The one row of a source's paging query, as an empty page when it answers none. */
async function sourcePage<T extends SourceRows<unknown>>(
  tx: Reader,
  query: string,
  params: Record<string, unknown>,
): Promise<T> {
  const row = await tx.first<T>(query, params);
  return { ...row, ...sourceRows(row) } as T;
}

async function total(tx: Reader, query: string, params: Record<string, unknown> = {}): Promise<number> {
  return (await tx.first<{ total: number }>(query, params))?.total ?? 0;
}

/**
 * Named queries over report nodes, the stored pieces of their files, and the pages of the
 * sources reports are made of; inside the caller's transaction, or on the database itself.
 */
export const reportRepository = {
  async create(tx: Tx, r: NewReport, now: string): Promise<StoredReport> {
    const row = await tx.first<{ report: StoredReport }>(Q.create, {
      id: r.id,
      type: r.type,
      format: r.format,
      parameters: r.parameters,
      now,
      requestedBy: r.requestedBy,
    });
    return row!.report;
  },

  async get(tx: Reader, id: string): Promise<StoredReport | undefined> {
    const row = await tx.first<{ report: StoredReport }>(Q.get, { id });
    return row?.report;
  },

  async count(tx: Reader, filter: ReportFilter): Promise<number> {
    return total(tx, Q.count, { ...filter });
  },

  /** A page of reports, latest request first. */
  async page(tx: Reader, filter: ReportFilter, page: Page): Promise<StoredReport[]> {
    const rows = await tx.run<{ report: StoredReport }>(Q.page, {
      ...filter,
      skip: page.skip,
      limit: page.limit,
    });
    return rows.map((r) => r.report);
  },

  /** The stored pieces `from` (included) to `to` (excluded) of a report's file, in order. */
  async chunks(tx: Reader, id: string, from: number, to: number): Promise<Int8Array[]> {
    const rows = await tx.run<{ data: Int8Array }>(Q.chunks, { id, from, to });
    return rows.map((r) => r.data);
  },

  /**
   * Forgets up to `batch` reports, with their files, that expired before `now` or failed before
   * `failedBefore`; how many went.
   */
  async purge(tx: Tx, now: string, failedBefore: string, batch: number): Promise<number> {
    const row = await tx.first<{ removed: number }>(Q.purge, { now, failedBefore, batch });
    return row?.removed ?? 0;
  },

  /**
   * Marks the report running, unless it is completed or failed already, and answers where earlier
   * runs got; undefined when the report is gone.
   */
  async start(tx: Tx, id: string, now: string): Promise<ReportState | undefined> {
    const row = await tx.first<{ report: ReportState }>(Q.start, { id, now });
    return row?.report;
  },

  /**
   * Stores the next piece of the file; false when the report is no longer running or has moved
   * past `seq` (another run took it over).
   */
  async append(tx: Tx, piece: ReportPiece): Promise<boolean> {
    const row = await tx.first(Q.append, { ...piece });
    return row !== undefined;
  },

  /**
   * Stores the last piece of the file and completes the report; its row count, or undefined when
   * the report is no longer running or has moved past `seq`.
   */
  async complete(tx: Tx, piece: LastReportPiece): Promise<number | undefined> {
    const row = await tx.first<{ rowCount: number }>(Q.complete, { ...piece });
    return row?.rowCount;
  },

  /** Fails a pending or running report for good, dropping its file; false when it was neither. */
  async fail(tx: Tx, id: string, error: string, now: string): Promise<boolean> {
    const row = await tx.first(Q.fail, { id, error, now });
    return row !== undefined;
  },

  /**
   * The risk of each of `ids` as stored, by id. The risk upkeep (src/risk/) writes it without a
   * change event, so the decision index may hold an older one: the reports read it here.
   */
  async risks(tx: Reader, ids: readonly string[]): Promise<Map<string, StoredRisk>> {
    if (ids.length === 0) return new Map();
    const rows = await tx.run<StoredRisk & { id: string }>(Q.risks, { ids: [...ids] });
    return new Map(rows.map((r) => [r.id, { score: r.score, factors: r.factors }]));
  },

  /** The delegations each of `ids` holds at `now`, by principal id; those holding none are left out. */
  async actsFor(tx: Reader, ids: readonly string[], now: string): Promise<Map<string, HeldDelegation[]>> {
    const rows = await tx.run<{ id: string; held: HeldDelegation[] }>(Q.acts_for, { ids: [...ids], now });
    return new Map(rows.map((r) => [r.id, r.held]));
  },

  /**
   * What the report sources read, on `tx`: the queries their types name, and the risks and
   * delegations of the principals of a page.
   */
  sourceReader(tx: Reader): SourceReader {
    return {
      total: (query, params = {}) => total(tx, sourceQuery(query), params),
      page: <T extends SourceRows<unknown>>(query: string, params: Record<string, unknown>) =>
        sourcePage<T>(tx, sourceQuery(query), params),
      risks: (ids) => reportRepository.risks(tx, ids),
      actsFor: (ids, now) => reportRepository.actsFor(tx, ids, now),
    };
  },
};
