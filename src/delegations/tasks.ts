import type { PeriodicTask } from '../jobs/runner.js';
import type { DelegationService } from './service.js';

/** Delegations past their expiry are recorded as expired, once across instances. */
export function delegationTasks(delegations: DelegationService, every: { expiryMs: number }): PeriodicTask[] {
  return [
    {
      name: 'delegations.expire',
      scope: 'cluster',
      everyMs: every.expiryMs,
      run: async (signal) => {
        await delegations.expire(signal);
      },
    },
  ];
}
