import type { TSchema } from '@sinclair/typebox';
import type { Ajv, SchemaValidateFunction } from 'ajv';

/**
 * Bounds on JSON whose shape a schema leaves open (a decision's context, attributes, metadata,
 * AuthZEN properties, report parameters, policy conditions). JSON Schema can bound each level
 * but not a whole value, and ajv never looks below an open value, so one keyword walks it: without
 * recursion, so that a value nested 100,000 levels deep is refused instead of overflowing the
 * stack of whatever reads it next (serialisation, cloning, comparison).
 */

export const FREE_FORM_KEYWORD = 'x-free-form';

/** Keys that name the prototype machinery of a JavaScript object rather than data. */
export const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

export interface FreeFormBounds {
  /** Levels of nesting: the value itself, an object or array, is level 1. */
  maxDepth: number;
  /** Keys of every object and elements of every array, counted across the whole value. */
  maxEntries: number;
  /** Characters of any string, keys included. */
  maxLength: number;
  reservedKeys: readonly string[];
  /**
   * The keys of the value itself and its `$ref` operands are dotted paths (policy conditions):
   * no segment of them may be a reserved key either.
   */
  paths?: boolean;
}

export const FREE_FORM_BOUNDS: FreeFormBounds = {
  maxDepth: 16,
  maxEntries: 1000,
  maxLength: 4096,
  reservedKeys: RESERVED_KEYS,
};

/** What is wrong with a value, and where: `pointer` is a JSON Pointer relative to the value. */
export interface FreeFormViolation {
  pointer: string;
  message: string;
}

interface Node {
  value: unknown;
  depth: number;
  parent: Node | undefined;
  segment: string;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Pointers are built only for the one place reported, from the parent links. */
function pointerOf(node: Node, key?: string): string {
  const segments = key === undefined ? [] : [key];
  for (let n: Node | undefined = node; n?.parent; n = n.parent) segments.push(n.segment);
  let pointer = '';
  for (let i = segments.length - 1; i >= 0; i -= 1) pointer += `/${escapePointer(segments[i]!)}`;
  return pointer;
}

const thousands = (n: number): string => n.toLocaleString('en-US');

/** The reserved keys of each set of bounds, as a set, made once. */
const reservedSets = new WeakMap<FreeFormBounds, ReadonlySet<string>>();

function reservedSetOf(bounds: FreeFormBounds): ReadonlySet<string> {
  let set = reservedSets.get(bounds);
  if (!set) {
    set = new Set(bounds.reservedKeys);
    reservedSets.set(bounds, set);
  }
  return set;
}

/**
 * The first place where `value` breaks `bounds`, or undefined. The walk stops as soon as it has
 * seen more entries than allowed or reaches a level too deep, so its cost is bounded by the bounds,
 * not by the value.
 */
export function freeFormViolation(value: unknown, bounds: FreeFormBounds): FreeFormViolation | undefined {
  const { maxDepth, maxEntries, maxLength } = bounds;
  // Most values checked are scalars: they need no walk.
  if (typeof value === 'string') {
    return value.length > maxLength
      ? { pointer: '', message: `is longer than ${thousands(maxLength)} characters` }
      : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const reserved = reservedSetOf(bounds);
  const reservedIn = (path: string): string | undefined =>
    reserved.size === 0 ? undefined : path.split('.').find((segment) => reserved.has(segment));
  let entries = 0;
  const tooMany = (): FreeFormViolation => ({
    pointer: '',
    message: `has more than ${thousands(maxEntries)} keys and elements in all`,
  });
  const stack: Node[] = [{ value, depth: 1, parent: undefined, segment: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const current = node.value;
    if (typeof current === 'string') {
      if (current.length > maxLength)
        return { pointer: pointerOf(node), message: `is longer than ${thousands(maxLength)} characters` };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (node.depth > maxDepth)
      return { pointer: pointerOf(node), message: `is nested more than ${maxDepth} levels deep` };
    if (Array.isArray(current)) {
      entries += current.length;
      if (entries > maxEntries) return tooMany();
      for (let i = current.length - 1; i >= 0; i -= 1) {
        stack.push({ value: current[i] as unknown, depth: node.depth + 1, parent: node, segment: String(i) });
      }
      continue;
    }
    const record = current as Record<string, unknown>;
    const keys = Object.keys(record);
    entries += keys.length;
    if (entries > maxEntries) return tooMany();
    for (const key of keys) {
      if (key.length > maxLength)
        return {
          pointer: pointerOf(node, key),
          message: `is a key longer than ${thousands(maxLength)} characters`,
        };
      if (reserved.has(key)) return { pointer: pointerOf(node, key), message: 'is a reserved key' };
      if (bounds.paths && node.parent === undefined) {
        const named = reservedIn(key);
        if (named !== undefined)
          return { pointer: pointerOf(node, key), message: `names the reserved key ${named}` };
      }
      const operand = record[key];
      if (bounds.paths && key === '$ref' && typeof operand === 'string') {
        const named = reservedIn(operand);
        if (named !== undefined)
          return { pointer: pointerOf(node, key), message: `names the reserved key ${named}` };
      }
    }
    for (let i = keys.length - 1; i >= 0; i -= 1) {
      const key = keys[i]!;
      stack.push({ value: record[key], depth: node.depth + 1, parent: node, segment: key });
    }
  }
  return undefined;
}

const DESCRIPTION =
  'Bounded: at most 16 levels of nesting (the value itself is level 1), 1,000 keys and elements in all, strings (keys included) of at most 4,096 characters; the keys `__proto__`, `constructor` and `prototype` are refused.';
const PATHS_DESCRIPTION = 'No path segment and no `$ref` operand may name those keys either.';

/**
 * An open schema with the free-form bounds: the keyword carries them into the OpenAPI document
 * (for machines) and the description says them (for people).
 */
export function FreeForm<T extends TSchema>(schema: T, options: { paths?: true } = {}): T {
  const own = schema.description?.trim();
  const description = [
    own && !/[.!?]$/.test(own) ? `${own}.` : own,
    DESCRIPTION,
    options.paths ? PATHS_DESCRIPTION : undefined,
  ]
    .filter((part) => part !== undefined && part !== '')
    .join(' ');
  const bounds: FreeFormBounds = { ...FREE_FORM_BOUNDS, ...(options.paths ? { paths: true } : {}) };
  return { ...schema, description, [FREE_FORM_KEYWORD]: bounds };
}

/** Makes `ajv` check the keyword, reporting the offending place as a pointer into the request. */
export function addFreeFormKeyword(ajv: Ajv): void {
  const validate: SchemaValidateFunction = (bounds: FreeFormBounds, data: unknown, _parent, context) => {
    const violation = freeFormViolation(data, bounds);
    if (violation === undefined) return true;
    validate.errors = [
      {
        keyword: FREE_FORM_KEYWORD,
        instancePath: `${context?.instancePath ?? ''}${violation.pointer}`,
        message: violation.message,
        params: {},
      },
    ];
    return false;
  };
  ajv.addKeyword({
    keyword: FREE_FORM_KEYWORD,
    schemaType: 'object',
    errors: true,
    validate,
    metaSchema: {
      type: 'object',
      properties: {
        maxDepth: { type: 'integer', minimum: 1 },
        maxEntries: { type: 'integer', minimum: 0 },
        maxLength: { type: 'integer', minimum: 0 },
        reservedKeys: { type: 'array', items: { type: 'string' } },
        paths: { type: 'boolean' },
      },
      required: ['maxDepth', 'maxEntries', 'maxLength', 'reservedKeys'],
      additionalProperties: false,
    },
  });
}
