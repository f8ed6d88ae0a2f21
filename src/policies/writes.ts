import type { Tx } from '../db/database.js';
import { checkPolicyBody } from './model.js';
import { policyRepository, type LoadedPolicy } from './repository.js';

export type { LoadedPolicy };

/**
 * What other features may write of policies themselves: a bulk load of trusted rows
 * (benchmarks and imports, src/seed/bulk.ts), the same nodes and edges as a create, without
 * events. Every other write goes through the policy service (src/policies/service.ts).
 */
export interface PolicyLoader {
  load(tx: Tx, rows: readonly LoadedPolicy[], actor: string): Promise<void>;
}

export const policyLoader: PolicyLoader = {
  load: (tx, rows, actor) =>
    policyRepository.load(
      tx,
      // Checked as the API checks it, and stored as it stores it: the default status filled in.
      rows.map((p) => ({ ...p, body: checkPolicyBody({ ...p.body, status: p.body.status ?? 'active' }) })),
      actor,
    ),
};
