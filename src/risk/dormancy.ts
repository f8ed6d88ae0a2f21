import type { Database } from '../db/database.js';
import type { PrincipalRiskStore } from '../principals/writes.js';
import { assessRisk, DORMANT_AFTER_DAYS } from './score.js';

/**
 * The one input of the risk score that changes with the passage of time alone: a USER that has
 * not logged in for DORMANT_AFTER_DAYS becomes dormant. Every other input changes through a
 * write, which scores the principal again there; this catches up with the clock.
 */
export class DormancyRisk {
  constructor(
    private readonly db: Database,
    /** The principals' owner's risk inputs and scores (src/principals/writes.ts). */
    private readonly repo: PrincipalRiskStore,
  ) {}

  /** Scores again the principals that became dormant by `now`; returns how many it updated. */
  async refresh(now = Date.now(), batch = 1_000): Promise<number> {
    const dormantBefore = new Date(now - DORMANT_AFTER_DAYS * 86_400_000).toISOString();
    let total = 0;
    for (;;) {
      const updated = await this.db.write('principals/refresh_risk', async (tx) => {
        const candidates = await this.repo.dormantCandidates(tx, dormantBefore, batch);
        const changes = candidates.map((p) => {
          const risk = assessRisk(p, now);
          return { id: p.id, score: risk.score, factors: JSON.stringify(risk.factors) };
        });
        if (changes.length > 0) await this.repo.setRisk(tx, changes);
        return changes.length;
      });
      total += updated;
      if (updated < batch) return total;
    }
  }
}
