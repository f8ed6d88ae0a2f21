import { defineQueries } from '../db/catalogue.js';
import { composeQuery } from '../db/compose.js';
import { fromStored, type AuditEvent, type AuditFilters, type AuditLog, type StoredEvent } from './audit.js';
import type { Database } from '../db/database.js';
import { validationFailed } from '../errors/errors.js';
import type { Page, Paged } from '../pagination.js';
import { parseInstant } from '../time.js';

const Q = defineQueries('audit', ['get', 'count', 'page']);

function instant(text: string): string {
  const parsed = parseInstant(text);
  if (parsed === undefined)
    throw validationFailed('not a timestamp', [
      { pointer: '', message: `${text} is not an RFC 3339 instant` },
    ]);
  return parsed;
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
    params['since'] = instant(filters.since);
  }
  if (filters.until !== undefined) {
    fragments.push('e.occurred_at < datetime($until)');
    params['until'] = instant(filters.until);
  }
  return { fragments, params };
}

export class AuditRepository implements AuditLog {
  constructor(private readonly db: Database) {}

  async get(id: string): Promise<AuditEvent | undefined> {
    const rows = await this.db.run<{ event: StoredEvent }>(Q.get, { id });
    return rows[0] ? fromStored(rows[0].event) : undefined;
  }

  async list(filters: AuditFilters, page: Page): Promise<Paged<AuditEvent>> {
    const { fragments, params } = predicates(filters);
    const composed = (name: string) => ({
      name,
      text: composeQuery(this.db.catalogue.get(name), '/*FILTERS*/', fragments),
    });
    return this.db.read('audit/list', async (tx) => {
      const [count] = await tx.run<{ total: number }>(composed(Q.count), params);
      const rows = await tx.run<{ event: StoredEvent }>(composed(Q.page), {
        ...params,
        skip: page.skip,
        limit: page.limit,
      });
      return { total: count?.total ?? 0, items: rows.map((r) => fromStored(r.event)), page };
    });
  }
}
