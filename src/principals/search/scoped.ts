import type { Catalogue } from '../../db/catalogue.js';
import { SEARCH_TEMPLATES as Q } from '../repository.js';
import { STATUS_LABEL, TYPE_LABEL } from '../model.js';
import {
  boundsOf,
  MAX_WINDOW,
  narrow,
  rangeAnchor,
  STATUS_LABELS,
  TYPE_LABELS,
  type Page,
  type Rows,
  type Sort,
  type Top,
} from './cypher.js';
import { assertWellFormed, isAttribute, type Query } from './model.js';
import { normalise, single } from './normal.js';

/**
 * The search of one connector's users, in creation order, that a SCIM list of Users is when its
 * filter says no more than a range of meta.lastModified or meta.created (or there is none): the
 * users with a connector reference, of type USER, active or suspended, with at most one
 * timestamp (updated_at or created_at) bounded. Such a search has a statement of its own
 * (cypher/principals/search_scoped.cypher), one text for all of them, which counts in and reads
 * from the two indexes of a connector's users by those timestamps; every other query compiles to
 * the generic or a shaped statement.
 */

export interface Span {
  lo: unknown;
  loOpen: 0 | 1;
  hi: unknown;
  hiOpen: 0 | 1;
}

export interface ScopeParam {
  /** The connector reference. */
  ref: string;
  /** The bounded timestamp (created_at when neither is). */
  field: 'created_at' | 'updated_at';
  created: Span;
  updated: Span;
}

export interface ScopedStatement {
  /** The catalogue template the text is. */
  name: string;
  text: string;
  params: { scope: ScopeParam; skip: number; limit: number; window: number; ids: boolean };
}

const BOUNDS = new Set(['$eq', '$gt', '$gte', '$lt', '$lte']);

function span(field: 'created_at' | 'updated_at', tops: readonly Top[]): Span {
  const { lo, loOpen, hi, hiOpen } = rangeAnchor(field, boundsOf(field, tops)) as Span;
  return { lo, loOpen, hi, hiOpen };
}

/** The scoped statement for `query`, or undefined when the query is not such a search. */
export function compileScoped(
  query: Query,
  sort: Sort,
  page: Page,
  catalogue: Pick<Catalogue, 'get'>,
  rows: Rows = 'records',
): ScopedStatement | undefined {
  if (sort.field !== 'created_at' || sort.order !== 'asc') return undefined;
  assertWellFormed(query);
  const types = new Set(TYPE_LABELS);
  const statuses = new Set(STATUS_LABELS);
  let ref: string | undefined;
  let field: 'created_at' | 'updated_at' | undefined;
  const bounds: Top[] = [];
  for (const [at, clause] of normalise(query).entries()) {
    const l = single(clause);
    if (!l || isAttribute(l.target)) return undefined;
    const f = l.target.field;
    if (f === 'type') narrow(types, TYPE_LABELS, l, 'type');
    else if (f === 'status') narrow(statuses, STATUS_LABELS, l, 'status');
    else if (l.negated) return undefined;
    else if (f === 'connector_ref' && l.op === '$eq' && typeof l.operand === 'string' && ref === undefined)
      ref = l.operand;
    else if ((f === 'created_at' || f === 'updated_at') && BOUNDS.has(l.op) && (field ?? f) === f) {
      field = f;
      bounds.push({ at, literal: l });
    } else return undefined;
  }
  if (ref === undefined || types.size !== 1 || !types.has(TYPE_LABEL.USER)) return undefined;
  // The statement tests these two statuses as fixed labels, the cheapest test of a node there is.
  const visible = [STATUS_LABEL.active, STATUS_LABEL.suspended];
  if (statuses.size !== visible.length || !visible.every((label) => statuses.has(label))) return undefined;
  const bounded = field ?? 'created_at';
  const scope: ScopeParam = {
    ref,
    field: bounded,
    created: span('created_at', bounded === 'created_at' ? bounds : []),
    updated: span('updated_at', bounded === 'updated_at' ? bounds : []),
  };
  return {
    name: Q.search_scoped,
    text: catalogue.get(Q.search_scoped),
    params: {
      scope,
      skip: page.skip,
      limit: page.limit,
      window: Math.min(page.skip + page.limit, MAX_WINDOW),
      ids: rows === 'ids',
    },
  };
}
