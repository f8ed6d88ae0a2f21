import { FREE_FORM_BOUNDS } from '../schemas/free-form.js';
import {
  checkKey,
  checkList,
  checkName,
  checkValue,
  MAX_ATTRIBUTES,
  outOfBounds,
  segment,
} from './bounds.js';
import { invalidValue } from './errors.js';
import { keyOf, sameName } from './names.js';
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

/** How a resource type is read. */
export interface ReadOptions {
  /**
   * The resource type's core schema URN: an attribute qualified with it
   * (`urn:ietf:params:scim:schemas:core:2.0:User:password`), or sent inside an object keyed by it,
   * is the core attribute it names.
   */
  schema: string;
  /**
   * A multi-valued attribute of references (a group's `members`), held apart from the resource:
   * at most `max` elements, each bounded on its own, instead of the whole being one free-form value.
   */
  references?: { name: string; max: number };
  /** Attributes whose values are names (`userName`): at most 256 characters (src/scim/bounds.ts). */
  names?: readonly string[];
}

/** What is never kept from a client: write-only attributes and those never returned (`password`). */
const neverKept = (def: AttributeDef): boolean =>
  def.mutability === 'readOnly' || def.mutability === 'writeOnly' || def.returned === 'never';

/**
 * A resource as a client sent it, read leniently, as it is then stored and audited: every write
 * (create, replace, the result of a PATCH, a line of a sync snapshot) goes through here.
 *
 * Attribute names the schema knows take their canonical spelling whatever case they came in
 * (sub-attributes too), whether plain, qualified with the core schema URN or inside an object
 * keyed by it; an extension's URN likewise; booleans written as strings become booleans. What the
 * server owns (`id`, `meta`, `schemas`), what is never kept (write-only or never-returned
 * attributes such as `password`, however spelled) and what is read-only (a user's `groups`) is
 * dropped. Attributes the schema does not know are kept as sent.
 *
 * What is kept is bounded (src/scim/bounds.ts): attribute names are neither reserved nor too long,
 * a resource has at most 1,000 attributes, names (`options.names`) at most 256 characters, each
 * attribute's value (an extension as a whole) follows the free-form bounds, and the references of
 * `options.references` are counted. Beyond, 400 `invalidValue` with a pointer to the value.
 */
export function readResource(
  body: unknown,
  core: readonly AttributeDef[],
  extensions: Readonly<Record<string, readonly AttributeDef[]>>,
  options: ReadOptions,
): ScimObject {
  if (!isObject(body)) throw invalidValue('the resource must be a JSON object');
  const coreUrn = options.schema.toLowerCase();
  const out: ScimObject = {};

  const read = (key: string, value: Json, pointer: string, depth: number): void => {
    checkKey(key, pointer);
    const lower = key.toLowerCase();
    if (lower.startsWith(`${coreUrn}:`)) {
      read(key.slice(coreUrn.length + 1), value, pointer, depth);
      return;
    }
    if (sameName(key, options.schema)) {
      if (value === null) return;
      if (!isObject(value)) throw invalidValue(`${options.schema} must be an object`);
      if (depth >= FREE_FORM_BOUNDS.maxDepth)
        throw outOfBounds(pointer, `is nested more than ${FREE_FORM_BOUNDS.maxDepth} levels deep`);
      for (const [k, v] of Object.entries(value)) read(k, v, `${pointer}${segment(k)}`, depth + 1);
      return;
    }
    if (SERVER_OWNED.has(lower)) return;
    const urn = keyOf(extensions, key);
    if (urn) {
      if (value === null) return;
      if (!isObject(value)) throw invalidValue(`${urn} must be an object`);
      const held = out[urn];
      const inner = {
        ...(isObject(held) ? held : {}),
        ...readMembers(value, extensions[urn]!, urn, pointer),
      };
      if (Object.keys(inner).length > 0) out[urn] = inner;
      return;
    }
    // `password.value` and the like name a part of an attribute that is never kept.
    const whole = findAttribute(core, key.split('.')[0]!);
    if (whole && neverKept(whole)) return;
    const kept = readMember(key, value, core, '', pointer);
    if (kept) out[kept[0]] = kept[1];
  };
  for (const [key, value] of Object.entries(body)) read(key, value, segment(key), 1);

  const keys = Object.keys(out);
  if (keys.length > MAX_ATTRIBUTES)
    throw outOfBounds('', `has more than ${MAX_ATTRIBUTES.toLocaleString('en-US')} attributes`);
  const references = options.references;
  for (const key of keys) {
    if (options.names?.some((n) => sameName(n, key))) checkName(out[key], key);
    if (references && sameName(key, references.name)) checkList(out[key], segment(key), references.max);
    else checkValue(out[key], segment(key));
  }
  return out;
}

/**
 * A stored resource without the attributes that are never returned, however they are spelled: a
 * resource stored before it was read as {@link readResource} reads it may hold one.
 */
export function withoutNeverReturned(
  stored: ScimObject,
  core: readonly AttributeDef[],
  schema: string,
  depth = 1,
): ScimObject {
  const coreUrn = schema.toLowerCase();
  const out: ScimObject = {};
  for (const [key, value] of Object.entries(stored)) {
    const lower = key.toLowerCase();
    if (lower === coreUrn && isObject(value)) {
      if (depth >= FREE_FORM_BOUNDS.maxDepth) continue;
      const inner = withoutNeverReturned(value, core, schema, depth + 1);
      if (Object.keys(inner).length > 0) out[key] = inner;
      continue;
    }
    const name = lower.startsWith(`${coreUrn}:`) ? key.slice(coreUrn.length + 1) : key;
    const def = findAttribute(core, name.split('.')[0]!);
    if (def && (def.mutability === 'writeOnly' || def.returned === 'never')) continue;
    out[key] = value;
  }
  return out;
}

/** The members of `source` read against `defs`; `pointer` locates `source` in the request. */
function readMembers(
  source: ScimObject,
  defs: readonly AttributeDef[],
  prefix: string,
  pointer: string,
): ScimObject {
  const out: ScimObject = {};
  for (const [key, value] of Object.entries(source)) {
    const read = readMember(key, value, defs, prefix, `${pointer}${segment(key)}`);
    if (read) out[read[0]] = read[1];
  }
  return out;
}

/** One member as kept: its canonical name and value, or nothing when it is not kept. */
function readMember(
  key: string,
  value: Json,
  defs: readonly AttributeDef[],
  prefix: string,
  pointer: string,
): [string, Json] | undefined {
  checkKey(key, pointer);
  const def = findAttribute(defs, key);
  if (def && neverKept(def)) return undefined;
  if (value === null) return undefined;
  if (!def) return [key, value];
  return [def.name, readValue(value, def, prefix ? `${prefix}:${def.name}` : def.name, pointer)];
}

function readValue(value: Json, def: AttributeDef, path: string, pointer: string): Json {
  if (def.multiValued) {
    if (!Array.isArray(value)) return [readSingle(value, def, `${path}[0]`, pointer)];
    return value.map((item, i) => readSingle(item, def, `${path}[${i}]`, `${pointer}${segment(i)}`));
  }
  if (Array.isArray(value)) {
    // A one-element array where a single value belongs (some clients wrap values).
    if (value.length === 1) return readSingle(value[0]!, def, path, `${pointer}/0`);
    throw invalidValue(`${path} takes a single value`);
  }
  return readSingle(value, def, path, pointer);
}

function readSingle(value: Json, def: AttributeDef, path: string, pointer: string): Json {
  switch (def.type) {
    case 'boolean':
      return booleanOf(value, path) ?? null;
    case 'complex': {
      if (!isObject(value)) throw invalidValue(`${path} must be an object`);
      const out: ScimObject = {};
      for (const [key, inner] of Object.entries(value)) {
        const at = `${pointer}${segment(key)}`;
        checkKey(key, at);
        if (inner === null) continue;
        const sub = findAttribute(def.subAttributes ?? [], key);
        if (sub && (sub.mutability === 'writeOnly' || sub.returned === 'never')) continue;
        out[sub?.name ?? key] = sub ? readSingle(inner, sub, `${path}.${sub.name}`, at) : inner;
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

export const text = (value: Json | undefined): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;
