/**
 * The principal search form and the query it stands for (docs/api.md §2), apart from the page so that
 * it can be checked on its own: every form the page can send is a query the service takes.
 */

export const TYPES = ['USER', 'SERVICE_ACCOUNT', 'AI_AGENT', 'API_KEY'] as const;
export const STATUSES = ['active', 'suspended', 'deprovisioned', 'deleted'] as const;
export const SORTS = [
  ['created_at', 'Created'],
  ['updated_at', 'Updated'],
  ['name', 'Name'],
  ['last_login', 'Last login'],
  ['risk_score', 'Risk score'],
] as const;
export type SortField = (typeof SORTS)[number][0];

export const ATTRIBUTE_OPS = {
  eq: 'equals',
  ne: 'does not equal',
  in: 'is one of (comma-separated)',
  contains: 'contains',
  startsWith: 'starts with',
  exists: 'is set',
  missing: 'is not set',
} as const;
export type AttributeOp = keyof typeof ATTRIBUTE_OPS;

export interface AttributeRow {
  key: string;
  op: AttributeOp;
  value: string;
}

export interface SearchForm {
  name: string;
  types: string[];
  statuses: string[];
  attributes: AttributeRow[];
  login: 'any' | 'before' | 'after' | 'never';
  loginDate: string;
  riskMin: string;
  riskMax: string;
  sort: SortField;
  order: 'asc' | 'desc';
  limit: number;
}

export const EMPTY: SearchForm = {
  name: '',
  types: [],
  statuses: [],
  attributes: [],
  login: 'any',
  loginDate: '',
  riskMin: '',
  riskMax: '',
  sort: 'created_at',
  order: 'desc',
  limit: 25,
};

const OPERATOR: Record<AttributeOp, string> = {
  eq: '$eq',
  ne: '$ne',
  in: '$in',
  contains: '$contains',
  startsWith: '$startsWith',
  exists: '$exists',
  missing: '$exists',
};

/** The operand of an attribute row; undefined while the row is not filled in. */
function operandOf(row: AttributeRow): unknown {
  if (row.op === 'exists') return true;
  if (row.op === 'missing') return false;
  const value = row.value.trim();
  if (row.op === 'in') {
    const list = value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    return list.length > 0 ? list : undefined;
  }
  return value === '' ? undefined : value;
}

/** Midnight UTC of a `YYYY-MM-DD` date, or undefined for anything else. */
function dayStart(date: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined;
  const instant = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(instant.getTime()) ? undefined : instant.toISOString();
}

function score(text: string): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * The form as a §2 query: each filled-in field one condition, all of which must hold. Rows and
 * fields not filled in (an attribute without a key or a value, a date not chosen) add nothing; a
 * second row with the same key and test replaces the first.
 */
export function toQuery(form: SearchForm): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  if (form.name.trim()) query['name'] = { $contains: form.name.trim() };
  if (form.types.length > 0) query['type'] = form.types;
  if (form.statuses.length > 0) query['status'] = form.statuses;
  const attributes: Record<string, Record<string, unknown>> = {};
  for (const row of form.attributes) {
    const key = row.key.trim();
    const operand = operandOf(row);
    if (!key || operand === undefined) continue;
    (attributes[key] ??= {})[OPERATOR[row.op]] = operand;
  }
  if (Object.keys(attributes).length > 0) query['attributes'] = attributes;
  if (form.login === 'never') query['last_login'] = { $exists: false };
  else if (form.login !== 'any') {
    const instant = dayStart(form.loginDate);
    if (instant) query['last_login'] = form.login === 'before' ? { $lt: instant } : { $gte: instant };
  }
  const risk: Record<string, number> = {};
  const min = score(form.riskMin);
  const max = score(form.riskMax);
  if (min !== undefined) risk['$gte'] = min;
  if (max !== undefined) risk['$lte'] = max;
  if (Object.keys(risk).length > 0) query['risk_score'] = risk;
  return query;
}

export interface Ran {
  form: SearchForm;
  page: number;
}

const strings = (value: unknown, allowed?: readonly string[]): string[] =>
  Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string' && (!allowed || allowed.includes(v)))
    : [];
const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);

/**
 * A search from the page's address (`?q=`, written by every run so that a search can be
 * bookmarked, shared and gone back to), read defensively: the address is anyone's to edit.
 */
export function readSearch(query: URLSearchParams): Ran | null {
  const type = query.get('type');
  const name = query.get('name');
  if (type || name) return { form: { ...EMPTY, types: type ? [type] : [], name: name ?? '' }, page: 1 };
  const raw = query.get('q');
  if (!raw) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object') return null;
  const { form: f, page } = parsed as { form?: Record<string, unknown>; page?: unknown };
  if (!f || typeof f !== 'object') return null;
  const sorts = SORTS.map(([field]) => field);
  const form: SearchForm = {
    name: text(f['name']),
    types: strings(f['types'], TYPES),
    statuses: strings(f['statuses'], STATUSES),
    attributes: (Array.isArray(f['attributes']) ? (f['attributes'] as unknown[]) : [])
      .filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object')
      .map((r) => ({
        key: text(r['key']),
        op: (Object.keys(ATTRIBUTE_OPS).includes(text(r['op'])) ? text(r['op']) : 'eq') as AttributeOp,
        value: text(r['value']),
      })),
    login: (['any', 'before', 'after', 'never'] as const).find((l) => l === f['login']) ?? 'any',
    loginDate: text(f['loginDate']),
    riskMin: text(f['riskMin']),
    riskMax: text(f['riskMax']),
    sort: sorts.find((s) => s === f['sort']) ?? 'created_at',
    order: f['order'] === 'asc' ? 'asc' : 'desc',
    limit: [25, 50, 100].includes(Number(f['limit'])) ? Number(f['limit']) : 25,
  };
  return { form, page: Number.isInteger(page) && (page as number) >= 1 ? (page as number) : 1 };
}
