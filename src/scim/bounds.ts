import { FREE_FORM_BOUNDS, freeFormViolation, RESERVED_KEYS } from '../schemas/free-form.js';
import { invalidValue, ScimError } from './errors.js';
import type { ScimFilter } from './filter.js';

/**
 * The bounds of what a SCIM client may send (docs/scim.md, "Limits"): the names a resource is
 * known by are short, a group's members are counted, and every other value follows the free-form
 * bounds of the rest of the API (src/schemas/free-form.ts), reported with a JSON Pointer.
 */

/** Longest `userName`, `externalId` and `displayName` (of users and groups). */
export const MAX_NAME_LENGTH = 256;
/** Attributes whose values are names, bounded by {@link MAX_NAME_LENGTH}. */
export const NAME_ATTRIBUTES = ['userName', 'externalId', 'displayName'] as const;
/** Most members a group may have through SCIM, and so name in one request. */
export const MAX_MEMBERS = 10_000;
/** Most attributes of one resource (its own keys; an extension counts as one). */
export const MAX_ATTRIBUTES = FREE_FORM_BOUNDS.maxEntries;

const CORE_URN = /^urn:ietf:params:scim:schemas:core:2\.0:(user|group)$/i;
const reserved: ReadonlySet<string> = new Set(RESERVED_KEYS);
const thousands = (n: number): string => n.toLocaleString('en-US');

/** A JSON Pointer segment (RFC 6901). */
export function segment(key: string | number): string {
  const text = String(key);
  if (!text.includes('~') && !text.includes('/')) return `/${text}`;
  return `/${text.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/** The error naming the place at fault, e.g. `/customThing/a is longer than 4,096 characters`. */
export const outOfBounds = (pointer: string, message: string): ScimError =>
  invalidValue(`${pointer === '' ? 'the resource' : pointer} ${message}`);

/** An attribute name a client chose: not too long, and not one that names a prototype. */
export function checkKey(key: string, pointer: string): void {
  if (reserved.has(key)) throw outOfBounds(pointer, 'is a reserved key');
  if (key.length > FREE_FORM_BOUNDS.maxLength)
    throw outOfBounds(pointer, `is a key longer than ${thousands(FREE_FORM_BOUNDS.maxLength)} characters`);
}

/** A value whose shape the schema leaves open: the free-form bounds, the value itself at level 1. */
export function checkValue(value: unknown, pointer: string): void {
  const violation = freeFormViolation(value, FREE_FORM_BOUNDS);
  if (violation) throw outOfBounds(`${pointer}${violation.pointer}`, violation.message);
}

/** A list whose elements are counted on their own (a group's members), each a free-form value. */
export function checkList(value: unknown, pointer: string, max: number): void {
  if (!Array.isArray(value)) return checkValue(value, pointer);
  if (value.length > max) throw outOfBounds(pointer, `has more than ${thousands(max)} elements`);
  value.forEach((element, i) => checkValue(element, `${pointer}${segment(i)}`));
}

/** A name (`userName`, `externalId`, `displayName`) of at most {@link MAX_NAME_LENGTH} characters. */
export function checkName(value: unknown, name: string): void {
  if (typeof value === 'string' && value.length > MAX_NAME_LENGTH)
    throw outOfBounds(segment(name), `is longer than ${MAX_NAME_LENGTH} characters`);
}

/**
 * Filters on a name compared with a value no name can hold are refused rather than run: such a
 * value can match nothing, and the indexes are not asked about it.
 */
export function checkFilter(filter: ScimFilter): void {
  const names = new Set(NAME_ATTRIBUTES.map((n) => n.toLowerCase()));
  const stack: ScimFilter[] = [filter];
  while (stack.length > 0) {
    const f = stack.pop()!;
    switch (f.kind) {
      case 'compare':
        if (
          f.path.sub === undefined &&
          (f.path.uri === undefined || CORE_URN.test(f.path.uri)) &&
          names.has(f.path.attribute.toLowerCase()) &&
          typeof f.value === 'string' &&
          f.value.length > MAX_NAME_LENGTH
        ) {
          throw new ScimError(
            400,
            'invalidFilter',
            `${f.path.attribute} is compared with a value longer than ${MAX_NAME_LENGTH} characters, which no ${f.path.attribute} can hold`,
          );
        }
        break;
      case 'and':
      case 'or':
        stack.push(...f.of);
        break;
      case 'not':
        stack.push(f.of);
        break;
      default:
        // A value path's filter names sub-attributes, none of which is a name.
        break;
    }
  }
}
