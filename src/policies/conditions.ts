import { BlockList, isIP } from 'node:net';
import type { FieldError } from '../errors/errors.js';
import { KEY_PATTERN, PRINCIPAL_STATUSES, PRINCIPAL_TYPES } from '../vocabulary/principals.js';
import {
  ACTION_NAME_PATTERN,
  CONDITION_OPERATORS,
  MAX_CONDITIONS,
  type ConditionOperator,
} from '../vocabulary/policies.js';
import { instantKey } from '../time.js';

/**
 * Policy conditions: `{ "<path>": <value or operator object> }`, every entry must hold. Paths
 * read the principal (as stored), the resource (registered attributes, those of the request
 * winning), the request context, and what the enforcement point claims with the request: the
 * action's name and properties and the subject's properties. Claims are never stored identity:
 * `subject.properties.role` is what the caller says, `principal.attributes.role` what is known.
 *
 * Three outcomes: true, false, or unknown when a path is missing or holds a value of the wrong
 * type for the operator (`$exists` alone is never unknown). An allow applies only when its
 * conditions are true; a deny applies unless they are false (it fails closed).
 */

const MAX_LIST = 100;
const MAX_TEXT = 1024;

export type Tri = 'true' | 'false' | 'unknown';

/** Properties an enforcement point sends with a request (AuthZEN `properties`): free-form JSON. */
export type Claims = Readonly<Record<string, unknown>>;

/**
 * What conditions read: the stored principal, the resource, the request's context and claims.
 * Views that decide no single request (effective access) leave the claims out: every path under
 * them is then missing.
 */
export interface ConditionInput {
  principal: {
    id: string;
    type: string;
    status: string;
    name: string;
    email: string | null;
    connector_source: string | null;
    connector_id: string | null;
    risk_score: number;
    attributes: Readonly<Record<string, unknown>>;
    metadata: Readonly<Record<string, unknown>>;
  };
  resource: { type: string; identifier: string; attributes: Readonly<Record<string, unknown>> };
  context: Readonly<Record<string, unknown>> | undefined;
  action?: { name: string; properties?: Claims | undefined } | undefined;
  subject?: { properties?: Claims | undefined } | undefined;
}

type Resolver = (input: ConditionInput) => unknown;

const PRINCIPAL_FIELDS = [
  'id',
  'type',
  'status',
  'name',
  'email',
  'connector_source',
  'connector_id',
  'risk_score',
] as const;
const CONTEXT_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = new RegExp(KEY_PATTERN);
const MAX_CONTEXT_DEPTH = 8;

/**
 * A reader of nested objects, one segment per level (`a.b` reads `{ "a": { "b": … } }`), or
 * undefined when the segments are not ones a path may hold.
 */
function nestedReader(
  rest: string,
  root: (input: ConditionInput) => Claims | undefined,
): Resolver | undefined {
  const segments = rest.split('.');
  if (segments.length > MAX_CONTEXT_DEPTH || !segments.every((s) => CONTEXT_SEGMENT.test(s)))
    return undefined;
  if (segments.length === 1) {
    const key = segments[0]!;
    return (input) => {
      const object = root(input);
      // Own keys only: a claim named `constructor` must not read Object.prototype.
      return object && Object.hasOwn(object, key) ? object[key] : undefined;
    };
  }
  return (input) => {
    let value: unknown = root(input);
    for (const segment of segments) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      if (!Object.hasOwn(value, segment)) return undefined;
      value = (value as Record<string, unknown>)[segment];
    }
    return value;
  };
}

/**
 * A path as a function reading it, or undefined when the path names nothing a condition can
 * read: `principal.<field>`, `principal.attributes.<key>`, `principal.metadata.<key>`,
 * `resource.type`, `resource.identifier`, `resource.attributes.<key>`, `context.<a>[.<b>...]`
 * (nested objects of the context, one segment per level), `action.name`,
 * `action.properties.<a>[.<b>...]` and `subject.properties.<a>[.<b>...]` (nested likewise).
 */
export function resolverOf(path: string): Resolver | undefined {
  const dot = path.indexOf('.');
  if (dot < 0) return undefined;
  const root = path.slice(0, dot);
  const rest = path.slice(dot + 1);
  if (root === 'principal') {
    if ((PRINCIPAL_FIELDS as readonly string[]).includes(rest)) {
      const field = rest as (typeof PRINCIPAL_FIELDS)[number];
      return (input) => input.principal[field];
    }
    for (const [prefix, read] of [
      ['attributes.', (input: ConditionInput) => input.principal.attributes],
      ['metadata.', (input: ConditionInput) => input.principal.metadata],
    ] as const) {
      if (rest.startsWith(prefix)) {
        const key = rest.slice(prefix.length);
        if (!KEY.test(key)) return undefined;
        return (input) => read(input)[key];
      }
    }
    return undefined;
  }
  if (root === 'resource') {
    if (rest === 'type') return (input) => input.resource.type;
    if (rest === 'identifier') return (input) => input.resource.identifier;
    if (rest.startsWith('attributes.')) {
      const key = rest.slice('attributes.'.length);
      if (!KEY.test(key)) return undefined;
      return (input) => input.resource.attributes[key];
    }
    return undefined;
  }
  if (root === 'context') return nestedReader(rest, (input) => input.context);
  if (root === 'action') {
    if (rest === 'name') return (input) => input.action?.name;
    if (rest.startsWith('properties.'))
      return nestedReader(rest.slice('properties.'.length), (input) => input.action?.properties);
    return undefined;
  }
  if (root === 'subject') {
    if (rest.startsWith('properties.'))
      return nestedReader(rest.slice('properties.'.length), (input) => input.subject?.properties);
    return undefined;
  }
  return undefined;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

type Primitive = string | number | boolean;

/** An operand as written: a value, a list of values, or a reference to another path. */
type Operand =
  | { kind: 'value'; value: Primitive }
  | { kind: 'list'; values: readonly Primitive[] }
  | { kind: 'ref'; path: string; read: Resolver }
  | { kind: 'cidrs'; list: CidrSet };

interface Test {
  op: ConditionOperator;
  operand: Operand;
}

/** One entry of a policy's conditions, compiled. */
export interface CompiledCondition {
  path: string;
  read: Resolver;
  tests: readonly Test[];
}

export interface ConditionOutcome {
  path: string;
  result: Tri;
  /** Paths that were missing, when the outcome is unknown because of them. */
  missing?: string[];
}

const isPrimitive = (v: unknown): v is Primitive =>
  (typeof v === 'string' && v.length <= MAX_TEXT) ||
  (typeof v === 'number' && Number.isFinite(v)) ||
  typeof v === 'boolean';

function isRef(v: unknown): v is { $ref: unknown } {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && '$ref' in v;
}

/** A CIDR block (`10.0.0.0/8`, `2001:db8::/32`) as address, prefix length and family. */
export function parseCidr(
  text: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  const version = isIP(address);
  if (version === 0 || !/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;

function ipv4Number(text: string): number | undefined {
  if (!IPV4.test(text)) return undefined;
  let n = 0;
  for (const part of text.split('.')) n = n * 256 + Number(part);
  return n;
}

type Cidr = NonNullable<ReturnType<typeof parseCidr>>;

/**
 * Blocks of addresses a `$cidr` names: IPv4-only lists are tested with integer masks (the common
 * case, and a decision's hot path); anything else through Node's BlockList.
 */
export class CidrSet {
  private readonly v4: { network: number; mask: number }[] | undefined;

  private constructor(
    private readonly list: BlockList,
    cidrs: readonly Cidr[],
  ) {
    if (cidrs.every((c) => c.family === 'ipv4')) {
      this.v4 = cidrs.map((c) => {
        const mask = c.prefix === 0 ? 0 : (0xffffffff << (32 - c.prefix)) >>> 0;
        return { network: (ipv4Number(c.address)! & mask) >>> 0, mask };
      });
    }
  }

  static of(texts: readonly string[]): CidrSet | undefined {
    const cidrs: Cidr[] = [];
    for (const text of texts) {
      const cidr = parseCidr(text);
      if (!cidr) return undefined;
      cidrs.push(cidr);
    }
    const list = new BlockList();
    for (const c of cidrs) list.addSubnet(c.address, c.prefix, c.family);
    return new CidrSet(list, cidrs);
  }

  /** Whether an address is in one of the blocks; unknown for text that is no address. */
  test(address: string): Tri {
    if (this.v4) {
      const n = ipv4Number(address);
      if (n !== undefined) {
        for (const { network, mask } of this.v4) if ((n & mask) >>> 0 === network) return 'true';
        return 'false';
      }
    }
    const version = isIP(address);
    if (version === 0) return 'unknown';
    return this.list.check(address, version === 4 ? 'ipv4' : 'ipv6') ? 'true' : 'false';
  }
}

/**
 * Parses and checks a policy's conditions, so that a policy that could never match as written
 * (an unknown path or operator, a malformed CIDR, a `$ref` to an unknown path, a value no
 * principal can have) is refused at write time. Errors carry pointers under `pointer`.
 */
export function parseConditions(
  raw: Record<string, unknown>,
  pointer = '/conditions',
): { conditions: CompiledCondition[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const conditions: CompiledCondition[] = [];
  const entries = Object.entries(raw);
  let count = 0;
  for (const [path, spec] of entries) {
    const at = `${pointer}/${escapePointer(path)}`;
    const read = resolverOf(path);
    if (!read) {
      errors.push({
        pointer: at,
        message:
          'is not a path a condition can read: principal.<field>, principal.attributes.<key>, principal.metadata.<key>, resource.type, resource.identifier, resource.attributes.<key>, context.<key>, action.name, action.properties.<key> or subject.properties.<key>',
      });
      continue;
    }
    const tests: Test[] = [];
    const operatorObject = spec !== null && typeof spec === 'object' && !Array.isArray(spec) && !isRef(spec);
    const operators: [string, unknown][] = operatorObject
      ? Object.entries(spec as Record<string, unknown>)
      : [['$eq', spec]];
    if (operators.length === 0) {
      errors.push({ pointer: at, message: 'must hold a value or at least one operator' });
      continue;
    }
    for (const [op, operand] of operators) {
      count += 1;
      const test = parseTest(path, op, operand, operatorObject ? `${at}/${escapePointer(op)}` : at, errors);
      if (test) tests.push(test);
    }
    conditions.push({ path, read, tests });
  }
  if (count > MAX_CONDITIONS) {
    errors.push({ pointer, message: `has ${count} conditions; at most ${MAX_CONDITIONS} are allowed` });
  }
  return { conditions, errors };
}

function parseTest(
  path: string,
  op: string,
  operand: unknown,
  at: string,
  errors: FieldError[],
): Test | undefined {
  if (!(CONDITION_OPERATORS as readonly string[]).includes(op)) {
    errors.push({ pointer: at, message: `is not an operator; use one of ${CONDITION_OPERATORS.join(', ')}` });
    return undefined;
  }
  const operator = op as ConditionOperator;
  if (isRef(operand)) {
    if (operator === '$exists') {
      errors.push({ pointer: at, message: 'takes true or false, not a reference' });
      return undefined;
    }
    const keys = Object.keys(operand);
    const target = operand.$ref;
    const read = typeof target === 'string' ? resolverOf(target) : undefined;
    if (keys.length !== 1 || !read) {
      errors.push({
        pointer: `${at}/$ref`,
        message: 'must be the only field, naming a path a condition can read',
      });
      return undefined;
    }
    return { op: operator, operand: { kind: 'ref', path: target as string, read } };
  }
  switch (operator) {
    case '$exists':
      if (typeof operand !== 'boolean') {
        errors.push({ pointer: at, message: 'must be true or false' });
        return undefined;
      }
      return { op: operator, operand: { kind: 'value', value: operand } };
    case '$in':
    case '$nin': {
      if (
        !Array.isArray(operand) ||
        operand.length === 0 ||
        operand.length > MAX_LIST ||
        !operand.every(isPrimitive)
      ) {
        errors.push({ pointer: at, message: `must be a list of 1-${MAX_LIST} strings, numbers or booleans` });
        return undefined;
      }
      if (!possibleValues(path, operand, true, at, errors)) return undefined;
      return { op: operator, operand: { kind: 'list', values: operand } };
    }
    case '$cidr': {
      const list = typeof operand === 'string' ? [operand] : operand;
      if (
        !Array.isArray(list) ||
        list.length === 0 ||
        list.length > MAX_LIST ||
        !list.every((c) => typeof c === 'string')
      ) {
        errors.push({ pointer: at, message: 'must be a CIDR block or a list of them' });
        return undefined;
      }
      const blocks = CidrSet.of(list);
      if (!blocks) {
        const bad = list.findIndex((c) => parseCidr(c) === undefined);
        errors.push({
          pointer: Array.isArray(operand) ? `${at}/${bad}` : at,
          message: 'must be a CIDR block such as 10.0.0.0/8 or 2001:db8::/32',
        });
        return undefined;
      }
      return { op: operator, operand: { kind: 'cidrs', list: blocks } };
    }
    case '$contains':
    case '$startsWith':
      if (typeof operand !== 'string' || operand.length > MAX_TEXT) {
        errors.push({ pointer: at, message: `must be a string of at most ${MAX_TEXT} characters` });
        return undefined;
      }
      return { op: operator, operand: { kind: 'value', value: operand } };
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (
        !(typeof operand === 'number' && Number.isFinite(operand)) &&
        !(typeof operand === 'string' && operand.length <= MAX_TEXT)
      ) {
        errors.push({ pointer: at, message: 'must be a number or a string' });
        return undefined;
      }
      return { op: operator, operand: { kind: 'value', value: operand } };
    case '$eq':
    case '$ne':
      if (!isPrimitive(operand)) {
        errors.push({
          pointer: at,
          message: 'must be a string, a number, a boolean or { "$ref": "<path>" } (use $in for a list)',
        });
        return undefined;
      }
      if (!possibleValues(path, [operand], false, at, errors)) return undefined;
      return { op: operator, operand: { kind: 'value', value: operand } };
  }
}

const ACTION_NAME = new RegExp(ACTION_NAME_PATTERN);

/**
 * `principal.type` and `principal.status` hold known values only, `action.name` an action name:
 * naming another never matches.
 */
function possibleValues(
  path: string,
  values: readonly Primitive[],
  list: boolean,
  at: string,
  errors: FieldError[],
): boolean {
  if (path === 'action.name') {
    const bad = values.findIndex((v) => typeof v !== 'string' || !ACTION_NAME.test(v));
    if (bad < 0) return true;
    errors.push({
      pointer: list ? `${at}/${bad}` : at,
      message: `must be an action name (${ACTION_NAME_PATTERN})`,
    });
    return false;
  }
  const known =
    path === 'principal.type'
      ? PRINCIPAL_TYPES
      : path === 'principal.status'
        ? PRINCIPAL_STATUSES
        : undefined;
  if (!known) return true;
  const bad = values.findIndex((v) => !(known as readonly unknown[]).includes(v));
  if (bad < 0) return true;
  errors.push({
    pointer: list ? `${at}/${bad}` : at,
    message: `must be one of ${known.join(', ')}`,
  });
  return false;
}

// ---- evaluation ----

const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

const absent = (v: unknown): boolean => v === undefined || v === null;

/** The elements a value stands for: a list's elements, else the value itself. */
const elementsOf = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : [v]);

/** Equality of two elements: true, false, or unknown when they cannot be compared. */
function equal(a: unknown, b: unknown): Tri {
  const ta = typeof a;
  const tb = typeof b;
  if (ta === tb && (ta === 'string' || ta === 'number' || ta === 'boolean'))
    return a === b ? 'true' : 'false';
  if (ta === 'number' && tb === 'string') return numericEqual(a as number, b as string);
  if (ta === 'string' && tb === 'number') return numericEqual(b as number, a as string);
  return 'unknown';
}

function numericEqual(n: number, text: string): Tri {
  if (!NUMBER.test(text)) return 'unknown';
  return Number(text) === n ? 'true' : 'false';
}

/** Ordering of two elements: negative, zero or positive; undefined when they cannot be compared. */
function order(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') {
    const ka = instantKey(a);
    const kb = ka === undefined ? undefined : instantKey(b);
    const x = kb === undefined ? a : ka!;
    const y = kb === undefined ? b : kb;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'number' && typeof b === 'string') return NUMBER.test(b) ? a - Number(b) : undefined;
  if (typeof a === 'string' && typeof b === 'number') return NUMBER.test(a) ? Number(a) - b : undefined;
  return undefined;
}

/** Some pair of elements satisfies `test`: true if one does, else unknown if one could not tell. */
function some(values: readonly unknown[], test: (v: unknown) => Tri): Tri {
  let unknown = false;
  for (const v of values) {
    const r = test(v);
    if (r === 'true') return 'true';
    if (r === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : 'false';
}

const negate = (t: Tri): Tri => (t === 'true' ? 'false' : t === 'false' ? 'true' : 'unknown');

const COMPARE = {
  $gt: (d: number) => d > 0,
  $gte: (d: number) => d >= 0,
  $lt: (d: number) => d < 0,
  $lte: (d: number) => d <= 0,
};

function runTest(test: Test, value: unknown, input: ConditionInput): Tri {
  const { op, operand } = test;
  if (op === '$exists') return !absent(value) === (operand as { value: boolean }).value ? 'true' : 'false';
  if (absent(value)) return 'unknown';
  let resolved: unknown;
  if (operand.kind === 'ref') {
    resolved = operand.read(input);
    if (absent(resolved)) return 'unknown';
  } else if (operand.kind === 'value') {
    resolved = operand.value;
  } else if (operand.kind === 'list') {
    resolved = operand.values;
  }
  const values = elementsOf(value);
  switch (op) {
    case '$eq':
    case '$in': {
      const candidates = elementsOf(resolved);
      return some(values, (v) => some(candidates, (c) => equal(v, c)));
    }
    case '$ne':
    case '$nin': {
      const candidates = elementsOf(resolved);
      return negate(some(values, (v) => some(candidates, (c) => equal(v, c))));
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      if (Array.isArray(resolved)) return 'unknown';
      const holds = COMPARE[op];
      return some(values, (v) => {
        const d = order(v, resolved);
        return d === undefined ? 'unknown' : holds(d) ? 'true' : 'false';
      });
    }
    case '$contains': {
      if (typeof resolved !== 'string') return 'unknown';
      if (Array.isArray(value)) return some(values, (v) => equal(v, resolved));
      if (typeof value !== 'string') return 'unknown';
      return value.toLowerCase().includes(resolved.toLowerCase()) ? 'true' : 'false';
    }
    case '$startsWith': {
      if (typeof resolved !== 'string') return 'unknown';
      const prefix = resolved.toLowerCase();
      return some(values, (v) =>
        typeof v === 'string' ? (v.toLowerCase().startsWith(prefix) ? 'true' : 'false') : 'unknown',
      );
    }
    case '$cidr': {
      let set: CidrSet | undefined;
      if (operand.kind === 'cidrs') set = operand.list;
      else {
        const texts = elementsOf(resolved);
        set = texts.every((t) => typeof t === 'string') ? CidrSet.of(texts) : undefined;
      }
      if (!set) return 'unknown';
      const blocks = set;
      return some(values, (v) => (typeof v === 'string' ? blocks.test(v) : 'unknown'));
    }
  }
}

/** Whether a condition reads the stored principal alone (its path and every `$ref`). */
export function readsOnlyPrincipal(condition: CompiledCondition): boolean {
  return (
    condition.path.startsWith('principal.') &&
    condition.tests.every((t) => t.operand.kind !== 'ref' || t.operand.path.startsWith('principal.'))
  );
}

/** One entry: every operator must hold. */
export function evaluateCondition(condition: CompiledCondition, input: ConditionInput): Tri {
  const value = condition.read(input);
  let unknown = false;
  for (const test of condition.tests) {
    const r = runTest(test, value, input);
    if (r === 'false') return 'false';
    if (r === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : 'true';
}

/** All the entries of a policy's conditions. */
export function evaluateConditions(conditions: readonly CompiledCondition[], input: ConditionInput): Tri {
  let unknown = false;
  for (const condition of conditions) {
    const r = evaluateCondition(condition, input);
    if (r === 'false') return 'false';
    if (r === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : 'true';
}

/** Each entry's outcome, with the paths whose absence made it unknown, for `explain`. */
export function explainConditions(
  conditions: readonly CompiledCondition[],
  input: ConditionInput,
): ConditionOutcome[] {
  return conditions.map((condition) => {
    const result = evaluateCondition(condition, input);
    if (result !== 'unknown') return { path: condition.path, result };
    const missing: string[] = [];
    const needsValue = condition.tests.some((t) => t.op !== '$exists');
    if (needsValue && absent(condition.read(input))) missing.push(condition.path);
    for (const test of condition.tests) {
      if (test.operand.kind === 'ref' && absent(test.operand.read(input))) missing.push(test.operand.path);
    }
    return missing.length > 0 ? { path: condition.path, result, missing } : { path: condition.path, result };
  });
}
