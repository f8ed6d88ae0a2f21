import { instantKey } from '../../time.js';
import { FIELD_KIND, isAttribute, type Condition, type Field, type Query } from './model.js';

/**
 * A principal as the in-memory evaluator reads it. Timestamps are instant keys (`instantKey`),
 * so that text order is time order, as Neo4j compares its DATETIMEs.
 */
export interface Subject {
  readonly id?: string;
  readonly connector_id?: string | null;
  readonly connector_ref?: string | null;
  readonly user_name?: string | null;
  readonly type: string;
  readonly status: string;
  readonly name: string;
  readonly email: string | null;
  readonly connector_source: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_login: string | null;
  readonly risk_score: number;
  readonly attributes: Readonly<Record<string, string | readonly string[]>>;
  /**
   * One attribute, for a subject that reads its attributes one at a time rather than all at once
   * (a principal of the decision index's tables); `attributes[key]` otherwise.
   */
  attribute?(key: string): string | readonly string[] | undefined;
}

export type Predicate = (subject: Subject) => boolean;

/**
 * The query representation compiled to a function over principals held in memory, with exactly
 * the meaning the Cypher compiler gives it (src/principals/search/model.ts): used where a query must be
 * answered without the database, as the decision engine does for the `match` subjects of
 * policies. The work that does not depend on the principal (operand normalisation, lower-casing,
 * number parsing) is done once here.
 */
export function compilePredicate(query: Query): Predicate {
  switch (query.kind) {
    case 'and': {
      const parts = query.of.map(compilePredicate);
      return (s) => {
        for (const part of parts) if (!part(s)) return false;
        return true;
      };
    }
    case 'or': {
      const parts = query.of.map(compilePredicate);
      return (s) => {
        for (const part of parts) if (part(s)) return true;
        return false;
      };
    }
    case 'not': {
      const inner = compilePredicate(query.of);
      return (s) => !inner(s);
    }
    case 'condition':
      return compileCondition(query);
  }
}

const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/** Text as Cypher's toFloatOrNull reads it: a number, or NaN for anything else. */
function numeric(text: string): number {
  return NUMBER.test(text) ? Number(text) : NaN;
}

type Reader = (s: Subject) => string | number | readonly string[] | null;

function reader(condition: Condition): Reader {
  const target = condition.target;
  if (isAttribute(target)) {
    const key = target.attribute;
    return (s) => (s.attribute ? s.attribute(key) : s.attributes[key]) ?? null;
  }
  const field: Field = target.field;
  return (s) => s[field] ?? null;
}

function compileCondition(c: Condition): Predicate {
  const read = reader(c);
  const timestamp = !isAttribute(c.target) && FIELD_KIND[c.target.field] === 'timestamp';
  const norm = (v: string | number): string | number =>
    timestamp && typeof v === 'string' ? (instantKey(v) ?? v) : v;
  const operands = (Array.isArray(c.operand) ? c.operand : [c.operand]) as (string | number | boolean)[];
  const first = operands[0];
  /** The values of a field or attribute: none when missing, the elements of a list. */
  const each = (s: Subject, test: (e: string | number) => boolean): boolean => {
    const raw = read(s);
    if (raw === null) return false;
    if (typeof raw === 'object') {
      for (const e of raw) if (test(e)) return true;
      return false;
    }
    return test(raw);
  };
  switch (c.op) {
    case '$eq':
    case '$ne': {
      const operand = norm(first as string | number);
      const eq: Predicate = (s) => each(s, (e) => e === operand);
      return c.op === '$eq' ? eq : (s) => !eq(s);
    }
    case '$in':
    case '$nin': {
      const set = new Set(operands.map((o) => norm(o as string | number)));
      const within: Predicate = (s) => each(s, (e) => set.has(e));
      return c.op === '$in' ? within : (s) => !within(s);
    }
    case '$exists': {
      const wanted = first === true;
      return (s) => (read(s) !== null) === wanted;
    }
    case '$contains': {
      const operand = String(first);
      const lower = operand.toLowerCase();
      return (s) => {
        const raw = read(s);
        if (raw === null) return false;
        if (typeof raw === 'object') return raw.includes(operand);
        return String(raw).toLowerCase().includes(lower);
      };
    }
    case '$startsWith': {
      const lower = String(first).toLowerCase();
      return (s) => each(s, (e) => String(e).toLowerCase().startsWith(lower));
    }
    case '$endsWith': {
      const lower = String(first).toLowerCase();
      return (s) => each(s, (e) => String(e).toLowerCase().endsWith(lower));
    }
    case '$eqIgnoreCase': {
      const lower = String(first).toLowerCase();
      return (s) => each(s, (e) => String(e).toLowerCase() === lower);
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const test = COMPARE[c.op];
      if (typeof first === 'number') {
        // A number compares numerically with numbers and with text that reads as one.
        return (s) =>
          each(s, (e) => {
            const n = typeof e === 'number' ? e : numeric(e);
            return !Number.isNaN(n) && test(n, first);
          });
      }
      // Timestamps of a subject are instant keys already; the operand becomes one.
      const operand = norm(first as string);
      return (s) => each(s, (e) => typeof e === 'string' && test(e, operand));
    }
  }
}

const COMPARE: Record<'$gt' | '$gte' | '$lt' | '$lte', (a: string | number, b: string | number) => boolean> =
  {
    $gt: (a, b) => a > b,
    $gte: (a, b) => a >= b,
    $lt: (a, b) => a < b,
    $lte: (a, b) => a <= b,
  };
