/**
 * SCIM 2.0 PATCH (RFC 7644 §3.5.2) applied to a resource held as plain JSON. The input is never
 * mutated: operations run on a copy, which is returned with a flag telling whether anything changed.
 *
 * Besides the RFC, the shapes identity providers are known to send are accepted: capitalised `op`
 * values, path-less values whose keys are themselves paths (`name.givenName`, URN-prefixed keys),
 * booleans sent as strings for `active`, a single element where an array is expected, a manager
 * sent as a bare id, and removal of selected members through a `value` array.
 */
import {
  FREE_FORM_BOUNDS,
  freeFormViolation,
  RESERVED_KEYS,
  type FreeFormBounds,
} from '../schemas/free-form.js';
import { ScimError } from './errors.js';
import { keyOf, memberOf, sameName } from './names.js';
import { ENTERPRISE_SCHEMA, findAttribute, type ResourceSchema } from './schema.js';
import {
  evaluateFilter,
  parsePatchPath,
  ScimSyntaxError,
  type PatchPath,
  type ScimFilter,
} from './filter.js';

export type ScimPatchErrorType = 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidSyntax' | 'mutability';

/** A PATCH that cannot be applied; the SCIM edge answers 400 with `scimType`. */
export class ScimPatchError extends Error {
  readonly scimType: ScimPatchErrorType;

  constructor(scimType: ScimPatchErrorType, message: string) {
    super(message);
    this.name = 'ScimPatchError';
    this.scimType = scimType;
  }
}

export interface PatchOptions {
  /** The resource type's core schema URN, e.g. `urn:ietf:params:scim:schemas:core:2.0:User`. */
  readonly coreSchema: string;
  /** Extension schema URNs whose attributes live in an object keyed by the URN. */
  readonly extensionSchemas: readonly string[];
  /**
   * Whether an attribute is multi-valued, given its lower-cased name (for extension attributes, the
   * name inside the extension). An attribute currently holding an array is multi-valued regardless.
   */
  readonly multiValued: (attribute: string) => boolean;
  /** Lower-cased core attribute names the client may not change; `id` and `meta` always are. */
  readonly readOnly?: (attribute: string) => boolean;
}

export interface PatchResult {
  readonly resource: Record<string, unknown>;
  /** False when the patched resource deep-equals the input. */
  readonly changed: boolean;
}

/** Most operations accepted in one PATCH request. */
export const MAX_PATCH_OPERATIONS = 1000;

type JsonObject = Record<string, unknown>;
type Op = 'add' | 'replace' | 'remove';

/** Where an attribute lives: the resource itself, or an extension object keyed by its URN. */
type Scope = { readonly kind: 'core' } | { readonly kind: 'extension'; readonly urn: string };

interface Context {
  readonly root: JsonObject;
  readonly options: PatchOptions;
}

/**
 * What an operation's value may hold before it is applied. The resource a PATCH leads to is
 * bounded like any other before it is kept (src/scim/resource.ts), but a value is walked while it
 * is applied, so its nesting, strings and keys are bounded first. An attribute's value sits at
 * most two levels below an operation's value (in a path-less value object, and there in an object
 * keyed by the core schema URN).
 */
const VALUE_BOUNDS: FreeFormBounds = {
  maxDepth: FREE_FORM_BOUNDS.maxDepth + 2,
  maxEntries: Infinity,
  maxLength: FREE_FORM_BOUNDS.maxLength,
  reservedKeys: RESERVED_KEYS,
};
const RESERVED: ReadonlySet<string> = new Set(RESERVED_KEYS);

const CORE: Scope = { kind: 'core' };
const ALWAYS_READ_ONLY: ReadonlySet<string> = new Set(['id', 'meta']);

function fail(scimType: ScimPatchErrorType, message: string): never {
  throw new ScimPatchError(scimType, message);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Exact structural equality of JSON values; object key order does not matter. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** SCIM equality: attribute names ignore case, strings ignore case when `foldStrings` is set. */
function scimEqual(a: unknown, b: unknown, foldStrings: boolean): boolean {
  if (a === b) return true;
  if (typeof a === 'string' && typeof b === 'string')
    return foldStrings && a.toLowerCase() === b.toLowerCase();
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => scimEqual(x, b[i], foldStrings));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && contains(b, a);
  }
  return false;
}

/**
 * Whether `existing` already holds everything in `item`: every member of `item` is present in
 * `existing` with an equal value (the `value` sub-attribute compared ignoring case). Two equal
 * elements contain each other; `{value: "x"}` is also found in `{value: "x", display: "X"}`.
 */
function contains(existing: unknown, item: unknown): boolean {
  if (!isObject(existing) || !isObject(item)) return scimEqual(existing, item, true);
  return Object.entries(item).every(([k, v]) => {
    const key = keyOf(existing, k);
    return key !== undefined && scimEqual(existing[key], v, sameName(k, 'value'));
  });
}

/**
 * A copy of a client-supplied value: `active` sent as `"True"`/`"false"` becomes a boolean, at any
 * depth. Keys that would reach an object's prototype are refused.
 */
function normalise(name: string, value: unknown): unknown {
  if (typeof value === 'string' && sameName(name, 'active')) {
    const lower = value.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => normalise(name, v));
  if (isObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '__proto__') fail('invalidValue', 'The attribute name "__proto__" is not allowed');
      out[k] = normalise(k, v);
    }
    return out;
  }
  return value;
}

/** A value for a sub-attribute, which RFC 7643 §2.3.8 keeps single-valued and simple. */
function normaliseSub(attribute: string, sub: string, value: unknown): unknown {
  const v = normalise(sub, value);
  if (Array.isArray(v) || isObject(v)) {
    fail(
      'invalidValue',
      `"${attribute}.${sub}" takes a single simple value, not ${Array.isArray(v) ? 'an array' : 'an object'}`,
    );
  }
  return v;
}

function pathText(path: PatchPath): string {
  return path.sub === undefined ? path.attribute : `${path.attribute}.${path.sub}`;
}

/**
 * Lazy access to the object a scope's attributes live in: `get` never creates anything; `ensure`
 * creates a missing extension object (and lists its URN in `schemas`) when something is written.
 */
class Holder {
  constructor(
    private readonly ctx: Context,
    private readonly scope: Scope,
  ) {}

  get(): JsonObject | undefined {
    if (this.scope.kind === 'core') return this.ctx.root;
    const existing = memberOf(this.ctx.root, this.scope.urn);
    if (existing === undefined || existing === null) return undefined;
    if (!isObject(existing))
      return fail('invalidValue', `The resource holds no object under "${this.scope.urn}"`);
    return existing;
  }

  ensure(): JsonObject {
    const existing = this.get();
    if (existing !== undefined) return existing;
    if (this.scope.kind === 'core') return this.ctx.root;
    const urn = this.scope.urn;
    const created: JsonObject = {};
    this.ctx.root[keyOf(this.ctx.root, urn) ?? urn] = created;
    const schemas = memberOf(this.ctx.root, 'schemas');
    if (Array.isArray(schemas) && !schemas.some((s) => typeof s === 'string' && sameName(s, urn))) {
      schemas.push(urn);
    }
    return created;
  }

  /** Drops an extension object left empty, and its URN from `schemas`. */
  tidy(): void {
    if (this.scope.kind === 'core') return;
    const key = keyOf(this.ctx.root, this.scope.urn);
    if (key === undefined) return;
    const ext = this.ctx.root[key];
    if (isObject(ext) && Object.keys(ext).length > 0) return;
    removeExtension(this.ctx.root, this.scope.urn);
  }
}

function removeExtension(root: JsonObject, urn: string): void {
  const key = keyOf(root, urn);
  if (key !== undefined) delete root[key];
  const schemasKey = keyOf(root, 'schemas');
  const schemas = schemasKey === undefined ? undefined : root[schemasKey];
  if (schemasKey !== undefined && Array.isArray(schemas)) {
    root[schemasKey] = schemas.filter((s) => !(typeof s === 'string' && sameName(s, urn)));
  }
}

/** The scope a schema URN names, or undefined when it names none of the resource's schemas. */
function schemaScope(options: PatchOptions, uri: string): Scope | undefined {
  if (sameName(uri, options.coreSchema)) return CORE;
  const urn = options.extensionSchemas.find((s) => sameName(s, uri));
  return urn === undefined ? undefined : { kind: 'extension', urn };
}

function parsePath(text: string): PatchPath {
  try {
    return parsePatchPath(text);
  } catch (error) {
    if (error instanceof ScimSyntaxError) return fail('invalidPath', error.message);
    throw error;
  }
}

function matches(filter: ScimFilter, element: unknown, path: PatchPath): boolean {
  if (!isObject(element)) return false;
  try {
    return evaluateFilter(filter, element);
  } catch (error) {
    if (error instanceof ScimSyntaxError)
      return fail('invalidPath', `"${path.attribute}[…]": ${error.message}`);
    throw error;
  }
}

/**
 * RFC 7644 §3.5.2: a value whose `primary` is set to true by this operation makes every other
 * element of the attribute non-primary. The last written primary element wins.
 */
function keepOnePrimary(elements: readonly unknown[], written: readonly unknown[]): void {
  const isPrimary = (e: unknown): e is JsonObject => isObject(e) && memberOf(e, 'primary') === true;
  const winner = written.filter(isPrimary).at(-1);
  if (winner === undefined) return;
  for (const e of elements) {
    if (e !== winner && isPrimary(e)) e[keyOf(e, 'primary')!] = false;
  }
}

function setMember(obj: JsonObject, name: string, value: unknown): void {
  const key = keyOf(obj, name) ?? name;
  if (value === null) delete obj[key];
  else obj[key] = value;
}

function deleteMember(obj: JsonObject, name: string): void {
  const key = keyOf(obj, name);
  if (key !== undefined) delete obj[key];
}

/** Sub-attributes of `source` written over those of `target`; null unassigns. */
function merge(target: JsonObject, source: JsonObject): void {
  for (const [k, v] of Object.entries(source)) setMember(target, k, v);
}

/** Most comparisons one `add` may make to find the elements it already holds. */
const MAX_COMPARISONS = 1_000_000;

/**
 * The elements of a multi-valued attribute, for an `add` to find those it holds already
 * ({@link contains}) without comparing each new element with every one: an element holding
 * another has the same `value` ignoring case (or is the same string), so only those are compared.
 * A group's thousands of members are added in linear time; elements that share a value, which
 * are compared with one another, may not add up to more than {@link MAX_COMPARISONS} comparisons.
 */
class Elements {
  private readonly byValue = new Map<string, unknown[]>();
  private readonly all: unknown[] = [];
  private comparisons = 0;

  constructor(elements: readonly unknown[]) {
    for (const element of elements) this.add(element);
  }

  private static keyOf(element: unknown): string | undefined {
    const value = isObject(element) ? memberOf(element, 'value') : element;
    return typeof value === 'string' ? value.toLowerCase() : undefined;
  }

  add(element: unknown): void {
    this.all.push(element);
    const key = Elements.keyOf(element);
    if (key === undefined) return;
    const same = this.byValue.get(key);
    if (same) same.push(element);
    else this.byValue.set(key, [element]);
  }

  contains(item: unknown): boolean {
    const key = Elements.keyOf(item);
    const candidates = key === undefined ? this.all : (this.byValue.get(key) ?? []);
    this.comparisons += candidates.length;
    if (this.comparisons > MAX_COMPARISONS)
      fail('invalidValue', 'the value holds too many elements alike to compare them with one another');
    return candidates.some((e) => contains(e, item));
  }
}

/** Elements of `elements` that a remove's `value` does not select. */
function withoutValues(elements: readonly unknown[], value: unknown): unknown[] {
  const selectors = Array.isArray(value) ? value : [value];
  const selected = (element: unknown): boolean =>
    selectors.some((selector) => {
      if (isObject(selector)) {
        const key = keyOf(selector, 'value');
        if (key === undefined) return scimEqual(element, selector, false);
        const id = selector[key];
        return isObject(element) ? jsonEqual(memberOf(element, 'value'), id) : jsonEqual(element, id);
      }
      return isObject(element)
        ? jsonEqual(memberOf(element, 'value'), selector)
        : jsonEqual(element, selector);
    });
  return elements.filter((e) => !selected(e));
}

/**
 * Applies one operation to the attribute `path` names within `scope`. `fromValue` marks a member
 * of a path-less value, where `id` and `meta` are skipped instead of refused.
 */
function applyAtPath(
  ctx: Context,
  op: Op,
  scope: Scope,
  path: PatchPath,
  value: unknown,
  fromValue: boolean,
): void {
  const reserved = [path.attribute, path.sub].find((name) => name !== undefined && RESERVED.has(name));
  if (reserved !== undefined) fail('invalidValue', `"${pathText(path)}" names the reserved key ${reserved}`);
  const lower = path.attribute.toLowerCase();
  if (scope.kind === 'core') {
    if (ALWAYS_READ_ONLY.has(lower)) {
      if (fromValue) return;
      fail('mutability', `"${path.attribute}" is read-only`);
    }
    if (ctx.options.readOnly?.(lower) === true) fail('mutability', `"${path.attribute}" is read-only`);
  }
  if (op === 'add' && value === null)
    fail('invalidValue', `"add" of "${pathText(path)}" needs a value other than null`);
  const holder = new Holder(ctx, scope);
  if (path.filter !== undefined) applyFiltered(ctx, op, holder, path, path.filter, value);
  else if (path.sub !== undefined) applySub(ctx, op, holder, path, path.sub, value);
  else applyWhole(ctx, op, holder, scope, path, value);
  holder.tidy();
}

function currentOf(
  holder: Holder,
  name: string,
): { container: JsonObject | undefined; key: string | undefined; current: unknown } {
  const container = holder.get();
  const key = container === undefined ? undefined : keyOf(container, name);
  const current = container === undefined || key === undefined ? undefined : container[key];
  return { container, key, current };
}

function isMulti(ctx: Context, name: string, current: unknown): boolean {
  return Array.isArray(current) || ctx.options.multiValued(name.toLowerCase());
}

function applyWhole(
  ctx: Context,
  op: Op,
  holder: Holder,
  scope: Scope,
  path: PatchPath,
  value: unknown,
): void {
  const name = path.attribute;
  const { container, key, current } = currentOf(holder, name);
  const multi = isMulti(ctx, name, current);

  if (op === 'remove') {
    if (container === undefined || key === undefined) return;
    if (multi && Array.isArray(current) && value !== undefined && value !== null) {
      const kept = withoutValues(current, value);
      if (kept.length === 0) delete container[key];
      else if (kept.length !== current.length) container[key] = kept;
      return;
    }
    delete container[key];
    return;
  }

  if (value === null) {
    if (container !== undefined && key !== undefined) delete container[key];
    return;
  }
  let v = normalise(name, value);
  if (
    scope.kind === 'extension' &&
    sameName(scope.urn, ENTERPRISE_SCHEMA) &&
    sameName(name, 'manager') &&
    typeof v === 'string'
  ) {
    v = { value: v };
  }

  if (multi) {
    const given = Array.isArray(v) ? v : [v];
    let next: unknown[];
    let written: unknown[];
    if (op === 'add') {
      next = Array.isArray(current)
        ? (current as unknown[]).slice()
        : current === undefined || current === null
          ? []
          : [current];
      written = [];
      const held = new Elements(next);
      for (const item of given) {
        if (!held.contains(item)) {
          next.push(item);
          held.add(item);
          written.push(item);
        }
      }
      if (written.length === 0) return;
    } else {
      next = given;
      written = given;
    }
    keepOnePrimary(next, written);
    if (next.length === 0) {
      if (container !== undefined && key !== undefined) delete container[key];
      return;
    }
    holder.ensure()[key ?? name] = next;
    return;
  }

  if (Array.isArray(v)) {
    fail('invalidValue', `"${name}" is single-valued: "${op}" needs a single value, not an array`);
  }
  if (op === 'add' && isObject(v) && isObject(current)) {
    merge(current, v);
    return;
  }
  holder.ensure()[key ?? name] = v;
}

function applySub(ctx: Context, op: Op, holder: Holder, path: PatchPath, sub: string, value: unknown): void {
  const name = path.attribute;
  const { container, key, current } = currentOf(holder, name);
  const v = op === 'remove' ? null : normaliseSub(name, sub, value);

  if (isMulti(ctx, name, current)) {
    const elements = (Array.isArray(current) ? current : []).filter(isObject);
    if (v === null) {
      for (const e of elements) deleteMember(e, sub);
      return;
    }
    if (elements.length === 0)
      fail('noTarget', `"${pathText(path)}": "${name}" has no element to set "${sub}" on`);
    for (const e of elements) setMember(e, sub, v);
    if (sameName(sub, 'primary')) keepOnePrimary(current as unknown[], elements);
    return;
  }

  if (current !== undefined && current !== null && !isObject(current)) {
    fail('invalidPath', `"${pathText(path)}": "${name}" is not a complex attribute`);
  }
  if (v === null) {
    if (!isObject(current) || container === undefined || key === undefined) return;
    deleteMember(current, sub);
    if (Object.keys(current).length === 0) delete container[key];
    return;
  }
  if (isObject(current)) {
    setMember(current, sub, v);
    return;
  }
  holder.ensure()[key ?? name] = { [sub]: v };
}

function applyFiltered(
  ctx: Context,
  op: Op,
  holder: Holder,
  path: PatchPath,
  filter: ScimFilter,
  value: unknown,
): void {
  const name = path.attribute;
  const { container, key, current } = currentOf(holder, name);
  if (current !== undefined && current !== null && !isMulti(ctx, name, current)) {
    fail('invalidPath', `"${name}" is single-valued: a value filter cannot select from it`);
  }
  const elements = Array.isArray(current) ? current : [];
  const selected = elements.filter((e): e is JsonObject => matches(filter, e, path));

  if (op === 'remove') {
    if (selected.length === 0 || container === undefined || key === undefined) return;
    if (path.sub !== undefined) {
      for (const e of selected) deleteMember(e, path.sub);
      return;
    }
    const kept = elements.filter((e) => !(isObject(e) && selected.includes(e)));
    if (kept.length === 0) delete container[key];
    else container[key] = kept;
    return;
  }

  if (selected.length === 0) {
    // Entra adds a first work email as `emails[type eq "work"].value`: an element the filter's
    // equalities describe is created to hold it (a replace still needs a match, RFC 7644 §3.5.2.3).
    const described = op === 'add' && path.sub !== undefined ? describedBy(filter) : undefined;
    if (!described || container === undefined) {
      fail('noTarget', `No element of "${name}" matches the filter of "${op}"`);
    }
    const element: JsonObject = { ...described };
    setMember(element, path.sub!, normaliseSub(name, path.sub!, value));
    container[key ?? name] = [...(elements as unknown[]), element];
    return;
  }
  if (path.sub !== undefined) {
    const v = normaliseSub(name, path.sub, value);
    for (const e of selected) setMember(e, path.sub, v);
    if (sameName(path.sub, 'primary')) keepOnePrimary(elements, selected);
    return;
  }
  const v = normalise(name, value);
  if (!isObject(v)) {
    fail('invalidValue', `"${op}" on "${name}[…]" needs an object of sub-attributes as its value`);
  }
  for (const e of selected) merge(e, structuredClone(v));
  if (memberOf(v, 'primary') === true) keepOnePrimary(elements, selected);
}

/** The element a filter of `eq` comparisons joined by `and` describes, e.g. `{ type: 'work' }`. */
function describedBy(filter: ScimFilter): JsonObject | undefined {
  if (filter.kind === 'and') {
    const [a, b] = filter.of.map(describedBy);
    return a && b ? { ...a, ...b } : undefined;
  }
  if (filter.kind !== 'compare' || filter.op !== 'eq' || filter.path.uri || filter.path.sub) return undefined;
  if (filter.value === null) return undefined;
  return { [filter.path.attribute]: filter.value };
}

/** Add or replace each member of `value` within `scope`, as though each key were the operation's path. */
function applyMembers(
  ctx: Context,
  op: 'add' | 'replace',
  scope: Scope,
  value: unknown,
  where: string,
): void {
  if (!isObject(value)) {
    fail('invalidValue', `"${op}" ${where} needs an object value`);
  }
  for (const [k, member] of Object.entries(value)) {
    if (scope.kind === 'core') {
      const named = schemaScope(ctx.options, k);
      if (named !== undefined) {
        applySchemaObject(ctx, op, named, member);
        continue;
      }
    }
    const path = parsePath(k);
    let target = scope;
    if (path.uri !== undefined) {
      const named = schemaScope(ctx.options, path.uri);
      if (named === undefined) fail('invalidPath', `"${k}" names a schema this resource does not have`);
      if (scope.kind === 'extension' && named.kind !== 'extension') {
        fail('invalidPath', `"${k}" is not an attribute of "${scope.urn}"`);
      }
      target = named;
    }
    applyAtPath(ctx, op, target, path, member, true);
  }
}

/** An operation whose path (or path-less value key) is a schema URN on its own. */
function applySchemaObject(ctx: Context, op: Op, scope: Scope, value: unknown): void {
  if (scope.kind === 'core') {
    if (op === 'remove') fail('noTarget', '"remove" of the core schema needs a path to an attribute');
    applyMembers(ctx, op, CORE, value, 'of the core schema');
    return;
  }
  if (op === 'remove' || value === null) {
    if (op === 'add') fail('invalidValue', `"add" of "${scope.urn}" needs an object value`);
    removeExtension(ctx.root, scope.urn);
    return;
  }
  applyMembers(ctx, op, scope, value, `of "${scope.urn}"`);
  new Holder(ctx, scope).tidy();
}

function applyOperation(ctx: Context, operation: unknown): void {
  if (!isObject(operation)) fail('invalidSyntax', 'An operation must be an object');
  const rawOp = memberOf(operation, 'op');
  if (typeof rawOp !== 'string')
    fail('invalidSyntax', 'An operation needs an "op" of "add", "replace" or "remove"');
  const kind = rawOp.toLowerCase();
  if (kind !== 'add' && kind !== 'replace' && kind !== 'remove') {
    fail('invalidSyntax', `Unsupported "op" ${JSON.stringify(rawOp)}: expected "add", "replace" or "remove"`);
  }
  const rawPath = memberOf(operation, 'path');
  if (rawPath !== undefined && rawPath !== null && typeof rawPath !== 'string') {
    fail('invalidPath', '"path" must be a string');
  }
  const pathText = typeof rawPath === 'string' ? rawPath.trim() : '';
  const value = memberOf(operation, 'value');
  if (kind !== 'remove' && value === undefined) fail('invalidValue', `"${kind}" needs a "value"`);
  checkValue(value);

  if (pathText === '') {
    if (kind === 'remove') fail('noTarget', '"remove" needs a "path"');
    applyMembers(ctx, kind, CORE, value, 'without a path');
    return;
  }
  const whole = schemaScope(ctx.options, pathText);
  if (whole !== undefined) {
    applySchemaObject(ctx, kind, whole, value);
    return;
  }
  const path = parsePath(pathText);
  let scope: Scope = CORE;
  if (path.uri !== undefined) {
    const named = schemaScope(ctx.options, path.uri);
    if (named === undefined) fail('invalidPath', `"${pathText}" names a schema this resource does not have`);
    scope = named;
  }
  applyAtPath(ctx, kind, scope, path, value, false);
}

/** An operation's value within {@link VALUE_BOUNDS}; the pointer is relative to the operation. */
function checkValue(value: unknown): void {
  const violation = value === undefined ? undefined : freeFormViolation(value, VALUE_BOUNDS);
  if (violation === undefined) return;
  const message = violation.message.startsWith('is nested')
    ? `is nested too deeply: an attribute's value holds at most ${FREE_FORM_BOUNDS.maxDepth} levels`
    : violation.message;
  fail('invalidValue', `/value${violation.pointer} ${message}`);
}

/**
 * Applies SCIM PATCH `operations` to a copy of `resource`, in order; the first that cannot be
 * applied throws a {@link ScimPatchError} naming its index, and nothing is returned.
 */
export function applyPatch(
  resource: Record<string, unknown>,
  operations: unknown[],
  options: PatchOptions,
): PatchResult {
  if (!Array.isArray(operations)) fail('invalidSyntax', '"Operations" must be an array');
  if (operations.length > MAX_PATCH_OPERATIONS) {
    fail(
      'invalidSyntax',
      `At most ${MAX_PATCH_OPERATIONS} operations per request (got ${operations.length})`,
    );
  }
  const ctx: Context = { root: structuredClone(resource), options };
  operations.forEach((operation, index) => {
    try {
      applyOperation(ctx, operation);
    } catch (error) {
      if (error instanceof ScimPatchError)
        throw new ScimPatchError(error.scimType, `Operations[${index}]: ${error.message}`);
      throw error;
    }
  });
  return { resource: ctx.root, changed: !jsonEqual(ctx.root, resource) };
}

/**
 * A PatchOp applied to a resource of one type, as the attribute table defines it
 * (src/scim/attributes.ts): which core attributes are multi-valued, which read-only (`id`,
 * `meta`, a user's `groups`), which extensions it has. The errors of patching are SCIM errors of
 * the protocol (400 with the patch's `scimType`).
 */
export function patchResource(
  current: Record<string, unknown>,
  operations: unknown[],
  schema: ResourceSchema,
): Record<string, unknown> {
  try {
    return applyPatch(current, operations, {
      coreSchema: schema.core,
      extensionSchemas: Object.keys(schema.extensions),
      multiValued: (name) => findAttribute(schema.attributes, name)?.multiValued === true,
      readOnly: (name) => findAttribute(schema.attributes, name)?.mutability === 'readOnly',
    }).resource;
  } catch (err) {
    if (err instanceof ScimPatchError) throw new ScimError(400, err.scimType, err.message);
    if (err instanceof ScimSyntaxError) throw new ScimError(400, 'invalidPath', err.message);
    throw err;
  }
}
