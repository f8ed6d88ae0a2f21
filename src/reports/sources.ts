import { fromStored } from '../audit/audit.js';
import type { Reader } from '../db/database.js';
import type { AccessEntry } from '../decisions/access.js';
import { resourceOf } from '../policies/model.js';
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

const riskCodes = (factors: unknown): string[] => {
  if (typeof factors !== 'string') return [];
  try {
    return (JSON.parse(factors) as { code: string }[]).map((f) => f.code);
  } catch {
    return [];
  }
};

/**
 * Pages of principals in id order: the cursor is the last id read. `read` gives the `limit`
 * principals after the id `after`.
 */
function byPrincipalId<R>(
  read: (db: Reader, after: string, limit: number) => Promise<SourceRows<R>>,
  limit: number,
  map: (row: R) => Record<string, unknown>[],
): ReportSource['page'] {
  return async (db, cursor) => {
    const page = await read(db, cursor ?? '', limit);
    return {
      rows: page.rows.flatMap(map),
      scanned: page.scanned,
      cursor: page.scanned < limit ? null : page.last,
    };
  };
}

/** The delegations a principal holds, as its rows show them: resources written as the API writes them. */
const actsFor = (held: readonly HeldDelegation[]) =>
  held.map((h) => ({ ...h, resources: h.resources ? h.resources.map(resourceOf) : null }));

const PAGE_ROWS = 1_000;
/** The columns that say who a principal is, first in the reports about principals. */
const WHO = ['id', 'type', 'name', 'email', 'status', 'connector_source', 'owner'] as const;
/** Principals per page of the access review: each brings all of its entries. */
const REVIEW_PRINCIPALS = 200;

/** The source of a report of `type` with checked `parameters`. */
export function reportSource(
  type: ReportType,
  parameters: ReportParameters,
  access: AccessOracle,
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
        total: (db) => repo.countPrincipals(db),
        page: byPrincipalId(
          (db, after, limit) => repo.principalInventory(db, after, limit),
          pageSize.principals,
          (r) => [{ ...r, risk_factors: riskCodes(r['risk_factors']) }],
        ),
      };
    case 'dormant_principals': {
      const asOf = Date.parse(String(parameters['as_of']));
      const before = new Date(asOf - Number(parameters['days']) * 86_400_000).toISOString();
      return {
        columns: [...WHO, 'last_login', 'created_at', 'days_inactive', 'risk_score'],
        total: (db) => repo.countLivingPrincipals(db, false),
        page: byPrincipalId(
          (db, after, limit) => repo.dormantPrincipals(db, before, after, limit),
          pageSize.principals,
          (r) => [
            {
              ...r,
              days_inactive: Math.floor(
                (asOf - Date.parse(String(r['last_login'] ?? r['created_at']))) / 86_400_000,
              ),
            },
          ],
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
        total: (db) => repo.countLivingPrincipals(db, true),
        page: byPrincipalId(
          (db, after, limit) => repo.orphanedPrincipals(db, after, limit, new Date().toISOString()),
          pageSize.principals,
          (r) => [{ ...r, acts_for: actsFor(r['acts_for'] as HeldDelegation[]) }],
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
