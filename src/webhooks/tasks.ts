import type { PeriodicTask } from '../jobs/runner.js';
import type { WebhookDispatcher } from './dispatcher.js';

/** Each instance sends what is due (each webhook under its lease); old deliveries are purged once. */
export function webhookTasks(
  dispatcher: WebhookDispatcher,
  every: { pollMs: number; purgeMs: number },
): PeriodicTask[] {
  return [
    {
      name: 'webhooks.dispatch',
      scope: 'instance',
      everyMs: every.pollMs,
      run: (signal) => dispatcher.run(signal),
    },
    { name: 'webhooks.purge', scope: 'cluster', everyMs: every.purgeMs, run: () => dispatcher.purge() },
  ];
}
