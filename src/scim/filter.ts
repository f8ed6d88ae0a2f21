/**
 * SCIM 2.0 filters and attribute paths (RFC 7644 §3.4.2.2, §3.5.2): parsed into a small tree,
 * evaluated against SCIM resources held as JSON. Nothing here knows about HTTP or Cypher.
 */

import { instantKey } from '../time.js';
import { memberOf } from './names.js';

/** An attribute path as written: `userName`, `name.familyName`, `urn:…:User:manager.value`. */
export interface AttrPath {
  /** The schema URN prefix when the path carries one, as written (without the final `:`). */
  readonly uri?: string;
  readonly attribute: string;
  readonly sub?: string;
}

export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

export type FilterValue = string | number | boolean | null;

export type ScimFilter =
  | { readonly kind: 'compare'; readonly path: AttrPath; readonly op: CompareOp; readonly value: FilterValue }
  | { readonly kind: 'present'; readonly path: AttrPath }
  | { readonly kind: 'and'; readonly of: readonly [ScimFilter, ScimFilter] }
  | { readonly kind: 'or'; readonly of: readonly [ScimFilter, ScimFilter] }
  | { readonly kind: 'not'; readonly of: ScimFilter }
  /** `emails[type eq "work"]`: `filter` applies to each element's sub-attributes. */
  | { readonly kind: 'valuePath'; readonly path: AttrPath; readonly filter: ScimFilter };

/** A PATCH path: `members`, `name.givenName`, `members[value eq "x"]`, `emails[type eq "work"].value`. */
export interface PatchPath {
  readonly uri?: string;
  readonly attribute: string;
  readonly filter?: ScimFilter;
  readonly sub?: string;
}

/** A filter or path that cannot be read; the SCIM edge answers 400 `invalidFilter` / `invalidPath`. */
export class ScimSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScimSyntaxError';
  }
}

/** Longest filter or path text accepted. */
export const MAX_FILTER_LENGTH = 4096;
/** Deepest nesting of `(…)`, `not (…)` and `[…]` accepted. */
export const MAX_FILTER_DEPTH = 32;
/** Most attribute expressions (comparisons and `pr`) one filter may hold. */
export const MAX_FILTER_COMPARISONS = 200;

const COMPARE_OPS: ReadonlySet<string> = new Set<CompareOp>([
  'eq',
  'ne',
  'co',
  'sw',
  'ew',
  'gt',
  'ge',
  'lt',
  'le',
]);

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

const isWs = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isAlpha = (c: string | undefined): boolean =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
const isNameChar = (c: string | undefined): boolean =>
  isAlpha(c) || (c !== undefined && c >= '0' && c <= '9') || c === '-' || c === '_' || c === '$';
/** Characters that end the raw text of an attribute path. */
const isPathStop = (c: string | undefined): boolean =>
  c === undefined || isWs(c) || c === '[' || c === ']' || c === '(' || c === ')' || c === '"';

function makePath(uri: string | undefined, attribute: string, sub: string | undefined): AttrPath {
  return {
    ...(uri !== undefined ? { uri } : {}),
    attribute,
    ...(sub !== undefined ? { sub } : {}),
  };
}

/**
 * Recursive-descent reader over the raw text. `inBrackets` marks the inside of a value filter
 * (`emails[…]`), where paths are bare sub-attribute names of the element.
 */
class Parser {
  private pos = 0;
  private depth = 0;
  private comparisons = 0;

  constructor(
    private readonly text: string,
    private readonly kind: 'filter' | 'path',
  ) {
    if (text.length > MAX_FILTER_LENGTH) {
      this.fail(
        `at most ${MAX_FILTER_LENGTH} characters (the ${kind} has ${text.length})`,
        MAX_FILTER_LENGTH,
      );
    }
  }

  private fail(expected: string, at: number = this.pos): never {
    const c = this.text[at];
    const found = c === undefined ? 'end of input' : JSON.stringify(c);
    throw new ScimSyntaxError(`Invalid ${this.kind} at offset ${at}: expected ${expected}, found ${found}`);
  }

  private peek(): string | undefined {
    return this.text[this.pos];
  }

  private atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  private skipWs(): void {
    while (isWs(this.text[this.pos])) this.pos++;
  }

  private enter(at: number): void {
    this.depth++;
    if (this.depth > MAX_FILTER_DEPTH) this.fail(`nesting no deeper than ${MAX_FILTER_DEPTH} levels`, at);
  }

  private leave(): void {
    this.depth--;
  }

  private counted(at: number): void {
    this.comparisons++;
    if (this.comparisons > MAX_FILTER_COMPARISONS) {
      this.fail(`at most ${MAX_FILTER_COMPARISONS} comparisons`, at);
    }
  }

  /** Consumes `word` (case-insensitive) after optional whitespace when a space, `(` or the end follows it. */
  private keyword(word: string): boolean {
    const save = this.pos;
    this.skipWs();
    const end = this.pos + word.length;
    if (this.text.slice(this.pos, end).toLowerCase() === word) {
      const next = this.text[end];
      if (next === undefined || isWs(next) || next === '(') {
        this.pos = end;
        return true;
      }
    }
    this.pos = save;
    return false;
  }

  /** Whitespace, then `close`; anything else is reported against the opening character at `openAt`. */
  private expectClose(close: ')' | ']', openAt: number): void {
    this.skipWs();
    if (this.peek() !== close) {
      const open = close === ')' ? '(' : '[';
      this.fail(`'and', 'or' or '${close}' closing the '${open}' at offset ${openAt}`);
    }
    this.pos++;
  }

  /** A whole filter, up to the end of the text. */
  parseFilter(): ScimFilter {
    const filter = this.parseOr(false);
    this.skipWs();
    if (!this.atEnd()) this.fail("'and', 'or' or the end of the filter");
    return filter;
  }

  private parseOr(inBrackets: boolean): ScimFilter {
    let left = this.parseAnd(inBrackets);
    while (this.keyword('or')) {
      const right = this.parseAnd(inBrackets);
      left = { kind: 'or', of: [left, right] };
    }
    return left;
  }

  private parseAnd(inBrackets: boolean): ScimFilter {
    let left = this.parseUnary(inBrackets);
    while (this.keyword('and')) {
      const right = this.parseUnary(inBrackets);
      left = { kind: 'and', of: [left, right] };
    }
    return left;
  }

  private parseUnary(inBrackets: boolean): ScimFilter {
    this.skipWs();
    const start = this.pos;
    if (this.peek() === '(') {
      this.pos++;
      this.enter(start);
      const inner = this.parseOr(inBrackets);
      this.expectClose(')', start);
      this.leave();
      return inner;
    }
    if (this.text.slice(start, start + 3).toLowerCase() === 'not') {
      let j = start + 3;
      while (isWs(this.text[j])) j++;
      if (this.text[j] === '(') {
        this.pos = j + 1;
        this.enter(j);
        const inner = this.parseOr(inBrackets);
        this.expectClose(')', j);
        this.leave();
        return { kind: 'not', of: inner };
      }
    }
    const first = this.peek();
    if (!isAlpha(first) && first !== '$') {
      this.fail(inBrackets ? "a sub-attribute name, '(' or 'not'" : "an attribute path, '(' or 'not'");
    }
    const path = this.parseAttrPath(inBrackets);
    const afterPath = this.pos;
    this.skipWs();

    if (this.peek() === '[') {
      if (inBrackets) this.fail('an operator (value filters cannot be nested)');
      if (path.sub !== undefined) this.fail("an operator ('[' cannot follow a sub-attribute)");
      const open = this.pos;
      this.pos++;
      this.enter(open);
      const inner = this.parseOr(true);
      this.expectClose(']', open);
      this.leave();
      return { kind: 'valuePath', path, filter: inner };
    }

    const operators = 'an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr)';
    if (this.pos === afterPath) this.fail(this.atEnd() ? operators : `whitespace and ${operators}`);
    const opStart = this.pos;
    while (isAlpha(this.peek())) this.pos++;
    const op = this.text.slice(opStart, this.pos).toLowerCase();
    const next = this.peek();
    if (op === 'pr') {
      if (next !== undefined && !isWs(next) && next !== ')' && next !== ']') {
        this.fail("whitespace, ')', ']' or the end after 'pr'");
      }
      this.counted(start);
      return { kind: 'present', path };
    }
    if (COMPARE_OPS.has(op)) {
      if (!isWs(next) && next !== '"') this.fail(`whitespace and a value after '${op}'`);
      this.skipWs();
      const value = this.parseValue();
      this.counted(start);
      return { kind: 'compare', path, op: op as CompareOp, value };
    }
    const bareNot =
      path.uri === undefined && path.sub === undefined && path.attribute.toLowerCase() === 'not';
    return this.fail(bareNot ? "'(' after 'not'" : operators, opStart);
  }

  /** An attribute name: `ALPHA *(ALPHA / DIGIT / "-" / "_" / "$")`, or `$ref`. */
  private parseName(label: string): string {
    const start = this.pos;
    const c = this.peek();
    if (c === '$') {
      if (this.text.slice(start, start + 4).toLowerCase() === '$ref' && !isNameChar(this.text[start + 4])) {
        this.pos += 4;
        return this.text.slice(start, this.pos);
      }
      this.fail(label);
    }
    if (!isAlpha(c)) this.fail(label);
    while (isNameChar(this.peek())) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /**
   * `[URN ":"] name ["." sub]`, where the URN is everything before the last `:` of the path's text.
   * Inside brackets only a bare sub-attribute name is allowed.
   */
  private parseAttrPath(inBrackets: boolean): AttrPath {
    const start = this.pos;
    let uri: string | undefined;
    if (!inBrackets && this.text.slice(start, start + 4).toLowerCase() === 'urn:') {
      let end = start;
      while (!isPathStop(this.text[end])) end++;
      const lastColon = this.text.lastIndexOf(':', end - 1);
      if (lastColon <= start + 4) this.fail("a schema URN followed by ':' and an attribute name", start + 4);
      uri = this.text.slice(start, lastColon);
      this.pos = lastColon + 1;
    }
    const attribute = this.parseName(
      inBrackets
        ? 'a sub-attribute name'
        : uri !== undefined
          ? 'an attribute name after the schema URN'
          : 'an attribute name',
    );
    let sub: string | undefined;
    if (!inBrackets && this.peek() === '.') {
      this.pos++;
      sub = this.parseName("a sub-attribute name after '.'");
    }
    return makePath(uri, attribute, sub);
  }

  /** A JSON string, number, `true`, `false` or `null`; any other unquoted text up to a space, `)` or `]` is a string. */
  private parseValue(): FilterValue {
    if (this.peek() === '"') return this.parseString();
    const start = this.pos;
    let end = start;
    while (end < this.text.length) {
      const c = this.text[end];
      if (isWs(c) || c === ')' || c === ']') break;
      end++;
    }
    if (end === start) this.fail('a value (string, number, true, false or null)');
    const raw = this.text.slice(start, end);
    this.pos = end;
    if (JSON_NUMBER.test(raw)) {
      const n = Number(raw);
      if (Number.isFinite(n)) return n;
    }
    switch (raw.toLowerCase()) {
      case 'true':
        return true;
      case 'false':
        return false;
      case 'null':
        return null;
      default:
        return raw;
    }
  }

  private parseString(): string {
    const open = this.pos;
    let out = '';
    let i = open + 1;
    for (;;) {
      const c = this.text[i];
      if (c === undefined) this.fail(`'"' closing the string that starts at offset ${open}`, i);
      if (c === '"') break;
      if (c !== '\\') {
        out += c;
        i++;
        continue;
      }
      const e = this.text[i + 1];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = this.text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("four hexadecimal digits after '\\u'", i + 2);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          this.fail('an escape (\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)', i + 1);
      }
      i += 2;
    }
    this.pos = i + 1;
    return out;
  }

  /** `attrPath` or `attrPath "[" valFilter "]" ["." subAttr]`, up to the end of the text. */
  parsePatchPath(): PatchPath {
    this.skipWs();
    const path = this.parseAttrPath(false);
    let filter: ScimFilter | undefined;
    let sub = path.sub;
    if (this.peek() === '[') {
      if (path.sub !== undefined) this.fail("the end of the path ('[' cannot follow a sub-attribute)");
      const open = this.pos;
      this.pos++;
      this.enter(open);
      filter = this.parseOr(true);
      this.expectClose(']', open);
      this.leave();
      if (this.peek() === '.') {
        this.pos++;
        sub = this.parseName("a sub-attribute name after '.'");
      }
    }
    this.skipWs();
    if (!this.atEnd()) {
      this.fail(
        filter === undefined && sub === undefined ? "'[' or the end of the path" : 'the end of the path',
      );
    }
    return {
      ...(path.uri !== undefined ? { uri: path.uri } : {}),
      attribute: path.attribute,
      ...(filter !== undefined ? { filter } : {}),
      ...(sub !== undefined ? { sub } : {}),
    };
  }
}

/**
 * Reads a SCIM filter (RFC 7644 §3.4.2.2). Keywords and operators are case-insensitive; `not`
 * binds tighter than `and`, which binds tighter than `or`; both are left-associative. Unquoted
 * values that are not numbers, `true`, `false` or `null` are read as strings, as some clients
 * send them. `pr` counts towards the comparison limit.
 */
export function parseFilter(text: string): ScimFilter {
  return new Parser(text, 'filter').parseFilter();
}

/** Reads a PATCH operation's path (RFC 7644 §3.5.2): `attrPath` or `valuePath ["." subAttr]`. */
export function parsePatchPath(text: string): PatchPath {
  return new Parser(text, 'path').parsePatchPath();
}

export interface EvaluateOptions {
  /**
   * Whether string comparisons on `path` respect case (the attribute's `caseExact`). Inside a
   * value filter the path is the outer attribute with the inner name as `sub`. Default: ignore case.
   */
  readonly caseExact?: (path: AttrPath) => boolean;
}

type Json = Record<string, unknown>;

const CORE_SCHEMA_PREFIX = 'urn:ietf:params:scim:schemas:core:';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The value of `path.attribute` on a resource. With a URN: inside the member named by the URN, or
 * at the top level when there is no such member and the URN is a core schema (core attributes
 * live at the top level). Without one: at the top level, otherwise inside the first `urn:…`
 * extension member that has it.
 */
function resourceAttribute(resource: Json, path: AttrPath): unknown {
  if (path.uri !== undefined) {
    const extension = memberOf(resource, path.uri);
    if (isObject(extension)) return memberOf(extension, path.attribute);
    if (extension === undefined && path.uri.toLowerCase().startsWith(CORE_SCHEMA_PREFIX)) {
      return memberOf(resource, path.attribute);
    }
    return undefined;
  }
  const direct = memberOf(resource, path.attribute);
  if (direct !== undefined && direct !== null) return direct;
  for (const key of Object.keys(resource)) {
    if (!key.toLowerCase().startsWith('urn:')) continue;
    const extension = resource[key];
    if (!isObject(extension)) continue;
    const value = memberOf(extension, path.attribute);
    if (value !== undefined && value !== null) return value;
  }
  return direct;
}

/** RFC 7644 `pr`: a non-empty value; a complex value needs a non-empty member, an array a non-empty element. */
function isPresent(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return false;
  if (Array.isArray(v)) return v.some(isPresent);
  if (isObject(v)) return Object.values(v).some(isPresent);
  return true;
}

function presentAt(attr: unknown, sub: string | undefined): boolean {
  if (sub === undefined) return isPresent(attr);
  const items = Array.isArray(attr) ? attr : [attr];
  return items.some((item) => isObject(item) && isPresent(memberOf(item, sub)));
}

/**
 * The simple values a comparison looks at: each element of a multi-valued attribute, its `sub`
 * when one is named, else a complex value's `value` sub-attribute.
 */
function comparedValues(attr: unknown, sub: string | undefined): unknown[] {
  const out: unknown[] = [];
  for (const item of Array.isArray(attr) ? attr : [attr]) {
    let v: unknown = item;
    if (sub !== undefined) {
      if (!isObject(item)) continue;
      v = memberOf(item, sub);
    } else if (isObject(item)) {
      v = memberOf(item, 'value');
    }
    if (Array.isArray(v)) out.push(...(v as unknown[]));
    else out.push(v);
  }
  return out.filter((v) => v !== undefined && v !== null);
}

function ordered(op: CompareOp, sign: number): boolean {
  switch (op) {
    case 'eq':
      return sign === 0;
    case 'ne':
      return sign !== 0;
    case 'gt':
      return sign > 0;
    case 'ge':
      return sign >= 0;
    case 'lt':
      return sign < 0;
    case 'le':
      return sign <= 0;
    default:
      return false;
  }
}

const sign = <T>(a: T, b: T): number => (a === b ? 0 : a < b ? -1 : 1);

function asNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'string' && JSON_NUMBER.test(v)) return Number(v);
  return undefined;
}

function asBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const lower = v.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  return undefined;
}

/**
 * One stored simple value against the filter's value. A number or boolean on one side and its
 * text on the other compare as number or boolean (unquoted values and string-typed storage meet).
 */
function compareValue(
  actual: unknown,
  op: CompareOp,
  expected: string | number | boolean,
  caseExact: boolean,
): boolean {
  if (typeof expected === 'boolean' || typeof actual === 'boolean') {
    const a = asBoolean(actual);
    const e = asBoolean(expected);
    if (a === undefined || e === undefined) return false;
    return op === 'eq' ? a === e : op === 'ne' ? a !== e : false;
  }
  if (typeof expected === 'number' || typeof actual === 'number') {
    const a = asNumber(actual);
    const e = asNumber(expected);
    return a !== undefined && e !== undefined && ordered(op, sign(a, e));
  }
  if (typeof actual !== 'string') return false;
  if (op !== 'co' && op !== 'sw' && op !== 'ew') {
    // Instant keys order as the instants they stand for, offsets and fractions included.
    const ia = instantKey(actual);
    const ie = ia && instantKey(expected);
    if (ia && ie) return ordered(op, ia === ie ? 0 : ia < ie ? -1 : 1);
  }
  const a = caseExact ? actual : actual.toLowerCase();
  const e = caseExact ? expected : expected.toLowerCase();
  switch (op) {
    case 'co':
      return a.includes(e);
    case 'sw':
      return a.startsWith(e);
    case 'ew':
      return a.endsWith(e);
    default:
      return ordered(op, sign(a, e));
  }
}

/** Where paths are resolved: the resource itself, or one element of a value path's attribute. */
type Scope = { readonly resource: Json } | { readonly element: Json; readonly outer: AttrPath };

function scopedAttribute(scope: Scope, path: AttrPath): unknown {
  return 'resource' in scope
    ? resourceAttribute(scope.resource, path)
    : memberOf(scope.element, path.attribute);
}

/** The path as callers know it: inside a value path, the outer attribute with the inner name as `sub`. */
function qualified(scope: Scope, path: AttrPath): AttrPath {
  return 'resource' in scope ? path : makePath(scope.outer.uri, scope.outer.attribute, path.attribute);
}

function evaluate(filter: ScimFilter, scope: Scope, options: EvaluateOptions): boolean {
  switch (filter.kind) {
    case 'and':
      return evaluate(filter.of[0], scope, options) && evaluate(filter.of[1], scope, options);
    case 'or':
      return evaluate(filter.of[0], scope, options) || evaluate(filter.of[1], scope, options);
    case 'not':
      return !evaluate(filter.of, scope, options);
    case 'present':
      return presentAt(scopedAttribute(scope, filter.path), filter.path.sub);
    case 'compare': {
      const attr = scopedAttribute(scope, filter.path);
      const { op, value } = filter;
      // `eq null` asks for absence and `ne null` for presence; other operators never match null.
      if (value === null) {
        const present = presentAt(attr, filter.path.sub);
        return op === 'eq' ? !present : op === 'ne' ? present : false;
      }
      // An absent attribute fails every comparison, `ne` included (RFC 7644 §3.4.2.2); only
      // `not (…)` turns that into a match.
      const values = comparedValues(attr, filter.path.sub);
      if (values.length === 0) return false;
      const caseExact = options.caseExact?.(qualified(scope, filter.path)) ?? false;
      return values.some((actual) => compareValue(actual, op, value, caseExact));
    }
    case 'valuePath': {
      const attr = scopedAttribute(scope, filter.path);
      let elements: unknown[] = Array.isArray(attr) ? attr : [attr];
      const sub = filter.path.sub;
      if (sub !== undefined) elements = elements.map((e) => (isObject(e) ? memberOf(e, sub) : undefined));
      const outer = qualified(scope, filter.path);
      return elements.some(
        (element) => isObject(element) && evaluate(filter.filter, { element, outer }, options),
      );
    }
  }
}

/**
 * Whether `resource` (a SCIM resource as JSON) matches `filter`. Attribute names and schema URNs
 * match keys ignoring case; multi-valued attributes match when any element does.
 */
export function evaluateFilter(
  filter: ScimFilter,
  resource: Record<string, unknown>,
  options?: EvaluateOptions,
): boolean {
  return evaluate(filter, { resource }, options ?? {});
}

/**
 * Every attribute path `filter` mentions, each once, in order of appearance. A value path
 * contributes its attribute once per inner name, with that name as `sub`.
 */
export function filterPaths(filter: ScimFilter): AttrPath[] {
  const out: AttrPath[] = [];
  const seen = new Set<string>();
  const add = (path: AttrPath): void => {
    const key = JSON.stringify([path.uri ?? null, path.attribute, path.sub ?? null]);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(path);
  };
  const walk = (node: ScimFilter, outer: AttrPath | undefined): void => {
    switch (node.kind) {
      case 'and':
      case 'or':
        walk(node.of[0], outer);
        walk(node.of[1], outer);
        return;
      case 'not':
        walk(node.of, outer);
        return;
      case 'compare':
      case 'present':
        add(outer === undefined ? node.path : makePath(outer.uri, outer.attribute, node.path.attribute));
        return;
      case 'valuePath':
        walk(
          node.filter,
          outer === undefined ? node.path : makePath(outer.uri, outer.attribute, node.path.attribute),
        );
        return;
    }
  };
  walk(filter, undefined);
  return out;
}
