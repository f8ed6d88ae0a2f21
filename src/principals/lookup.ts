import type { Reader } from '../db/database.js';
import type { Principal } from './model.js';
import { principalRepository } from './repository.js';

/**
 * Reading one principal inside another feature's transaction (a resource's owner, for one): the
 * narrow read the principals' owner gives the features that refer to principals.
 */
export interface PrincipalLookup {
  get(tx: Reader, id: string): Promise<Principal | undefined>;
}

export const principalLookup: PrincipalLookup = {
  get: (tx, id) => principalRepository.get(tx, id),
};
