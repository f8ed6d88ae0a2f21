import type { TSchema } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { Readable } from 'node:stream';
import type { OperationContext } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import { conflict, notFound, validationFailed, type FieldError } from '../errors/errors.js';
import { newId } from '../ids.js';
import type { JobRunner } from '../jobs/runner.js';
import type { Page, Paged } from '../pagination.js';
import type { ReportView } from '../schemas/reports.js';
import { compile, inputAjv, toFieldErrors } from '../schemas/validator.js';
import { nowIso } from '../time.js';
import { REPORT_FILES, unpackChunk, type ReportFormat } from './encoding.js';
import { REPORT_ATTEMPTS, REPORT_JOB } from './generator.js';
import { reportRepository as repo, type StoredReport } from './repository.js';
import type { ReportTypeSpec } from './report-type.js';
import type { ReportParameters } from './sources.js';
import { REPORT_TYPE_SPECS, reportTypeSpec } from './types/index.js';
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

/** Each type's parameter schema, compiled once. */
const CHECKS = new Map(
  REPORT_TYPE_SPECS.map((spec) => [spec.name, compile<Record<string, unknown>>(inputAjv, spec.parameters)]),
);

/**
 * What a parameter must be, said once whatever rule of it was broken (an integer out of range
 * and a string where an integer goes both get the range); undefined where the schema's own
 * message says it well enough.
 */
function expectation(schema: TSchema | undefined): string | undefined {
  if (
    schema?.['type'] === 'integer' &&
    typeof schema['minimum'] === 'number' &&
    typeof schema['maximum'] === 'number'
  )
    return `must be an integer from ${schema['minimum']} to ${schema['maximum']}`;
  if (schema?.['format'] === 'date-time') return 'must be an RFC 3339 timestamp';
  return undefined;
}

/** The schema's errors as the parameters' field errors: one per parameter, the unknown ones first. */
function parameterErrors(spec: ReportTypeSpec, errors: ErrorObject[]): FieldError[] {
  const unknown: FieldError[] = [];
  const invalid = new Map<string, FieldError>();
  const properties = spec.parameters.properties;
  for (const error of errors) {
    const [field] = toFieldErrors([error], '/parameters');
    if (!field) continue;
    if (error.keyword === 'additionalProperties') {
      unknown.push({ pointer: field.pointer, message: `is not a parameter of ${spec.name} reports` });
    } else if (!invalid.has(field.pointer)) {
      const name = error.instancePath.split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~');
      const message = expectation(name === undefined ? undefined : properties[name]) ?? field.message;
      invalid.set(field.pointer, { pointer: field.pointer, message });
    }
  }
  return [...unknown, ...invalid.values()];
}

/**
 * Checks a report's parameters against its type's schema and fixes what they leave open (the
 * defaults, and the instant the report is as of), so that a run resumed later reads the same rows.
 */
export function checkParameters(
  type: ReportType,
  given: Record<string, unknown>,
  now: string,
): ReportParameters {
  const spec = reportTypeSpec(type);
  const check = CHECKS.get(type)!;
  // The check fills in the defaults: on a copy, so that the request's own object stays as sent.
  const parameters = { ...given };
  if (!check(parameters)) {
    throw validationFailed('the report parameters are invalid', parameterErrors(spec, check.errors ?? []));
  }
  const settled = spec.settle ? spec.settle(parameters, now) : (parameters as ReportParameters);
  if (Array.isArray(settled)) {
    throw validationFailed(
      'the report parameters are invalid',
      settled.map((e) => ({ pointer: `/parameters${e.pointer}`, message: e.message })),
    );
  }
  return settled;
}
