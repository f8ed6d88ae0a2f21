import type { PeriodicTask } from '../jobs/runner.js';
import type { Revocations } from './revocations.js';
import type { SigningKeys } from './signing-keys.js';
import type { TokenService } from './tokens.js';
import type { TokenVerifier } from './verifier.js';

/**
 * The periodic work of authentication: each instance keeps its signing keys and the caches of
 * its verifier and revocation view current; once across instances, expired tokens are purged.
 */
export function authTasks(
  parts: { keys: SigningKeys; revocations: Revocations; verifier: TokenVerifier; tokens: TokenService },
  every: { keyCheckMs: number; purgeMs: number },
): PeriodicTask[] {
  return [
    {
      name: 'tokens.keys',
      scope: 'process',
      everyMs: every.keyCheckMs,
      run: async () => {
        await parts.keys.refresh();
        parts.revocations.prune();
        parts.verifier.prune();
      },
    },
    {
      name: 'tokens.purge',
      scope: 'cluster',
      everyMs: every.purgeMs,
      run: async () => {
        await parts.tokens.purge();
      },
    },
  ];
}
