import type { TSchema } from '@sinclair/typebox';
import type { FieldError } from '../errors/errors.js';

const INTEGER = /^(?:0|-?[1-9][0-9]*)$/;

type Kind = 'integer' | 'number' | 'boolean' | 'string';

function kindOf(schema: TSchema): Kind {
  const type = (schema as { type?: unknown }).type;
  if (type === 'integer' || type === 'number' || type === 'boolean') return type;
  return 'string';
}

/**
 * Query parameters as typed values, read strictly: an integer is written in plain decimal digits
 * (not `0x10`, `1e1`, `+2`, ` 2` or `007`), a boolean is `true` or `false`, and each parameter
 * comes once. Parameters the operation does not declare are ignored. The schema then validates
 * the typed values (ranges, enums, patterns) without any further coercion.
 */
export function readQuery(
  schema: TSchema,
  raw: Record<string, string | string[] | undefined>,
): { values: Record<string, unknown>; errors: FieldError[] } {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  const values: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const value = raw[name];
    if (value === undefined) continue;
    const pointer = `/query/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (Array.isArray(value)) {
      errors.push({ pointer, message: 'must be given once' });
      continue;
    }
    switch (kindOf(property)) {
      case 'integer':
        if (INTEGER.test(value)) values[name] = Number(value);
        else errors.push({ pointer, message: 'must be an integer in decimal digits' });
        break;
      case 'number': {
        const n = Number(value);
        if (/^-?[0-9]+(?:\.[0-9]+)?$/.test(value) && Number.isFinite(n)) values[name] = n;
        else errors.push({ pointer, message: 'must be a decimal number' });
        break;
      }
      case 'boolean':
        if (value === 'true' || value === 'false') values[name] = value === 'true';
        else errors.push({ pointer, message: 'must be true or false' });
        break;
      default:
        values[name] = value;
    }
  }
  return { values, errors };
}
