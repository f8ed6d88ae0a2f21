import { expect } from 'chai';
import fc from 'fast-check';
import { Catalogue } from '../../src/db/catalogue.js';
import { AppError } from '../../src/errors/errors.js';
import { compileSearch, type SearchRequest } from '../../src/principals/search/service.js';
import { compile as compileQuery, type SearchParams, type Sort } from '../../src/principals/search/cypher.js';
import { and, attribute, condition, field, not, or, type Query } from '../../src/principals/search/model.js';
import { compileScoped } from '../../src/principals/search/scoped.js';
import { compileShaped } from '../../src/principals/search/shaped.js';
import { SEARCH_TEMPLATES } from '../../src/principals/repository.js';
import { MAX_PAGE } from '../../src/pagination.js';
import { parseInstant } from '../../src/time.js';
import { SORT_FIELDS } from '../../src/vocabulary/search.js';
import { PRINCIPAL_STATUSES, PRINCIPAL_TYPES } from '../../src/vocabulary/principals.js';

/** Values a caller might try to smuggle into the query text. */
const HOSTILE = [
  "x' OR 1=1 //",
  'x` MATCH (n) DETACH DELETE n //',
  '}) RETURN 1 //',
  '$injected OR true',
  '/*FILTERS*/',
  'MATCH (n) DETACH DELETE n',
];

describe('search compiler', () => {
  let catalogue: Catalogue;
  before(async () => {
    catalogue = await Catalogue.load();
  });

  const compile = (request: unknown) => compileSearch(request as SearchRequest, catalogue);

  const failure = (request: unknown): AppError => {
    try {
      compile(request);
    } catch (err) {
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).code).to.equal('VALIDATION_FAILED');
      return err as AppError;
    }
    throw new Error(`accepted ${JSON.stringify(request)}`);
  };
  const pointers = (request: unknown): string[] => (failure(request).errors ?? []).map((e) => e.pointer);

  /** Every string anywhere in a parameter value, for checking where input went. */
  const strings = (value: unknown): string[] =>
    typeof value === 'string'
      ? [value]
      : Array.isArray(value)
        ? value.flatMap(strings)
        : value !== null && typeof value === 'object'
          ? Object.values(value).flatMap(strings)
          : [];

  const q = (request: unknown): SearchParams => compile(request).params.q;

  describe('parameters', () => {
    it('puts every value into the parameters and none into the text', () => {
      for (const hostile of HOSTILE) {
        const request = {
          query: {
            name: hostile,
            email: { $contains: hostile },
            connector_source: { $in: [hostile, 'okta'] },
            attributes: {
              team: hostile,
              environment: { $startsWith: hostile, $ne: hostile },
              tags: { $contains: hostile, $nin: [hostile] },
              level: { $gt: hostile, $lt: 5 },
            },
          },
        };
        const { text, params } = compile(request);
        expect(text).not.to.include(hostile);
        const values = strings(params);
        expect(values).to.include(hostile);
        expect(values).to.include('okta');
      }
    });

    it('passes attribute keys only as parameters, with and without the property prefix', () => {
      const { text, params } = compile({
        query: { attributes: { zz_team_key: { $in: ['a'] }, 'zz.other-key': { $exists: true } } },
      });
      expect(text).not.to.include('zz_team_key');
      expect(text).not.to.include('zz.other-key');
      const values = strings(params);
      expect(values).to.include('zz_team_key');
      expect(values).to.include('attr.zz_team_key');
      expect(values).to.include('attr.zz.other-key');
    });

    it('normalises instants to UTC before they reach Cypher', () => {
      const params = q({
        query: { created_at: { $gte: '2026-01-01T02:00:00+02:00', $lt: '2026-01-02t00:00:00.123456z' } },
      });
      const literals = params.clauses.flatMap((c) => c.terms.flat());
      expect(literals.map((l) => [l.op, l.value, l.temporal])).to.deep.include.members([
        ['gte', '2026-01-01T00:00:00Z', true],
        ['lt', '2026-01-02T00:00:00.123456Z', true],
      ]);
      expect(params.anchor).to.include({
        kind: 'created_at',
        lo: '2026-01-01T00:00:00Z',
        loOpen: 0,
        hi: '2026-01-02T00:00:00.123456Z',
        hiOpen: 1,
      });
    });

    it('gives numbers to numeric comparisons and strings to text comparisons', () => {
      const literals = q({ query: { attributes: { level: { $gt: 5, $lte: 'm' } } } }).clauses.flatMap((c) =>
        c.terms.flat(),
      );
      expect(literals.map((l) => [l.op, l.value, l.numeric])).to.deep.equal([
        ['gt', 5, true],
        ['lte', 'm', false],
      ]);
    });

    it('uses one text for every search, sort and page', () => {
      const texts = new Set(
        [
          {},
          { query: { attributes: { a: { $ne: 'x' }, b: { $in: ['y'] } } } },
          { query: { type: 'USER', email: 'a@example.com' }, sort: { field: 'name', order: 'asc' } },
          { query: { last_login: { $exists: false } }, sort: { field: 'last_login' }, page: 9 },
          { query: { status: 'deleted', risk_score: { $gte: 50 } }, limit: 1 },
        ].map((r) => compile(r).text),
      );
      expect(texts.size).to.equal(1);
    });
  });

  describe('query shape', () => {
    it('answers type, status and connector source alone from the label counts', () => {
      const none = q({});
      expect(none.counted).to.deep.equal({
        types: ['User', 'ServiceAccount', 'ApiKey', 'AiAgent'],
        leftOut: ['Deleted'],
        source: null,
        ref: null,
      });
      expect(none).to.include({ allTypes: true, notDeleted: true });
      expect(none.anchor.kind).to.equal('all');

      const typed = q({
        query: { type: 'AI_AGENT', connector_source: 'okta', status: ['active', 'deleted'] },
      });
      expect(typed.counted).to.deep.equal({
        types: ['AiAgent'],
        leftOut: ['Suspended', 'Deprovisioned'],
        source: 'okta',
        ref: null,
      });
      expect(typed).to.include({ allTypes: false, notDeleted: false });
      expect(typed.statuses).to.deep.equal(['Active', 'Deleted']);
      expect(typed.anchor).to.deep.include({ kind: 'connector_source', values: ['okta'] });
    });

    it('counts by matching when the statuses asked for are the rare ones', () => {
      const params = q({ query: { status: 'suspended' } });
      expect(params.counted).to.equal(null);
      expect(params.anchor).to.deep.equal({ kind: 'labels', labels: ['Suspended'], checked: [] });
      expect(q({ query: { name: 'x' } }).counted).to.equal(null);
    });

    it('leaves deleted principals out unless the status names them', () => {
      expect(q({ query: { name: 'x' } })).to.include({ notDeleted: true });
      const deleted = q({ query: { name: 'x', status: 'deleted' } });
      expect(deleted).to.include({ notDeleted: false });
      expect(deleted.statuses).to.deep.equal(['Deleted']);
    });

    it('anchors attribute equalities on their value nodes and lets the query pick the rarest', () => {
      const params = q({
        query: { type: ['USER'], attributes: { team: 'payments', environment: 'prod', manager_id: 'prn_x' } },
      });
      // manager_id has no value nodes, so it is only ever a filter.
      expect(params.anchor).to.deep.equal({
        kind: 'values',
        groups: [
          { at: 2, key: 'environment', values: ['prod'] },
          { at: 4, key: 'team', values: ['payments'] },
        ],
        range: null,
        checked: [],
      });
      expect(params.types).to.deep.equal(['User']);
      const $in = q({ query: { attributes: { team: { $in: ['a', 'b'] }, env: { $startsWith: 'pr' } } } });
      expect($in.anchor).to.deep.include({
        kind: 'values',
        groups: [{ at: 2, key: 'team', values: ['a', 'b'] }],
      });
    });

    it('anchors $startsWith and $contains on the values of one key when nothing better exists', () => {
      const prefix = q({ query: { attributes: { env: { $startsWith: 'pr' }, role: { $contains: 'eng' } } } });
      expect(prefix.anchor).to.deep.include({ kind: 'key', key: 'env', op: 'startsWith', checked: [] });
      // $contains is exact on the value nodes, so the filter skips it for the anchor's candidates.
      const contains = q({ query: { attributes: { role: { $contains: 'eng' } } } });
      expect(contains.anchor).to.deep.include({ kind: 'key', key: 'role', op: 'contains', checked: [1] });
      expect(contains.clauses.map((c) => c.at)).to.deep.equal([1]);
    });

    it('prefers email and name equality, and timestamps over weak attribute operators', () => {
      expect(q({ query: { email: 'a@example.com', attributes: { team: 'x' } } }).anchor).to.deep.equal({
        kind: 'email',
        values: ['a@example.com'],
        checked: [1],
      });
      const byTime = q({
        query: { last_login: { $gt: '2026-01-01T00:00:00Z' }, attributes: { role: { $contains: 'eng' } } },
      });
      expect(byTime.anchor).to.deep.include({ kind: 'last_login', lo: '2026-01-01T00:00:00Z', loOpen: 1 });
      const byAttribute = q({
        query: { last_login: { $gt: '2026-01-01T00:00:00Z' }, attributes: { role: { $in: ['eng'] } } },
      });
      expect(byAttribute.anchor.kind).to.equal('values');
    });

    it('lets a narrow range compete at run time with the value nodes, and leaves wide ones out', () => {
      const week = q({
        query: {
          last_login: { $gte: '2026-01-01T00:00:00Z', $lt: '2026-01-08T00:00:00Z' },
          attributes: { environment: 'prod' },
        },
      });
      expect(week.anchor).to.deep.include({
        kind: 'values',
        range: {
          kind: 'last_login',
          lo: '2026-01-01T00:00:00Z',
          loOpen: 0,
          hi: '2026-01-08T00:00:00Z',
          hiOpen: 1,
          checked: [1, 2],
        },
      });
      const years = q({
        query: {
          last_login: { $gte: '2024-01-01T00:00:00Z', $lt: '2026-01-08T00:00:00Z' },
          attributes: { environment: 'prod' },
        },
      });
      expect(years.anchor).to.deep.include({ kind: 'values', range: null });
    });

    it('takes sort fields and directions from the whitelist only', () => {
      expect(q({ sort: { field: 'name', order: 'asc' } }).sort).to.deep.equal({
        key: 'name asc',
        field: 'name',
        desc: false,
        spread: 1,
        ordered: true,
        lo: '',
        hi: null,
      });
      // The ordered branch cannot serve a key some principals lack.
      expect(q({ sort: { field: 'last_login' } }).sort).to.include({ ordered: false, desc: true });
      expect(q({}).sort).to.include({ key: 'created_at desc', ordered: true });
      const ranged = q({ query: { risk_score: { $gte: 40, $lt: 60 } }, sort: { field: 'risk_score' } });
      // Scores repeat a lot: an ordered scan must finish each run of equal scores it enters.
      expect(ranged.sort).to.include({ lo: 40, hi: 60, spread: 100 });
      expect(ranged.anchor).to.include({ kind: 'risk_score', lo: 40, loOpen: 0, hi: 60, hiOpen: 1 });
    });

    it('pages with skip and limit, and keeps far pages within integer range', () => {
      expect(compile({ page: 3, limit: 20 }).params).to.include({ skip: 40, limit: 20, window: 60 });
      expect(compile({}).params).to.include({ skip: 0, limit: 50 });
      const far = compile({ page: MAX_PAGE, limit: 100 }).params;
      expect(far['skip']).to.equal((MAX_PAGE - 1) * 100);
      expect(Number.isSafeInteger(far['skip'])).to.equal(true);
      expect(far['window']).to.equal(2 ** 31);
      expect(() => compile({ page: MAX_PAGE + 1, limit: 100 })).to.throw('invalid');
    });

    it('fills every marker of the template', () => {
      expect(compile({}).text).not.to.match(/\/\*[A-Z_]+\*\//);
    });
  });

  describe('bounded texts', () => {
    const word = fc.constantFrom('a', 'payments', 'prod', "x' OR 1=1 //", '*/ MATCH (n) //', 'Ωmega', '');
    const instant = fc
      .date({
        min: new Date('2000-01-01T00:00:00Z'),
        max: new Date('2030-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
    const list = <T>(item: fc.Arbitrary<T>) => fc.array(item, { minLength: 1, maxLength: 4 });
    /** An operator object for a value kind: any subset of its operators, each with a fitting operand. */
    const operators = (value: fc.Arbitrary<unknown>, range: fc.Arbitrary<unknown>, text: boolean) =>
      fc.record(
        {
          $eq: value,
          $ne: value,
          $in: list(value),
          $nin: list(value),
          $gt: range,
          $gte: range,
          $lt: range,
          $lte: range,
          $exists: fc.boolean(),
          ...(text ? { $contains: word, $startsWith: word } : {}),
        },
        { requiredKeys: [] },
      );
    const condition = (value: fc.Arbitrary<unknown>, range: fc.Arbitrary<unknown>, text: boolean) =>
      fc.oneof(
        value,
        operators(value, range, text).filter((o) => Object.keys(o).length > 0),
      );
    const textCondition = condition(word, fc.oneof(word, fc.integer({ min: -5, max: 50 })), true);
    const body = fc.record(
      {
        query: fc.record(
          {
            type: fc.oneof(
              fc.constantFrom(...PRINCIPAL_TYPES),
              fc.uniqueArray(fc.constantFrom(...PRINCIPAL_TYPES), { minLength: 1 }),
            ),
            status: fc.oneof(
              fc.constantFrom(...PRINCIPAL_STATUSES),
              fc.uniqueArray(fc.constantFrom(...PRINCIPAL_STATUSES), { minLength: 1 }),
            ),
            name: textCondition,
            email: textCondition,
            connector_source: textCondition,
            created_at: condition(instant, instant, false),
            updated_at: condition(instant, instant, false),
            last_login: condition(instant, instant, false),
            risk_score: condition(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), false),
            attributes: fc.dictionary(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}$/), textCondition, {
              maxKeys: 4,
            }),
          },
          { requiredKeys: [] },
        ),
        sort: fc.record(
          { field: fc.constantFrom(...SORT_FIELDS), order: fc.constantFrom('asc', 'desc') },
          { requiredKeys: [] },
        ),
        page: fc.integer({ min: 1, max: 1000 }),
        limit: fc.integer({ min: 1, max: 100 }),
      },
      { requiredKeys: [] },
    );

    it('gives every valid search the same text, with the query only in a map parameter', () => {
      const texts = new Set<string>();
      let compiled = 0;
      fc.assert(
        fc.property(body, (request) => {
          let result: ReturnType<typeof compile>;
          try {
            result = compile(request);
          } catch (err) {
            // Over 32 conditions: refused, as it should be; everything else must compile.
            expect((err as AppError).errors?.map((e) => e.pointer)).to.deep.equal(['/query']);
            return;
          }
          compiled += 1;
          texts.add(result.text);
          // The plan cache keys on parameter types (and list sizes): only a map and integers here.
          expect(Object.keys(result.params).sort()).to.deep.equal(['limit', 'q', 'skip', 'window']);
          for (const key of ['skip', 'limit', 'window'] as const) {
            expect(Number.isSafeInteger(result.params[key]), key).to.equal(true);
          }
        }),
        // A fixed seed: how many bodies stay within 32 conditions depends on the draw.
        { numRuns: 2000, seed: 20261123 },
      );
      expect(compiled).to.be.greaterThan(900);
      expect(texts.size).to.equal(1);
    });
  });

  describe('validation', () => {
    it('refuses unknown operators, fields and keys with pointers', () => {
      expect(pointers({ query: { attributes: { team: { $foo: 'x' } } } })).to.include(
        '/query/attributes/team/$foo',
      );
      expect(pointers({ query: { name: { $regex: '.*' } } })).to.include('/query/name/$regex');
      expect(pointers({ query: { password: 'x' } })).to.include('/query/password');
      expect(pointers({ query: {}, select: ['id'] })).to.include('/select');
      for (const key of ['bad key', '1team', 'a`b', "a'b", 'a}b', 'a/b', '$team', 'x'.repeat(65)]) {
        const expected = `/query/attributes/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        expect(pointers({ query: { attributes: { [key]: 'v' } } }), key).to.include(expected);
      }
    });

    it('limits $in lists and the number of conditions', () => {
      expect(pointers({ query: { attributes: { team: { $in: [] } } } })).to.include(
        '/query/attributes/team/$in',
      );
      const many = Array.from({ length: 101 }, (_, i) => `v${i}`);
      expect(pointers({ query: { attributes: { team: { $in: many } } } })).to.include(
        '/query/attributes/team/$in',
      );
      expect(pointers({ query: { name: { $nin: many } } })).to.include('/query/name/$nin');
      compile({ query: { attributes: { team: { $in: many.slice(0, 100) } } } });

      const attributes = (n: number) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
      compile({ query: { attributes: attributes(32) } });
      expect(pointers({ query: { attributes: attributes(33) } })).to.include('/query');
      // Operators, type and status all count.
      compile({ query: { type: 'USER', status: 'active', attributes: attributes(30) } });
      expect(
        pointers({ query: { type: 'USER', status: 'active', attributes: attributes(31) } }),
      ).to.deep.equal(['/query']);
      const ops = {
        $ne: 'a',
        $nin: ['b'],
        $gt: 'c',
        $gte: 'd',
        $lt: 'e',
        $lte: 'f',
        $exists: true,
        $startsWith: 'g',
      };
      compile({ query: { attributes: { a: ops, b: ops, c: ops, d: ops } } });
      expect(
        pointers({ query: { name: 'x', attributes: { a: ops, b: ops, c: ops, d: ops } } }),
      ).to.deep.equal(['/query']);
    });

    it('refuses operands of the wrong type', () => {
      const cases: [unknown, string][] = [
        [{ query: { attributes: { team: 42 } } }, '/query/attributes/team'],
        [{ query: { attributes: { team: ['a', 'b'] } } }, '/query/attributes/team'],
        [{ query: { attributes: { team: null } } }, '/query/attributes/team'],
        [{ query: { attributes: { team: { $eq: 1 } } } }, '/query/attributes/team/$eq'],
        [{ query: { attributes: { team: { $in: 'a' } } } }, '/query/attributes/team/$in'],
        [{ query: { attributes: { team: { $in: [1] } } } }, '/query/attributes/team/$in/0'],
        [{ query: { attributes: { team: { $exists: 'yes' } } } }, '/query/attributes/team/$exists'],
        [{ query: { attributes: { team: { $gt: true } } } }, '/query/attributes/team/$gt'],
        [{ query: { attributes: { team: { $contains: 3 } } } }, '/query/attributes/team/$contains'],
        [{ query: { attributes: { team: {} } } }, '/query/attributes/team'],
        [{ query: { risk_score: { $gt: 'high' } } }, '/query/risk_score/$gt'],
        [{ query: { risk_score: 50.5 } }, '/query/risk_score'],
        [{ query: { risk_score: { $contains: '5' } } }, '/query/risk_score/$contains'],
        [{ query: { created_at: { $gt: 1700000000 } } }, '/query/created_at/$gt'],
        [{ query: { created_at: { $startsWith: '2026' } } }, '/query/created_at/$startsWith'],
        [{ query: { type: 'ROBOT' } }, '/query/type'],
        [{ query: { type: [] } }, '/query/type'],
        [{ query: { status: 'gone' } }, '/query/status'],
        [{ query: { name: { $in: ['a', 2] } } }, '/query/name/$in/1'],
        [{ query: 'name = x' }, '/query'],
      ];
      for (const [request, pointer] of cases) {
        expect(pointers(request), JSON.stringify(request)).to.include(pointer);
      }
    });

    it('refuses timestamps that are not real RFC 3339 instants', () => {
      const bad = [
        'yesterday',
        '2026-02-30T00:00:00Z',
        '2026-13-01T00:00:00Z',
        '2026-01-01T24:00:00Z',
        '2026-06-30T23:59:60Z',
        '2026-01-01',
        '2026-01-01T00:00:00',
        '2026-01-01T00:00:00.1234567891Z',
      ];
      for (const value of bad) {
        expect(pointers({ query: { created_at: { $gt: value } } }), value).to.include(
          '/query/created_at/$gt',
        );
        expect(pointers({ query: { last_login: value } }), value).to.include('/query/last_login');
        expect(
          pointers({ query: { updated_at: { $in: ['2026-01-01T00:00:00Z', value] } } }),
          value,
        ).to.include('/query/updated_at/$in/1');
      }
    });

    it('refuses bad sort input and pages out of range', () => {
      expect(pointers({ sort: { field: 'password' } })).to.include('/sort/field');
      expect(pointers({ sort: { field: 'name` DESC, p.secret' } })).to.include('/sort/field');
      expect(pointers({ sort: { order: 'up' } })).to.include('/sort/order');
      expect(pointers({ sort: { field: 'name', direction: 'asc' } })).to.include('/sort/direction');
      expect(pointers({ page: 0 })).to.include('/page');
      expect(pointers({ page: 1.5 })).to.include('/page');
      expect(pointers({ limit: 0 })).to.include('/limit');
      expect(pointers({ limit: 101 })).to.include('/limit');
      expect(pointers({ limit: '10' })).to.include('/limit');
    });
  });

  describe('SCIM queries', () => {
    const ref = 'con_01JBENCH0000000000000000';
    const users = (...rest: Query[]): Query =>
      and(
        condition(field('connector_ref'), '$eq', ref),
        condition(field('type'), '$in', ['USER']),
        condition(field('status'), '$in', ['active', 'suspended']),
        ...rest,
      );
    const byCreation: Sort = { field: 'created_at', order: 'asc' };
    const page = { skip: 0, limit: 10 };
    const since = '2026-01-01T00:00:00Z';

    it('anchors equality ignoring case on the values of its key, and the anchor enforces it', () => {
      const title = condition(attribute('role'), '$eqIgnoreCase', 'Engineer');
      const generic = compileQuery(users(title), byCreation, page, catalogue).params.q;
      expect(generic.anchor).to.deep.include({ kind: 'key', key: 'role', op: 'eqIgnoreCase', checked: [3] });
      const shaped = compileShaped(users(title), byCreation, page, catalogue);
      expect(shaped?.text).to.include('toLower(a0.value) = toLower($');
      expect(shaped?.text).to.include('-[r0:HAS_ATTRIBUTE]->(a0:Attribute)');
    });

    it('anchors a part of a user name on the attribute (no text index slows every write), and a prefix in the user name index', () => {
      const title = condition(attribute('role'), '$eqIgnoreCase', 'Engineer');
      const part = condition(field('user_name'), '$contains', 'Turing');
      expect(compileQuery(users(title, part), byCreation, page, catalogue).params.q.anchor.kind).to.equal(
        'key',
      );
      const shaped = compileShaped(users(title, part), byCreation, page, catalogue)!;
      expect(shaped.text).to.not.include('TEXT INDEX');
      expect(shaped.text).to.include('(a0:Attribute)');
      expect(shaped.text).to.match(/p\.user_name CONTAINS toLower\(\$v\d+\)/);
      const prefix = condition(field('user_name'), '$startsWith', 'Ada.');
      const byPrefix = compileShaped(users(title, prefix), byCreation, page, catalogue)!;
      expect(byPrefix.text).to.match(/p\.user_name STARTS WITH toLower\(\$v\d+\)/);
      expect(byPrefix.text).to.not.include('(a0');
    });

    it("runs a connector's users in creation order, in a timestamp range, on the scoped statement", () => {
      const scoped = compileScoped(
        users(condition(field('updated_at'), '$gt', since)),
        byCreation,
        { skip: 20, limit: 10 },
        catalogue,
      );
      expect(scoped?.params).to.deep.equal({
        scope: {
          ref,
          field: 'updated_at',
          created: {
            lo: '-999999999-01-01T00:00:00Z',
            loOpen: 0,
            hi: '+999999999-12-31T23:59:59.999999999Z',
            hiOpen: 0,
          },
          updated: { lo: since, loOpen: 1, hi: '+999999999-12-31T23:59:59.999999999Z', hiOpen: 0 },
        },
        skip: 20,
        limit: 10,
        window: 30,
        ids: false,
      });
      const listing = compileScoped(users(), byCreation, page, catalogue);
      expect(listing?.params.scope).to.deep.include({
        field: 'created_at',
        created: {
          lo: '-999999999-01-01T00:00:00Z',
          loOpen: 0,
          hi: '+999999999-12-31T23:59:59.999999999Z',
          hiOpen: 0,
        },
      });
      const created = compileScoped(
        users(condition(field('created_at'), '$lte', since), condition(field('created_at'), '$gte', since)),
        byCreation,
        page,
        catalogue,
      );
      expect(created?.params.scope.created).to.deep.equal({ lo: since, loOpen: 0, hi: since, hiOpen: 0 });
      expect(created?.text).to.equal(catalogue.get(SEARCH_TEMPLATES.search_scoped));
    });

    it('leaves every other query to the other statements', () => {
      const range = condition(field('updated_at'), '$gt', since);
      const others: [Query, Sort][] = [
        [users(range, condition(field('user_name'), '$eq', 'ada')), byCreation],
        [users(range, condition(field('created_at'), '$lt', since)), byCreation],
        [users(not(range)), byCreation],
        [users(condition(field('updated_at'), '$in', [since])), byCreation],
        [users(range, condition(field('status'), '$eq', 'active')), byCreation],
        [users(range), { field: 'created_at', order: 'desc' }],
        [users(range), { field: 'updated_at', order: 'asc' }],
        [users(or(range, condition(field('created_at'), '$gt', since))), byCreation],
        [
          and(condition(field('connector_ref'), '$eq', ref), condition(field('type'), '$in', ['USER'])),
          byCreation,
        ],
        [
          and(
            condition(field('connector_ref'), '$eq', ref),
            condition(field('type'), '$in', ['USER', 'SERVICE_ACCOUNT']),
            condition(field('status'), '$in', ['active']),
          ),
          byCreation,
        ],
        [
          and(condition(field('type'), '$in', ['USER']), condition(field('status'), '$in', ['active'])),
          byCreation,
        ],
      ];
      for (const [query, sort] of others) {
        expect(compileScoped(query, sort, page, catalogue), JSON.stringify(query)).to.equal(undefined);
      }
    });
  });

  describe('parseInstant', () => {
    it('keeps the instant and its precision', () => {
      expect(parseInstant('2026-11-22T09:15:02.123Z')).to.equal('2026-11-22T09:15:02.123Z');
      expect(parseInstant('2026-11-22T09:15:02Z')).to.equal('2026-11-22T09:15:02Z');
      expect(parseInstant('2026-01-01T00:30:00.5+01:00')).to.equal('2025-12-31T23:30:00.5Z');
      expect(parseInstant('2024-02-29T23:00:00-02:30')).to.equal('2024-03-01T01:30:00Z');
      expect(parseInstant('2023-02-29T00:00:00Z')).to.equal(undefined);
      expect(parseInstant('0000-01-01T00:00:00Z')).to.equal(undefined);
    });
  });
});
