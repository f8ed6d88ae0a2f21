import { expect } from 'chai';
import fc from 'fast-check';
import { fromProperties, type Principal } from '../../src/principals/model.js';
import { compile, type Sort } from '../../src/principals/search/cypher.js';
import { compileShaped } from '../../src/principals/search/shaped.js';
import {
  and,
  attribute,
  condition,
  field,
  not,
  or,
  type Condition,
  type Operand,
  type Operator,
  type Query,
  type Target,
  kindOf as kindOfTarget,
} from '../../src/principals/search/model.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { cypher } from '../helpers/db.js';
import { insertPrincipal, type InsertPrincipal } from '../helpers/principals.js';
import { matches } from '../helpers/query-reference.js';
import { SORT_FIELDS } from '../../src/vocabulary/search.js';

interface Seed extends InsertPrincipal {
  created: string;
  risk: number;
}

/**
 * Principals of every type and status, with string and array attributes, numbers written as
 * text, missing fields and attributes, and ties in every sort field.
 */
const SEEDS: Seed[] = [
  {
    name: 'alice',
    email: 'alice@example.com',
    attributes: { team: 'payments', environment: 'prod', level: '10', tags: ['apollo', 'Gemini'] },
    lastLogin: '2026-07-15T10:00:00.000Z',
    created: '2026-01-01T00:00:00.000Z',
    risk: 10,
  },
  {
    name: 'bob',
    email: 'bob@example.com',
    connectorSource: 'entra',
    attributes: { team: 'platform', level: '9', tags: ['gemini'] },
    lastLogin: '2026-08-15T00:00:00.000Z',
    created: '2026-02-01T00:00:00.000Z',
    risk: 25,
  },
  {
    name: 'carol',
    attributes: { team: 'payments', level: 'n/a' },
    created: '2026-03-01T00:00:00.000Z',
    risk: 10,
  },
  {
    type: 'SERVICE_ACCOUNT',
    name: 'batch',
    attributes: { team: 'payments', environment: 'staging', level: '2' },
    created: '2026-04-01T00:00:00.000Z',
    risk: 30,
  },
  {
    type: 'API_KEY',
    name: 'ci-key',
    attributes: { environment: 'prod', tags: ['read', 'write'] },
    created: '2026-05-01T00:00:00.000Z',
    risk: 70,
  },
  {
    type: 'AI_AGENT',
    name: 'support-agent',
    attributes: { team: 'payments', environment: 'prod', tags: ['code_execution', 'Read'] },
    lastLogin: '2026-07-20T00:00:00.000Z',
    created: '2026-06-01T00:00:00.000Z',
    risk: 85,
  },
  {
    type: 'AI_AGENT',
    name: 'research-agent',
    attributes: { team: 'research', environment: 'staging', tags: ['web_search'] },
    created: '2026-06-01T00:00:00.000Z',
    risk: 40,
  },
  {
    type: 'SERVICE_ACCOUNT',
    name: 'old-batch',
    status: 'deleted',
    attributes: { team: 'payments', environment: 'prod' },
    created: '2025-12-01T00:00:00.000Z',
    risk: 30,
  },
  {
    name: 'dave',
    status: 'suspended',
    attributes: { team: 'platform' },
    lastLogin: '2026-07-01T00:00:00.000Z',
    created: '2026-07-01T00:00:00.000Z',
    risk: 25,
  },
  {
    name: 'erin',
    status: 'deprovisioned',
    connectorSource: 'entra',
    attributes: { level: '10' },
    created: '2026-07-01T00:00:00.000Z',
    risk: 0,
  },
  { type: 'API_KEY', name: 'bare-key', created: '2026-08-01T00:00:00.000Z', risk: 0 },
];

describe('query representation on Neo4j', () => {
  let app: TestApp;
  let principals: Principal[] = [];

  const fx = useApp();

  before(async function () {
    this.timeout(60_000);
    app = fx.app;
    for (const seed of SEEDS) {
      const p = await insertPrincipal(app, seed);
      await cypher(
        app.runtime.db,
        'MATCH (p:Principal {id: $id}) SET p.created_at = datetime($created), p.updated_at = datetime($created) + duration({days: 1}), p.risk_score = $risk',
        { id: p.id, created: seed.created, risk: seed.risk },
      );
    }
    const rows = await cypher(app.runtime.db, 'MATCH (p:Principal) RETURN properties(p) AS props');
    principals = rows.map((r) => fromProperties(r['props'] as Record<string, unknown>));
    expect(principals).to.have.length(SEEDS.length);
  });

  const DEFAULT_SORT: Sort = { field: 'created_at', order: 'desc' };

  /** The page the compiled statement answers, as names, with the total. */
  const run = async (
    query: Query,
    sort = DEFAULT_SORT,
    page = { skip: 0, limit: 100 },
    compiled = compile(query, sort, page, app.runtime.db.catalogue),
  ) => {
    const [row] = await app.runtime.db.run<{ total: number; rows: Record<string, unknown>[] }>(
      compiled,
      compiled.params,
    );
    return { total: row!.total, names: row!.rows.map((r) => r['name'] as string) };
  };
  const names = async (query: Query): Promise<string[]> => (await run(query)).names.sort();
  const expected = (query: Query): string[] =>
    principals
      .filter((p) => matches(p, query))
      .map((p) => p.name)
      .sort();

  const eq = (target: Target, v: Operand): Condition => condition(target, '$eq', v);
  const team = attribute('team');

  it('reads not as the complement: a missing attribute matches not $eq', async () => {
    const q = not(eq(team, 'payments'));
    const found = await names(q);
    // erin and bare-key have no team; the deleted old-batch has one; nothing is implied.
    expect(found).to.deep.equal(['bob', 'bare-key', 'dave', 'erin', 'research-agent', 'ci-key'].sort());
    expect(found).to.deep.equal(await names(condition(team, '$ne', 'payments')));
    expect(await names(not(condition(team, '$exists', true)))).to.deep.equal(['bare-key', 'ci-key', 'erin']);
    expect(await names(not(condition(attribute('level'), '$gt', 5)))).to.deep.equal(
      expected(not(condition(attribute('level'), '$gt', 5))),
    );
  });

  it('answers or, and of ors, and trees that need distributing', async () => {
    const cases: [Query, string[]][] = [
      [
        or(eq(field('type'), 'AI_AGENT'), eq(attribute('environment'), 'staging')),
        ['batch', 'research-agent', 'support-agent'],
      ],
      [
        and(
          or(eq(team, 'payments'), eq(team, 'platform')),
          or(eq(field('status'), 'suspended'), eq(field('status'), 'deleted')),
        ),
        ['dave', 'old-batch'],
      ],
      [
        or(
          eq(field('name'), 'erin'),
          and(
            eq(team, 'payments'),
            or(eq(attribute('tags'), 'Gemini'), eq(field('type'), 'SERVICE_ACCOUNT')),
          ),
        ),
        ['alice', 'batch', 'erin', 'old-batch'],
      ],
      [
        not(or(eq(field('type'), 'USER'), condition(attribute('tags'), '$exists', true))),
        ['bare-key', 'batch', 'old-batch'],
      ],
      [
        and(
          not(and(eq(team, 'payments'), eq(attribute('environment'), 'prod'))),
          eq(field('type'), 'AI_AGENT'),
        ),
        ['research-agent'],
      ],
      [condition(attribute('tags'), '$endsWith', 'ITE'), ['ci-key']],
      // Two principals in the window against six linked to payments: the range is the anchor.
      [
        and(
          eq(team, 'payments'),
          condition(field('created_at'), '$gt', '2026-05-31T00:00:00Z'),
          condition(field('created_at'), '$lt', '2026-06-02T00:00:00Z'),
        ),
        ['support-agent'],
      ],
      [or(), []],
      [and(), SEEDS.map((s) => s.name).sort()],
    ];
    for (const [q, want] of cases) {
      expect(await names(q), JSON.stringify(q)).to.deep.equal(want.sort());
      expect(expected(q), `reference: ${JSON.stringify(q)}`).to.deep.equal(want.sort());
    }
  });

  const values: Record<string, Operand[]> = {
    type: ['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT'],
    status: ['active', 'suspended', 'deprovisioned', 'deleted'],
    name: ['alice', 'bob', 'carol', 'zed', 'a', 'ci-key', 'AGENT'],
    email: ['alice@example.com', 'bob@example.com', 'EXAMPLE', 'b'],
    connector_source: ['okta', 'entra', 'OK'],
    created_at: [
      '2026-01-01T00:00:00Z',
      '2026-06-01T02:00:00+02:00',
      '2026-06-01T00:00:00.000000001Z',
      '2027-01-01T00:00:00Z',
    ],
    updated_at: ['2026-01-02T00:00:00Z', '2026-06-02T00:00:00Z'],
    last_login: ['2026-07-15T10:00:00Z', '2026-08-01T00:00:00Z'],
    risk_score: [0, 10, 25, 70, 100],
    team: ['payments', 'platform', 'research', 'PAY', 'pay'],
    environment: ['prod', 'staging', 'dev', 'PROD'],
    level: ['10', '9', 'n/a', '2', 5, 9.5, 10],
    tags: ['apollo', 'gemini', 'Gemini', 'read', 'RITE', 'code', 'web_search'],
    missing: ['x'],
  };
  const fields = [
    'type',
    'status',
    'name',
    'email',
    'connector_source',
    'created_at',
    'updated_at',
    'last_login',
    'risk_score',
  ] as const;
  const attributes = ['team', 'environment', 'level', 'tags', 'missing'] as const;
  const ops: Record<string, readonly Operator[]> = {
    label: ['$eq', '$ne', '$in', '$nin', '$exists'],
    ordered: ['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'],
    text: [
      '$eq',
      '$ne',
      '$in',
      '$nin',
      '$gt',
      '$gte',
      '$lt',
      '$lte',
      '$contains',
      '$startsWith',
      '$endsWith',
      '$eqIgnoreCase',
      '$exists',
    ],
  };
  const kindOf = (name: string): keyof typeof ops =>
    name === 'type' || name === 'status'
      ? 'label'
      : ['created_at', 'updated_at', 'last_login', 'risk_score'].includes(name)
        ? 'ordered'
        : 'text';
  const conditionArb: fc.Arbitrary<Query> = fc
    .constantFrom(
      ...fields.map((f) => ({ target: field(f), name: f })),
      ...attributes.map((a) => ({ target: attribute(a), name: a })),
    )
    .chain(({ target, name }) =>
      fc.constantFrom(...ops[kindOf(name)]!).chain((op) => {
        const pool = values[name]!;
        // Text operators take text; numbers only compare.
        const textual = pool.filter((v) => typeof v === 'string');
        const usable =
          ['$contains', '$startsWith', '$endsWith', '$eqIgnoreCase', '$eq', '$ne', '$in', '$nin'].includes(
            op,
          ) && textual.length > 0
            ? textual
            : pool;
        if (op === '$exists') return fc.boolean().map((b) => condition(target, op, b));
        if (op === '$in' || op === '$nin') {
          return fc
            .uniqueArray(fc.constantFrom(...usable), { minLength: 1, maxLength: 3 })
            .map((vs) => condition(target, op, vs as (string | number)[]));
        }
        return fc.constantFrom(...usable).map((v) => condition(target, op, v));
      }),
    );
  const queryArb = fc.letrec<{ query: Query }>((tie) => ({
    query: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      conditionArb,
      fc.array(tie('query'), { maxLength: 3 }).map((of) => and(...of)),
      fc.array(tie('query'), { maxLength: 3 }).map((of) => or(...of)),
      tie('query').map((q) => not(q)),
    ),
  })).query;
  const sortArb = fc.record({
    field: fc.constantFrom(...SORT_FIELDS),
    order: fc.constantFrom('asc' as const, 'desc' as const),
  });

  const order =
    (sort: Sort) =>
    (a: Principal, b: Principal): number => {
      const key = (p: Principal) =>
        (p as unknown as Record<string, unknown>)[sort.field] as string | number | null;
      const ka = key(a);
      const kb = key(b);
      if ((ka === null) !== (kb === null)) return ka === null ? 1 : -1;
      const sign = sort.order === 'asc' ? 1 : -1;
      if (ka !== kb && ka !== null && kb !== null) return (ka < kb ? -1 : 1) * sign;
      return (a.id < b.id ? -1 : 1) * sign;
    };

  it('agrees with the reference semantics on random trees, sorts and pages', async function () {
    this.timeout(300_000);
    await fc.assert(
      fc.asyncProperty(
        queryArb,
        sortArb,
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        async (query, sort, limit, pageIndex) => {
          const want = principals.filter((p) => matches(p, query)).sort(order(sort));
          const got = await run(query, sort, { skip: pageIndex * limit, limit });
          expect(got.total).to.equal(want.length);
          expect(got.names).to.deep.equal(
            want.slice(pageIndex * limit, pageIndex * limit + limit).map((p) => p.name),
          );
        },
      ),
      { numRuns: 250 },
    );
  });

  it('agrees with the reference semantics when a conjunction runs the statement written for its shape', async function () {
    this.timeout(300_000);
    // What /v1 search produces: types and statuses as $in lists, other conditions as they come.
    const labelArb = fc
      .constantFrom('type' as const, 'status' as const)
      .chain((name) =>
        fc
          .uniqueArray(fc.constantFrom(...(values[name] as string[])), { minLength: 1, maxLength: 3 })
          .map((vs) => condition(field(name), '$in', vs)),
      );
    const conjunctArb = fc.oneof(
      { weight: 1, arbitrary: labelArb },
      {
        weight: 4,
        arbitrary: conditionArb.filter((q) => q.kind === 'condition' && kindOfTarget(q.target) !== 'label'),
      },
    );
    let shaped = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(conjunctArb, { minLength: 1, maxLength: 7 }),
        sortArb,
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        async (conditions, sort, limit, pageIndex) => {
          const query = and(...conditions);
          const page = { skip: pageIndex * limit, limit };
          const statement = compileShaped(query, sort, page, app.runtime.db.catalogue);
          if (!statement) return;
          shaped += 1;
          const want = principals.filter((p) => matches(p, query)).sort(order(sort));
          const got = await run(query, sort, page, statement as never);
          expect(got.total).to.equal(want.length);
          expect(got.names).to.deep.equal(want.slice(page.skip, page.skip + limit).map((p) => p.name));
        },
      ),
      { numRuns: 250, seed: 20261123 },
    );
    expect(shaped, 'most conjunctions have a statement of their own').to.be.greaterThan(125);
  });
});
