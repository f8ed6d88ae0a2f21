import type { Database } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { principalRepository } from '../principals/repository.js';
import { assessRisk } from './score.js';
import type { RiskFactor } from '../schemas/principals.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { IxPrincipal } from '../decisions/model.js';
import type { Dirty, IndexSync } from '../decisions/sync.js';

export const PRIVILEGED_ACCESS_POINTS = 30;
export const BROAD_ACCESS_POINTS = 15;
/** Resources named by the allow policies reaching a principal (a glob counts once) for BROAD_ACCESS. */
export const BROAD_ACCESS_RESOURCES = 50;

/**
 * The part of a principal's risk that comes from what it can access, from the decision index:
 * `PRIVILEGED_ACCESS` when an active allow policy reaching it grants every action (`*`) or a
 * whole resource type (identifier `*`), and `BROAD_ACCESS` when the allow policies reaching it
 * name many resources.
 */
export function privilegeFactors(index: PolicyIndex, p: IxPrincipal): RiskFactor[] {
  let privileged = false;
  const named = new Set<string>();
  for (const policy of index.policiesOf(p)) {
    if (policy.effect !== 'allow') continue;
    if (policy.actions.includes('*') || policy.resources.some((r) => r.identifier === '*')) privileged = true;
    for (const r of policy.resources) {
      if (named.size >= BROAD_ACCESS_RESOURCES) break;
      named.add(`${r.type}:${r.identifier}`);
    }
  }
  const factors: RiskFactor[] = [];
  if (privileged) factors.push({ code: 'PRIVILEGED_ACCESS', points: PRIVILEGED_ACCESS_POINTS });
  if (named.size >= BROAD_ACCESS_RESOURCES)
    factors.push({ code: 'BROAD_ACCESS', points: BROAD_ACCESS_POINTS });
  return factors;
}

/** Principals looked at between two yields of the event loop, and written per transaction. */
const CHUNK = 500;

/**
 * Keeps the privilege factors of the risk score in step with policies and memberships: each run
 * takes what changed since the last one (src/decisions/sync.ts), recomputes the factors of the
 * principals it can have touched — everyone after a start — and writes those that differ, with
 * the score they make. Every instance runs it on its own changes; a write re-checks the stored
 * value, so two instances never write the same change twice.
 */
export class PrivilegeRisk {
  constructor(
    private readonly db: Database,
    private readonly index: PolicyIndex,
    private readonly sync: IndexSync,
    private readonly logger: Logger,
  ) {}

  async refresh(): Promise<number> {
    const dirty = this.sync.takeDirty();
    try {
      return await this.catchUp(dirty);
    } catch (err) {
      // Nothing is lost: the next run looks at everyone.
      this.sync.markAllDirty();
      throw err;
    }
  }

  private async catchUp(dirty: Dirty): Promise<number> {
    const { index } = this;
    let ids: Iterable<string>;
    if (dirty.all) ids = [...index.principals.keys()];
    else {
      const set = new Set(dirty.principals);
      for (const policy of dirty.policies) for (const id of index.subjectsOf(policy)) set.add(id);
      ids = set;
    }
    let changed: { id: string; privileges: string }[] = [];
    let written = 0;
    let looked = 0;
    for (const id of ids) {
      const p = index.principals.get(id);
      if (!p || p.status === 'deleted') continue;
      const privileges = JSON.stringify(privilegeFactors(index, p));
      if (privileges !== p.privileges) changed.push({ id, privileges });
      looked += 1;
      if (changed.length >= CHUNK) {
        written += await this.write(changed);
        changed = [];
      }
      if (looked % CHUNK === 0) await new Promise((r) => setImmediate(r));
    }
    if (changed.length > 0) written += await this.write(changed);
    if (written > 0) this.logger.info({ principals: written }, 'privilege risk factors updated');
    return written;
  }

  private async write(rows: { id: string; privileges: string }[]): Promise<number> {
    const byId = new Map(rows.map((r) => [r.id, r.privileges]));
    const written = await this.db.write('principals/set_privileges', async (tx) => {
      const principals = await principalRepository.lockMany(tx, [...byId.keys()]);
      const updates = principals.map((p) => {
        const privileges = byId.get(p.id)!;
        const risk = assessRisk({ ...p, privilege_factors: JSON.parse(privileges) as RiskFactor[] });
        return { id: p.id, privileges, score: risk.score, factors: JSON.stringify(risk.factors) };
      });
      return principalRepository.setPrivileges(tx, updates);
    });
    // This instance's view follows at once; the others read it again on their next change.
    for (const { id, privileges } of rows) this.index.setPrivileges(id, privileges);
    return written;
  }
}
