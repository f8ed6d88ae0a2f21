import { Type, type Static, type TSchema, type TString } from '@sinclair/typebox';
import { idPattern, type IdKind } from '../ids.js';
import { DEFAULT_LIMIT, DEFAULT_PAGE, MAX_LIMIT, MAX_PAGE } from '../pagination.js';

/**
 * Building blocks shared by every resource schema. A schema with a `title` becomes a named
 * component of the OpenAPI document.
 */
export const Timestamp = Type.String({
  format: 'date-time',
  description: 'RFC 3339 UTC timestamp with milliseconds',
  examples: ['2026-11-22T09:15:02.123Z'],
});

export const Id = (kind: IdKind, description?: string): TString =>
  Type.String({ pattern: idPattern(kind), ...(description ? { description } : {}) });

export const Pagination = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: 'Total matching items' }),
    page: Type.Integer({ minimum: 1 }),
    per_page: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: 'Page size used' }),
    pages: Type.Integer({ minimum: 0, description: 'ceil(total / per_page)' }),
  },
  { additionalProperties: false, title: 'Pagination' },
);

export const PageNumber = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE,
  description: `Page number, from 1 (default ${DEFAULT_PAGE})`,
});
export const PageSize = Type.Integer({
  minimum: 1,
  maximum: MAX_LIMIT,
  description: `Page size, 1-${MAX_LIMIT} (default ${DEFAULT_LIMIT})`,
});

/** The paging parameters of every list. */
export const PageQuery = {
  page: Type.Optional(PageNumber),
  limit: Type.Optional(PageSize),
};

export function Paginated<T extends TSchema>(item: T, title: string): TSchema {
  return Type.Object(
    { data: Type.Array(item), pagination: Pagination },
    { additionalProperties: false, title },
  );
}

export const FieldErrorSchema = Type.Object(
  {
    pointer: Type.String({
      description: 'JSON Pointer into the request (`/query/...` for query parameters)',
    }),
    message: Type.String(),
  },
  { additionalProperties: false },
);

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    instance: Type.String(),
    code: Type.String({ description: 'Stable machine-readable error code' }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { additionalProperties: false, title: 'Problem', description: 'RFC 9457 problem details' },
);

/**
 * A map whose keys follow a pattern. (A TypeBox Record with a key pattern would let keys that
 * miss the pattern through unchecked.)
 */
export function KeyedMap<T extends TSchema>(
  value: T,
  options: { keyPattern: string; maxProperties?: number; title?: string; description?: string },
) {
  const { keyPattern, ...rest } = options;
  return Type.Unsafe<Record<string, Static<T>>>(
    Type.Object({}, { ...rest, additionalProperties: value, propertyNames: { pattern: keyPattern } }),
  );
}
