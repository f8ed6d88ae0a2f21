import type { Catalogue } from '../../db/catalogue.js';
import { SEARCH_TEMPLATES as Q } from '../repository.js';
import { fillMarkers, fragmentOf } from '../../db/compose.js';
import { ATTR_PREFIX, MANAGER_KEY, STATUS_LABEL, TYPE_LABEL } from '../model.js';
import { instantKey, parseInstant } from '../../time.js';
import { formOf, operatorRow } from '../../operators/table.js';
import {
  assertWellFormed,
  isAttribute,
  kindOf,
  type Field,
  type Operand,
  type Query,
  type Target,
} from './model.js';
import { normalise, single, type Literal, type Normal } from './normal.js';
import { PRINCIPAL_STATUSES, PRINCIPAL_TYPES } from '../../vocabulary/principals.js';
import { type SortField } from '../../vocabulary/search.js';

/**
 * Compiles a query (src/principals/search/model.ts) to the one principal search statement: the text is the
 * same for every query, sort and page, and everything a query says travels in the parameters.
 * So no request can make Neo4j plan a new statement, and the plan cache holds one entry for all
 * searches (list parameters are passed inside the `q` map, whose contents do not enter the cache
 * key, where a top-level list would: the planner buckets them by size).
 *
 * What the compiler decides is where the search starts (the anchor) and how its page is read;
 * the statement has a fixed branch for each choice (cypher/principals/search.cypher).
 */

export interface Sort {
  field: SortField;
  order: 'asc' | 'desc';
}

export interface Page {
  skip: number;
  limit: number;
}

/**
 * What a page row is: the principal's record, or only its id, for a caller that reads the
 * records it needs itself (a SCIM list reads its users with their SCIM resources).
 */
export type Rows = 'records' | 'ids';

export interface CompiledQuery {
  /** The catalogue template the text was built from. */
  name: string;
  text: string;
  params: { q: SearchParams; skip: number; limit: number; window: number };
}

/** A literal as the filter reads it (cypher/principals/search_filter.cypher). */
export interface LiteralParam {
  op: string;
  prop: string | null;
  value: unknown;
  values: readonly unknown[] | null;
  neg: boolean;
  /** A field (one value) rather than an attribute (a string or a list of them). */
  scalar: boolean;
  numeric: boolean;
  temporal: boolean;
}

export interface ClauseParam {
  /** Position in the query's normal form; an anchor that checked the clause names it. */
  at: number;
  terms: LiteralParam[][];
}

/** Where the search starts; `checked` names the clauses it enforces exactly, for the filter to skip. */
export type AnchorParam = (
  | {
      kind: 'values';
      groups: { at: number; key: string; values: readonly unknown[] }[];
      /** The anchor instead when it holds fewer principals than the rarest group links to. */
      range: AnchorParam | null;
    }
  | { kind: 'key'; key: string; op: string; value: unknown; numeric: boolean }
  | { kind: 'user_name_prefix'; value: string }
  | { kind: 'user_name_part'; value: string }
  | {
      kind: 'id' | 'user_name' | 'connector_id' | 'email' | 'name' | 'connector_source' | 'connector_ref';
      values: readonly unknown[];
    }
  | {
      kind: 'created_at' | 'updated_at' | 'last_login' | 'risk_score';
      lo: unknown;
      loOpen: 0 | 1;
      hi: unknown;
      hiOpen: 0 | 1;
    }
  | { kind: 'labels'; labels: string[] }
  | { kind: 'all' }
) & { checked: number[] };

export interface SearchParams {
  anchor: AnchorParam;
  clauses: ClauseParam[];
  allTypes: boolean;
  /** The one type label allowed, if there is one. */
  type: string | null;
  types: string[];
  notDeleted: boolean;
  statuses: string[];
  counted: { types: string[]; leftOut: string[]; source: string | null; ref: string | null } | null;
  /** Page rows are ids, not records (see Rows). */
  ids: boolean;
  sort: {
    key: string;
    field: string;
    desc: boolean;
    /** Weighs the density guard of the ordered page (see SPREAD). */
    spread: number;
    ordered: boolean;
    lo: unknown;
    hi: unknown;
  };
}

/** Windows past this are all "far down the list"; the cap keeps the density guard in range. */
export const MAX_WINDOW = 2 ** 31;

export const TYPE_LABELS = PRINCIPAL_TYPES.map((t) => TYPE_LABEL[t]);
export const STATUS_LABELS = PRINCIPAL_STATUSES.map((s) => STATUS_LABEL[s]);
const LABEL_OF: Record<'type' | 'status', Readonly<Record<string, string>>> = {
  type: TYPE_LABEL,
  status: STATUS_LABEL,
};

/** Bounds of index range seeks when the query sets none: beyond every stored value. */
const EARLIEST = '-999999999-01-01T00:00:00Z';
const LATEST = '+999999999-12-31T23:59:59.999999999Z';
const LOWEST_SCORE = -Number.MAX_SAFE_INTEGER;
const HIGHEST_SCORE = Number.MAX_SAFE_INTEGER;

/** Property names: fixed for fields, `attr.<key>` for attributes; both travel as values. */
function property(target: Target): string {
  return isAttribute(target) ? `${ATTR_PREFIX}${target.attribute}` : target.field;
}

function instant(value: unknown): string {
  const normal = typeof value === 'string' ? parseInstant(value) : undefined;
  // Callers validate instants with pointers; this only keeps garbage away from datetime().
  if (normal === undefined) throw new Error(`not an RFC 3339 instant: ${String(value)}`);
  return normal;
}

const list = (operand: Operand): readonly (string | number)[] =>
  Array.isArray(operand) ? (operand as readonly (string | number)[]) : [operand as string | number];

function labelsOf(target: 'type' | 'status', operand: Operand): string[] {
  const table = LABEL_OF[target];
  return list(operand).flatMap((v) => (typeof v === 'string' && table[v] !== undefined ? [table[v]] : []));
}

const RANGE_OPS = new Set(['$eq', '$in', '$gt', '$gte', '$lt', '$lte']);

function literalParam(l: Literal): LiteralParam {
  const kind = kindOf(l.target);
  const base = {
    prop: property(l.target),
    value: null as unknown,
    values: null as readonly unknown[] | null,
    neg: l.negated,
    scalar: !isAttribute(l.target),
    numeric: false,
    temporal: false,
  };
  if (l.op === '$exists') return { ...base, op: 'exists' };
  if (kind === 'label') {
    const f = (l.target as { field: 'type' | 'status' }).field;
    return { ...base, op: 'labels', prop: null, values: labelsOf(f, l.operand) };
  }
  const temporal = kind === 'timestamp';
  const { generic } = formOf(l.op, 'cypher');
  // Literals are positive (src/principals/search/normal.ts): a negating form never reaches here.
  if (!('test' in generic)) throw new Error(`${l.op} is the negation of ${generic.negates}, not a literal`);
  const op = generic.test;
  if (operatorRow(l.op).operand.shape === 'list') {
    return { ...base, op, values: temporal ? list(l.operand).map(instant) : list(l.operand), temporal };
  }
  const numeric =
    (kind === 'text' || kind === 'attribute') && generic.numeric && typeof l.operand === 'number';
  return { ...base, op, value: temporal ? instant(l.operand) : l.operand, numeric, temporal };
}

interface Bound {
  value: string | number;
  /** The bound itself is excluded (`$gt`, `$lt`). */
  open: boolean;
}

export interface Bounds {
  lo: Bound | undefined;
  hi: Bound | undefined;
  /** The clauses the range enforces exactly: its comparisons and equalities. */
  exact: number[];
}

/**
 * The narrowest range of `field` that the positive top-level literals on it allow. It holds
 * every match; the comparisons and equalities it enforces exactly, a `$in` only as the range
 * from its least to its greatest value.
 */
export function boundsOf(field: Field, tops: readonly Top[]): Bounds {
  const timestamp = kindOf({ field }) === 'timestamp';
  const key = (v: string | number): string | number => (timestamp ? instantKey(instant(v))! : v);
  let lo: Bound | undefined;
  let hi: Bound | undefined;
  const exact: number[] = [];
  const raise = (value: string | number, open: boolean): void => {
    if (lo === undefined || key(value) > key(lo.value) || (key(value) === key(lo.value) && open)) {
      lo = { value, open };
    }
  };
  const cap = (value: string | number, open: boolean): void => {
    if (hi === undefined || key(value) < key(hi.value) || (key(value) === key(hi.value) && open)) {
      hi = { value, open };
    }
  };
  for (const { at, literal: l } of tops) {
    if (l.negated || !isField(l, field) || !RANGE_OPS.has(l.op)) continue;
    const values = list(l.operand);
    if (values.length === 0) continue;
    if (l.op === '$in') {
      raise(
        values.reduce((a, b) => (key(a) < key(b) ? a : b)),
        false,
      );
      cap(
        values.reduce((a, b) => (key(a) > key(b) ? a : b)),
        false,
      );
      continue;
    }
    const v = values[0]!;
    if (l.op !== '$lt' && l.op !== '$lte') raise(v, l.op === '$gt');
    if (l.op !== '$gt' && l.op !== '$gte') cap(v, l.op === '$lt');
    exact.push(at);
  }
  const norm = (b: Bound | undefined): Bound | undefined =>
    b === undefined ? undefined : { value: timestamp ? instant(b.value) : b.value, open: b.open };
  return { lo: norm(lo), hi: norm(hi), exact };
}

const RANGE_FIELDS = ['created_at', 'updated_at', 'last_login', 'risk_score'] as const;

/**
 * How wide a closed range is, comparable across fields: the fraction of a year of timestamps, or
 * of the score's 0-100. Among several, the narrowest likely holds the fewest principals.
 */
/** Ranges at most this wide (a quarter of a year, 25 score points) are good places to start. */
const NARROW = 0.25;

const widthOrWhole = (field: (typeof RANGE_FIELDS)[number], b: Bounds): number =>
  b.lo !== undefined && b.hi !== undefined ? width(field, b) : Infinity;

function width(field: (typeof RANGE_FIELDS)[number], b: Bounds): number {
  const lo = b.lo!.value;
  const hi = b.hi!.value;
  if (field === 'risk_score') return (Number(hi) - Number(lo)) / 100;
  return (Date.parse(String(hi)) - Date.parse(String(lo))) / (365 * 86_400_000);
}

/**
 * A range seek on a timestamp or the score. Open bounds move by the smallest step of the type
 * (a nanosecond, one point), so the inclusive seek is exact; a missing bound lies beyond every
 * stored value.
 */
export function rangeAnchor(field: (typeof RANGE_FIELDS)[number], b: Bounds): AnchorParam {
  const timestamp = field !== 'risk_score';
  return {
    kind: field,
    lo: b.lo?.value ?? (timestamp ? EARLIEST : LOWEST_SCORE),
    loOpen: b.lo?.open ? 1 : 0,
    hi: b.hi?.value ?? (timestamp ? LATEST : HIGHEST_SCORE),
    hiOpen: b.hi?.open ? 1 : 0,
    checked: b.exact,
  };
}

export interface Top {
  at: number;
  literal: Literal;
}

const attributeKey = (l: Literal): string | undefined =>
  isAttribute(l.target) && l.target.attribute !== MANAGER_KEY ? l.target.attribute : undefined;
const isField = (l: Literal, f: Field): boolean => !isAttribute(l.target) && l.target.field === f;

/**
 * Where the search starts, most selective first: id, SCIM userName, connector id, email or name
 * equality (an index seek); a SCIM userName prefix;
 * attribute equalities and `$in` lists (value nodes, the rarest picked at run time); an attribute
 * equality ignoring case, else an attribute prefix;
 * the narrowest of the narrow timestamp or score ranges; the rare statuses; any other
 * range; another attribute test on the values of one key; connector reference or connector
 * source equality; type labels; else every principal.
 */
function chooseAnchor(
  tops: readonly Top[],
  types: ReadonlySet<string>,
  statuses: ReadonlySet<string>,
): AnchorParam {
  const positive = tops.filter((t) => !t.literal.negated);
  const values = (t: Top) => list(t.literal.operand);
  const seek = (f: Field) =>
    positive.find((t) => isField(t.literal, f) && (t.literal.op === '$eq' || t.literal.op === '$in'));
  for (const f of ['id', 'user_name', 'connector_id', 'email', 'name'] as const) {
    const t = seek(f);
    if (t) return { kind: f, values: values(t), checked: [t.at] };
  }
  // SCIM user names are held lower-cased, so a prefix of one is an index range (the filter
  // still checks it: the prefix is compared as written).
  const userNamePrefix = positive.find(
    (t) =>
      isField(t.literal, 'user_name') &&
      t.literal.op === '$startsWith' &&
      typeof t.literal.operand === 'string',
  );
  if (userNamePrefix) {
    return {
      kind: 'user_name_prefix',
      value: (userNamePrefix.literal.operand as string).toLowerCase(),
      checked: [],
    };
  }
  const ranges = RANGE_FIELDS.map((f) => ({ f, b: boundsOf(f, positive) }));
  const narrowRange = ranges
    .filter(({ b }) => b.lo !== undefined && b.hi !== undefined)
    .map((r) => ({ ...r, width: width(r.f, r.b) }))
    .filter((r) => r.width <= NARROW)
    .sort((x, y) => x.width - y.width)[0];
  const equalities = positive.filter(
    (t) => attributeKey(t.literal) !== undefined && (t.literal.op === '$eq' || t.literal.op === '$in'),
  );
  if (equalities.length > 0) {
    // The group that wins is known only at run time; the statement skips its clause then.
    const groups = equalities.map((t) => ({ at: t.at, key: attributeKey(t.literal)!, values: values(t) }));
    // A value may be common (environment: prod); a narrow range competes, counted at run time.
    const range = narrowRange ? rangeAnchor(narrowRange.f, narrowRange.b) : null;
    return { kind: 'values', groups, range, checked: [] };
  }
  const keyScan = (ops: readonly string[]): AnchorParam | undefined => {
    const t = positive.find((x) => attributeKey(x.literal) !== undefined && ops.includes(x.literal.op));
    if (!t) return undefined;
    const l = t.literal;
    return {
      kind: 'key',
      key: attributeKey(l)!,
      op: l.op.slice(1),
      value: l.operand,
      numeric: typeof l.operand === 'number',
      // Only $contains and $eqIgnoreCase are exact: the other tests keep values no element of an
      // array may have.
      checked: l.op === '$contains' || l.op === '$eqIgnoreCase' ? [t.at] : [],
    };
  };
  // Equality ignoring case names the few values of the key that differ from it only in case.
  const prefix = keyScan(['$eqIgnoreCase']) ?? keyScan(['$startsWith']);
  if (prefix) return prefix;
  if (narrowRange) return rangeAnchor(narrowRange.f, narrowRange.b);
  if (!statuses.has(STATUS_LABEL.active)) return { kind: 'labels', labels: [...statuses], checked: [] };
  // A wide range, or one open at one end, may hold most principals; still, an index range is
  // cheaper to read than value nodes found by a test on every value of a key.
  const open = ranges
    .filter(({ b }) => b.lo !== undefined || b.hi !== undefined)
    .sort((x, y) => widthOrWhole(x.f, x.b) - widthOrWhole(y.f, y.b))[0];
  if (open) return rangeAnchor(open.f, open.b);
  const other = keyScan(['$contains', '$endsWith', '$gt', '$gte', '$lt', '$lte']);
  if (other) return other;
  const ref = seek('connector_ref');
  if (ref) return { kind: 'connector_ref', values: values(ref), checked: [ref.at] };
  const source = seek('connector_source');
  if (source) return { kind: 'connector_source', values: values(source), checked: [source.at] };
  if (types.size < TYPE_LABELS.length) return { kind: 'labels', labels: [...types], checked: [] };
  return { kind: 'all', checked: [] };
}

/** Narrows a label set by a top-level literal on type or status. */
export function narrow(set: Set<string>, all: readonly string[], l: Literal, f: 'type' | 'status'): void {
  const allowed = new Set(l.op === '$exists' ? all : labelsOf(f, l.operand));
  for (const label of all) {
    if (allowed.has(label) === l.negated) set.delete(label);
  }
}

/**
 * How many more matches an ordered index scan needs before it beats sorting them. An index read
 * in order still has to finish the run of equal sort values it stopped in (ties break on id), and
 * the score has only 101 values, so its runs are long: it is read in order only when the
 * matches are a large part of everyone.
 */
const SPREAD: Record<SortField, number> = {
  created_at: 1,
  updated_at: 1,
  name: 1,
  last_login: 1,
  risk_score: 100,
};

function sortParams(sort: Sort, tops: readonly Top[]): SearchParams['sort'] {
  const base = {
    key: `${sort.field} ${sort.order}`,
    field: sort.field,
    desc: sort.order === 'desc',
    spread: SPREAD[sort.field],
  };
  if (sort.field === 'last_login') {
    // An index holds no nulls, so only a sort key every principal has can be read in index order.
    return { ...base, ordered: false, lo: null, hi: null };
  }
  const b = boundsOf(sort.field, tops);
  if (sort.field === 'name') {
    // Names have no greatest value to stand in for a missing upper bound; with one, the matches
    // are sorted instead of reading the index from above it.
    return { ...base, ordered: b.hi === undefined, lo: b.lo?.value ?? '', hi: null };
  }
  // The filter checks every clause in the ordered scan, so the closed range is enough here.
  const { lo, hi } = rangeAnchor(sort.field, b) as { lo: unknown; hi: unknown };
  return { ...base, ordered: true, lo, hi };
}

const texts = new WeakMap<object, string>();

/** The statement: the template with the filter filled in. Built once per catalogue. */
function statement(catalogue: Pick<Catalogue, 'get'>): string {
  let text = texts.get(catalogue);
  if (text === undefined) {
    const filter = fragmentOf(catalogue.get(Q.search_filter));
    text = fillMarkers(catalogue.get(Q.search), { '/*FILTER*/': `AND (${filter})` });
    texts.set(catalogue, text);
  }
  return text;
}

export function compile(
  query: Query,
  sort: Sort,
  page: Page,
  catalogue: Pick<Catalogue, 'get'>,
  rows: Rows = 'records',
): CompiledQuery {
  assertWellFormed(query);
  const normal: Normal = normalise(query);
  const types = new Set(TYPE_LABELS);
  const statuses = new Set(STATUS_LABELS);
  const tops: Top[] = [];
  const nested: { at: number; clause: Normal[number] }[] = [];
  normal.forEach((clause, at) => {
    const l = single(clause);
    if (l && !isAttribute(l.target) && (l.target.field === 'type' || l.target.field === 'status')) {
      if (l.target.field === 'type') narrow(types, TYPE_LABELS, l, 'type');
      else narrow(statuses, STATUS_LABELS, l, 'status');
    } else if (l) {
      tops.push({ at, literal: l });
    } else {
      nested.push({ at, clause });
    }
  });

  // The clauses an anchor enforces are skipped for its candidates only: an ordered index scan
  // does not go through the anchor, so every clause stays in the filter.
  const anchor = chooseAnchor(tops, types, statuses);
  const clauses: ClauseParam[] = [
    ...tops.map((t) => ({ at: t.at, terms: [[literalParam(t.literal)]] })),
    ...nested.map(({ at, clause }) => ({ at, terms: clause.map((term) => term.map(literalParam)) })),
  ];

  // A listing by type, status and connector (source or reference) alone takes its total from the
  // label counts.
  const source = tops.length === 1 ? tops[0] : undefined;
  const byConnector = (f: 'connector_source' | 'connector_ref'): boolean =>
    source !== undefined &&
    !source.literal.negated &&
    source.literal.op === '$eq' &&
    isField(source.literal, f);
  const bySource = byConnector('connector_source');
  const byRef = byConnector('connector_ref');
  const listing =
    nested.length === 0 && (tops.length === 0 || bySource || byRef) && statuses.has(STATUS_LABEL.active);
  const counted = listing
    ? {
        types: [...types],
        leftOut: STATUS_LABELS.filter((s) => !statuses.has(s)),
        source: bySource ? (source!.literal.operand as string) : null,
        ref: byRef ? (source!.literal.operand as string) : null,
      }
    : null;

  const everyButDeleted = STATUS_LABELS.filter((s) => s !== STATUS_LABEL.deleted);
  const q: SearchParams = {
    anchor,
    clauses,
    allTypes: types.size === TYPE_LABELS.length,
    type: types.size === 1 ? [...types][0]! : null,
    types: [...types],
    notDeleted: statuses.size === everyButDeleted.length && everyButDeleted.every((s) => statuses.has(s)),
    statuses: [...statuses],
    counted,
    ids: rows === 'ids',
    sort: sortParams(sort, tops),
  };
  return {
    name: Q.search,
    text: statement(catalogue),
    params: { q, skip: page.skip, limit: page.limit, window: Math.min(page.skip + page.limit, MAX_WINDOW) },
  };
}
