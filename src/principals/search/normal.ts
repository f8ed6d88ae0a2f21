import { validationFailed } from '../../errors/errors.js';
import { formOf } from '../../operators/table.js';
import type { Operand, Operator, Query, Target } from './model.js';

/**
 * A query in the one shape the Cypher filter evaluates: a conjunction of clauses, each a
 * disjunction of terms, each a conjunction of literals (AND-OR-AND). A literal is a condition
 * with a positive operator, possibly negated. Every query has this shape after two rewrites that
 * keep its meaning under the two-valued semantics of src/principals/search/model.ts:
 * - negations move down to the conditions (De Morgan), where `$ne`, `$nin` and
 *   `$exists: false` become negated `$eq`, `$in` and `$exists: true`;
 * - an `or` nested below two levels is distributed over the `and` above it.
 * The usual queries need no distribution: a plain conjunction is one term per clause, SCIM's
 * `a and (b or c)` and `(a and b) or (c and d)` already have the shape.
 */

export type PositiveOperator = Exclude<Operator, '$ne' | '$nin'>;

export interface Literal {
  readonly target: Target;
  readonly op: PositiveOperator;
  readonly operand: Operand;
  readonly negated: boolean;
}

export type Term = readonly Literal[];
export type Clause = readonly Term[];
export type Normal = readonly Clause[];

/** Literals a normal form may hold; a tree that distributes into more is refused. */
export const MAX_LITERALS = 512;

type Nnf = Literal | { readonly and: readonly Nnf[] } | { readonly or: readonly Nnf[] };

const isLiteral = (n: Nnf): n is Literal => 'target' in n;

/**
 * A condition as a literal: an operator whose Cypher form is the negation of another's
 * (src/operators/table.ts) becomes that literal negated, and `$exists: false` the negated
 * `$exists: true`.
 */
function literal(target: Target, op: Operator, operand: Operand, negated: boolean): Literal {
  const { generic } = formOf(op, 'cypher');
  if ('negates' in generic) {
    return { target, op: generic.negates as PositiveOperator, operand, negated: !negated };
  }
  if (op === '$exists') {
    return { target, op, operand: true, negated: operand === true ? negated : !negated };
  }
  return { target, op: op as PositiveOperator, operand, negated };
}

/** Negation normal form: `not` only on conditions, where it becomes the literal's flag. */
function nnf(query: Query, negated: boolean): Nnf {
  switch (query.kind) {
    case 'condition':
      return literal(query.target, query.op, query.operand, negated);
    case 'not':
      return nnf(query.of, !negated);
    case 'and':
    case 'or': {
      const of = query.of.map((q) => nnf(q, negated));
      // De Morgan: a negated `and` is an `or` of the negations, and the other way round.
      return (query.kind === 'and') !== negated ? { and: of } : { or: of };
    }
  }
}

function tooComplex(): never {
  throw validationFailed('the query is too complex', [
    { pointer: '', message: `expands to more than ${MAX_LITERALS} conditions` },
  ]);
}

/** The terms of a disjunction equivalent to `n` (its disjunctive normal form). */
function terms(n: Nnf): Term[] {
  if (isLiteral(n)) return [[n]];
  if ('or' in n) return n.or.flatMap(terms);
  // A conjunction of disjunctions: every way of picking one term from each.
  let product: Term[] = [[]];
  for (const child of n.and) {
    const choices = terms(child);
    const next: Term[] = [];
    let size = 0;
    for (const left of product) {
      for (const right of choices) {
        size += left.length + right.length;
        if (size > MAX_LITERALS) tooComplex();
        next.push([...left, ...right]);
      }
    }
    product = next;
  }
  return product;
}

/** The clauses of a conjunction equivalent to `n`. */
function clauses(n: Nnf): Clause[] {
  if (isLiteral(n)) return [[[n]]];
  if ('and' in n) return n.and.flatMap(clauses);
  return [terms(n)];
}

export function normalise(query: Query): Normal {
  const result = clauses(nnf(query, false));
  const size = result.reduce((sum, c) => sum + c.reduce((s, t) => s + t.length, 0), 0);
  if (size > MAX_LITERALS) tooComplex();
  return result;
}

/** A clause that is a single literal: a condition every match must meet on its own. */
export function single(clause: Clause): Literal | undefined {
  const [term] = clause;
  if (clause.length !== 1 || term === undefined || term.length !== 1) return undefined;
  return term[0];
}
