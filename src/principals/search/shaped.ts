import type { Catalogue } from '../../db/catalogue.js';
import { SEARCH_TEMPLATES as Q } from '../repository.js';
import { fillMarkers } from '../../db/compose.js';
import { ATTR_PREFIX, MANAGER_KEY, STATUS_LABEL, TYPE_LABEL } from '../model.js';
import { parseInstant } from '../../time.js';
import { type Page, type Rows, type Sort } from './cypher.js';
import { FIELD_KIND, isAttribute, type Operator, type Query } from './model.js';
import {
  formOf,
  isAvailable,
  shapedFormOf,
  type ShapedAnchor,
  type ShapedOperand,
} from '../../operators/table.js';
import { PRINCIPAL_STATUSES, type PrincipalStatus, type PrincipalType } from '../../vocabulary/principals.js';

/**
 * A query compiled for its shape: a statement whose text holds exactly the predicates of its
 * conditions (values always parameters, identifiers only from the tables below), as a planner
 * likes best. The text changes with the combination of conditions and sort, so each new shape
 * costs Neo4j a plan; src/principals/search/plans.ts decides when that is worth it, and every
 * other query runs the one generic statement of src/principals/search/cypher.ts.
 *
 * Only conjunctions of conditions take this path, with types and statuses as `$in` lists (what
 * `/v1` search produces), at most MAX_SHAPED_CONDITIONS of them besides type and status, and not
 * `$endsWith`; anything else compiles to the generic statement alone.
 */
export const MAX_SHAPED_CONDITIONS = 6;

export interface ShapedStatement {
  /** The catalogue template the text was built from. */
  name: string;
  text: string;
  params: Record<string, unknown>;
}

type FieldKind = 'text' | 'timestamp' | 'score';
type Target = { kind: FieldKind; property: string } | { kind: 'attribute'; key: string };
type ShapedField =
  | 'id'
  | 'name'
  | 'email'
  | 'connector_source'
  | 'connector_id'
  | 'connector_ref'
  | 'user_name'
  | 'created_at'
  | 'updated_at'
  | 'last_login'
  | 'risk_score';

interface Condition {
  target: Target;
  op: Operator;
  operand: unknown;
}

/**
 * Property names as they appear in the text: the only identifiers a search puts there, each
 * taken from this fixed table, never from the request.
 */
const PROPERTY: Record<ShapedField, string> = {
  id: 'p.id',
  name: 'p.name',
  email: 'p.email',
  connector_source: 'p.connector_source',
  connector_id: 'p.connector_id',
  connector_ref: 'p.connector_ref',
  user_name: 'p.user_name',
  created_at: 'p.created_at',
  updated_at: 'p.updated_at',
  last_login: 'p.last_login',
  risk_score: 'p.risk_score',
};

const SORT: Record<Sort['field'], { property: string; index: string; nullable: boolean }> = {
  created_at: { property: 'p.created_at', index: 'created_at', nullable: false },
  updated_at: { property: 'p.updated_at', index: 'updated_at', nullable: false },
  name: { property: 'p.name', index: 'name', nullable: false },
  risk_score: { property: 'p.risk_score', index: 'risk_score', nullable: false },
  last_login: { property: 'p.last_login', index: 'last_login', nullable: true },
};

const DIRECTION = { asc: 'ASC', desc: 'DESC' } as const;

/** Comparisons, which a timestamp or score index answers as a range. */
const RANGES: ReadonlySet<Operator> = new Set(['$gt', '$gte', '$lt', '$lte']);

/** Skip values past this are all "past the end"; the cap keeps Cypher integer arithmetic in range. */
const MAX_SKIP = Number.MAX_SAFE_INTEGER;
const MAX_WINDOW = 2 ** 31;

class Params {
  readonly values: Record<string, unknown> = {};
  private next = 0;

  add(value: unknown): string {
    const name = `v${this.next}`;
    this.next += 1;
    this.values[name] = value;
    return `$${name}`;
  }
}

function instant(value: unknown): string {
  const normal = typeof value === 'string' ? parseInstant(value) : undefined;
  // validateSearchBody has already refused anything else.
  if (normal === undefined) throw new Error('unvalidated timestamp operand');
  return normal;
}

/**
 * The operand as the text refers to it, each reference a parameter: as it is, as the property
 * compares with it (a datetime on a timestamp), or a list of those.
 */
function shapedOperand(operand: unknown, kind: FieldKind | 'attribute', params: Params): ShapedOperand {
  return {
    value: operand,
    param: () => params.add(operand),
    compared: () =>
      kind === 'timestamp' ? `datetime(${params.add(instant(operand))})` : params.add(operand),
    listed: () =>
      kind === 'timestamp'
        ? `[t IN ${params.add((operand as unknown[]).map(instant))} | datetime(t)]`
        : params.add(operand),
  };
}

/** A condition on a principal property (never missing for `name`, often for the others). */
function fieldPredicate(x: string, kind: FieldKind, op: Operator, operand: unknown, params: Params): string {
  return shapedFormOf(op).field(x, kind, shapedOperand(operand, kind, params));
}

/**
 * A condition on an attribute property, read once by a parameterised key (`p[$v0]`) and bound to
 * `x`. Attribute values are a string or a list of strings; `elements` views both as a list, so
 * array semantics (any element) and missing attributes (no element) follow from list predicates.
 */
function attributePredicate(key: string, op: Operator, operand: unknown, params: Params): string {
  const elements = 'CASE WHEN x IS NULL THEN [] WHEN x IS :: STRING THEN [x] ELSE x END';
  const test = shapedFormOf(op).attribute(elements, shapedOperand(operand, 'attribute', params));
  return `any(x IN [p[${params.add(`${ATTR_PREFIX}${key}`)}]] WHERE ${test})`;
}

/** The test of an attribute condition on its value nodes, if the operator has one. */
function anchorOf(op: Operator): ShapedAnchor | undefined {
  const { anchor } = shapedFormOf(op);
  return isAvailable(anchor) ? anchor : undefined;
}

/**
 * The same condition as a match on the attribute value nodes linked by `r0`/`a0`, which the
 * (key, value) index finds directly. `duplicates` when one principal can match through several
 * elements of an array.
 */
function anchorPredicate(
  key: string,
  op: Operator,
  operand: unknown,
  params: Params,
): { predicate: string; duplicates: boolean } {
  const anchor = anchorOf(op);
  if (!anchor) throw new Error(`${op} is no anchor of a shaped search`);
  const k = `a0.key = ${params.add(key)}`;
  return {
    predicate: anchor.predicate(k, shapedOperand(operand, 'attribute', params)),
    duplicates: anchor.duplicates,
  };
}

/**
 * SCIM user names are held lower-cased, so a prefix or a part of one, lower-cased, is compared
 * with the property as it is: the user name index answers the prefix.
 */
function userNamePredicate(op: Operator, operand: unknown, params: Params): string | undefined {
  if (op === '$startsWith') return `${PROPERTY.user_name} STARTS WITH toLower(${params.add(operand)})`;
  if (op === '$contains') return `${PROPERTY.user_name} CONTAINS toLower(${params.add(operand)})`;
  return undefined;
}

function predicate(c: Condition, params: Params): string {
  if (c.target.kind === 'attribute') return attributePredicate(c.target.key, c.op, c.operand, params);
  return (
    (isUserName(c) ? userNamePredicate(c.op, c.operand, params) : undefined) ??
    fieldPredicate(c.target.property, c.target.kind, c.op, c.operand, params)
  );
}

type Anchor =
  /** Equalities: the value node with the fewest links is picked at run time. */
  | { kind: 'values'; conditions: Condition[] }
  /** Another operator: its value nodes are found through the key. */
  | { kind: 'scan'; condition: Condition };

const isUserName = (c: Condition): boolean =>
  c.target.kind === 'text' && c.target.property === PROPERTY.user_name;

/**
 * Where to start the match. A principal index that is likely more selective wins: equality of
 * an id, email, name, connector id or SCIM user name, or a user name prefix, always (no attribute
 * anchor), a timestamp or score condition over the weaker attribute operators. Among attribute
 * equalities the query itself compares the value nodes' degrees, which are stored counts, so the
 * anchor is the truly most selective one. Without an anchor the planner picks among the
 * principal indexes (type and status, connector source or reference, timestamps).
 */
function chooseAnchor(conditions: Condition[]): Anchor | undefined {
  const seekable = [PROPERTY.id, PROPERTY.email, PROPERTY.name, PROPERTY.connector_id, PROPERTY.user_name];
  let cutoff = Infinity;
  for (const c of conditions) {
    if (c.target.kind === 'text' && seekable.includes(c.target.property)) {
      if (c.op === '$eq' || c.op === '$in') return undefined;
    }
    if (isUserName(c) && c.op === '$startsWith') return undefined;
    if (
      (c.target.kind === 'timestamp' || c.target.kind === 'score') &&
      (c.op === '$eq' || RANGES.has(c.op))
    ) {
      cutoff = Math.min(cutoff, 4);
    }
  }
  // manager_id lives on the principal and in a REPORTS_TO edge, not in value nodes.
  const candidates = conditions.filter((c) => c.target.kind === 'attribute' && c.target.key !== MANAGER_KEY);
  const equalities = candidates.filter((c) => c.op === '$eq');
  if (equalities.length > 0) return { kind: 'values', conditions: equalities };
  let best: Condition | undefined;
  let bestRank = cutoff;
  for (const c of candidates) {
    // Equality names a single value node, `$in` and equality ignoring case a few, the others
    // scan the values of one key; negations and presence have no anchor at all.
    const rank = anchorOf(c.op)?.rank;
    if (rank !== undefined && rank < bestRank) {
      best = c;
      bestRank = rank;
    }
  }
  return best ? { kind: 'scan', condition: best } : undefined;
}

/**
 * Binds `a0` to the linked value node of the most selective equality; a value no principal has
 * sorts first and, being null, matches nothing, which is the right answer for the whole search.
 */
const VALUE_ANCHOR = `UNWIND $anchors AS anchor
  OPTIONAL MATCH (a0:Attribute {key: anchor.key, value: anchor.value})
  WITH a0 ORDER BY a0 IS NULL DESC, COUNT { (a0)<-[:HAS_ATTRIBUTE]-() } ASC LIMIT 1`;

function keyOf(c: Condition): string {
  if (c.target.kind !== 'attribute') throw new Error('anchors are attribute conditions');
  return c.target.key;
}

/** A principal field the shaped text names, with how it compares. */
const FIELD_TARGET: Record<ShapedField, Target> = {
  id: { kind: 'text', property: PROPERTY.id },
  name: { kind: 'text', property: PROPERTY.name },
  email: { kind: 'text', property: PROPERTY.email },
  connector_source: { kind: 'text', property: PROPERTY.connector_source },
  connector_id: { kind: 'text', property: PROPERTY.connector_id },
  connector_ref: { kind: 'text', property: PROPERTY.connector_ref },
  user_name: { kind: 'text', property: PROPERTY.user_name },
  created_at: { kind: 'timestamp', property: PROPERTY.created_at },
  updated_at: { kind: 'timestamp', property: PROPERTY.updated_at },
  last_login: { kind: 'timestamp', property: PROPERTY.last_login },
  risk_score: { kind: 'score', property: PROPERTY.risk_score },
};

/**
 * Whether an operator has a statement of its own (the public operators and equality ignoring
 * case); the others (`$endsWith`) take the generic one.
 */
const isShaped = (op: Operator): boolean => isAvailable(formOf(op, 'cypher').shaped);

interface Shape {
  types: PrincipalType[] | undefined;
  statuses: PrincipalStatus[];
  conditions: Condition[];
}

/** The parts of a conjunction, nested conjunctions (a SCIM filter inside its scope) flattened. */
function conjuncts(query: Query): Query[] {
  return query.kind === 'and' ? query.of.flatMap(conjuncts) : [query];
}

/**
 * The conjunction a query is, split into its type and status lists and its other conditions
 * (attributes sorted by key, so that the same conditions in another order give the same text);
 * undefined when the query is not one this compiler writes.
 */
function shapeOf(query: Query): Shape | undefined {
  const parts = conjuncts(query);
  let types: PrincipalType[] | undefined;
  let statuses: PrincipalStatus[] | undefined;
  const fields: Condition[] = [];
  const attributes: [string, Condition][] = [];
  for (const part of parts) {
    if (part.kind !== 'condition') return undefined;
    const { target, op, operand } = part;
    if (!isAttribute(target) && FIELD_KIND[target.field] === 'label') {
      if (op !== '$in') return undefined;
      const values = [...new Set(operand as string[])];
      if (target.field === 'type') {
        if (types) return undefined;
        types = values as PrincipalType[];
      } else {
        if (statuses) return undefined;
        statuses = values as PrincipalStatus[];
      }
    } else if (!isShaped(op)) {
      return undefined;
    } else if (isAttribute(target)) {
      attributes.push([
        target.attribute,
        { target: { kind: 'attribute', key: target.attribute }, op, operand },
      ]);
    } else {
      fields.push({ target: FIELD_TARGET[target.field as ShapedField], op, operand });
    }
  }
  attributes.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const conditions = [...fields, ...attributes.map(([, c]) => c)];
  if (conditions.length === 0 || conditions.length > MAX_SHAPED_CONDITIONS) return undefined;
  return { types, statuses: statuses ?? [...PRINCIPAL_STATUSES], conditions };
}

const and = (fragments: string[]): string => fragments.map((f) => ` AND (${f})`).join('');

/**
 * A test on type or status labels, written into the text: the labels come only from the fixed
 * tables of src/principals/model.ts, and written out (not passed as a list) they let the planner
 * start from the label index.
 */
function labelTest(labels: readonly string[]): string {
  for (const label of labels) {
    if (!/^[A-Z][A-Za-z]+$/.test(label)) throw new Error(`not a label: ${label}`);
  }
  return labels.length === 1 ? `p:${labels[0]}` : `(${labels.map((l) => `p:${l}`).join(' OR ')})`;
}

/** The status condition: every status but deleted (the default) is the cheapest test of all. */
function statusTest(statuses: readonly PrincipalStatus[]): string {
  const everyButDeleted = PRINCIPAL_STATUSES.filter((s) => s !== 'deleted');
  if (everyButDeleted.every((s) => statuses.includes(s)) && !statuses.includes('deleted'))
    return 'NOT p:Deleted';
  return labelTest(statuses.map((s) => STATUS_LABEL[s]));
}

/**
 * The statement written for a query's shape, or undefined when the query is not a conjunction
 * this compiler writes (the generic statement then serves it). Values go into `params`; the text
 * gets only fixed predicates and property names from the tables above.
 */
export function compileShaped(
  query: Query,
  sortBy: Sort,
  page: Page,
  catalogue: Pick<Catalogue, 'get'>,
  rows: Rows = 'records',
): ShapedStatement | undefined {
  const shape = shapeOf(query);
  if (!shape) return undefined;
  const { types, statuses, conditions } = shape;
  const sort = SORT[sortBy.field];
  const direction = DIRECTION[sortBy.order];
  const skip = Math.min(page.skip, MAX_SKIP);
  const limit = page.limit;
  const typeFilter = types ? [labelTest(types.map((t) => TYPE_LABEL[t]))] : [];
  const statusFilter = statusTest(statuses);
  const common: Record<string, unknown> = {
    skip,
    limit,
    // A window past the population turns the ordered branch off: an index holds no nulls, so
    // only a sort key every principal has can be read in index order.
    window: sort.nullable ? MAX_WINDOW : Math.min(skip + limit, MAX_WINDOW),
    ids: rows === 'ids',
  };
  const sorting = {
    '/*ORDER*/': sort.nullable
      ? `${sort.property} IS NULL, ${sort.property} ${direction},`
      : `${sort.property} ${direction},`,
    '/*DIRECTION*/': direction,
    '/*HINT*/': sort.nullable ? '' : `USING INDEX p:Principal(${sort.index})`,
  };
  const sortKeyPresent = sort.nullable ? '' : and([`${sort.property} IS NOT NULL`]);

  const params = new Params();
  const anchor = chooseAnchor(conditions);
  const filters = [...(anchor ? [] : ['p:Principal']), statusFilter, ...typeFilter];
  const scanFilters = [statusFilter, ...typeFilter];
  const insertions = { '/*ANCHOR*/': '', '/*PATTERN*/': '', '/*DISTINCT*/': '' };
  let anchored: Condition | undefined;
  if (anchor?.kind === 'values') {
    insertions['/*ANCHOR*/'] = VALUE_ANCHOR;
    insertions['/*PATTERN*/'] = '-[:HAS_ATTRIBUTE]->(a0)';
    common['anchors'] = anchor.conditions.map((c) => ({ key: keyOf(c), value: c.operand }));
    // A single equality is the anchor itself; with several, any of them may have been picked.
    if (anchor.conditions.length === 1) anchored = anchor.conditions[0];
  } else if (anchor?.kind === 'scan') {
    anchored = anchor.condition;
    const { predicate: test, duplicates } = anchorPredicate(
      keyOf(anchored),
      anchored.op,
      anchored.operand,
      params,
    );
    insertions['/*PATTERN*/'] = '-[r0:HAS_ATTRIBUTE]->(a0:Attribute)';
    if (duplicates) insertions['/*DISTINCT*/'] = 'DISTINCT';
    filters.push(test);
  }
  for (const c of conditions) {
    const test = predicate(c, params);
    scanFilters.push(test);
    if (c !== anchored) filters.push(test);
  }
  return {
    name: Q.shaped_search,
    text: fillMarkers(catalogue.get(Q.shaped_search), {
      ...sorting,
      ...insertions,
      '/*FILTERS*/': and(filters),
      '/*SCAN_FILTERS*/': and(scanFilters) + sortKeyPresent,
    }),
    params: { ...common, ...params.values },
  };
}
