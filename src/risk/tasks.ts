import type { PeriodicTask } from '../jobs/runner.js';
import type { DelegationRisk } from './delegations.js';
import type { DormancyRisk } from './dormancy.js';
import type { OwnershipRisk } from './ownership.js';
import type { PrivilegeRisk } from './privileges.js';

/**
 * What keeps the stored risk scores current: dormancy once across instances; ownership,
 * delegations and privileges, which follow this instance's change feed, by the process that
 * follows it (`follows`: the leading process of a host; the others would only repeat it).
 */
export function riskTasks(
  risk: {
    dormancy: DormancyRisk;
    ownership: OwnershipRisk;
    delegations: DelegationRisk;
    privileges: PrivilegeRisk;
  },
  every: { dormancyMs: number; ownershipMs: number; delegationsMs: number; privilegesMs: number },
  follows: boolean,
): PeriodicTask[] {
  const dormancy: PeriodicTask = {
    name: 'principals.risk',
    scope: 'cluster',
    everyMs: every.dormancyMs,
    run: async () => {
      await risk.dormancy.refresh();
    },
  };
  if (!follows) return [dormancy];
  const followed = (name: string, everyMs: number, refresh: () => Promise<unknown>): PeriodicTask => ({
    name,
    scope: 'instance',
    everyMs,
    run: async () => {
      await refresh();
    },
  });
  return [
    dormancy,
    followed('risk.ownership', every.ownershipMs, () => risk.ownership.refresh()),
    followed('risk.delegations', every.delegationsMs, () => risk.delegations.refresh()),
    followed('risk.privileges', every.privilegesMs, () => risk.privileges.refresh()),
  ];
}
