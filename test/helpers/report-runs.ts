import type { Database, Tx } from '../../src/db/database.js';
import { newId } from '../../src/ids.js';
import { ReportGenerator } from '../../src/reports/generator.js';
import type { TestApp } from './app.js';
import { cypher } from './db.js';

/**
 * Report jobs run by a test itself, outside the job runner: a generator on the app's runtime with
 * small pages and pieces, reports made straight in the graph (so that only the test runs them),
 * and a run stopped, as a shutdown would stop it, once it has stored some pieces.
 */
export function reportRuns(app: TestApp, pageSize: { principals: number; review: number }) {
  const db = app.runtime.db;
  const generator = (database: Database): ReportGenerator =>
    new ReportGenerator(database, app.runtime.events, app.runtime.services.access, app.runtime.engine.index, {
      retentionDays: 7,
      logger: app.logger,
      pageSize,
      chunkBytes: 1,
    });
  const job = (reportId: string, attempt: number, signal = new AbortController().signal) => ({
    id: 'job',
    payload: { reportId },
    progress: null,
    attempt,
    signal,
    reportProgress: async () => undefined,
  });
  return {
    /** A pending report of `type`, made in the graph. */
    async make(type: string, parameters: Record<string, unknown> = {}): Promise<string> {
      const id = newId('report');
      await cypher(
        db,
        "CREATE (:Report {id: $id, type: $type, format: 'csv', parameters: $parameters, status: 'pending', requested_at: datetime(), requested_by: 'test', progress: 0, row_count: 0, bytes: 0, chunks: 0})",
        { id, type, parameters: JSON.stringify(parameters) },
      );
      return id;
    },
    /** Runs a report's job to its end (attempt `attempt`). */
    async run(reportId: string, attempt = 1): Promise<void> {
      await generator(db).run(job(reportId, attempt));
    },
    /** Runs a report's job until it has stored `pieces` pieces, then stops it; answers why it stopped. */
    async runUntil(reportId: string, pieces: number): Promise<unknown> {
      const controller = new AbortController();
      let stored = 0;
      const counting = new Proxy(db, {
        get(target, key, receiver) {
          if (key === 'write') {
            return async (unit: string, work: (tx: Tx) => Promise<unknown>) => {
              const out = await target.write(unit, work);
              if (unit === 'reports/append' && ++stored === pieces) controller.abort();
              return out;
            };
          }
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
      let stopped: unknown;
      await generator(counting)
        .run(job(reportId, 1, controller.signal))
        .catch((err: unknown) => (stopped = err));
      return stopped;
    },
  };
}
