import { expect } from 'chai';
import fc from 'fast-check';
import {
  ATTRIBUTE_OPS,
  EMPTY,
  SORTS,
  STATUSES,
  toQuery,
  TYPES,
  type AttributeOp,
  type AttributeRow,
  type SearchForm,
} from '../../console/src/search-form.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { insertPrincipal } from '../helpers/principals.js';
import { type PrincipalStatus, type PrincipalType } from '../../src/vocabulary/principals.js';

interface Seeded {
  id: string;
  name: string;
  type: string;
  status: string;
  attributes: Record<string, string | string[]>;
  lastLogin: string | null;
  risk: number;
}

const NAMES = [
  'alpha-bot',
  'Beta Service',
  'gamma key',
  'Delta',
  'epsilon-agent',
  'Zeta Payroll',
  'eta',
  'Theta Ops',
];
const TEAMS = ['payments', 'Payments', 'platform', 'payroll'];
const ENVS = ['prod', 'dev', 'staging'];
const TAGS = [['pci'], ['pci', 'sox'], ['sox'], []];
const LOGINS = [null, '2025-06-01T12:00:00.000Z', '2026-01-31T00:00:00.000Z', '2026-09-15T08:30:00.000Z'];
const STATUS_CYCLE: PrincipalStatus[] = ['active', 'active', 'suspended', 'deprovisioned'];

/**
 * What a form means, said plainly over the seeded records, independently of the query the
 * console builds from it: rows and fields not filled in say nothing; a later row with the same
 * key and test replaces an earlier one; the rest as docs/api.md §2 has it.
 */
function formHolds(p: Seeded, form: SearchForm): boolean {
  const name = form.name.trim();
  if (name && !p.name.toLowerCase().includes(name.toLowerCase())) return false;
  if (form.types.length > 0 && !form.types.includes(p.type)) return false;
  if (form.statuses.length > 0 ? !form.statuses.includes(p.status) : p.status === 'deleted') return false;
  const tests = new Map<string, Map<AttributeOp | 'exists', AttributeRow>>();
  for (const row of form.attributes) {
    const key = row.key.trim();
    const filled =
      row.op === 'exists' ||
      row.op === 'missing' ||
      (row.op === 'in' ? row.value.split(',').some((v) => v.trim() !== '') : row.value.trim() !== '');
    if (!key || !filled) continue;
    const byOp = tests.get(key) ?? new Map<AttributeOp | 'exists', AttributeRow>();
    byOp.set(row.op === 'missing' ? 'exists' : row.op, row);
    tests.set(key, byOp);
  }
  for (const [key, byOp] of tests) {
    const value = p.attributes[key];
    for (const row of byOp.values()) if (!attributeHolds(value, row)) return false;
  }
  if (form.login === 'never' && p.lastLogin !== null) return false;
  if ((form.login === 'before' || form.login === 'after') && /^\d{4}-\d{2}-\d{2}$/.test(form.loginDate)) {
    const at = Date.parse(`${form.loginDate}T00:00:00Z`);
    if (!Number.isNaN(at)) {
      if (p.lastLogin === null) return false;
      const login = Date.parse(p.lastLogin);
      if (form.login === 'before' ? !(login < at) : !(login >= at)) return false;
    }
  }
  const min = form.riskMin.trim() === '' ? NaN : Number(form.riskMin);
  const max = form.riskMax.trim() === '' ? NaN : Number(form.riskMax);
  if (Number.isFinite(min) && p.risk < min) return false;
  if (Number.isFinite(max) && p.risk > max) return false;
  return true;
}

function attributeHolds(value: string | string[] | undefined, row: AttributeRow): boolean {
  const operand = row.value.trim();
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const equals = values.includes(operand);
  switch (row.op) {
    case 'exists':
      return value !== undefined;
    case 'missing':
      return value === undefined;
    case 'eq':
      return equals;
    case 'ne':
      return !equals;
    case 'in': {
      const list = row.value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
      return values.some((v) => list.includes(v));
    }
    case 'contains':
      return Array.isArray(value)
        ? value.includes(operand)
        : typeof value === 'string' && value.toLowerCase().includes(operand.toLowerCase());
    case 'startsWith':
      return values.some((v) => v.toLowerCase().startsWith(operand.toLowerCase()));
  }
}

/** Forms over the seeded vocabulary, blanks and near misses included. */
const form: fc.Arbitrary<SearchForm> = fc.record({
  name: fc.constantFrom('', ' ', 'a', 'BOT', 'service', 'pay', 'zz'),
  types: fc.subarray([...TYPES]),
  statuses: fc.subarray([...STATUSES]),
  attributes: fc.array(
    fc.record({
      key: fc.constantFrom('team', 'env', 'tags', 'absent', ' team '),
      op: fc.constantFrom(...(Object.keys(ATTRIBUTE_OPS) as AttributeOp[])),
      value: fc.constantFrom(
        '',
        'payments',
        'Payments',
        'PAY',
        'pay',
        'prod',
        'prod, dev',
        ' , ',
        'pci',
        'so',
        'sox',
      ),
    }),
    { maxLength: 3 },
  ),
  login: fc.constantFrom('any', 'before', 'after', 'never'),
  loginDate: fc.constantFrom('', '2026-01-31', '2025-12-01', '2026-13-45'),
  riskMin: fc.constantFrom('', '0', '10', '35'),
  riskMax: fc.constantFrom('', '10', '40', '100'),
  sort: fc.constantFrom(...SORTS.map(([field]) => field)),
  order: fc.constantFrom('asc', 'desc'),
  limit: fc.constant(100),
});

describe('console search form against the service', function () {
  this.timeout(120_000);
  let app: TestApp;
  let api: HttpClient;
  const seeded: Seeded[] = [];

  const fx = useApp();

  before(async () => {
    app = fx.app;
    api = fx.api;
    const types: PrincipalType[] = ['USER', 'SERVICE_ACCOUNT', 'AI_AGENT', 'API_KEY'];
    for (let i = 0; i < 32; i += 1) {
      const attributes: Record<string, string | string[]> = {};
      if (i % 5 !== 0) attributes['team'] = TEAMS[i % TEAMS.length]!;
      if (i % 3 !== 0) attributes['env'] = ENVS[i % ENVS.length]!;
      const tags = TAGS[i % TAGS.length]!;
      if (tags.length > 0) attributes['tags'] = tags;
      const p = await insertPrincipal(app, {
        type: types[i % types.length]!,
        name: `${NAMES[i % NAMES.length]!} ${i}`,
        attributes,
        status: STATUS_CYCLE[i % STATUS_CYCLE.length]!,
        ...(LOGINS[i % LOGINS.length] ? { lastLogin: LOGINS[i % LOGINS.length]! } : {}),
      });
      seeded.push({
        id: p.id,
        name: p.name,
        type: p.type,
        status: p.status,
        attributes,
        lastLogin: LOGINS[i % LOGINS.length] ?? null,
        risk: 0,
      });
    }
    // Risk scores are the service's to compute (they depend on the clock): read them back.
    const records = await api.post('/v1/principals/search', {
      query: { status: ['active', 'suspended', 'deprovisioned'] },
      limit: 100,
    });
    expect(records.status, records.text).to.equal(200);
    for (const r of records.body.data) seeded.find((s) => s.id === r.id)!.risk = r.risk_score;
  });

  it('every form the console can build is a search the service takes, and finds what the form means', async () => {
    await fc.assert(
      fc.asyncProperty(form, async (f) => {
        const res = await api.post('/v1/principals/search', {
          query: toQuery(f),
          sort: { field: f.sort, order: f.order },
          page: 1,
          limit: f.limit,
        });
        expect(res.status, res.text).to.equal(200);
        const found = (res.body.data as { id: string }[]).map((p) => p.id).sort();
        const expected = seeded
          .filter((p) => formHolds(p, f))
          .map((p) => p.id)
          .sort();
        expect(found).to.deep.equal(expected);
        expect(res.body.pagination.total).to.equal(expected.length);
      }),
      { numRuns: 120 },
    );
  });

  it('sorts by the column the form names', async () => {
    for (const order of ['asc', 'desc'] as const) {
      const res = await api.post('/v1/principals/search', {
        query: toQuery(EMPTY),
        sort: { field: 'name', order },
        limit: 100,
      });
      const names = (res.body.data as { name: string }[]).map((p) => p.name);
      const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect(names).to.deep.equal(order === 'asc' ? sorted : sorted.reverse());
    }
  });
});
