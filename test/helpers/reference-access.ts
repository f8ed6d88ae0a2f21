import { accessEntries, entryFor, entryGrants, type AccessEntry } from '../../src/decisions/access.js';
import {
  compareNames,
  grantOf,
  grantsOf,
  inEffect,
  settleFor,
  type ResourceAccess,
} from '../../src/decisions/access-service.js';
import { coveringPolicies, toolAllowed } from '../../src/decisions/engine.js';
import type { IxPrincipal } from '../../src/decisions/model.js';
import type { PolicyIndex } from '../../src/decisions/policy-index.js';
import { readsOnlyPrincipal } from '../../src/policies/conditions.js';
import { globMatches, type Glob } from '../../src/policies/patterns.js';
import type { MapIndex } from './map-index.js';

/**
 * Access answered the plain way over the map-based index the decision index used to be
 * (test/helpers/map-index.ts): what the columnar index and its row sets must answer too. Every
 * principal is looked at in turn; nothing is shared between principals.
 */

/** The map-based index where the engine's functions take an index: they use what both have. */
export const asIndex = (index: MapIndex): PolicyIndex => index as unknown as PolicyIndex;

/** A principal's access entries from the index alone (what the access review writes). */
export function referenceEntries(index: MapIndex, p: IxPrincipal): AccessEntry[] {
  const registered = (type: string, glob: Glob): string[] => {
    const out: string[] = [];
    for (const r of index.registeredOf(type)) if (globMatches(glob, r.identifier)) out.push(r.identifier);
    return out;
  };
  return accessEntries(settleFor(asIndex(index), p, grantsOf(asIndex(index), p)), registered, p);
}

/** Every active principal with access to a resource, one principal at a time. */
export function referenceWhoCanAccess(
  index: MapIndex,
  type: string,
  identifier: string,
  action: string | undefined,
): ResourceAccess['principals'] {
  const now = () => Date.now();
  const covering = coveringPolicies(asIndex(index), type, identifier)
    .filter((policy) => inEffect(policy, now))
    .sort((a, b) => (a.effect === b.effect ? 0 : a.effect === 'allow' ? -1 : 1));
  const target = { type, identifier, pattern: false };
  const found: { p: IxPrincipal; entry: AccessEntry }[] = [];
  for (const p of index.principals.values()) {
    if (p.status !== 'active') continue;
    const selecting = covering.filter((policy) => index.subjectVia(policy, p) !== null);
    if (!selecting.some((policy) => policy.effect === 'allow')) continue;
    const grants = selecting.map(grantOf);
    const personal = grants.some((g) =>
      (g.conditions ?? index.policies.get(g.policyId)?.conditions ?? []).some(readsOnlyPrincipal),
    );
    const entry = entryFor(target, personal ? settleFor(asIndex(index), p, grants) : grants, true);
    if (!entry || !toolAllowed(p, type, identifier)) continue;
    if (action !== undefined && !entryGrants(entry, action)) continue;
    found.push({ p, entry });
  }
  return found
    .sort((a, b) => compareNames(a.p, b.p))
    .map(({ p, entry }) => ({
      principal: { id: p.id, name: p.name, type: p.type, email: p.email },
      actions: entry.actions,
      ...(entry.denied_actions ? { denied_actions: entry.denied_actions } : {}),
      granted_by: entry.granted_by,
      ...(entry.expires_at !== undefined ? { expires_at: entry.expires_at } : {}),
      conditional: entry.conditional,
    }));
}
