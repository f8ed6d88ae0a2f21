import { Readable } from 'node:stream';
import type { OperationContext } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import { conflict, notFound, validationFailed, type FieldError } from '../errors/errors.js';
import { newId } from '../ids.js';
import type { JobRunner } from '../jobs/runner.js';
import type { Page, Paged } from '../pagination.js';
import type { ReportView } from '../schemas/reports.js';
import { nowIso, parseInstant } from '../time.js';
import { REPORT_FILES, unpackChunk, type ReportFormat } from './encoding.js';
import { REPORT_ATTEMPTS, REPORT_JOB } from './generator.js';
import { reportRepository as repo, type StoredReport } from './repository.js';
import type { ReportParameters } from './sources.js';
import type { ReportType } from '../vocabulary/report-types.js';

export interface ReportRequest {
  type: ReportType;
  format: ReportFormat;
  parameters?: Record<string, unknown> | undefined;
}

/** Pieces of a file read per round trip while it streams out. */
const CHUNKS_PER_READ = 8;

/**
 * Audit reports: requested here, generated in the background (src/reports/generator.ts), kept
 * for the retention period and streamed back from the stored pieces of their file.
 */
export class ReportService {
  constructor(
    private readonly db: Database,
    private readonly jobs: JobRunner,
    private readonly options: { retentionDays: number; publicBaseUrl: string },
  ) {}

  async request(input: ReportRequest, op: OperationContext): Promise<ReportView> {
    const now = nowIso();
    const parameters = checkParameters(input.type, input.parameters ?? {}, now);
    const id = newId('report');
    return this.db.write('reports/create', async (tx) => {
      // A retry after a lost commit answer returns what the first run committed.
      const committed = tx.attempt > 1 ? await repo.get(tx, id) : undefined;
      if (committed) return this.view(committed);
      const report = await repo.create(
        tx,
        {
          id,
          type: input.type,
          format: input.format,
          parameters: JSON.stringify(parameters),
          requestedBy: op.actor.id,
        },
        now,
      );
      await this.jobs.enqueue(tx, REPORT_JOB, { reportId: id }, { maxAttempts: REPORT_ATTEMPTS });
      return this.view(report);
    });
  }

  async get(id: string): Promise<ReportView> {
    const report = await repo.get(this.db, id);
    if (!report) throw notFound('report', id);
    return this.view(report);
  }

  async list(
    filter: { type?: ReportType | undefined; status?: ReportView['status'] | undefined },
    page: Page,
  ): Promise<Paged<ReportView>> {
    const criteria = { type: filter.type ?? null, status: filter.status ?? null };
    return this.db.read('reports/list', async (tx) => {
      const total = await repo.count(tx, criteria);
      const reports = await repo.page(tx, criteria, page);
      return { total, items: reports.map((r) => this.view(r)), page };
    });
  }

  /** The file of a completed report, streamed from its stored pieces. */
  async content(
    id: string,
  ): Promise<{ contentType: string; filename: string; bytes: number; stream: Readable }> {
    const report = await repo.get(this.db, id);
    if (!report) throw notFound('report', id);
    if (report.status !== 'completed') {
      throw conflict(`report ${id} is ${report.status}; its file is there once it is completed`);
    }
    const file = REPORT_FILES[report.format];
    const db = this.db;
    async function* pieces(): AsyncGenerator<Buffer> {
      for (let from = 0; ; from += CHUNKS_PER_READ) {
        const chunks = await repo.chunks(db, id, from, from + CHUNKS_PER_READ);
        for (const data of chunks) yield await unpackChunk(data);
        if (chunks.length < CHUNKS_PER_READ) return;
      }
    }
    return {
      contentType: file.contentType,
      filename: `${id}-${report.type}.${file.fileExtension}`,
      bytes: report.bytes ?? 0,
      stream: Readable.from(pieces()),
    };
  }

  /** Forgets reports past their retention (failed ones after the same time), with their files. */
  async purge(now = Date.now()): Promise<void> {
    const failedBefore = new Date(now - this.options.retentionDays * 86_400_000).toISOString();
    for (;;) {
      const removed = await this.db.write('reports/purge', (tx) =>
        repo.purge(tx, new Date(now).toISOString(), failedBefore, 100),
      );
      if (removed < 100) return;
    }
  }

  private view(row: StoredReport): ReportView {
    const completed = row.status === 'completed';
    return {
      id: row.id,
      type: row.type,
      format: row.format,
      parameters: JSON.parse(row.parameters) as ReportParameters,
      status: row.status,
      requested_at: row.requested_at,
      requested_by: row.requested_by,
      progress: Math.round(row.progress ?? 0),
      row_count: row.row_count ?? 0,
      started_at: row.started_at ?? null,
      completed_at: row.completed_at ?? null,
      download_url: completed ? `${this.options.publicBaseUrl}/v1/audit/reports/${row.id}/content` : null,
      expires_at: row.expires_at ?? null,
      error: row.error ?? null,
    };
  }
}

const ALLOWED: Record<ReportType, readonly string[]> = {
  access_review: [],
  principal_inventory: [],
  dormant_principals: ['days'],
  orphaned_principals: [],
  audit_log: ['since', 'until'],
};

/**
 * Checks a report's parameters for its type and fixes what they leave open (the defaults, and
 * the instant the report is as of), so that a run resumed later reads the same rows.
 */
export function checkParameters(
  type: ReportType,
  given: Record<string, unknown>,
  now: string,
): ReportParameters {
  const errors: FieldError[] = [];
  for (const key of Object.keys(given)) {
    if (!ALLOWED[type].includes(key)) {
      errors.push({ pointer: `/parameters/${key}`, message: `is not a parameter of ${type} reports` });
    }
  }
  const out: ReportParameters = {};
  if (type === 'dormant_principals') {
    const days = given['days'] ?? 90;
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 36_500) {
      errors.push({ pointer: '/parameters/days', message: 'must be an integer from 1 to 36500' });
    }
    out['days'] = days as number;
    out['as_of'] = now;
  }
  if (type === 'audit_log') {
    const instant = (key: 'since' | 'until', fallback: string): string => {
      const value = given[key];
      if (value === undefined) return fallback;
      const parsed = typeof value === 'string' ? parseInstant(value) : undefined;
      if (parsed === undefined) {
        errors.push({ pointer: `/parameters/${key}`, message: 'must be an RFC 3339 timestamp' });
        return fallback;
      }
      return parsed;
    };
    out['since'] = instant('since', '1970-01-01T00:00:00.000Z');
    out['until'] = instant('until', now);
    if (errors.length === 0 && Date.parse(String(out['since'])) >= Date.parse(String(out['until']))) {
      errors.push({ pointer: '/parameters/until', message: 'must be later than since' });
    }
  }
  if (errors.length > 0) throw validationFailed('the report parameters are invalid', errors);
  return out;
}
