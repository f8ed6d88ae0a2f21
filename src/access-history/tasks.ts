import type { PeriodicTask } from '../jobs/runner.js';
import type { AccessHistoryRecorder } from './recorder.js';
import type { AccessHistoryService } from './service.js';

/**
 * The periodic work of the access history: a recording instance renews its lease (and stores
 * what waits); changes past the retention are purged once across instances.
 */
export function accessHistoryTasks(
  parts: { recorder?: AccessHistoryRecorder | undefined; history: AccessHistoryService },
  every: { renewMs: number; purgeMs: number },
): PeriodicTask[] {
  const { recorder, history } = parts;
  return [
    ...(recorder
      ? [
          {
            name: 'access_history.record',
            scope: 'instance' as const,
            everyMs: every.renewMs,
            run: () => recorder.renew(),
          },
        ]
      : []),
    {
      name: 'access_history.purge',
      scope: 'cluster',
      everyMs: every.purgeMs,
      run: async () => {
        await history.purge();
      },
    },
  ];
}
