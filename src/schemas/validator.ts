import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { validationFailed, type AppError, type FieldError } from '../errors/errors.js';
import { addFreeFormKeyword } from './free-form.js';
import { parseInstant } from '../time.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const MAX_REPORTED_ERRORS = 20;

function build(options: ConstructorParameters<typeof Ajv>[0]): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictTypes: false,
    allowUnionTypes: true,
    ...options,
  });
  addFormats(ajv);
  // Every timestamp a caller sends goes through the one instant parser, so that what the
  // validator accepts is exactly what the database can compare (no leap seconds, no space
  // for `T`, at most nine fraction digits).
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (text: string) => parseInstant(text) !== undefined,
  });
  // Annotation keywords of OpenAPI that carry no validation meaning.
  ajv.addKeyword({ keyword: 'example' });
  addFreeFormKeyword(ajv);
  return ajv;
}

/** Request bodies and (already typed) query parameters: no coercion, defaults filled in. */
export const inputAjv = build({ useDefaults: true });
/** Responses, checked in tests so that no undocumented field (a hash, a secret) leaks out. */
export const responseAjv = build({});
/** The OpenAPI document's schemas (held under `components`, which JSON Schema does not know). */
export const documentAjv = build({ strict: false });

export type Validator<T = unknown> = ValidateFunction<T>;

export function compile<T>(ajv: Ajv, schema: TSchema): Validator<T> {
  return ajv.compile<T>(schema);
}

/** The refusal of a request body `check` found invalid, naming each field it found wrong. */
export const invalidBody = (check: Validator): AppError =>
  validationFailed('the request body is invalid', toFieldErrors(check.errors));

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** ajv errors as JSON Pointers into the request, one message per pointer. */
export function toFieldErrors(errors: ErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    let pointer = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      pointer += `/${escapePointer(String((e.params as { missingProperty: string }).missingProperty))}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      pointer += `/${escapePointer(String((e.params as { additionalProperty: string }).additionalProperty))}`;
      message = 'is not an allowed field';
    } else if (e.keyword === 'propertyNames') {
      const name = (e.params as { propertyName?: string }).propertyName;
      if (name !== undefined) pointer += `/${escapePointer(name)}`;
      message = 'is not an allowed key';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      message = 'does not match any allowed form';
    } else if (e.keyword === 'format' && (e.params as { format?: string }).format === 'date-time') {
      message = 'must be an RFC 3339 timestamp naming a real instant';
    }
    const full = `${prefix}${pointer}`;
    const key = `${full}\u0000${message}`;
    if (e.keyword === 'propertyNames' && e.instancePath === pointer) continue;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer: full, message });
    if (out.length >= MAX_REPORTED_ERRORS) break;
  }
  return collapseUnionNoise(out);
}

/**
 * A union mismatch produces one error per branch plus a summary at the same place; when a more
 * specific error exists below or at a pointer, the branch noise is dropped to keep messages clear.
 */
function collapseUnionNoise(errors: FieldError[]): FieldError[] {
  const summaries = new Set(
    errors.filter((e) => e.message === 'does not match any allowed form').map((e) => e.pointer),
  );
  if (summaries.size === 0) return errors;
  return errors.filter((e) => e.message === 'does not match any allowed form' || !summaries.has(e.pointer));
}
