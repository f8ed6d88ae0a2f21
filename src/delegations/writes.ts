import type { Tx } from '../db/database.js';
import { delegationRepository, type LoadedDelegation } from './repository.js';

export type { LoadedDelegation };

/**
 * What other features may write of delegations themselves: a bulk load of trusted rows
 * (benchmarks and imports, src/seed/bulk.ts), the same edges as a create, without checks or
 * events. Every other write goes through the delegation service (src/delegations/service.ts).
 */
export interface DelegationLoader {
  load(tx: Tx, rows: readonly LoadedDelegation[], actor: string): Promise<void>;
}

export const delegationLoader: DelegationLoader = {
  load: (tx, rows, actor) => delegationRepository.load(tx, rows, actor),
};
