import type { Catalogue } from '../../db/catalogue.js';
import type { Database } from '../../db/database.js';
import { pageOf } from '../../pagination.js';
import { compile, type CompiledQuery, type Page, type Rows, type Sort } from './cypher.js';
import { and, attribute, condition, field, type Condition, type Field, type Query } from './model.js';
import { validateSearchBody, type SearchPrincipalsRequest } from '../../schemas/search.js';
import { compileScoped, type ScopedStatement } from './scoped.js';
import { compileShaped, type ShapedStatement } from './shaped.js';
import { type Principal } from '../model.js';
import { principalRepository as repo } from '../repository.js';
import type { SearchPlans } from './plans.js';
import { SCORE_FIELDS, TEXT_FIELDS, TIMESTAMP_FIELDS, type SearchOperator } from '../../vocabulary/search.js';
import { PRINCIPAL_STATUSES, type PrincipalStatus } from '../../vocabulary/principals.js';

/** The body of POST /principals/search; GET /principals passes `type`, `status` and `connector_source`. */
export type SearchRequest = SearchPrincipalsRequest;

export type CompiledSearch = CompiledQuery;

/** Skip values past this are all "past the end"; the cap keeps Cypher integer arithmetic in range. */
const MAX_SKIP = Number.MAX_SAFE_INTEGER;

function isOperatorObject(value: unknown): value is Partial<Record<SearchOperator, unknown>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A validated search body as the query representation: the conjunction of its conditions, one
 * per operator (a plain value is `$eq`), with the search's own default made explicit: without a
 * `status`, every status but deleted.
 */
export function toQuery(body: SearchRequest): Query {
  const query = body.query ?? {};
  const conditions: Condition[] = [];
  const add = (target: ReturnType<typeof field>, value: unknown): void => {
    if (value === undefined) return;
    if (!isOperatorObject(value)) {
      conditions.push(condition(target, '$eq', value as string | number));
      return;
    }
    for (const [op, operand] of Object.entries(value)) {
      conditions.push(
        condition(target, op as SearchOperator, operand as string | number | boolean | string[]),
      );
    }
  };
  if (query.type !== undefined) conditions.push(condition(field('type'), '$in', [query.type].flat()));
  const statuses: readonly PrincipalStatus[] =
    query.status === undefined ? PRINCIPAL_STATUSES.filter((s) => s !== 'deleted') : [query.status].flat();
  conditions.push(condition(field('status'), '$in', statuses));
  for (const name of [...TEXT_FIELDS, ...TIMESTAMP_FIELDS, ...SCORE_FIELDS] satisfies Field[]) {
    add(field(name), query[name]);
  }
  const attributes = Object.entries(query.attributes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, value] of attributes) add(attribute(key), value);
  return and(...conditions);
}

/**
 * A search body compiled to the principal search statement: validated first (VALIDATION_FAILED
 * with pointers into the body), then as the query representation, then as parameters of the one
 * search text.
 */
export function compileSearch(input: SearchRequest, catalogue: Pick<Catalogue, 'get'>): CompiledSearch {
  const { query, sort, page } = searchOf(input);
  return compile(query, sort, page, catalogue);
}

/** A validated search as the query representation, its sort and its page. */
export function searchOf(input: SearchRequest): { query: Query; sort: Sort; page: Page } {
  const request = validateSearchBody(input);
  const page = pageOf(request);
  return {
    query: toQuery(request),
    sort: { field: request.sort?.field ?? 'created_at', order: request.sort?.order ?? 'desc' },
    page: { skip: Math.min(page.skip, MAX_SKIP), limit: page.limit },
  };
}

/**
 * One round trip: the total and the requested page, as principal records. A search whose shape
 * is planned runs the statement written for it; every other runs the generic statement.
 */
export async function searchPrincipals(
  db: Database,
  request: SearchRequest,
  plans?: SearchPlans,
): Promise<{ total: number; items: Principal[] }> {
  return repo.search(db, statementFor(db, searchOf(request), plans, 'records'));
}

/**
 * A query already in the query representation (SCIM filters come this way): the total and the
 * ids of a page of principals, on the same statements as `/v1` search (the caller reads the
 * records it needs itself). A connector's users in creation order (a SCIM list, filtered at most
 * by a timestamp range) run the statement written for them.
 */
export async function runSearch(
  db: Database,
  search: { query: Query; sort: Sort; page: Page },
  plans?: SearchPlans,
): Promise<{ total: number; items: { id: string }[] }> {
  const { total, ids } = await repo.searchIds(db, statementFor(db, search, plans, 'ids'));
  return { total, items: ids.map((id) => ({ id })) };
}

function statementFor(
  db: Database,
  { query, sort, page }: { query: Query; sort: Sort; page: Page },
  plans: SearchPlans | undefined,
  rows: Rows,
): CompiledQuery | ShapedStatement | ScopedStatement {
  const scoped = compileScoped(query, sort, page, db.catalogue, rows);
  if (scoped) return scoped;
  const shaped = plans ? compileShaped(query, sort, page, db.catalogue, rows) : undefined;
  return shaped && plans!.ready(shaped) ? shaped : compile(query, sort, page, db.catalogue, rows);
}
