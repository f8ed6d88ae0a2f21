import {
  and,
  attribute,
  condition,
  field,
  not,
  or,
  type Query,
  type Target,
} from '../principals/search/model.js';
import { parseInstant } from '../time.js';
import { ScimError } from './errors.js';
import type { AttrPath, CompareOp, FilterValue, ScimFilter } from './filter.js';
import { ENTERPRISE_SCHEMA, USER_SCHEMA } from './schema.js';

/**
 * A SCIM filter on Users as the query representation (src/principals/search/model.ts), so that it runs on the
 * principal indexes like any `/v1` search. Attributes the service maps to principal fields
 * compile exactly: `id`, `externalId` (connector_id), `userName` (user_name, held lower-cased, so
 * case-insensitive comparisons are exact), `active` (status), `meta.created` and
 * `meta.lastModified`, and the case-insensitive `eq`, `co`, `sw`, `ew` of `displayName`, `title`
 * and `department`. Any other comparison has no field to run on: it becomes the widest query that
 * cannot lose a match (true where it must hold, false where it must fail, as `not` flips it),
 * and `exact` is false, telling the caller to check the candidates against the filter itself.
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

/** The attribute a path names, lower-cased, with its sub-attribute: `name.familyname`, `department`. */
function pathKey(path: AttrPath): string {
  const uri = path.uri?.toLowerCase();
  const base = path.sub ? `${path.attribute}.${path.sub}` : path.attribute;
  if (uri === ENTERPRISE_SCHEMA.toLowerCase()) return `enterprise:${base.toLowerCase()}`;
  if (uri && uri !== USER_SCHEMA.toLowerCase()) return `other:${base.toLowerCase()}`;
  return base.toLowerCase();
}

type Mapping = { target: Target; kind: 'exact-text' | 'folded' | 'case-insensitive' | 'timestamp' };

const MAPPED: Record<string, Mapping> = {
  id: { target: field('id'), kind: 'exact-text' },
  externalid: { target: field('connector_id'), kind: 'exact-text' },
  username: { target: field('user_name'), kind: 'folded' },
  displayname: { target: field('name'), kind: 'case-insensitive' },
  title: { target: attribute('role'), kind: 'case-insensitive' },
  department: { target: attribute('department'), kind: 'case-insensitive' },
  'enterprise:department': { target: attribute('department'), kind: 'case-insensitive' },
  'meta.created': { target: field('created_at'), kind: 'timestamp' },
  'meta.lastmodified': { target: field('updated_at'), kind: 'timestamp' },
};

function compare(path: AttrPath, op: CompareOp, value: FilterValue): CompiledFilter | undefined {
  const key = pathKey(path);
  if (key === 'active') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne')) return { query: FALSE, exact: true };
    const wanted = (op === 'eq') === value ? 'active' : 'suspended';
    return { query: condition(field('status'), '$eq', wanted), exact: true };
  }
  const mapping = MAPPED[key];
  if (!mapping || typeof value !== 'string') return undefined;
  const operator = OPS[op]!;
  switch (mapping.kind) {
    case 'folded':
      return { query: condition(mapping.target, operator, value.toLowerCase()), exact: true };
    case 'exact-text':
      // co/sw/ew of the query representation ignore case: a superset of the case-exact test.
      return {
        query: condition(mapping.target, operator, value),
        exact: !['co', 'sw', 'ew'].includes(op),
      };
    case 'case-insensitive':
      if (op === 'co' || op === 'sw' || op === 'ew')
        return { query: condition(mapping.target, operator, value), exact: true };
      if (op === 'eq') return { query: condition(mapping.target, '$eqIgnoreCase', value), exact: true };
      return undefined;
    case 'timestamp':
      if (!parseInstant(value))
        throw new ScimError(
          400,
          'invalidFilter',
          `${path.attribute}.${path.sub ?? ''} compares with a timestamp, not "${value}"`,
        );
      return { query: condition(mapping.target, operator, value), exact: true };
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
      const key = pathKey(filter.path);
      // Every user has these.
      if (['id', 'username', 'active', 'meta.created', 'meta.lastmodified'].includes(key))
        return { query: TRUE, exact: true };
      const mapping = MAPPED[key];
      if (mapping && mapping.kind === 'exact-text')
        return { query: condition(mapping.target, '$exists', true), exact: true };
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
