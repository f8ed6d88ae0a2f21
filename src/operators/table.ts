import { instantKey } from '../time.js';
import { CONDITION_OPERATORS, type ConditionOperator } from '../vocabulary/policies.js';
import { QUERY_OPERATORS, type QueryOperator } from '../vocabulary/search.js';
import { CidrSet, type Tri } from './cidr.js';

/**
 * The operators of principal queries and policy conditions, one row each, with everything that
 * gives an operator its meaning: what its operand may be, its three-valued test (policy
 * conditions, src/policies/conditions.ts), its boolean test (principal queries evaluated in
 * memory, src/principals/search/evaluate.ts) and its Cypher forms (the generic and the shaped
 * search statements, src/principals/search/cypher.ts and shaped.ts). The evaluators read their
 * column here and nowhere else, so an operator means one thing wherever it is evaluated.
 *
 * Every row has every column: a form an operator genuinely lacks is `unavailable(<why>)`, which
 * the evaluator that needs it refuses with that reason rather than falling through to some other
 * operator's meaning. The outcomes of each operator on typed values are written out in
 * test/cases/operators/*.yaml and run against all three evaluators.
 */

export type { Tri } from './cidr.js';

/** Every operator a vocabulary names: query operators (search, SCIM) and condition operators. */
export type Operator = QueryOperator | ConditionOperator;
export const OPERATORS: readonly Operator[] = [
  ...new Set<Operator>([...QUERY_OPERATORS, ...CONDITION_OPERATORS]),
];

/** A form an operator has no meaning for, and why. */
export interface Unavailable {
  readonly unavailable: string;
}
export type Form<T extends object> = T | Unavailable;

const unavailable = (why: string): Unavailable => ({ unavailable: why });
export const isAvailable = <T extends object>(form: Form<T>): form is T => !('unavailable' in form);

/**
 * What an operand may be. `value`: one string, number or boolean (in a search, a value of the
 * field's own type); `list`: 1-100 of them; `flag`: true or false; `text`: a string; `bound`: a
 * number or a string (an instant on timestamps, an integer on the score); `cidrs`: a CIDR block or
 * a list of them. `ref`: a condition may name another path instead (`{ "$ref": "<path>" }`).
 */
export type OperandShape = 'value' | 'list' | 'flag' | 'text' | 'bound' | 'cidrs';
export interface OperandSchema {
  readonly shape: OperandShape;
  readonly ref: boolean;
}

/**
 * The three-valued test of a policy condition. `value` is what the path holds (undefined or null
 * when missing); `operand` is the operand as written (a CidrSet for a written `$cidr`), or the
 * value its `$ref` names, which the caller has found present.
 */
export type ConditionTest = (value: unknown, operand: unknown) => Tri;

/** A stored value as the boolean test reads it: text, a number, a list of text, or null (missing). */
export type Stored = string | number | readonly string[] | null;
export type SearchOperand = string | number | boolean | readonly (string | number)[];
/**
 * The boolean test of a query condition, prepared once for its operand: `norm` turns an operand
 * into what the stored values compare with (instant keys on timestamps, otherwise itself).
 */
export type SearchTest = (
  operand: SearchOperand,
  norm: (v: string | number) => string | number,
) => (value: Stored) => boolean;

/** The tests cypher/principals/search_filter.cypher knows, by the name a literal carries. */
export const FILTER_TESTS = [
  'eq',
  'in',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'startsWith',
  'endsWith',
  'eqIgnoreCase',
  'exists',
] as const;
export type FilterTest = (typeof FILTER_TESTS)[number];

/**
 * The generic statement's literal: a test of the filter (`numeric`: a number operand compares text
 * as numbers), or the negation of another operator's literal.
 */
export type GenericForm =
  { readonly test: FilterTest; readonly numeric: boolean } | { readonly negates: Operator };

/** The operand as the shaped statement's text refers to it; each call adds a parameter. */
export interface ShapedOperand {
  readonly value: unknown;
  /** The operand as a parameter. */
  param(): string;
  /** The operand as the property compares with it (a datetime on a timestamp). */
  compared(): string;
  /** A list operand, each element as the property compares with it. */
  listed(): string;
}

export interface ShapedAnchor {
  /** Lower is better: how few value nodes the test is likely to leave. */
  readonly rank: number;
  /** One principal may match through several of its value nodes (array elements). */
  readonly duplicates: boolean;
  /** The test on value node `a0`, linked by `r0`, after `key` (the test of its key). */
  predicate(key: string, o: ShapedOperand): string;
}

export interface ShapedForm {
  /** A test of property `x`, which holds one value or none; `text` fields compare numbers numerically. */
  field(x: string, kind: 'text' | 'timestamp' | 'score', o: ShapedOperand): string;
  /** A test of an attribute bound to `x` (a string, a list of them, or null) whose elements are `elements`. */
  attribute(elements: string, o: ShapedOperand): string;
  /** The test as a match on the attribute value nodes that the (key, value) index finds. */
  readonly anchor: Form<ShapedAnchor>;
}

export interface CypherForm {
  readonly generic: GenericForm;
  readonly shaped: Form<ShapedForm>;
}

export interface OperatorRow<Name extends Operator = Operator> {
  readonly name: Name;
  readonly operand: OperandSchema;
  readonly condition: Form<ConditionTest>;
  readonly search: Form<SearchTest>;
  readonly cypher: Form<CypherForm>;
}

// ---- three-valued comparisons (policy conditions) ----

const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/** A value that is not there: missing, or null. */
export const absent = (v: unknown): boolean => v === undefined || v === null;

/** The elements a value stands for: a list's elements, else the value itself. */
const elementsOf = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : [v]);

/** Equality of two elements: true, false, or unknown when they cannot be compared. */
function equal(a: unknown, b: unknown): Tri {
  const ta = typeof a;
  const tb = typeof b;
  if (ta === tb && (ta === 'string' || ta === 'number' || ta === 'boolean'))
    return a === b ? 'true' : 'false';
  if (ta === 'number' && tb === 'string') return numericEqual(a as number, b as string);
  if (ta === 'string' && tb === 'number') return numericEqual(b as number, a as string);
  return 'unknown';
}

function numericEqual(n: number, text: string): Tri {
  if (!NUMBER.test(text)) return 'unknown';
  return Number(text) === n ? 'true' : 'false';
}

/** Ordering of two elements: negative, zero or positive; undefined when they cannot be compared. */
function order(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') {
    const ka = instantKey(a);
    const kb = ka === undefined ? undefined : instantKey(b);
    const x = kb === undefined ? a : ka!;
    const y = kb === undefined ? b : kb;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'number' && typeof b === 'string') return NUMBER.test(b) ? a - Number(b) : undefined;
  if (typeof a === 'string' && typeof b === 'number') return NUMBER.test(a) ? Number(a) - b : undefined;
  return undefined;
}

/** Some element satisfies `test`: true if one does, else unknown if one could not tell. */
function some(values: readonly unknown[], test: (v: unknown) => Tri): Tri {
  let unknown = false;
  for (const v of values) {
    const r = test(v);
    if (r === 'true') return 'true';
    if (r === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : 'false';
}

const negate = (t: Tri): Tri => (t === 'true' ? 'false' : t === 'false' ? 'true' : 'unknown');

/** Every test but `$exists` is unknown on a missing value. */
const present =
  (test: ConditionTest): ConditionTest =>
  (value, operand) =>
    absent(value) ? 'unknown' : test(value, operand);

/** Some element of the value equals some element of the operand. */
const member: ConditionTest = (value, operand) =>
  some(elementsOf(value), (v) => some(elementsOf(operand), (c) => equal(v, c)));

const ordered =
  (holds: (d: number) => boolean): ConditionTest =>
  (value, operand) => {
    if (Array.isArray(operand)) return 'unknown';
    return some(elementsOf(value), (v) => {
      const d = order(v, operand);
      return d === undefined ? 'unknown' : holds(d) ? 'true' : 'false';
    });
  };

// ---- boolean comparisons (principal queries in memory) ----

/** Text as Cypher's toFloatOrNull reads it: a number, or NaN for anything else. */
const numeric = (text: string): number => (NUMBER.test(text) ? Number(text) : NaN);

/** The values of a field or attribute: none when missing, the elements of a list. */
function each(raw: Stored, test: (e: string | number) => boolean): boolean {
  if (raw === null) return false;
  if (typeof raw === 'object') {
    for (const e of raw) if (test(e)) return true;
    return false;
  }
  return test(raw);
}

const operandsOf = (operand: SearchOperand): (string | number | boolean)[] =>
  (Array.isArray(operand) ? operand : [operand]) as (string | number | boolean)[];
const firstOf = (operand: SearchOperand): string | number | boolean => operandsOf(operand)[0]!;

const searchNot =
  (test: SearchTest): SearchTest =>
  (operand, norm) => {
    const inner = test(operand, norm);
    return (value) => !inner(value);
  };

const searchEq: SearchTest = (operand, norm) => {
  const o = norm(firstOf(operand) as string | number);
  return (value) => each(value, (e) => e === o);
};

const searchIn: SearchTest = (operand, norm) => {
  const set = new Set(operandsOf(operand).map((o) => norm(o as string | number)));
  return (value) => each(value, (e) => set.has(e));
};

/** Some element, as lower-cased text, passes `test` against the lower-cased operand. */
const searchText =
  (test: (element: string, operand: string) => boolean): SearchTest =>
  (operand) => {
    const lower = String(firstOf(operand)).toLowerCase();
    return (value) => each(value, (e) => test(String(e).toLowerCase(), lower));
  };

/**
 * A number operand compares numerically with numbers and with text that reads as one; a string
 * operand compares with text (timestamps of a subject are instant keys already, the operand
 * becomes one).
 */
const searchOrdered =
  (holds: (a: string | number, b: string | number) => boolean): SearchTest =>
  (operand, norm) => {
    const first = firstOf(operand);
    if (typeof first === 'number') {
      return (value) =>
        each(value, (e) => {
          const n = typeof e === 'number' ? e : numeric(e);
          return !Number.isNaN(n) && holds(n, first);
        });
    }
    const o = norm(first as string);
    return (value) => each(value, (e) => typeof e === 'string' && holds(e, o));
  };

// ---- Cypher (the shaped statement's text) ----

/** A comparison: text with a number operand compares as numbers, as toFloatOrNull reads it. */
function shapedComparison(cmp: string): ShapedForm {
  return {
    field: (x, kind, o) =>
      kind === 'text' && typeof o.value === 'number'
        ? `toFloatOrNull(${x}) ${cmp} ${o.param()}`
        : `${x} ${cmp} ${o.compared()}`,
    attribute: (elements, o) =>
      `any(e IN ${elements} WHERE ${typeof o.value === 'number' ? 'toFloatOrNull(e)' : 'e'} ${cmp} ${o.param()})`,
    anchor: {
      rank: 4,
      duplicates: true,
      predicate: (k, o) =>
        typeof o.value === 'number'
          ? `${k} AND a0.value IS NOT NULL AND toFloatOrNull(a0.value) ${cmp} ${o.param()}`
          : `${k} AND a0.value ${cmp} ${o.param()}`,
    },
  };
}

const NO_ANCHOR = unavailable('a negation or a test of presence would have to look at every principal');

function comparison<Name extends '$gt' | '$gte' | '$lt' | '$lte'>(
  name: Name,
  test: FilterTest,
  cmp: string,
  holds: (d: number) => boolean,
  compare: (a: string | number, b: string | number) => boolean,
): OperatorRow<Name> {
  return {
    name,
    operand: { shape: 'bound', ref: true },
    condition: present(ordered(holds)),
    search: searchOrdered(compare),
    cypher: { generic: { test, numeric: true }, shaped: shapedComparison(cmp) },
  };
}

/**
 * The table. Its type makes every operator of the vocabularies a row and every column required,
 * so that an operator added to a vocabulary does not compile until its row says what it means
 * everywhere.
 */
export const OPERATOR_TABLE: { readonly [Name in Operator]: OperatorRow<Name> } = {
  $eq: {
    name: '$eq',
    operand: { shape: 'value', ref: true },
    // A list holds when an element does; a number equals numeric text.
    condition: present(member),
    search: searchEq,
    cypher: {
      generic: { test: 'eq', numeric: false },
      shaped: {
        field: (x, _kind, o) => `${x} = ${o.compared()}`,
        attribute: (elements, o) => `${o.param()} IN ${elements}`,
        anchor: { rank: 1, duplicates: false, predicate: (k, o) => `${k} AND a0.value = ${o.param()}` },
      },
    },
  },
  $ne: {
    name: '$ne',
    operand: { shape: 'value', ref: true },
    condition: present((value, operand) => negate(member(value, operand))),
    // The negation of $eq: a missing value matches.
    search: searchNot(searchEq),
    cypher: {
      generic: { negates: '$eq' },
      shaped: {
        field: (x, _kind, o) => `${x} IS NULL OR ${x} <> ${o.compared()}`,
        attribute: (elements, o) => `NOT ${o.param()} IN ${elements}`,
        anchor: NO_ANCHOR,
      },
    },
  },
  $in: {
    name: '$in',
    operand: { shape: 'list', ref: true },
    condition: present(member),
    search: searchIn,
    cypher: {
      generic: { test: 'in', numeric: false },
      shaped: {
        field: (x, _kind, o) => `${x} IN ${o.listed()}`,
        attribute: (elements, o) => `any(e IN ${elements} WHERE e IN ${o.param()})`,
        anchor: { rank: 2, duplicates: true, predicate: (k, o) => `${k} AND a0.value IN ${o.param()}` },
      },
    },
  },
  $nin: {
    name: '$nin',
    operand: { shape: 'list', ref: true },
    condition: present((value, operand) => negate(member(value, operand))),
    search: searchNot(searchIn),
    cypher: {
      generic: { negates: '$in' },
      shaped: {
        field: (x, _kind, o) => `${x} IS NULL OR NOT ${x} IN ${o.listed()}`,
        attribute: (elements, o) => `none(e IN ${elements} WHERE e IN ${o.param()})`,
        anchor: NO_ANCHOR,
      },
    },
  },
  $gt: comparison(
    '$gt',
    'gt',
    '>',
    (d) => d > 0,
    (a, b) => a > b,
  ),
  $gte: comparison(
    '$gte',
    'gte',
    '>=',
    (d) => d >= 0,
    (a, b) => a >= b,
  ),
  $lt: comparison(
    '$lt',
    'lt',
    '<',
    (d) => d < 0,
    (a, b) => a < b,
  ),
  $lte: comparison(
    '$lte',
    'lte',
    '<=',
    (d) => d <= 0,
    (a, b) => a <= b,
  ),
  $contains: {
    name: '$contains',
    operand: { shape: 'text', ref: true },
    // On text a part ignoring case; on a list an element equal to the operand.
    condition: present((value, operand) => {
      if (typeof operand !== 'string') return 'unknown';
      if (Array.isArray(value)) return some(value, (v) => equal(v, operand));
      if (typeof value !== 'string') return 'unknown';
      return value.toLowerCase().includes(operand.toLowerCase()) ? 'true' : 'false';
    }),
    search: (operand) => {
      const text = String(firstOf(operand));
      const lower = text.toLowerCase();
      return (value) => {
        if (value === null) return false;
        if (typeof value === 'object') return value.includes(text);
        return String(value).toLowerCase().includes(lower);
      };
    },
    cypher: {
      generic: { test: 'contains', numeric: false },
      shaped: {
        field: (x, _kind, o) => `toLower(${x}) CONTAINS toLower(${o.param()})`,
        attribute: (elements, o) => {
          const v = o.param();
          return `CASE WHEN x IS :: STRING NOT NULL THEN toLower(x) CONTAINS toLower(${v}) ELSE ${v} IN ${elements} END`;
        },
        anchor: {
          rank: 4,
          // A principal links to one node per distinct element, so at most one matches per principal.
          duplicates: false,
          // The node-only part filters value nodes before their links are expanded; the link then
          // says whether the value was an array element (which must equal the operand; only those
          // links carry `array: true`) or a string.
          predicate: (k, o) => {
            const v = o.param();
            return `${k} AND a0.value IS NOT NULL AND toLower(a0.value) CONTAINS toLower(${v}) AND (NOT coalesce(r0.array, false) OR a0.value = ${v})`;
          },
        },
      },
    },
  },
  $startsWith: {
    name: '$startsWith',
    operand: { shape: 'text', ref: true },
    condition: present((value, operand) => {
      if (typeof operand !== 'string') return 'unknown';
      const prefix = operand.toLowerCase();
      return some(elementsOf(value), (v) =>
        typeof v === 'string' ? (v.toLowerCase().startsWith(prefix) ? 'true' : 'false') : 'unknown',
      );
    }),
    search: searchText((e, o) => e.startsWith(o)),
    cypher: {
      generic: { test: 'startsWith', numeric: false },
      shaped: {
        field: (x, _kind, o) => `toLower(${x}) STARTS WITH toLower(${o.param()})`,
        attribute: (elements, o) =>
          `any(e IN ${elements} WHERE toLower(e) STARTS WITH toLower(${o.param()}))`,
        anchor: {
          rank: 3,
          duplicates: true,
          predicate: (k, o) =>
            `${k} AND a0.value IS NOT NULL AND toLower(a0.value) STARTS WITH toLower(${o.param()})`,
        },
      },
    },
  },
  $endsWith: {
    name: '$endsWith',
    operand: { shape: 'text', ref: false },
    condition: unavailable('$endsWith is a query operator only (SCIM filters say `ew`)'),
    search: searchText((e, o) => e.endsWith(o)),
    cypher: {
      generic: { test: 'endsWith', numeric: false },
      shaped: unavailable('$endsWith runs the generic search statement only'),
    },
  },
  $eqIgnoreCase: {
    name: '$eqIgnoreCase',
    operand: { shape: 'text', ref: false },
    condition: unavailable(
      '$eqIgnoreCase is a query operator only (SCIM `eq` on attributes that are not case-exact)',
    ),
    search: searchText((e, o) => e === o),
    cypher: {
      generic: { test: 'eqIgnoreCase', numeric: false },
      shaped: {
        field: (x, _kind, o) => `toLower(${x}) = toLower(${o.param()})`,
        attribute: (elements, o) => `any(e IN ${elements} WHERE toLower(e) = toLower(${o.param()}))`,
        anchor: {
          rank: 2,
          // Array elements that differ only in case are value nodes of their own.
          duplicates: true,
          predicate: (k, o) => `${k} AND a0.value IS NOT NULL AND toLower(a0.value) = toLower(${o.param()})`,
        },
      },
    },
  },
  $exists: {
    name: '$exists',
    operand: { shape: 'flag', ref: false },
    // Never unknown: a missing value is what it asks about.
    condition: (value, operand) => (!absent(value) === operand ? 'true' : 'false'),
    search: (operand) => {
      const wanted = firstOf(operand) === true;
      return (value) => (value !== null) === wanted;
    },
    cypher: {
      // `$exists: false` is the negated literal of `$exists: true` (src/principals/search/normal.ts).
      generic: { test: 'exists', numeric: false },
      shaped: {
        field: (x, _kind, o) => (o.value === true ? `${x} IS NOT NULL` : `${x} IS NULL`),
        attribute: (_elements, o) => (o.value === true ? 'x IS NOT NULL' : 'x IS NULL'),
        anchor: NO_ANCHOR,
      },
    },
  },
  $cidr: {
    name: '$cidr',
    operand: { shape: 'cidrs', ref: true },
    condition: present((value, operand) => {
      let set: CidrSet | undefined;
      if (operand instanceof CidrSet) set = operand;
      else {
        const texts = elementsOf(operand);
        set = texts.every((t) => typeof t === 'string') ? CidrSet.of(texts) : undefined;
      }
      if (!set) return 'unknown';
      const blocks = set;
      return some(elementsOf(value), (v) => (typeof v === 'string' ? blocks.test(v) : 'unknown'));
    }),
    search: unavailable('$cidr is a policy condition operator only; principals hold no addresses to search'),
    cypher: unavailable('$cidr is a policy condition operator only; principals hold no addresses to search'),
  },
};

const COLUMN = {
  condition: 'three-valued test (policy conditions)',
  search: 'boolean test (principal queries in memory)',
  cypher: 'Cypher form (principal search)',
} as const;

/** The row of an operator; an operator missing from the table is a programming error. */
export function operatorRow(op: string): OperatorRow {
  if (!Object.hasOwn(OPERATOR_TABLE, op)) {
    throw new Error(`${op} is not an operator of the operator table (src/operators/table.ts)`);
  }
  return OPERATOR_TABLE[op as Operator];
}

/** One column of an operator's row, refused with the row's reason when the operator has no such form. */
export function formOf<C extends keyof typeof COLUMN>(
  op: string,
  column: C,
): Exclude<OperatorRow[C], Unavailable> {
  const form: object = operatorRow(op)[column];
  if ('unavailable' in form) {
    throw new Error(`${op} has no ${COLUMN[column]}: ${(form as Unavailable).unavailable}`);
  }
  return form as Exclude<OperatorRow[C], Unavailable>;
}

/** The shaped statement's form of an operator, refused likewise. */
export function shapedFormOf(op: string): ShapedForm {
  const form = formOf(op, 'cypher').shaped;
  if (!isAvailable(form)) throw new Error(`${op} has no shaped search statement: ${form.unavailable}`);
  return form;
}
