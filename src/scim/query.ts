import { and, condition, not, or, type Query } from '../principals/search/model.js';
import { parseInstant } from '../time.js';
import { rowAt } from './attributes.js';
import { ScimError } from './errors.js';
import type { AttrPath, CompareOp, FilterValue, ScimFilter } from './filter.js';

/**
 * A SCIM filter on Users as the query representation (src/principals/search/model.ts), so that it
 * runs on the principal indexes like any `/v1` search. An attribute whose row in the attribute
 * table (src/scim/attributes.ts) has a `filter` rule compiles as the rule says: today `id`,
 * `externalId` (connector_id), `userName` (user_name, held lower-cased, so case-insensitive
 * comparisons are exact), `active` (status), `meta.created` and `meta.lastModified`, and the
 * case-insensitive `eq`, `co`, `sw`, `ew` of `displayName`, `title` and `department`. Any other
 * comparison has no field to run on: it becomes the widest query that cannot lose a match (true
 * where it must hold, false where it must fail, as `not` flips it), and `exact` is false, telling
 * the caller to check the candidates against the filter itself.
 */
export interface CompiledFilter {
  query: Query;
  exact: boolean;
}

const TRUE: Query = and();
const FALSE: Query = or();

const OPS: Partial<
  Record<
    CompareOp,
    '$eq' | '$ne' | '$contains' | '$startsWith' | '$endsWith' | '$gt' | '$gte' | '$lt' | '$lte'
  >
> = {
  eq: '$eq',
  ne: '$ne',
  co: '$contains',
  sw: '$startsWith',
  ew: '$endsWith',
  gt: '$gt',
  ge: '$gte',
  lt: '$lt',
  le: '$lte',
};

function compare(path: AttrPath, op: CompareOp, value: FilterValue): CompiledFilter | undefined {
  const rule = rowAt('User', path)?.filter;
  if (!rule) return undefined;
  if (rule.compare === 'flag') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne')) return { query: FALSE, exact: true };
    const wanted = (op === 'eq') === value ? rule.values.true : rule.values.false;
    return { query: condition(rule.on, '$eq', wanted), exact: true };
  }
  if (typeof value !== 'string') return undefined;
  const operator = OPS[op]!;
  switch (rule.compare) {
    case 'folded':
      return { query: condition(rule.on, operator, value.toLowerCase()), exact: true };
    case 'exact':
      // co/sw/ew of the query representation ignore case: a superset of the case-exact test.
      return {
        query: condition(rule.on, operator, value),
        exact: !['co', 'sw', 'ew'].includes(op),
      };
    case 'ignoring-case':
      if (op === 'co' || op === 'sw' || op === 'ew')
        return { query: condition(rule.on, operator, value), exact: true };
      if (op === 'eq') return { query: condition(rule.on, '$eqIgnoreCase', value), exact: true };
      return undefined;
    case 'timestamp':
      if (!parseInstant(value))
        throw new ScimError(
          400,
          'invalidFilter',
          `${path.attribute}.${path.sub ?? ''} compares with a timestamp, not "${value}"`,
        );
      return { query: condition(rule.on, operator, value), exact: true };
  }
}

/**
 * `over`: a query holding for every user the filter selects (and maybe more); `under`: one
 * holding only for users it selects. Exact parts are the same both ways.
 */
function approximate(filter: ScimFilter, mode: 'over' | 'under'): CompiledFilter {
  switch (filter.kind) {
    case 'and':
    case 'or': {
      const [a, b] = filter.of.map((f) => approximate(f, mode)) as [CompiledFilter, CompiledFilter];
      const join = filter.kind === 'and' ? and : or;
      return { query: join(a.query, b.query), exact: a.exact && b.exact };
    }
    case 'not': {
      const inner = approximate(filter.of, mode === 'over' ? 'under' : 'over');
      return { query: not(inner.query), exact: inner.exact };
    }
    case 'present': {
      const rule = rowAt('User', filter.path)?.filter;
      if (rule?.present === 'always') return { query: TRUE, exact: true };
      if (rule?.present === 'exists') return { query: condition(rule.on, '$exists', true), exact: true };
      break;
    }
    case 'compare': {
      const compiled = compare(filter.path, filter.op, filter.value);
      if (compiled && (compiled.exact || mode === 'over')) return compiled;
      break;
    }
    case 'valuePath':
      break;
  }
  return { query: mode === 'over' ? TRUE : FALSE, exact: false };
}

export function compileUserFilter(filter: ScimFilter): CompiledFilter {
  return approximate(filter, 'over');
}
