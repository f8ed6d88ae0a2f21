import { etagOf, type Principal } from './model.js';

type Field = keyof Principal;

/**
 * The fields of a principal that one response shows, in this order. `email` belongs to USER
 * principals only and is left out for the others; `deleted_at`/`deleted_by` only once deleted.
 */
function project<const F extends readonly Field[]>(p: Principal, fields: F): Pick<Principal, F[number]> {
  const out: Partial<Principal> = {};
  for (const field of fields) {
    if (field === 'email' && p.type !== 'USER') continue;
    if ((field === 'deleted_at' || field === 'deleted_by') && p.status !== 'deleted') continue;
    (out as Record<string, unknown>)[field] = p[field];
  }
  return out as Pick<Principal, F[number]>;
}

/** List and search items: the subset of fields the contract gives them. */
export const listItem = (p: Principal) =>
  project(p, [
    'id',
    'type',
    'email',
    'name',
    'attributes',
    'connector_source',
    'status',
    'created_at',
    'last_login',
  ]);

/** The full record of GET /principals/{id}. */
export const fullRecord = (p: Principal) =>
  project(p, [
    'id',
    'type',
    'email',
    'name',
    'description',
    'attributes',
    'metadata',
    'connector_source',
    'connector_id',
    'status',
    'created_at',
    'created_by',
    'updated_at',
    'last_login',
    'risk_score',
    'risk_factors',
    'deleted_at',
    'deleted_by',
  ]);

/** The response of POST /principals: the seed's fields. */
export const createdRecord = (p: Principal) =>
  project(p, [
    'id',
    'type',
    'name',
    'description',
    'attributes',
    'metadata',
    'status',
    'created_at',
    'created_by',
  ]);

/** The response of PATCH /principals/{id}. */
export const updatedRecord = (p: Principal) =>
  project(p, ['id', 'type', 'email', 'name', 'attributes', 'metadata', 'status', 'updated_at']);

/** A principal as it appears inside relationship and membership listings. */
export function summary(p: { id: string; name: string; type: string; email?: string | null }) {
  return { id: p.id, name: p.name, type: p.type, email: p.email ?? null };
}

/** A group as it appears among a principal's relationships or a group's members. */
export function groupSummary(g: { id: string; name: string }) {
  return { id: g.id, name: g.name, type: 'GROUP' as const };
}

export { etagOf };
