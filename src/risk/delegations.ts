import type { Database } from '../db/database.js';
import type { ChangeEvent } from '../events/feed.js';
import type { Logger } from '../logging/logger.js';
import type { PrincipalRiskStore } from '../principals/writes.js';
import { nowIso } from '../time.js';
import { FollowedState } from './followed-state.js';
import { assessRisk } from './score.js';

/**
 * Keeps the DELEGATION_ORPHANED factor of AI agents' risk in step with the delegations they hold
 * (docs/api.md §10): an agent holding an active delegation from a delegator who is no longer
 * active is `orphaned`, one holding only live ones is `acting`, and the score counts `acting`
 * too once the agent's own owner is gone (that half follows the owner, src/risk/ownership.ts).
 * It follows the change feed: a principal that changes is checked, with the agents it delegates
 * to, and so is the delegate of a delegation created, revoked or expired. Each instance checks
 * the changes the feed brings it, and every agent that holds delegations once at start; a write
 * re-checks the stored state, so the same change is never written twice.
 */
export class DelegationRisk extends FollowedState {
  constructor(
    db: Database,
    logger: Logger,
    /** The principals' owner's risk inputs and scores (src/principals/writes.ts). */
    private readonly repo: PrincipalRiskStore,
  ) {
    super(db, logger, 'delegation risk');
  }

  readonly onChange = (event: ChangeEvent): void => {
    if (event.type.startsWith('principal.')) this.first.add(event.target.id);
    else if (event.type.startsWith('delegation.')) this.second.add(event.target.id);
  };

  protected page(after: string, limit: number): Promise<string[]> {
    return this.repo.delegatingPage(this.db, after, limit);
  }

  /** `ids`: principals that changed; `delegations`: delegations that changed. */
  protected async check(ids: string[], delegations: string[]): Promise<number> {
    // Most batches change nothing: they are looked at in a read, and only one where something
    // differs takes a write transaction (which looks again, under the principals' locks).
    if ((await this.repo.delegationStates(this.db, ids, delegations, nowIso())).length === 0) return 0;
    return this.db.write('principals/set_delegation_state', async (tx) => {
      const found = await this.repo.delegationStates(tx, ids, delegations, nowIso());
      if (found.length === 0) return 0;
      const states = new Map(found.map((r) => [r.id, r.state]));
      const principals = await this.repo.lockRiskInputs(tx, [...states.keys()]);
      const rows = principals.map((p) => {
        const state = states.get(p.id) ?? null;
        const risk = assessRisk({ ...p, delegation_state: state });
        return { id: p.id, state, score: risk.score, factors: JSON.stringify(risk.factors) };
      });
      return this.repo.setDelegationState(tx, rows);
    });
  }
}
