import type { PeriodicTask } from '../jobs/runner.js';
import type { PolicyService } from './service.js';

/**
 * Decisions apply a policy's window themselves; this records each close (`policy.expired`), once
 * across instances.
 */
export function policyTasks(policies: PolicyService, every: { expiryMs: number }): PeriodicTask[] {
  return [
    {
      name: 'policies.expiry',
      scope: 'cluster',
      everyMs: every.expiryMs,
      run: async (signal) => {
        await policies.recordExpirations(signal);
      },
    },
  ];
}
