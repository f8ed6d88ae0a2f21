import type { Principal } from '../../src/principals/model.js';
import { isAttribute, type Condition, type Query } from '../../src/principals/search/model.js';
import { parseInstant } from '../../src/time.js';

/**
 * The semantics of src/principals/search/model.ts written out plainly over principal records, as the
 * reference the compiled Cypher is checked against. Instants compare by their normalised text
 * padded to nanoseconds; text as JavaScript compares strings (UTF-16 code units, as Cypher does).
 */
export function matches(p: Principal, query: Query): boolean {
  switch (query.kind) {
    case 'and':
      return query.of.every((q) => matches(p, q));
    case 'or':
      return query.of.some((q) => matches(p, q));
    case 'not':
      return !matches(p, query.of);
    case 'condition':
      return holds(p, query);
  }
}

type Value = string | number | string[] | null;

function valueOf(p: Principal, c: Condition): Value {
  if (isAttribute(c.target)) return p.attributes[c.target.attribute] ?? null;
  const v = (p as unknown as Record<string, unknown>)[c.target.field];
  return v === undefined ? null : (v as Value);
}

const instantKey = (text: string): string => {
  const normal = parseInstant(text)!;
  const [whole = '', fraction = ''] = normal.slice(0, -1).split('.');
  return `${whole}.${fraction.padEnd(9, '0')}`;
};

const TIMESTAMPS = new Set(['created_at', 'updated_at', 'last_login']);

function holds(p: Principal, c: Condition): boolean {
  const raw = valueOf(p, c);
  const timestamp = !isAttribute(c.target) && TIMESTAMPS.has(c.target.field);
  const norm = (v: unknown): unknown => (timestamp && typeof v === 'string' ? instantKey(v) : v);
  const elements: unknown[] = raw === null ? [] : Array.isArray(raw) ? raw : [raw];
  const operands = (Array.isArray(c.operand) ? c.operand : [c.operand]).map(norm);
  const operand = operands[0];
  const lower = (v: unknown): string => String(v).toLowerCase();
  const compare = (e: unknown, test: (a: number | string, b: number | string) => boolean): boolean => {
    if (typeof c.operand === 'number' && typeof e === 'string') {
      const n = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(e) ? Number(e) : NaN;
      return !Number.isNaN(n) && test(n, c.operand);
    }
    if (typeof e !== typeof operand) return false;
    return test(norm(e) as number | string, operand as number | string);
  };
  switch (c.op) {
    case '$eq':
      return elements.some((e) => norm(e) === operand);
    case '$ne':
      return !elements.some((e) => norm(e) === operand);
    case '$in':
      return elements.some((e) => operands.includes(norm(e)));
    case '$nin':
      return !elements.some((e) => operands.includes(norm(e)));
    case '$exists':
      return (raw !== null) === c.operand;
    case '$contains':
      return Array.isArray(raw)
        ? raw.includes(c.operand as string)
        : raw !== null && lower(raw).includes(lower(c.operand));
    case '$startsWith':
      return elements.some((e) => lower(e).startsWith(lower(c.operand)));
    case '$endsWith':
      return elements.some((e) => lower(e).endsWith(lower(c.operand)));
    case '$eqIgnoreCase':
      return elements.some((e) => lower(e) === lower(c.operand));
    case '$gt':
      return elements.some((e) => compare(e, (a, b) => a > b));
    case '$gte':
      return elements.some((e) => compare(e, (a, b) => a >= b));
    case '$lt':
      return elements.some((e) => compare(e, (a, b) => a < b));
    case '$lte':
      return elements.some((e) => compare(e, (a, b) => a <= b));
  }
}
