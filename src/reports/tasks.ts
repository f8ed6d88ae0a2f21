import type { PeriodicTask } from '../jobs/runner.js';
import type { ReportService } from './service.js';

/** Reports past their retention, and failed ones, are removed once across instances. */
export function reportTasks(reports: ReportService, every: { purgeMs: number }): PeriodicTask[] {
  return [{ name: 'reports.purge', scope: 'cluster', everyMs: every.purgeMs, run: () => reports.purge() }];
}
