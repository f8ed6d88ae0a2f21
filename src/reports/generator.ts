import { SYSTEM_CONTEXT } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import type { EventSink } from '../events/sink.js';
import type { JobContext } from '../jobs/runner.js';
import type { Logger } from '../logging/logger.js';
import { nowIso, timeSlices } from '../time.js';
import { createEncoder, packChunk } from './encoding.js';
import { reportRepository as repo } from './repository.js';
import type { PrincipalIndex } from './principal-order.js';
import type { Pacer } from '../pacing/pacer.js';
import { PAGE_ROWS, REVIEW_PRINCIPALS, type AccessOracle, type ReportParameters } from './sources.js';
import { reportTypeSpec } from './types/index.js';

export const REPORT_JOB = 'reports.generate';

/** Text gathered before a piece of the file is stored, by default. */
const CHUNK_BYTES = 1 << 20;
/** Rows encoded between two looks at whether the event loop is due a turn. */
const ROWS_PER_SLICE = 256;

/** Runs of a report's job before the report is failed for good. */
export const REPORT_ATTEMPTS = 3;

/**
 * Writes a report's file as a background job: the source is read a page at a time, and each
 * page's text is stored with the position it reached in one transaction, so memory holds one
 * page whatever the report's size, and a run that was cut short (a crash, a shutdown) resumes
 * after the last page stored. The last piece and `report.completed` commit together.
 */
export class ReportGenerator {
  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
    private readonly access: AccessOracle,
    /** The decision index, which the reports about principals read. */
    private readonly index: PrincipalIndex,
    private readonly options: {
      retentionDays: number;
      logger: Logger;
      /** Rows read per page (principals, or events), and principals per page of an access review. */
      pageSize?: { principals: number; review: number };
      /** Text gathered before a piece of the file is stored. */
      chunkBytes?: number;
      /** Each page read and each piece stored is a step of background work that gives way to decisions. */
      pacer?: Pacer;
    },
  ) {}

  readonly run = async (job: JobContext<{ reportId: string }>): Promise<void> => {
    const { reportId } = job.payload;
    try {
      await this.generate(reportId, job.signal);
    } catch (err) {
      if (job.signal.aborted || job.attempt < REPORT_ATTEMPTS) throw err;
      const error = err instanceof Error ? err.message : String(err);
      this.options.logger.error({ err, report: reportId }, 'report failed');
      await this.db.write('reports/fail', async (tx) => {
        const failed = await repo.fail(tx, reportId, 'the report could not be generated', nowIso());
        if (failed) {
          this.events.record(tx, SYSTEM_CONTEXT, {
            type: 'report.failed',
            target: { type: 'report', id: reportId },
            outcome: 'failure',
            reason: error.slice(0, 200),
          });
        }
      });
    }
  };

  private paced<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.options.pacer ? this.options.pacer.step(REPORT_JOB, work, signal) : work();
  }

  private async generate(reportId: string, signal: AbortSignal): Promise<void> {
    const state = await this.db.write('reports/start', (tx) => repo.start(tx, reportId, nowIso()));
    if (!state || state.status !== 'running') return;
    const parameters = JSON.parse(state.parameters) as ReportParameters;
    const type = reportTypeSpec(state.type);
    const source = type.source(parameters, {
      access: this.access,
      index: this.index,
      pageSize: this.options.pageSize ?? { principals: PAGE_ROWS, review: REVIEW_PRINCIPALS },
    });
    const read = repo.sourceReader(this.db);
    const encoder = createEncoder(state.format, type.columns);
    let { chunks, cursor, row_count: rowCount } = state;
    let scanned = state.scanned ?? 0;
    let exhausted = state.exhausted ?? false;
    const total = state.total ?? (await source.total(read));
    // Pages are gathered into pieces of about CHUNK_BYTES before they are stored: one transaction
    // per piece, and memory bounded by one piece whatever the report's size.
    let pending: string[] = [];
    let pendingBytes = 0;
    let pendingRows = 0;
    let pendingScanned = 0;
    const store = async (next: { cursor: string | null; exhausted: boolean }): Promise<void> => {
      const text = pending.join('');
      const data = await packChunk(text);
      const stored = await this.db.write('reports/append', (tx) =>
        repo.append(tx, {
          id: reportId,
          seq: chunks,
          data,
          bytes: Buffer.byteLength(text),
          cursor: next.cursor,
          rowCount: rowCount + pendingRows,
          total,
          scanned: scanned + pendingScanned,
          progress: total === 0 ? 99 : Math.min(99, Math.floor((100 * (scanned + pendingScanned)) / total)),
          exhausted: next.exhausted,
        }),
      );
      // Another run took the report over (this one's lease ran out): it carries on, not this one.
      if (!stored) throw new Error(`report ${reportId} moved on without this run`);
      chunks += 1;
      rowCount += pendingRows;
      scanned += pendingScanned;
      ({ cursor, exhausted } = next);
      pending = [];
      pendingBytes = 0;
      pendingRows = 0;
      pendingScanned = 0;
    };
    if (chunks === 0) {
      const meta = {
        id: state.id,
        type: state.type,
        parameters,
        requested_at: state.requested_at,
        requested_by: state.requested_by,
      };
      pending.push(encoder.start(meta));
    }
    let at = cursor;
    const turn = timeSlices();
    while (!exhausted) {
      signal.throwIfAborted();
      const page = await this.paced(() => source.page(read, at), signal);
      // A page's rows are encoded a slice at a time, the event loop turning between slices.
      for (let from = 0; from < page.rows.length; from += ROWS_PER_SLICE) {
        const text = encoder.rows(
          page.rows.slice(from, from + ROWS_PER_SLICE),
          rowCount + pendingRows + from === 0,
        );
        pending.push(text);
        pendingBytes += text.length;
        const wait = turn();
        if (wait) await wait;
      }
      pendingRows += page.rows.length;
      pendingScanned += page.scanned;
      at = page.cursor;
      if (at === null || pendingBytes >= (this.options.chunkBytes ?? CHUNK_BYTES)) {
        const next = { cursor: at, exhausted: at === null };
        await this.paced(() => store(next), signal);
      }
    }
    const text = encoder.end(rowCount);
    const data = await packChunk(text);
    const expiresAt = new Date(Date.now() + this.options.retentionDays * 86_400_000).toISOString();
    await this.db.write('reports/complete', async (tx) => {
      const finalRowCount = await repo.complete(tx, {
        id: reportId,
        seq: chunks,
        data,
        bytes: Buffer.byteLength(text),
        now: nowIso(),
        expiresAt,
      });
      if (finalRowCount === undefined) throw new Error(`report ${reportId} moved on without this run`);
      this.events.record(tx, SYSTEM_CONTEXT, {
        type: 'report.completed',
        target: { type: 'report', id: reportId },
        changes: {
          status: { from: 'running', to: 'completed' },
          row_count: { to: finalRowCount },
          requested_by: { to: state.requested_by },
        },
      });
    });
  }
}
