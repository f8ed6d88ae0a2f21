import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { validationFailed, type FieldError } from '../errors/errors.js';
import { parseInstant } from '../time.js';
import { KeyedMap, PageQuery } from './common.js';
import { FreeForm } from './free-form.js';
import { PrincipalStatusSchema, PrincipalTypeSchema } from './principals.js';
import { compile, inputAjv, toFieldErrors } from './validator.js';
import { KEY_PATTERN, PRINCIPAL_STATUSES, PRINCIPAL_TYPES } from '../vocabulary/principals.js';
import {
  SCORE_FIELDS,
  SORT_FIELDS,
  TEXT_FIELDS,
  TIMESTAMP_FIELDS,
  type SearchOperator,
  type SortField,
} from '../vocabulary/search.js';

/**
 * The body of POST /principals/search. The schema catches the shape (operators, operand types,
 * list sizes); `searchBodyErrors` adds what a schema cannot say (total condition count, instants
 * that parse). Every operator name and field name the compiler accepts is listed here.
 */

export const MAX_CONDITIONS = 32;
export const MAX_IN_VALUES = 100;
export const MAX_OPERAND_LENGTH = 1024;

const Text = Type.String({ maxLength: MAX_OPERAND_LENGTH });
const Instant = Type.String({
  format: 'date-time',
  maxLength: 64,
  description: 'RFC 3339 timestamp, compared as an instant',
  examples: ['2026-08-01T00:00:00Z'],
});
const Score = Type.Integer({ minimum: 0, maximum: 100 });
const TextOrNumber = Type.Union([Text, Type.Number()], {
  description:
    'A number compares numerically (values that are not numbers do not match); a string compares as text',
});

function list(item: TSchema): TSchema {
  return Type.Array(item, { minItems: 1, maxItems: MAX_IN_VALUES });
}

/** The operators every kind of value takes; in an operator object, every one present must hold. */
function operators(value: TSchema, range: TSchema) {
  return {
    $eq: Type.Optional(value),
    $ne: Type.Optional(value),
    $in: Type.Optional(list(value)),
    $nin: Type.Optional(list(value)),
    $gt: Type.Optional(range),
    $gte: Type.Optional(range),
    $lt: Type.Optional(range),
    $lte: Type.Optional(range),
    $exists: Type.Optional(Type.Boolean()),
  };
}

const TEXT_OPERATORS = {
  $contains: Type.Optional(Type.String({ maxLength: MAX_OPERAND_LENGTH, description: 'Case-insensitive' })),
  $startsWith: Type.Optional(Type.String({ maxLength: MAX_OPERAND_LENGTH, description: 'Case-insensitive' })),
};

const objectOptions = (title: string, description: string) => ({
  additionalProperties: false,
  minProperties: 1,
  title,
  description,
});

export const TextCondition = Type.Object(
  { ...operators(Text, TextOrNumber), ...TEXT_OPERATORS },
  objectOptions(
    'TextCondition',
    'Operators on a text value. `$contains` and `$startsWith` ignore case. A missing value matches only `$ne`, `$nin` and `$exists: false`.',
  ),
);
export const AttributeCondition = Type.Object(
  { ...operators(Text, TextOrNumber), ...TEXT_OPERATORS },
  objectOptions(
    'AttributeCondition',
    'Operators on an attribute. For an array attribute, `$eq` matches when the array contains the value, `$in` when any element is in the list, `$contains` when an element equals the operand, and the other operators when any element satisfies them. On a string, `$contains` and `$startsWith` ignore case. A missing attribute matches only `$ne`, `$nin` and `$exists: false`.',
  ),
);
export const TimestampCondition = Type.Object(
  operators(Instant, Instant),
  objectOptions(
    'TimestampCondition',
    'Operators on a timestamp; operands are RFC 3339 timestamps compared as instants. A missing value matches only `$ne`, `$nin` and `$exists: false`.',
  ),
);
export const ScoreCondition = Type.Object(
  operators(Score, Score),
  objectOptions('ScoreCondition', 'Operators on the risk score (integers 0-100).'),
);

const textField = (description: string) =>
  Type.Optional(
    Type.Union([Text, TextCondition], { description: `${description}: a value (equality) or operators` }),
  );
const timestampField = (description: string) =>
  Type.Optional(
    Type.Union([Instant, TimestampCondition], {
      description: `${description}: an instant (equality) or operators`,
    }),
  );

const oneOrMore = <T extends TSchema>(item: T, max: number, description: string) =>
  Type.Optional(Type.Union([item, Type.Array(item, { minItems: 1, maxItems: max })], { description }));

export const SearchQuery = FreeForm(
  Type.Object(
    {
      type: oneOrMore(PrincipalTypeSchema, PRINCIPAL_TYPES.length, 'A type or a list of types (any of them)'),
      status: oneOrMore(
        PrincipalStatusSchema,
        PRINCIPAL_STATUSES.length,
        'A status or a list of statuses (any of them). Deleted principals are left out unless this names `deleted`.',
      ),
      name: textField('Name'),
      email: textField('Email (USER principals)'),
      connector_source: textField('Connector that manages the principal'),
      created_at: timestampField('Creation time'),
      updated_at: timestampField('Time of the last change'),
      last_login: timestampField('Time of the last login'),
      risk_score: Type.Optional(
        Type.Union([Score, ScoreCondition], {
          description: 'Risk score: an integer (equality) or operators',
        }),
      ),
      attributes: Type.Optional(
        KeyedMap(Type.Union([Text, AttributeCondition]), {
          keyPattern: KEY_PATTERN,
          description: `Attribute key → a value (equality; for an array attribute, membership) or operators. Keys match ${KEY_PATTERN}.`,
        }),
      ),
    },
    {
      additionalProperties: false,
      title: 'SearchQuery',
      description: `Every condition must hold; at most ${MAX_CONDITIONS} conditions in total (each plain value, operator, \`type\` and \`status\` counts as one).`,
    },
  ),
);

export const SearchSort = Type.Object(
  {
    field: Type.Optional(
      Type.Unsafe<SortField>({
        type: 'string',
        enum: [...SORT_FIELDS],
        description: 'Default `created_at`. Principals without the field come last in both orders.',
      }),
    ),
    order: Type.Optional(
      Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['asc', 'desc'], description: 'Default `desc`' }),
    ),
  },
  { additionalProperties: false, title: 'SearchSort', description: 'Ties break on `id`, in the same order.' },
);

export const SearchPrincipalsBody = Type.Object(
  {
    query: Type.Optional(SearchQuery),
    sort: Type.Optional(SearchSort),
    ...PageQuery,
  },
  {
    additionalProperties: false,
    title: 'SearchPrincipals',
    description:
      'Operators: `$eq`, `$ne`, `$in`, `$nin` (1-100 values), `$gt`, `$gte`, `$lt`, `$lte`, `$contains`, `$startsWith` (text only, case-insensitive), `$exists` (boolean).',
  },
);

export type SearchPrincipalsRequest = Static<typeof SearchPrincipalsBody>;
export type SearchQueryInput = Static<typeof SearchQuery>;

/** Plain values and operator objects as the compiler walks them. */
export type ConditionInput = string | number | Partial<Record<SearchOperator, unknown>>;

function isOperatorObject(value: unknown): value is Partial<Record<SearchOperator, unknown>> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** How many conditions a field or attribute entry adds: one per operator, one for a plain value. */
export function conditionCount(value: unknown): number {
  return isOperatorObject(value) ? Object.keys(value).length : 1;
}

/**
 * Checks of a schema-valid body that the schema cannot express: the total number of conditions
 * and timestamps that name a real instant. Pointers lead into the body.
 */
export function searchBodyErrors(body: SearchPrincipalsRequest): FieldError[] {
  const errors: FieldError[] = [];
  const query = body.query ?? {};
  let conditions = (query.type === undefined ? 0 : 1) + (query.status === undefined ? 0 : 1);
  for (const field of [...TEXT_FIELDS, ...TIMESTAMP_FIELDS, ...SCORE_FIELDS]) {
    if (query[field] !== undefined) conditions += conditionCount(query[field]);
  }
  for (const value of Object.values(query.attributes ?? {})) conditions += conditionCount(value);
  if (conditions > MAX_CONDITIONS) {
    errors.push({
      pointer: '/query',
      message: `has ${conditions} conditions; at most ${MAX_CONDITIONS} are allowed`,
    });
  }
  for (const field of TIMESTAMP_FIELDS) {
    const value: unknown = query[field];
    const at = `/query/${field}`;
    const check = (operand: unknown, pointer: string): void => {
      if (typeof operand === 'string' && parseInstant(operand) === undefined) {
        errors.push({ pointer, message: 'must be an RFC 3339 timestamp naming a real instant' });
      }
    };
    if (isOperatorObject(value)) {
      for (const [op, operand] of Object.entries(value)) {
        if (Array.isArray(operand)) operand.forEach((item, i) => check(item, `${at}/${op}/${i}`));
        else check(operand, `${at}/${op}`);
      }
    } else {
      check(value, at);
    }
  }
  return errors;
}

const checkShape = compile<SearchPrincipalsRequest>(inputAjv, SearchPrincipalsBody);

/**
 * The body checked against the schema and `searchBodyErrors`; throws VALIDATION_FAILED with
 * pointers. The search compiler calls it itself, so no caller can hand it an unchecked query.
 */
export function validateSearchBody(body: unknown): SearchPrincipalsRequest {
  if (!checkShape(body))
    throw validationFailed('the search request is invalid', toFieldErrors(checkShape.errors));
  const errors = searchBodyErrors(body);
  if (errors.length > 0) throw validationFailed('the search request is invalid', errors);
  return body;
}
