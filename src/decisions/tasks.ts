import type { PeriodicTask } from '../jobs/runner.js';
import type { DecisionLog } from './records.js';
import type { IndexSync } from './sync.js';

/**
 * The periodic work of the decision engine: each instance flushes its decision records and
 * retries a batch of index changes that failed to read; the index snapshot is written where
 * `snapshot` is given (by the leading process of a host); records past retention are purged once
 * across instances.
 */
export function decisionTasks(
  parts: { log: DecisionLog; sync: IndexSync; snapshot?: (() => Promise<void>) | undefined },
  every: { flushMs: number; snapshotMs: number; indexRetryMs: number; purgeMs: number },
): PeriodicTask[] {
  const { log, sync, snapshot } = parts;
  return [
    { name: 'decisions.flush', scope: 'process', everyMs: every.flushMs, run: () => log.flush() },
    ...(snapshot
      ? [{ name: 'decisions.snapshot', scope: 'instance' as const, everyMs: every.snapshotMs, run: snapshot }]
      : []),
    {
      name: 'decisions.index_retry',
      scope: 'process',
      everyMs: every.indexRetryMs,
      run: () => sync.retry(),
    },
    {
      name: 'decisions.purge',
      scope: 'cluster',
      everyMs: every.purgeMs,
      run: async () => {
        await log.purge();
      },
    },
  ];
}
