import type { PeriodicTask } from '../jobs/runner.js';
import type { PolicyService } from './service.js';

/**
 * Decisions apply a policy's window themselves; this records each opening of a window that was
 * yet to open (`policy.window_opened`) and each close (`policy.expired`), once across instances.
 */
export function policyTasks(policies: PolicyService, every: { expiryMs: number }): PeriodicTask[] {
  return [
    {
      name: 'policies.expiry',
      scope: 'cluster',
      everyMs: every.expiryMs,
      run: async (signal) => {
        await policies.recordOpenings(signal);
        await policies.recordExpirations(signal);
      },
    },
  ];
}
