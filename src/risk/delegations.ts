import type { Database } from '../db/database.js';
import type { ChangeEvent } from '../events/feed.js';
import type { Logger } from '../logging/logger.js';
import { principalRepository as repo } from '../principals/repository.js';
import { nowIso } from '../time.js';
import { assessRisk } from './score.js';

/** Agents checked per transaction. */
const BATCH = 500;

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
export class DelegationRisk {
  private ids = new Set<string>();
  private delegations = new Set<string>();
  private everyone = true;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {}

  readonly onChange = (event: ChangeEvent): void => {
    if (event.type.startsWith('principal.')) this.ids.add(event.target.id);
    else if (event.type.startsWith('delegation.')) this.delegations.add(event.target.id);
  };

  async refresh(): Promise<number> {
    const everyone = this.everyone;
    const ids = [...this.ids];
    const delegations = [...this.delegations];
    this.everyone = false;
    this.ids = new Set();
    this.delegations = new Set();
    try {
      let written = 0;
      if (everyone) {
        for (let after = ''; ;) {
          const page = await repo.delegatingPage(this.db, after, BATCH);
          if (page.length > 0) written += await this.check(page, []);
          if (page.length < BATCH) break;
          after = page[page.length - 1]!;
        }
      }
      for (let i = 0; i < Math.max(ids.length, delegations.length); i += BATCH) {
        written += await this.check(ids.slice(i, i + BATCH), delegations.slice(i, i + BATCH));
      }
      if (written > 0) this.logger.info({ principals: written }, 'delegation risk updated');
      return written;
    } catch (err) {
      // Nothing is lost: what was taken is looked at again on the next run.
      if (everyone) this.everyone = true;
      for (const id of ids) this.ids.add(id);
      for (const id of delegations) this.delegations.add(id);
      throw err;
    }
  }

  private async check(ids: string[], delegations: string[]): Promise<number> {
    return this.db.write('principals/set_delegation_state', async (tx) => {
      const found = await repo.delegationStates(tx, ids, delegations, nowIso());
      if (found.length === 0) return 0;
      const states = new Map(found.map((r) => [r.id, r.state]));
      const principals = await repo.lockMany(tx, [...states.keys()]);
      const rows = principals.map((p) => {
        const state = states.get(p.id) ?? null;
        const risk = assessRisk({ ...p, delegation_state: state });
        return { id: p.id, state, score: risk.score, factors: JSON.stringify(risk.factors) };
      });
      return repo.setDelegationState(tx, rows);
    });
  }
}
