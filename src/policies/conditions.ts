import type { FieldError } from '../errors/errors.js';
import { CidrSet, parseCidr } from '../operators/cidr.js';
import {
  absent,
  formOf,
  operatorRow,
  type ConditionTest,
  type OperandShape,
  type Tri,
} from '../operators/table.js';
import {
  CONDITION_FIELDS,
  KEY_PATTERN,
  PRINCIPAL_STATUSES,
  PRINCIPAL_TYPES,
  type ConditionField,
} from '../vocabulary/principals.js';
import {
  ACTION_NAME_PATTERN,
  CONDITION_OPERATORS,
  MAX_CONDITIONS,
  type ConditionOperator,
} from '../vocabulary/policies.js';

export { CidrSet, parseCidr } from '../operators/cidr.js';
export type { Tri } from '../operators/table.js';

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
    if ((CONDITION_FIELDS as readonly string[]).includes(rest)) {
      const field = rest as ConditionField;
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
  /** The operator's three-valued test (src/operators/table.ts). */
  run: ConditionTest;
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
  const { operand: schema } = operatorRow(operator);
  const run = formOf(operator, 'condition');
  if (isRef(operand)) {
    if (!schema.ref) {
      errors.push({
        pointer: at,
        message: schema.shape === 'flag' ? 'takes true or false, not a reference' : 'takes no reference',
      });
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
    return { op: operator, operand: { kind: 'ref', path: target as string, read }, run };
  }
  const parsed = OPERAND_PARSERS[schema.shape](path, operand, at, errors);
  return parsed && { op: operator, operand: parsed, run };
}

type OperandParser = (
  path: string,
  operand: unknown,
  at: string,
  errors: FieldError[],
) => Operand | undefined;

/** What each shape of operand (src/operators/table.ts) may be in a condition, and the errors when it is not. */
const OPERAND_PARSERS: Record<OperandShape, OperandParser> = {
  flag: (_path, operand, at, errors) => {
    if (typeof operand !== 'boolean') {
      errors.push({ pointer: at, message: 'must be true or false' });
      return undefined;
    }
    return { kind: 'value', value: operand };
  },
  list: (path, operand, at, errors) => {
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
    return { kind: 'list', values: operand };
  },
  cidrs: (_path, operand, at, errors) => {
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
    return { kind: 'cidrs', list: blocks };
  },
  text: (_path, operand, at, errors) => {
    if (typeof operand !== 'string' || operand.length > MAX_TEXT) {
      errors.push({ pointer: at, message: `must be a string of at most ${MAX_TEXT} characters` });
      return undefined;
    }
    return { kind: 'value', value: operand };
  },
  bound: (_path, operand, at, errors) => {
    if (
      !(typeof operand === 'number' && Number.isFinite(operand)) &&
      !(typeof operand === 'string' && operand.length <= MAX_TEXT)
    ) {
      errors.push({ pointer: at, message: 'must be a number or a string' });
      return undefined;
    }
    return { kind: 'value', value: operand };
  },
  value: (path, operand, at, errors) => {
    if (!isPrimitive(operand)) {
      errors.push({
        pointer: at,
        message: 'must be a string, a number, a boolean or { "$ref": "<path>" } (use $in for a list)',
      });
      return undefined;
    }
    if (!possibleValues(path, [operand], false, at, errors)) return undefined;
    return { kind: 'value', value: operand };
  },
};

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

/**
 * One operator on the value at a condition's path, by the operator's three-valued test; a `$ref`
 * to a missing path is unknown.
 */
function runTest(test: Test, value: unknown, input: ConditionInput): Tri {
  const { operand } = test;
  switch (operand.kind) {
    case 'ref': {
      const resolved = operand.read(input);
      return absent(resolved) ? 'unknown' : test.run(value, resolved);
    }
    case 'value':
      return test.run(value, operand.value);
    case 'list':
      return test.run(value, operand.values);
    case 'cidrs':
      return test.run(value, operand.list);
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

/**
 * The first operator of an entry that keeps it from holding, with its outcome and the value it
 * read (undefined when the entry holds): what a denied request's explanation names, so that the
 * reader sees the operand next to what was actually there.
 */
export function failingTest(
  condition: CompiledCondition,
  input: ConditionInput,
): { op: ConditionOperator; result: 'false' | 'unknown'; value: unknown; ref?: string } | undefined {
  const value = condition.read(input);
  let unknown: { op: ConditionOperator; ref?: string } | undefined;
  for (const test of condition.tests) {
    const r = runTest(test, value, input);
    const ref = test.operand.kind === 'ref' ? { ref: test.operand.path } : {};
    if (r === 'false') return { op: test.op, result: 'false', value, ...ref };
    if (r === 'unknown') unknown ??= { op: test.op, ...ref };
  }
  return unknown && { ...unknown, result: 'unknown', value };
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
