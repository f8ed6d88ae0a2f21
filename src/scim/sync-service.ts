import type { Static } from '@sinclair/typebox';
import type { SyncSchema } from '../schemas/connectors.js';
import type { OperationContext } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import { conflict, notFound } from '../errors/errors.js';
import { newId } from '../ids.js';
import type { JobContext, JobRunner } from '../jobs/runner.js';
import type { Metrics } from '../metrics.js';
import { currentTraceparent, inSpan } from '../tracing/tracing.js';
import type { ScimSync, SyncProgress } from './sync.js';
import type { ConnectorSyncStore } from '../connectors/service.js';

export const SYNC_JOB = 'connectors.sync';
/** Runs of a sync before it is given up (each resumes where the last got to). */
const SYNC_ATTEMPTS = 3;

/** A snapshot sync as GET /v1/connectors/{id}/sync/{sync_id} answers it. */
export type SyncView = Static<typeof SyncSchema>;

/**
 * Bulk reconciliation of a connector with a snapshot of its identity provider: the snapshot is
 * stored in Neo4j with the sync, and a job of the job runner reconciles it (src/scim/sync.ts),
 * reporting its progress; with several instances it runs once, and one interrupted by a stop or a
 * crash is taken up again (reconciling compares before writing, so it resumes where it got to).
 */
export class ConnectorSyncService {
  constructor(
    private readonly db: Database,
    private readonly jobs: JobRunner,
    private readonly sync: ScimSync,
    /** The syncs and their snapshots, kept with their connector (src/connectors/). */
    private readonly repo: ConnectorSyncStore,
    /** Where runs are counted (`connector_syncs_total`, `connector_sync_duration_seconds`). */
    private readonly metrics?: Pick<Metrics, 'connectorSyncs' | 'connectorSyncSeconds'>,
  ) {}

  /** Registers the job handler; the runtime calls this before the runner starts. */
  register(): void {
    this.jobs.handle<{ syncId: string }>(SYNC_JOB, (job) => this.run(job));
  }

  /**
   * Stores the snapshot piece by piece as it arrives (`pieces`, whole lines each), then the sync
   * and its job in one transaction; a snapshot that fails to arrive whole leaves nothing behind.
   */
  async submit(connectorId: string, pieces: AsyncIterable<string>, op: OperationContext): Promise<SyncView> {
    const current = await this.repo.get(this.db, connectorId);
    if (!current) throw notFound('connector', connectorId);
    if (current.status !== 'active') throw conflict(`connector ${connectorId} is deleted`);
    const id = newId('job');
    try {
      let seq = 0;
      let bytes = 0;
      for await (const piece of pieces) {
        const at = seq++;
        bytes += Buffer.byteLength(piece);
        await this.db.write('connectors/sync_chunk', (tx) => this.repo.addSyncChunk(tx, id, at, piece));
      }
      await this.db.write('connectors/sync', async (tx) => {
        const created = await this.repo.createSync(tx, {
          id,
          connectorId,
          bytes,
          requestedBy: op.actor.id,
          requestId: op.meta.requestId,
          sourceIp: op.meta.sourceIp,
          userAgent: op.meta.userAgent,
        });
        if (!created) throw conflict(`connector ${connectorId} is deleted`);
        await this.jobs.enqueue(tx, SYNC_JOB, { syncId: id }, { id, maxAttempts: SYNC_ATTEMPTS });
      });
    } catch (err) {
      await this.db
        .write('connectors/sync_discard', (tx) => this.repo.discardSync(tx, id))
        .catch(() => undefined);
      throw err;
    }
    return this.get(connectorId, id);
  }

  async get(connectorId: string | null, id: string): Promise<SyncView> {
    const s = await this.repo.getSync(this.db, id, connectorId);
    const job = s ? await this.jobs.get(id) : undefined;
    if (!s || !job) throw notFound('sync', id);
    const progress = (job.progress ?? null) as SyncProgress | null;
    return {
      id,
      connector_id: s.connector_id,
      status: job.status,
      requested_at: s.requested_at,
      requested_by: s.requested_by,
      completed_at: s.completed_at ?? null,
      bytes: s.bytes,
      progress: progress
        ? { phase: progress.phase, processed: progress.processed, total: progress.total }
        : { phase: 'queued', processed: 0, total: 0 },
      counts: progress?.counts ?? null,
      errors: progress?.errors ?? [],
      error: job.error,
    };
  }

  /** A sync given up on lets its snapshot go; one that will run again keeps it. */
  private async run(job: JobContext<{ syncId: string }>): Promise<void> {
    const started = Date.now();
    const ended = (outcome: 'completed' | 'failed'): void => {
      this.metrics?.connectorSyncs.inc({ outcome });
      this.metrics?.connectorSyncSeconds.observe((Date.now() - started) / 1000);
    };
    try {
      await this.reconcile(job);
      ended('completed');
    } catch (err) {
      // A run cut short by a stop is taken up again elsewhere: it neither completed nor failed.
      if (!job.signal.aborted) ended('failed');
      if (!job.signal.aborted && job.attempt >= SYNC_ATTEMPTS) {
        const { syncId } = job.payload;
        await this.db
          .write('connectors/sync_discard', (tx) => this.repo.discardSync(tx, syncId))
          .catch(() => undefined);
      }
      throw err;
    }
  }

  private async reconcile(job: JobContext<{ syncId: string }>): Promise<void> {
    const { syncId } = job.payload;
    const s = await this.repo.getSync(this.db, syncId, null);
    if (!s) throw new Error(`sync ${syncId} is gone`);
    const connector = await this.repo.get(this.db, s.connector_id);
    if (connector?.status !== 'active') throw new Error(`connector ${s.connector_id} is deleted`);
    // A snapshot may be hundreds of megabytes: it is read back a piece at a time, as background
    // work rather than a request.
    const reader = this.db.background();
    const store = this.repo;
    async function* pieces(): AsyncGenerator<string> {
      for (let seq = 0; ; seq++) {
        const text = await store.syncChunk(reader, syncId, seq);
        if (text === undefined) return;
        yield text;
      }
    }
    const attributes = { 'pas.connector.id': s.connector_id, 'pas.sync.id': syncId };
    await inSpan('scim sync', { attributes }, async (span) => {
      const op: OperationContext = {
        actor: { type: 'connector', id: s.connector_id },
        meta: {
          requestId: s.request_id,
          sourceIp: s.source_ip,
          userAgent: s.user_agent,
          // The sync's events join its trace (the job's, itself a child of the upload's request).
          traceparent: currentTraceparent(null),
        },
      };
      const result = await this.sync.reconcile(
        { id: s.connector_id, name: connector.name },
        pieces(),
        op,
        (progress) => job.reportProgress(progress),
        job.signal,
      );
      span?.setAttributes(
        Object.fromEntries(Object.entries(result.counts).map(([name, n]) => [`pas.sync.${name}`, n])),
      );
    });
    await this.db.write('connectors/sync_finish', (tx) => this.repo.finishSync(tx, syncId));
  }
}
