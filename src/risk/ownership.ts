import type { Database } from '../db/database.js';
import type { ChangeEvent } from '../events/feed.js';
import type { Logger } from '../logging/logger.js';
import { principalRepository as repo } from '../principals/repository.js';
import { assessRisk } from './score.js';

/** Principals checked per transaction. */
const BATCH = 500;

/**
 * Keeps the ORPHANED factor of non-USER principals' risk in step with their owners: an owner
 * (`metadata.owner`, a principal id or a USER's email) that names no principal, or is
 * deprovisioned or deleted, orphans what it owns, and an owner that comes back (or arrives)
 * adopts it again. It follows the change feed: a principal that changes is checked, and so is
 * everything that names it (by id, or by its email, old and new). Every instance checks its own
 * share of changes, and everyone once at start; a write re-checks the stored state, so the same
 * change is never written twice.
 */
export class OwnershipRisk {
  private ids = new Set<string>();
  private refs = new Set<string>();
  private everyone = true;

  constructor(
    private readonly db: Database,
    private readonly logger: Logger,
  ) {}

  readonly onChange = (event: ChangeEvent): void => {
    if (!event.type.startsWith('principal.')) return;
    this.ids.add(event.target.id);
    this.refs.add(event.target.id);
    const email = event.changes?.['email'];
    for (const value of [email?.from, email?.to]) if (typeof value === 'string') this.refs.add(value);
  };

  async refresh(): Promise<number> {
    const everyone = this.everyone;
    const ids = [...this.ids];
    const refs = [...this.refs];
    this.everyone = false;
    this.ids = new Set();
    this.refs = new Set();
    try {
      let written = 0;
      if (everyone) {
        for (let after = ''; ;) {
          const page = await repo.ownedPage(this.db, after, BATCH);
          if (page.length > 0) written += await this.check(page, []);
          if (page.length < BATCH) break;
          after = page[page.length - 1]!;
        }
      }
      for (let i = 0; i < Math.max(ids.length, refs.length); i += BATCH) {
        written += await this.check(ids.slice(i, i + BATCH), refs.slice(i, i + BATCH));
      }
      if (written > 0) this.logger.info({ principals: written }, 'ownership risk updated');
      return written;
    } catch (err) {
      // Nothing is lost: what was taken is looked at again on the next run.
      if (everyone) this.everyone = true;
      for (const id of ids) this.ids.add(id);
      for (const ref of refs) this.refs.add(ref);
      throw err;
    }
  }

  private async check(ids: string[], refs: string[]): Promise<number> {
    return this.db.write('principals/set_owner_state', async (tx) => {
      const found = await repo.ownerStates(tx, ids, refs);
      if (found.length === 0) return 0;
      const states = new Map(found.map((r) => [r.id, r.state]));
      const principals = await repo.lockMany(tx, [...states.keys()]);
      const rows = principals.map((p) => {
        const state = states.get(p.id) ?? null;
        const risk = assessRisk({ ...p, owner_state: state });
        return { id: p.id, state, score: risk.score, factors: JSON.stringify(risk.factors) };
      });
      return repo.setOwnerState(tx, rows);
    });
  }
}
