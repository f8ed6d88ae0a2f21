import type { Database } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import type { PrincipalRiskStore } from '../principals/writes.js';
import { assessRisk } from './score.js';
import type { RiskFactor } from '../schemas/principals.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { IxPolicy, IxPrincipal } from '../decisions/model.js';
import { RowSet } from '../columnar/row-set.js';
import { unpaced, type Pacer } from '../pacing/pacer.js';
import { timeSlices } from '../time.js';
import type { Dirty, IndexSync } from '../decisions/sync.js';

export const PRIVILEGED_ACCESS_POINTS = 30;
export const BROAD_ACCESS_POINTS = 15;
/** Resources named by the allow policies reaching a principal (a glob counts once) for BROAD_ACCESS. */
export const BROAD_ACCESS_RESOURCES = 50;

/** The factors themselves, in the order they are stored. */
function factorsOf(privileged: boolean, broad: boolean): RiskFactor[] {
  const factors: RiskFactor[] = [];
  if (privileged) factors.push({ code: 'PRIVILEGED_ACCESS', points: PRIVILEGED_ACCESS_POINTS });
  if (broad) factors.push({ code: 'BROAD_ACCESS', points: BROAD_ACCESS_POINTS });
  return factors;
}

/** Whether an allow policy grants every action or a whole resource type. */
const grantsAll = (policy: IxPolicy): boolean =>
  policy.actions.includes('*') || policy.resources.some((r) => r.identifier === '*');

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
    if (grantsAll(policy)) privileged = true;
    for (const r of policy.resources) {
      if (named.size >= BROAD_ACCESS_RESOURCES) break;
      named.add(`${r.type}:${r.identifier}`);
    }
  }
  return factorsOf(privileged, named.size >= BROAD_ACCESS_RESOURCES);
}

/**
 * `privilegeFactors` of every principal at once, from the policies' subject sets rather than
 * principal by principal: a bit per row for `PRIVILEGED_ACCESS`, and per row the count of
 * distinct resources the allow policies reaching it name (each resource's policies visited
 * together, a row counted once per resource). A few passes over the rows the active allow
 * policies select, yielding to the event loop between resources; answers each row's factors as
 * stored (JSON text).
 */
export async function allPrivilegeFactors(
  index: PolicyIndex,
  turn: () => Promise<void> | undefined,
): Promise<(row: number) => string> {
  const work = countPrivileges(index);
  for (let step = work.next(); ; step = work.next()) {
    if (step.done) return step.value;
    const wait = turn();
    if (wait) await wait;
  }
}

/** The work of `allPrivilegeFactors`, yielding between resources (`drain` runs it at once). */
export function* countPrivileges(index: PolicyIndex): Generator<void, (row: number) => string> {
  const rows = index.table.rows;
  const privileged = new Uint8Array(rows);
  const named = new Uint16Array(rows);
  const seen = new Int32Array(rows).fill(-1);
  const byResource = new Map<string, IxPolicy[]>();
  for (const policy of index.policies.values()) {
    if (!policy.active || policy.effect !== 'allow') continue;
    if (grantsAll(policy)) {
      for (const set of index.subjectRowSets(policy)) set.forEach((row) => (privileged[row] = 1));
    }
    for (const r of policy.resources) {
      const key = `${r.type}:${r.identifier}`;
      const list = byResource.get(key);
      if (!list) byResource.set(key, [policy]);
      else if (list[list.length - 1] !== policy) list.push(policy);
    }
  }
  let resource = 0;
  for (const policies of byResource.values()) {
    const mark = resource;
    const count = (row: number): void => {
      if (seen[row] === mark) return;
      seen[row] = mark;
      if (named[row]! < BROAD_ACCESS_RESOURCES) named[row]! += 1;
    };
    for (const policy of policies) for (const set of index.subjectRowSets(policy)) set.forEach(count);
    resource += 1;
    yield;
  }
  const texts = new Map<number, string>();
  return (row) => {
    const key = privileged[row]! * 2 + (named[row]! >= BROAD_ACCESS_RESOURCES ? 1 : 0);
    let text = texts.get(key);
    if (text === undefined) {
      text = JSON.stringify(factorsOf(key >= 2, key % 2 === 1));
      texts.set(key, text);
    }
    return text;
  };
}

/** Above this many principals to look at, a run computes everyone's factors at once. */
const ALL_AT_ONCE_FROM = 2_000;

/** Principals looked at between two yields of the event loop, and written per transaction. */
const CHUNK = 500;
/** Principals written per transaction while the pacer slows the work down, at least. */
const CHUNK_PACED = 50;

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
    /** The principals' owner's risk inputs and scores (src/principals/writes.ts). */
    private readonly repo: PrincipalRiskStore,
    /** Each write is a step of background work that gives way to decisions. */
    private readonly pacer: Pacer = unpaced(),
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
    const { table } = index;
    // The rows to look at: everyone, or those the changes can have touched. A version of a policy
    // whose `match` no active policy keeps any more (replaced or deleted) would be evaluated over
    // every principal in one go: everyone is looked at instead, a slice at a time.
    let rows: RowSet | null = null;
    if (!dirty.all && dirty.policies.every((policy) => index.subjectsAtHand(policy))) {
      rows = new RowSet();
      for (const id of dirty.principals) {
        const row = table.rowOf(id);
        if (row >= 0) rows.add(row);
      }
      for (const policy of dirty.policies) {
        for (const set of index.subjectRowSets(policy)) set.forEach((row) => rows!.add(row));
      }
    }
    const turn = timeSlices();
    const many = rows === null || rows.size > ALL_AT_ONCE_FROM;
    const factors = many
      ? await allPrivilegeFactors(index, turn)
      : (row: number) => JSON.stringify(privilegeFactors(index, index.principalViewAt(row)));
    let changed: { id: string; privileges: string }[] = [];
    let written = 0;
    const all = rows?.toArray();
    const count = all ? all.length : table.rows;
    for (let i = 0; i < count; i += 1) {
      const row = all ? all[i]! : i;
      if (!table.has(row) || table.statusOf(row) === 'deleted') continue;
      const privileges = factors(row);
      if (privileges !== table.privilegesOf(row)) changed.push({ id: table.idOf(row), privileges });
      if (changed.length >= this.pacer.size(CHUNK, CHUNK_PACED)) {
        written += await this.write(changed);
        changed = [];
      }
      if ((i & 255) === 255) {
        const wait = turn();
        if (wait) await wait;
      }
    }
    if (changed.length > 0) written += await this.write(changed);
    if (written > 0) this.logger.info({ principals: written }, 'privilege risk factors updated');
    return written;
  }

  private write(rows: { id: string; privileges: string }[]): Promise<number> {
    return this.pacer.step('risk.privileges', () => this.writeNow(rows));
  }

  private async writeNow(rows: { id: string; privileges: string }[]): Promise<number> {
    const byId = new Map(rows.map((r) => [r.id, r.privileges]));
    const written = await this.db.write('principals/set_privileges', async (tx) => {
      const principals = await this.repo.lockRiskInputs(tx, [...byId.keys()]);
      const updates = principals.map((p) => {
        const privileges = byId.get(p.id)!;
        const risk = assessRisk({ ...p, privilege_factors: JSON.parse(privileges) as RiskFactor[] });
        return { id: p.id, privileges, score: risk.score, factors: JSON.stringify(risk.factors) };
      });
      return this.repo.setPrivileges(tx, updates);
    });
    // This instance's view follows at once; the others read it again on their next change.
    await this.sync.setPrivileges(rows);
    return written;
  }
}
