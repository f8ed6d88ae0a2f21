import type { Database } from '../db/database.js';
import type { ChangeEvent } from '../events/feed.js';
import type { Logger } from '../logging/logger.js';
import type { PrincipalRiskStore } from '../principals/writes.js';
import { FollowedState } from './followed-state.js';
import { assessRisk } from './score.js';

/**
 * Keeps the ORPHANED factor of non-USER principals' risk in step with their owners: an owner
 * (`metadata.owner`, a principal id or a USER's email) that names no principal, or is
 * deprovisioned or deleted, orphans what it owns, and an owner that comes back (or arrives)
 * adopts it again. It follows the change feed: a principal that changes is checked, and so is
 * everything that names it (by id, or by its email, old and new). Every instance checks its own
 * share of changes, and everyone once at start; a write re-checks the stored state, so the same
 * change is never written twice.
 */
export class OwnershipRisk extends FollowedState {
  constructor(
    db: Database,
    logger: Logger,
    /** The principals' owner's risk inputs and scores (src/principals/writes.ts). */
    private readonly repo: PrincipalRiskStore,
  ) {
    super(db, logger, 'ownership risk');
  }

  readonly onChange = (event: ChangeEvent): void => {
    if (!event.type.startsWith('principal.')) return;
    this.first.add(event.target.id);
    this.second.add(event.target.id);
    const email = event.changes?.['email'];
    for (const value of [email?.from, email?.to]) if (typeof value === 'string') this.second.add(value);
  };

  protected page(after: string, limit: number): Promise<string[]> {
    return this.repo.ownedPage(this.db, after, limit);
  }

  /** `ids`: principals that changed; `refs`: what may name them as an owner (ids and emails). */
  protected async check(ids: string[], refs: string[]): Promise<number> {
    // Most batches change nothing: they are looked at in a read, and only one where something
    // differs takes a write transaction (which looks again, under the principals' locks).
    if ((await this.repo.ownerStates(this.db, ids, refs)).length === 0) return 0;
    return this.db.write('principals/set_owner_state', async (tx) => {
      const found = await this.repo.ownerStates(tx, ids, refs);
      if (found.length === 0) return 0;
      const states = new Map(found.map((r) => [r.id, r.state]));
      const principals = await this.repo.lockRiskInputs(tx, [...states.keys()]);
      const rows = principals.map((p) => {
        const state = states.get(p.id) ?? null;
        const risk = assessRisk({ ...p, owner_state: state });
        return { id: p.id, state, score: risk.score, factors: JSON.stringify(risk.factors) };
      });
      return this.repo.setOwnerState(tx, rows);
    });
  }
}
