import type { StoredEvent } from '../audit/audit.js';
import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { ReportView } from '../schemas/reports.js';
import type { ReportFormat } from './encoding.js';
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
  'rows_audit_log',
  'rows_access_review',
  'acts_for',
  'risks',
  'count_active_principals',
  'count_audit_log',
]);

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

/**
 * One page of a report's source: how many items it read, the last one's id (where the next page
 * starts) and the rows it gave, which may be fewer than it read.
 */
export interface SourceRows<R> {
  scanned: number;
  last: string | null;
  rows: R[];
}

/** A page of audit events, with the last one's time next to its id. */
export interface AuditEventRows extends SourceRows<StoredEvent> {
  lastAt: string | null;
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

/** A half-open range of time, [since, until), as RFC 3339 strings. */
export interface TimeRange {
  since: string;
  until: string;
}

function sourceRows<R>(row: SourceRows<R> | undefined): SourceRows<R> {
  return { scanned: row?.scanned ?? 0, last: row?.last ?? null, rows: row?.rows ?? [] };
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

  async countActivePrincipals(tx: Reader): Promise<number> {
    return total(tx, Q.count_active_principals);
  },

  async countAuditEvents(tx: Reader, range: TimeRange): Promise<number> {
    return total(tx, Q.count_audit_log, { ...range });
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

  /** The ids of the next `limit` active principals after the id `after`. */
  async activePrincipalIds(tx: Reader, after: string, limit: number): Promise<SourceRows<string>> {
    return sourceRows(await tx.first<SourceRows<string>>(Q.rows_access_review, { after, limit }));
  },

  /**
   * The next `limit` audit events of `range`, oldest first, after the event `afterId` that
   * occurred at `afterAt` (from the start of the range when both are null).
   */
  async auditEvents(
    tx: Reader,
    range: TimeRange,
    afterAt: string | null,
    afterId: string | null,
    limit: number,
  ): Promise<AuditEventRows> {
    const row = await tx.first<AuditEventRows>(Q.rows_audit_log, { ...range, afterAt, afterId, limit });
    return { ...sourceRows(row), lastAt: row?.lastAt ?? null };
  },
};
