import { instantKey } from '../../time.js';
import { formOf, type Stored } from '../../operators/table.js';
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

type Reader = (s: Subject) => Stored;

function reader(condition: Condition): Reader {
  const target = condition.target;
  if (isAttribute(target)) {
    const key = target.attribute;
    return (s) => (s.attribute ? s.attribute(key) : s.attributes[key]) ?? null;
  }
  const field: Field = target.field;
  return (s) => s[field] ?? null;
}

/**
 * A condition by its operator's boolean test (src/operators/table.ts), prepared once for the
 * operand: on timestamps the operand becomes an instant key, as the subject's timestamps are.
 */
function compileCondition(c: Condition): Predicate {
  const read = reader(c);
  const timestamp = !isAttribute(c.target) && FIELD_KIND[c.target.field] === 'timestamp';
  const norm = (v: string | number): string | number =>
    timestamp && typeof v === 'string' ? (instantKey(v) ?? v) : v;
  const test = formOf(c.op, 'search')(c.operand, norm);
  return (s) => test(read(s));
}
