import type { Changes, OperationContext } from '../audit/audit.js';
import type { Tx } from '../db/database.js';
import type { EventSink } from '../events/sink.js';
import { nowIso } from '../time.js';
import { MANAGER_KEY, type ManagerLink, type Principal, type PrincipalRow, type RiskRule } from './model.js';
import {
  principalRepository as repo,
  principalRows,
  type NewPrincipal,
  type PrincipalChanges,
} from './repository.js';

/**
 * The one way principals are written. Whoever writes one — the REST API, the SCIM endpoints, a
 * connector's sync, the bulk loader — goes through here, so that every write scores the
 * principal's risk from what it will hold, and records the audit events of the change in the same
 * transaction. Callers take the narrow interface they need (`PrincipalWriter`,
 * `PrincipalBatchWriter`); the risk updaters of src/risk/ take `PrincipalRiskStore`.
 */

/** A new principal as its writer gives it: everything but its risk, which the write scores. */
export type PrincipalDraft = Omit<NewPrincipal, 'risk'>;
/** A change to a principal as its writer gives it: the risk is scored from the result. */
export type PrincipalEdit = Omit<PrincipalChanges, 'risk'>;

/** Who made a change, and what the audit event says changed. */
export interface ChangeRecord {
  op: OperationContext;
  changes: Changes;
}

/** One principal at a time, in the caller's transaction. */
export interface PrincipalWriter {
  /** Creates a principal and records `principal.created` with `record.changes`. */
  create(tx: Tx, draft: PrincipalDraft, record: ChangeRecord): Promise<Principal>;
  /**
   * Changes a principal read under its lock, and records `principal.updated` with
   * `record.changes` (when there are any) and `principal.status_changed` when the status moves.
   */
  update(tx: Tx, current: Principal, edit: PrincipalEdit, record: ChangeRecord): Promise<Principal>;
  /** Whether `managerId` exists, its status, and whether managing `id` would close a cycle. */
  managerCheck(tx: Tx, id: string, managerId: string): ReturnType<typeof repo.managerCheck>;
}

/** Many principals in one statement, in the caller's transaction. */
export interface PrincipalBatchWriter {
  /**
   * Creates a batch of principals; records `principal.created` for each when `record` is given
   * (a bulk load of trusted data records nothing). Answers the ids of those whose manager is not in
   * the graph yet, for a later pass.
   */
  createMany(
    tx: Tx,
    rows: PrincipalRow[],
    createdBy: string,
    record?: { op: OperationContext; changesOf: (row: PrincipalRow) => Changes },
  ): Promise<string[]>;
  /** Manager edges of a bulk load, once every manager exists: no checks, no events. */
  loadManagers(tx: Tx, rows: readonly { id: string; managerId: string }[]): Promise<void>;
  /** Deprovisions principals read before (they stay for history), with `principal.status_changed`. */
  deprovisionMany(tx: Tx, principals: readonly Principal[], op: OperationContext): Promise<void>;
  /**
   * Sets manager links as a provisioning source has them; records `principal.updated` for each
   * row whose manager moved from `from`, unless its change was recorded already.
   */
  setManagers(
    tx: Tx,
    rows: readonly (ManagerLink & { from: string | null; recorded: boolean })[],
    op: OperationContext,
  ): Promise<void>;
}

/** What the risk updaters read and write of principals: the inputs they follow, and the score. */
export type PrincipalRiskStore = Pick<
  typeof repo,
  | 'lockRiskInputs'
  | 'setRisk'
  | 'setPrivileges'
  | 'dormantCandidates'
  | 'ownerStates'
  | 'ownedPage'
  | 'setOwnerState'
  | 'delegationStates'
  | 'delegatingPage'
  | 'setDelegationState'
>;
export const principalRiskStore: PrincipalRiskStore = repo;

/** Applies a one-level merge patch: supplied keys are set, `null` removes a key, others stay. */
export function applyPatch<T>(
  current: Readonly<Record<string, T>>,
  patch: Readonly<Record<string, T | null>> | undefined,
): Record<string, T> {
  if (!patch) return { ...current };
  const next: Record<string, T> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

export class PrincipalWrites implements PrincipalWriter, PrincipalBatchWriter {
  constructor(
    /** src/risk/score.ts's rule, handed in by the wiring (risk/ reads principals, not the reverse). */
    private readonly assessRisk: RiskRule,
    /** Where audit events go; a writer without one (the bulk loader's) records nothing. */
    private readonly events?: EventSink,
  ) {}

  managerCheck(tx: Tx, id: string, managerId: string): ReturnType<typeof repo.managerCheck> {
    return repo.managerCheck(tx, id, managerId);
  }

  async create(tx: Tx, draft: PrincipalDraft, record: ChangeRecord): Promise<Principal> {
    const risk = this.assessRisk({
      type: draft.type,
      status: draft.status,
      attributes: draft.attributes,
      metadata: draft.metadata,
      last_login: draft.lastLogin ?? null,
    });
    const principal = await repo.create(tx, { ...draft, risk }, nowIso());
    this.sink().record(tx, record.op, {
      type: 'principal.created',
      target: { type: 'principal', id: draft.id },
      changes: record.changes,
    });
    return principal;
  }

  async update(tx: Tx, current: Principal, edit: PrincipalEdit, record: ChangeRecord): Promise<Principal> {
    const status = edit.status ?? current.status;
    // Inputs kept current elsewhere (src/risk/) stay as stored: a write here does not change them.
    const risk = this.assessRisk({
      ...current,
      status,
      attributes: applyPatch(current.attributes, edit.attributes),
      metadata: applyPatch(current.metadata, edit.metadata),
    });
    const updated = await repo.update(tx, current, { ...edit, risk }, nowIso());
    const target = { type: 'principal', id: current.id };
    const events = this.sink();
    if (Object.keys(record.changes).length > 0) {
      events.record(tx, record.op, { type: 'principal.updated', target, changes: record.changes });
    }
    if (status !== current.status) {
      events.record(tx, record.op, {
        type: 'principal.status_changed',
        target,
        changes: { status: { from: current.status, to: status } },
      });
    }
    return updated;
  }

  async createMany(
    tx: Tx,
    rows: PrincipalRow[],
    createdBy: string,
    record?: { op: OperationContext; changesOf: (row: PrincipalRow) => Changes },
  ): Promise<string[]> {
    const pending = await repo.createMany(tx, principalRows(rows, createdBy, this.assessRisk));
    if (record) {
      const events = this.sink();
      for (const row of rows) {
        events.record(tx, record.op, {
          type: 'principal.created',
          target: { type: 'principal', id: row.id },
          changes: record.changesOf(row),
        });
      }
    }
    return pending;
  }

  loadManagers(tx: Tx, rows: readonly { id: string; managerId: string }[]): Promise<void> {
    return repo.loadManagers(tx, rows);
  }

  async deprovisionMany(tx: Tx, principals: readonly Principal[], op: OperationContext): Promise<void> {
    const rows = principals.map((p) => {
      const risk = this.assessRisk({ ...p, status: 'deprovisioned' });
      return { id: p.id, score: risk.score, factors: JSON.stringify(risk.factors) };
    });
    await repo.deprovisionMany(tx, rows, nowIso());
    const events = this.sink();
    for (const p of principals) {
      events.record(tx, op, {
        type: 'principal.status_changed',
        target: { type: 'principal', id: p.id },
        changes: { status: { from: p.status, to: 'deprovisioned' } },
      });
    }
  }

  async setManagers(
    tx: Tx,
    rows: readonly (ManagerLink & { from: string | null; recorded: boolean })[],
    op: OperationContext,
  ): Promise<void> {
    await repo.setManagers(
      tx,
      rows.map(({ id, managerId, ref }) => ({ id, managerId, ref })),
      nowIso(),
    );
    const events = this.sink();
    for (const row of rows) {
      if (row.recorded || row.managerId === row.from) continue;
      events.record(tx, op, {
        type: 'principal.updated',
        target: { type: 'principal', id: row.id },
        changes: { [`attributes.${MANAGER_KEY}`]: { from: row.from, to: row.managerId } },
      });
    }
  }

  private sink(): EventSink {
    if (!this.events) throw new Error('this principal writer records no audit events');
    return this.events;
  }
}
