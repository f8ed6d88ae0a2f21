import { fromStored } from '../audit/audit.js';
import type { Reader } from '../db/database.js';
import type { AccessEntry } from '../decisions/access.js';
import type { PrincipalTable } from '../decisions/principal-table.js';
import { resourceOf } from '../policies/model.js';
import { timeSlices } from '../time.js';
import { PrincipalOrder, type IndexPage, type PrincipalIndex } from './principal-order.js';
import {
  dormantRow,
  inventoryRow,
  isLiving,
  orphanedRow,
  riskCodes,
  unseenSince,
  type ActsFor,
  type ReportRow,
} from './principal-rows.js';
import { reportRepository as repo, type HeldDelegation, type SourceRows } from './repository.js';
import type { ReportType } from '../vocabulary/report-types.js';

/** A report's parameters once checked, with their defaults filled in (so a resumed run sees the same). */
export type ReportParameters = Record<string, string | number>;

export interface SourcePage {
  rows: Record<string, unknown>[];
  /** What the page read from its source (for progress), which may be more than the rows it gave. */
  scanned: number;
  /** Where the next page starts; null when the source is exhausted. */
  cursor: string | null;
}

/** Where a report's rows come from: a source read in pages, each starting where the last ended. */
export interface ReportSource {
  columns: readonly string[];
  /** How much the source holds, in the units of `scanned`: the measure of progress. */
  total(db: Reader): Promise<number>;
  page(db: Reader, cursor: string | null): Promise<SourcePage>;
}

/** What the access review needs of the decision engine: a principal's effective access. */
export interface AccessOracle {
  entriesOf(
    principalId: string,
  ):
    | { principal: { id: string; name: string; type: string; email: string | null }; entries: AccessEntry[] }
    | undefined;
}

/**
 * Pages of principals in id order: the cursor is the last id read. `read` gives the `limit`
 * principals after the id `after`.
 */
function byPrincipalId<R>(
  read: (db: Reader, after: string, limit: number) => Promise<SourceRows<R>>,
  limit: number,
  map: (row: R) => Record<string, unknown>[],
): ReportSource['page'] {
  const turn = timeSlices();
  return async (db, cursor) => {
    const page = await read(db, cursor ?? '', limit);
    // A principal's rows (its access, say) can be many: the event loop turns between principals.
    const rows: Record<string, unknown>[] = [];
    for (const row of page.rows) {
      for (const made of map(row)) rows.push(made);
      const wait = turn();
      if (wait) await wait;
    }
    return {
      rows,
      scanned: page.scanned,
      cursor: page.scanned < limit ? null : page.last,
    };
  };
}

/** Rows made between two looks at whether the event loop is due a turn. */
const ROWS_PER_LOOK = 64;

/**
 * Pages of the principals of the decision index that `reads` takes, in id order: the cursor is
 * the last id read, so a run cut short resumes after it even once the index has been rebuilt.
 * `make` gives the report's row of a principal of a page read at `now` (undefined: none); the
 * stored risk of the rows, their score and with `factors` their factors' codes, is read from
 * Neo4j. The event loop turns between slices of the rows, and between slices of the work of
 * putting the principals in order, once per run.
 */
function byIndexOrder(
  index: PrincipalIndex,
  reads: (table: PrincipalTable, row: number) => boolean,
  limit: number,
  make: (page: IndexPage, row: number, now: number) => ReportRow | undefined,
  factors: boolean,
): Pick<ReportSource, 'total' | 'page'> {
  const turn = timeSlices();
  const order = new PrincipalOrder(index, reads, turn);
  return {
    total: () => order.count(),
    page: async (db, cursor) => {
      const page = await order.after(cursor, limit);
      const now = Date.now();
      const rows: ReportRow[] = [];
      for (let i = 0; i < page.rows.length; i += 1) {
        const row = make(page, page.rows[i]!, now);
        if (row) rows.push(row);
        if (i % ROWS_PER_LOOK === ROWS_PER_LOOK - 1) {
          const wait = turn();
          if (wait) await wait;
        }
      }
      const scanned = page.rows.length;
      return {
        rows: await withRisk(db, rows, factors),
        scanned,
        cursor: scanned < limit ? null : page.table.idOf(page.rows[scanned - 1]!),
      };
    },
  };
}

/** Rows with the risk of their principal as stored: its score and, with `factors`, their codes. */
async function withRisk(db: Reader, rows: ReportRow[], factors: boolean): Promise<ReportRow[]> {
  const ids = rows.map((r) => r['id'] as string);
  const risks = await repo.risks(db, ids);
  for (const row of rows) {
    const risk = risks.get(row['id'] as string);
    row['risk_score'] = risk?.score ?? null;
    if (factors) row['risk_factors'] = riskCodes(risk?.factors);
  }
  return rows;
}

/**
 * The delegations a principal holds, as its rows show them: resources written as the API writes
 * them, members in the order docs/api.md lists them (as `orphaned_principals` writes them too).
 */
const actsFor = (held: readonly HeldDelegation[]): ActsFor[] =>
  held.map((h) => ({
    delegation_id: h.delegation_id,
    delegator_id: h.delegator_id,
    delegator_name: h.delegator_name,
    delegator_status: h.delegator_status,
    actions: h.actions,
    resources: h.resources ? h.resources.map(resourceOf) : null,
    expires_at: h.expires_at,
  }));

const PAGE_ROWS = 1_000;
/** The columns that say who a principal is, first in the reports about principals. */
const WHO = ['id', 'type', 'name', 'email', 'status', 'connector_source', 'owner'] as const;
/** Principals per page of the access review: each brings all of its entries. */
const REVIEW_PRINCIPALS = 200;

/**
 * The source of a report of `type` with checked `parameters`. The reports about principals
 * (`principal_inventory`, `dormant_principals`, `orphaned_principals`) read them from the
 * decision index, and their stored risk from Neo4j; the access review reads each principal's
 * access from `access`.
 */
export function reportSource(
  type: ReportType,
  parameters: ReportParameters,
  access: AccessOracle,
  index: PrincipalIndex,
  pageSize: { principals: number; review: number } = { principals: PAGE_ROWS, review: REVIEW_PRINCIPALS },
): ReportSource {
  switch (type) {
    case 'principal_inventory':
      return {
        columns: [
          ...WHO,
          'manager_id',
          'groups',
          'risk_score',
          'risk_factors',
          'last_login',
          'created_at',
          'updated_at',
        ],
        ...byIndexOrder(
          index,
          (table, row) => table.has(row),
          pageSize.principals,
          ({ table, groups }, row) => inventoryRow(table, groups, row),
          true,
        ),
      };
    case 'dormant_principals': {
      const asOf = Date.parse(String(parameters['as_of']));
      const before = asOf - Number(parameters['days']) * 86_400_000;
      return {
        columns: [...WHO, 'last_login', 'created_at', 'days_inactive', 'risk_score'],
        ...byIndexOrder(
          index,
          isLiving,
          pageSize.principals,
          ({ table }, row) => (unseenSince(table, row, before) ? dormantRow(table, row, asOf) : undefined),
          false,
        ),
      };
    }
    case 'orphaned_principals':
      return {
        columns: [
          'id',
          'type',
          'name',
          'status',
          'owner',
          'owner_state',
          'owner_id',
          'owner_name',
          'risk_score',
          'created_at',
          'delegation_orphaned',
          'acts_for',
        ],
        ...byIndexOrder(
          index,
          (table, row) => table.typeOf(row) !== 'USER' && isLiving(table, row),
          pageSize.principals,
          ({ table }, row, now) => orphanedRow(index, table, row, now),
          false,
        ),
      };
    case 'access_review':
      return {
        columns: [
          'principal_id',
          'principal_name',
          'principal_type',
          'principal_email',
          'resource_type',
          'resource_identifier',
          'pattern',
          'actions',
          'denied_actions',
          'granted_by',
          'conditional',
          'expires_at',
          'acts_for',
        ],
        total: (db) => repo.countActivePrincipals(db),
        page: byPrincipalId(
          async (db, after, limit) => {
            const page = await repo.activePrincipalIds(db, after, limit);
            // Whom each principal of the page acts for, read with it: an agent's rows carry them.
            const held =
              page.rows.length > 0 ? await repo.actsFor(db, page.rows, new Date().toISOString()) : null;
            return { ...page, rows: page.rows.map((id) => ({ id, held: held?.get(id) ?? [] })) };
          },
          pageSize.review,
          ({ id, held }) => {
            const found = access.entriesOf(id);
            if (!found) return [];
            const { principal } = found;
            return found.entries.map((e) => ({
              principal_id: principal.id,
              principal_name: principal.name,
              principal_type: principal.type,
              principal_email: principal.email,
              resource_type: e.resource.type,
              resource_identifier: e.resource.identifier,
              pattern: e.pattern === true,
              actions: e.actions,
              denied_actions: e.denied_actions ?? [],
              granted_by: e.granted_by,
              conditional: e.conditional,
              expires_at: e.expires_at ?? null,
              acts_for: actsFor(held),
            }));
          },
        ),
      };
    case 'audit_log': {
      const range = { since: String(parameters['since']), until: String(parameters['until']) };
      return {
        columns: [
          'id',
          'occurred_at',
          'type',
          'actor_type',
          'actor_id',
          'target_type',
          'target_id',
          'outcome',
          'reason',
          'request_id',
          'source_ip',
          'user_agent',
          'changes',
        ],
        total: (db) => repo.countAuditEvents(db, range),
        page: async (db, cursor) => {
          // The cursor is the last event's time and id.
          const [afterAt, afterId] = cursor ? (JSON.parse(cursor) as [string, string]) : [null, null];
          const page = await repo.auditEvents(db, range, afterAt, afterId, pageSize.principals);
          return {
            rows: page.rows.map((stored) => {
              const e = fromStored(stored);
              return {
                id: e.id,
                occurred_at: e.occurred_at,
                type: e.type,
                actor_type: e.actor.type,
                actor_id: e.actor.id,
                target_type: e.target.type,
                target_id: e.target.id,
                outcome: e.outcome,
                reason: e.reason ?? null,
                request_id: e.request_id,
                source_ip: e.source_ip,
                user_agent: e.user_agent,
                changes: e.changes,
              };
            }),
            scanned: page.scanned,
            cursor:
              page.scanned < pageSize.principals || !page.last
                ? null
                : JSON.stringify([page.lastAt, page.last]),
          };
        },
      };
    }
  }
}
