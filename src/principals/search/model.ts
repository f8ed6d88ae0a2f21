import { formOf } from '../../operators/table.js';
import {
  PRINCIPAL_FIELD_NAMES,
  PRINCIPAL_FIELDS,
  type FieldKind,
  type PrincipalField,
} from '../../vocabulary/principals.js';
import { QUERY_OPERATORS } from '../../vocabulary/search.js';

/**
 * The query representation: which principals a request selects, said once for every way of
 * asking — `/v1` principal search, SCIM filters (RFC 7644 §3.4.2.2) and the `match` subjects of
 * policies — and compiled to Cypher in one place (src/principals/search/cypher.ts), so all of them run on the
 * same indexes. Nothing here knows about HTTP or Cypher.
 *
 * Besides the fields `/v1` search offers, `id`, `connector_id` (the identity provider's id),
 * `user_name` (a SCIM userName, held lower-cased) and `connector_ref` (the id of the connector
 * that provisions the principal, which scopes its SCIM view) serve the SCIM filters of connectors.
 *
 * A query is a boolean tree of `and`, `or` and `not` over conditions
 * `{ target, op, operand }`, where the target is a principal field or an attribute key.
 *
 * Semantics (docs/api.md §2, extended to trees):
 * - Every condition is true or false for every principal, never "unknown". A field or attribute
 *   the principal lacks makes every operator false except `$ne`, `$nin` and `$exists: false`,
 *   which are exactly the negations of `$eq`, `$in` and `$exists: true`.
 * - `not` is the complement: a principal matches `not q` when it does not match `q`. So
 *   `not {team $eq x}` selects principals without a team too, the same as `{team $ne x}`. This
 *   is what SCIM says ("not: the filter is a match if the expression evaluates to false", and a
 *   comparison on an absent attribute evaluates to false), and it keeps `$ne`, `$nin` and
 *   `$exists: false` the negations the search language already defines. (A three-valued "unknown
 *   stays unknown under not", as in SQL, would make `not {team $eq x}` differ from
 *   `{team $ne x}`.)
 * - `and` of nothing holds for every principal, `or` of nothing for none.
 * - Array attributes hold when any element does: `$eq` is membership, `$in` any element in the
 *   list, `$contains` an element equal to the operand; the rest when some element satisfies them.
 *   On strings `$contains`, `$startsWith` and `$endsWith` ignore case; equality does not, and
 *   `$eqIgnoreCase` (SCIM's `eq` on attributes that are not case-exact) is equality ignoring case.
 * - `$gt`-style operators with a number operand compare text numerically (values that are not
 *   numbers are false); with a string, as text. Timestamps compare as instants.
 * - Nothing is implied: a query without a `status` condition includes deleted principals. The
 *   caller states its own scope (the `/v1` search adds "not deleted" unless asked otherwise).
 */

/** The principal fields a query reads (src/vocabulary/principals.ts, shared with policy conditions). */
export const FIELDS: readonly PrincipalField[] = PRINCIPAL_FIELD_NAMES;
export type Field = PrincipalField;

/** How a field's values compare; attributes are text or lists of text. */
export type { FieldKind };

export const FIELD_KIND = Object.fromEntries(
  PRINCIPAL_FIELD_NAMES.map((f) => [f, PRINCIPAL_FIELDS[f].kind]),
) as Record<Field, FieldKind>;

/**
 * Every operator the representation knows (src/vocabulary/search.ts); what each means is its row
 * of src/operators/table.ts.
 */
export const OPERATORS = QUERY_OPERATORS;
export type Operator = (typeof OPERATORS)[number];

export type Target = { readonly field: Field } | { readonly attribute: string };

/**
 * A value to compare with: text, a number, an RFC 3339 instant for timestamps, a list for `$in`
 * and `$nin`, a boolean for `$exists`.
 */
export type Operand = string | number | boolean | readonly (string | number)[];

export interface Condition {
  readonly kind: 'condition';
  readonly target: Target;
  readonly op: Operator;
  readonly operand: Operand;
}

export interface And {
  readonly kind: 'and';
  readonly of: readonly Query[];
}

export interface Or {
  readonly kind: 'or';
  readonly of: readonly Query[];
}

export interface Not {
  readonly kind: 'not';
  readonly of: Query;
}

export type Query = Condition | And | Or | Not;

export const field = (name: Field): Target => ({ field: name });
export const attribute = (key: string): Target => ({ attribute: key });

export const condition = (target: Target, op: Operator, operand: Operand): Condition => ({
  kind: 'condition',
  target,
  op,
  operand,
});
export const and = (...of: Query[]): And => ({ kind: 'and', of });
export const or = (...of: Query[]): Or => ({ kind: 'or', of });
export const not = (of: Query): Not => ({ kind: 'not', of });

export const isAttribute = (target: Target): target is { readonly attribute: string } =>
  'attribute' in target;

/** The operators each kind of target takes; anything else is a mistake of whoever built the query. */
const ALLOWED: Record<FieldKind | 'attribute', ReadonlySet<Operator>> = {
  label: new Set(['$eq', '$ne', '$in', '$nin', '$exists']),
  text: new Set(OPERATORS),
  attribute: new Set(OPERATORS),
  timestamp: new Set(['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists']),
  score: new Set(['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists']),
};

export function kindOf(target: Target): FieldKind | 'attribute' {
  return isAttribute(target) ? 'attribute' : FIELD_KIND[target.field];
}

/**
 * Throws when a condition could not have come from a validated request: an operator the target
 * does not take, or an operand of the wrong shape. Callers validate their own input with
 * pointers into it (validateSearchBody, the SCIM filter parser); this only guards the compiler.
 */
export function assertWellFormed(query: Query): void {
  switch (query.kind) {
    case 'and':
    case 'or':
      query.of.forEach(assertWellFormed);
      return;
    case 'not':
      assertWellFormed(query.of);
      return;
    case 'condition': {
      // An operator without a row, or without a Cypher form, is refused with the table's reason.
      formOf(query.op, 'cypher');
      const kind = kindOf(query.target);
      if (!ALLOWED[kind].has(query.op)) throw new Error(`${query.op} does not apply to ${describe(query)}`);
      const list = query.op === '$in' || query.op === '$nin';
      if (list !== Array.isArray(query.operand)) throw new Error(`bad operand for ${describe(query)}`);
      if ((query.op === '$exists') !== (typeof query.operand === 'boolean')) {
        throw new Error(`bad operand for ${describe(query)}`);
      }
      return;
    }
  }
}

function describe(c: Condition): string {
  return `${isAttribute(c.target) ? `attribute ${c.target.attribute}` : c.target.field} ${c.op}`;
}
