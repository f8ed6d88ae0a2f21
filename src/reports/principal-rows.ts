import type { GroupTable } from '../decisions/group-table.js';
import type { PrincipalTable } from '../decisions/principal-table.js';
import { MANAGER_KEY } from '../principals/model.js';
import type { PrincipalIndex } from './principal-order.js';

/**
 * The rows of the reports about principals, made from the decision index's tables with the
 * values and formats the graph gives: timestamps as the driver reads them (RFC 3339 with
 * milliseconds and `Z`), null where the graph has no value. The stored risk is not among them
 * (src/reports/sources.ts adds it): the risk upkeep writes it without a change event, so the
 * index may hold an older one.
 */

/** A report row, keyed by column. */
export type ReportRow = Record<string, unknown>;

/**
 * A delegation a principal holds, as the report rows show it: whom it acts for and with what
 * (`resources` as the API writes them; null: every resource), until when.
 */
export interface ActsFor {
  delegation_id: string;
  delegator_id: string;
  delegator_name: string | null;
  delegator_status: string | null;
  actions: string[];
  resources: { type: string; identifier: string }[] | null;
  expires_at: string;
}

/** Owner states that leave a principal without a living owner, as `orphaned_principals` lists them. */
const OWNER_GONE = new Set(['missing', 'deprovisioned', 'deleted']);

/** A principal's timestamp as the API writes it; null when it has none. 0 created, 1 updated, 2 last login. */
function timeText(table: PrincipalTable, row: number, which: 0 | 1 | 2): string | null {
  const ms = table.timeMs(row, which);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** Who a principal's `metadata.owner` names, as written. */
function ownerRef(table: PrincipalTable, row: number): string | null {
  return table.metadataOf(row, 'owner') ?? null;
}

/** Active or suspended: a principal that can still act. */
export function isLiving(table: PrincipalTable, row: number): boolean {
  const status = table.statusOf(row);
  return status === 'active' || status === 'suspended';
}

/**
 * The manager a principal reports to, as its REPORTS_TO edge names it: `attributes.manager_id`
 * while neither the principal nor the manager is deleted. Every write that sets the attribute to
 * an id makes the edge to that principal (which must exist and not be deleted), every write that
 * changes it moves the edge, and a deletion takes the principal's edges away, both ways, leaving
 * the attribute of its former reports as history (docs/principals.md).
 */
export function managerOf(table: PrincipalTable, row: number): string | null {
  if (table.isDeleted(row)) return null;
  const id = table.attributeOf(row, MANAGER_KEY);
  if (typeof id !== 'string') return null;
  const manager = table.rowOf(id);
  return manager >= 0 && !table.isDeleted(manager) ? id : null;
}

/** A row of `principal_inventory`, without its risk. */
export function inventoryRow(table: PrincipalTable, groups: GroupTable, row: number): ReportRow {
  return {
    id: table.idOf(row),
    type: table.typeOf(row),
    name: table.nameOf(row),
    email: table.emailOf(row),
    status: table.statusOf(row),
    connector_source: table.connectorSourceOf(row),
    owner: ownerRef(table, row),
    manager_id: managerOf(table, row),
    groups: groups.directGroupCount(row),
    last_login: timeText(table, row, 2),
    created_at: timeText(table, row, 0),
    updated_at: timeText(table, row, 1),
  };
}

/** Whether a principal was last seen (its last login, else its creation) before `beforeMs`. */
export function unseenSince(table: PrincipalTable, row: number, beforeMs: number): boolean {
  const lastLogin = table.timeMs(row, 2);
  // A principal with neither is never dormant, as NaN compares.
  return (Number.isNaN(lastLogin) ? table.timeMs(row, 0) : lastLogin) < beforeMs;
}

/** A row of `dormant_principals` as of `asOf` (epoch ms), without its risk. */
export function dormantRow(table: PrincipalTable, row: number, asOf: number): ReportRow {
  const lastLogin = timeText(table, row, 2);
  const createdAt = timeText(table, row, 0);
  return {
    id: table.idOf(row),
    type: table.typeOf(row),
    name: table.nameOf(row),
    email: table.emailOf(row),
    status: table.statusOf(row),
    connector_source: table.connectorSourceOf(row),
    owner: ownerRef(table, row),
    last_login: lastLogin,
    created_at: createdAt,
    days_inactive: Math.floor((asOf - Date.parse(String(lastLogin ?? createdAt))) / 86_400_000),
  };
}

/** Where a status puts a USER among those sharing an email, for being someone's owner. */
function ownerRank(status: string): number {
  return status === 'active' ? 0 : status === 'suspended' ? 1 : 2;
}

/**
 * The principal an owner reference names: the principal of that id, whatever its status, else
 * the USER whose email it is exactly (case counts), a living one first (active, then suspended),
 * then by id; deleted USERs are found by their email too. −1: none.
 */
export function ownerRow(table: PrincipalTable, ref: string): number {
  const byId = table.rowOf(ref);
  if (byId >= 0) return byId;
  let best = -1;
  let bestRank = 3;
  for (const row of table.rowsWithExactEmail(ref)) {
    if (table.typeOf(row) !== 'USER') continue;
    const rank = ownerRank(table.statusOf(row));
    if (best < 0 || rank < bestRank || (rank === bestRank && table.ids.compare(row, best) < 0)) {
      best = row;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * The delegations a principal holds at `now` (epoch ms): active and not past `expires_at`, soonest
 * to expire first, then by id.
 */
export function heldBy(index: PrincipalIndex, table: PrincipalTable, id: string, now: number): ActsFor[] {
  const held = [...index.delegationsReceived(id)].filter((d) => d.expiresAt > now);
  held.sort((a, b) => a.expiresAt - b.expiresAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return held.map((d) => {
    const delegator = table.rowOf(d.delegatorId);
    return {
      delegation_id: d.id,
      delegator_id: d.delegatorId,
      delegator_name: delegator >= 0 ? table.nameOf(delegator) : null,
      delegator_status: delegator >= 0 ? table.statusOf(delegator) : null,
      actions: [...d.actions],
      resources: d.resources ? d.resources.map((r) => ({ type: r.type, identifier: r.identifier })) : null,
      expires_at: new Date(d.expiresAt).toISOString(),
    };
  });
}

/**
 * A row of `orphaned_principals` for a living non-USER principal at `now` (epoch ms), without its
 * risk; undefined when the principal has a living owner and is not an AI agent acting for
 * someone who is gone. The owner's state is `unset` without `metadata.owner`, `missing` when it
 * names nobody, else the owner's status; an AI agent holding a delegation from a delegator who
 * is not active, or holding any while its owner is gone, is `delegation_orphaned` (the
 * DELEGATION_ORPHANED risk factor, src/risk/delegations.ts).
 */
export function orphanedRow(
  index: PrincipalIndex,
  table: PrincipalTable,
  row: number,
  now: number,
): ReportRow | undefined {
  const ref = ownerRef(table, row);
  const owner = ref === null ? -1 : ownerRow(table, ref);
  const state = ref === null ? 'unset' : owner < 0 ? 'missing' : table.statusOf(owner);
  const id = table.idOf(row);
  const type = table.typeOf(row);
  const held = heldBy(index, table, id, now);
  const delegationOrphaned =
    type === 'AI_AGENT' &&
    (held.some((h) => h.delegator_status !== 'active') || (held.length > 0 && OWNER_GONE.has(state)));
  if (state !== 'unset' && !OWNER_GONE.has(state) && !delegationOrphaned) return undefined;
  return {
    id,
    type,
    name: table.nameOf(row),
    status: table.statusOf(row),
    owner: ref,
    owner_state: state,
    owner_id: owner >= 0 ? table.idOf(owner) : null,
    owner_name: owner >= 0 ? table.nameOf(owner) : null,
    created_at: timeText(table, row, 0),
    delegation_orphaned: delegationOrphaned,
    acts_for: held,
  };
}

/** The codes of risk factors stored as JSON text (none when there is no such text). */
export function riskCodes(factors: unknown): string[] {
  if (typeof factors !== 'string') return [];
  try {
    return (JSON.parse(factors) as { code: string }[]).map((f) => f.code);
  } catch {
    return [];
  }
}
