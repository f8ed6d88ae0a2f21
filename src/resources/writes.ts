import type { Tx } from '../db/database.js';
import { resourceRepository, type LoadedResource } from './repository.js';

export type { LoadedResource };

/**
 * What other features may write of resources themselves: a bulk load of trusted rows
 * (benchmarks and imports, src/seed/bulk.ts), the same nodes and edges as a registration, without
 * events. Every other write goes through the resource service (src/resources/service.ts).
 */
export interface ResourceLoader {
  load(tx: Tx, rows: readonly LoadedResource[]): Promise<void>;
}

export const resourceLoader: ResourceLoader = {
  load: (tx, rows) => resourceRepository.load(tx, rows),
};
