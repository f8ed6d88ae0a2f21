import { invalidValue } from './errors.js';
import { findAttribute, type AttributeDef } from './schema.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type ScimObject = { [key: string]: Json };

/** Members a client may send that the service provider owns: never kept from a request. */
const SERVER_OWNED = new Set(['id', 'meta', 'schemas']);

export const isObject = (value: unknown): value is ScimObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `"True"`, `"false"` (any case) as the booleans Entra means by them. */
export function booleanOf(value: unknown, path: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue(`${path} must be a boolean`);
}

/**
 * A resource as a client sent it, read leniently: attribute names the schema knows take their
 * canonical spelling whatever case they came in (sub-attributes too), an extension's URN
 * likewise, booleans written as strings become booleans, and what the server owns (`id`, `meta`,
 * `schemas`) or never keeps (write-only attributes such as `password`, read-only ones such as a
 * user's `groups`) is dropped. Attributes the schema does not know are kept as sent.
 */
export function readResource(
  body: unknown,
  core: readonly AttributeDef[],
  extensions: Record<string, readonly AttributeDef[]>,
): ScimObject {
  if (!isObject(body)) throw invalidValue('the resource must be a JSON object');
  const out: ScimObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (SERVER_OWNED.has(key.toLowerCase())) continue;
    const urn = Object.keys(extensions).find((u) => u.toLowerCase() === key.toLowerCase());
    if (urn) {
      if (value === null) continue;
      if (!isObject(value)) throw invalidValue(`${urn} must be an object`);
      const inner = readMembers(value, extensions[urn]!, urn);
      if (Object.keys(inner).length > 0) out[urn] = inner;
      continue;
    }
    Object.assign(out, readMembers({ [key]: value }, core, ''));
  }
  return out;
}

function readMembers(source: ScimObject, defs: readonly AttributeDef[], prefix: string): ScimObject {
  const out: ScimObject = {};
  for (const [key, value] of Object.entries(source)) {
    const def = findAttribute(defs, key);
    if (def && (def.mutability === 'readOnly' || def.mutability === 'writeOnly')) continue;
    const name = def?.name ?? key;
    const path = prefix ? `${prefix}:${name}` : name;
    if (value === null) continue;
    out[name] = def ? readValue(value, def, path) : value;
  }
  return out;
}

function readValue(value: Json, def: AttributeDef, path: string): Json {
  if (def.multiValued) {
    const items = Array.isArray(value) ? value : [value];
    return items.map((item, i) => readSingle(item, def, `${path}[${i}]`));
  }
  if (Array.isArray(value)) {
    // A one-element array where a single value belongs (some clients wrap values).
    if (value.length === 1) return readSingle(value[0]!, def, path);
    throw invalidValue(`${path} takes a single value`);
  }
  return readSingle(value, def, path);
}

function readSingle(value: Json, def: AttributeDef, path: string): Json {
  switch (def.type) {
    case 'boolean':
      return booleanOf(value, path) ?? null;
    case 'complex': {
      if (!isObject(value)) throw invalidValue(`${path} must be an object`);
      const out: ScimObject = {};
      for (const [key, inner] of Object.entries(value)) {
        if (inner === null) continue;
        const sub = findAttribute(def.subAttributes ?? [], key);
        out[sub?.name ?? key] = sub ? readSingle(inner, sub, `${path}.${sub.name}`) : inner;
      }
      return out;
    }
    case 'string':
    case 'reference':
    case 'binary':
    case 'dateTime':
      if (typeof value !== 'string') throw invalidValue(`${path} must be a string`);
      return value;
    default:
      return value;
  }
}

/** Case-insensitive member lookup. */
export function member(resource: ScimObject | undefined, name: string): Json | undefined {
  if (!resource) return undefined;
  if (name in resource) return resource[name];
  const key = name.toLowerCase();
  for (const [k, v] of Object.entries(resource)) if (k.toLowerCase() === key) return v;
  return undefined;
}

export const text = (value: Json | undefined): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;
