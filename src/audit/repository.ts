import { defineQueries } from '../db/catalogue.js';
import { composeQuery } from '../db/compose.js';
import type { Database } from '../db/database.js';

const Q = defineQueries('audit', ['get', 'count', 'page']);

export interface AuditEvent {
  id: string;
  type: string;
  occurred_at: string;
  actor: { type: string; id: string };
  target: { type: string; id: string };
  outcome: 'success' | 'failure';
  request_id: string | null;
  source_ip: string | null;
  user_agent: string | null;
  reason?: string;
  changes: Record<string, { from?: unknown; to?: unknown }> | null;
}

export interface AuditFilters {
  /** Exact types and `prefix.*` forms. */
  types?: string[];
  actorId?: string;
  targetId?: string;
  outcome?: 'success' | 'failure';
  since?: string;
  until?: string;
}

interface StoredEvent {
  id: string;
  type: string;
  occurred_at: string;
  actor_type: string;
  actor_id: string;
  target_type: string;
  target_id: string;
  outcome: 'success' | 'failure';
  request_id: string | null;
  source_ip: string | null;
  user_agent: string | null;
  reason: string | null;
  changes: string | null;
}

function toEvent(row: StoredEvent): AuditEvent {
  return {
    id: row.id,
    type: row.type,
    occurred_at: row.occurred_at,
    actor: { type: row.actor_type, id: row.actor_id },
    target: { type: row.target_type, id: row.target_id },
    outcome: row.outcome,
    request_id: row.request_id ?? null,
    source_ip: row.source_ip ?? null,
    user_agent: row.user_agent ?? null,
    ...(row.reason ? { reason: row.reason } : {}),
    changes: row.changes ? (JSON.parse(row.changes) as AuditEvent['changes']) : null,
  };
}

/** Predicates for the given filters; each one refers to its value only through a parameter. */
function predicates(filters: AuditFilters): { fragments: string[]; params: Record<string, unknown> } {
  const fragments: string[] = [];
  const params: Record<string, unknown> = {};
  if (filters.types && filters.types.length > 0) {
    const exact = filters.types.filter((t) => !t.endsWith('.*'));
    const prefixes = filters.types.filter((t) => t.endsWith('.*')).map((t) => t.slice(0, -1));
    const parts: string[] = [];
    if (exact.length > 0) {
      parts.push('e.type IN $types');
      params['types'] = exact;
    }
    if (prefixes.length > 0) {
      parts.push('any(p IN $typePrefixes WHERE e.type STARTS WITH p)');
      params['typePrefixes'] = prefixes;
    }
    fragments.push(parts.join(' OR '));
  }
  if (filters.actorId !== undefined) {
    fragments.push('e.actor_id = $actorId');
    params['actorId'] = filters.actorId;
  }
  if (filters.targetId !== undefined) {
    fragments.push('e.target_id = $targetId');
    params['targetId'] = filters.targetId;
  }
  if (filters.outcome !== undefined) {
    fragments.push('e.outcome = $outcome');
    params['outcome'] = filters.outcome;
  }
  if (filters.since !== undefined) {
    fragments.push('e.occurred_at >= datetime($since)');
    params['since'] = filters.since;
  }
  if (filters.until !== undefined) {
    fragments.push('e.occurred_at < datetime($until)');
    params['until'] = filters.until;
  }
  return { fragments, params };
}

export class AuditRepository {
  constructor(private readonly db: Database) {}

  async get(id: string): Promise<AuditEvent | undefined> {
    const rows = await this.db.query<{ event: StoredEvent }>(Q.get, { id });
    return rows[0] ? toEvent(rows[0].event) : undefined;
  }

  async list(
    filters: AuditFilters,
    page: number,
    limit: number,
  ): Promise<{ total: number; items: AuditEvent[] }> {
    const { fragments, params } = predicates(filters);
    const catalogue = this.db.catalogue;
    return this.db.read('audit/list', async (tx) => {
      const [count] = await tx.runComposed<{ total: number }>(
        Q.count,
        composeQuery(catalogue.get(Q.count), '/*FILTERS*/', fragments),
        params,
      );
      const rows = await tx.runComposed<{ event: StoredEvent }>(
        Q.page,
        composeQuery(catalogue.get(Q.page), '/*FILTERS*/', fragments),
        { ...params, skip: (page - 1) * limit, limit },
      );
      return { total: count?.total ?? 0, items: rows.map((r) => toEvent(r.event)) };
    });
  }
}
