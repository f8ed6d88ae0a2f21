import { expect } from 'chai';
import { Catalogue } from '../../src/db/catalogue.js';
import { AppError } from '../../src/errors/errors.js';
import { compileSearch, type SearchRequest } from '../../src/principals/search.js';
import { MAX_PAGE } from '../../src/pagination.js';
import { parseInstant } from '../../src/time.js';

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
      const { text, params } = compile({
        query: { created_at: { $gte: '2026-01-01T02:00:00+02:00', $lt: '2026-01-02t00:00:00.123456z' } },
      });
      expect(strings(params)).to.include.members(['2026-01-01T00:00:00Z', '2026-01-02T00:00:00.123456Z']);
      expect(text).to.match(/p\.created_at >= datetime\(\$v\d+\)/);
      expect(text).to.match(/p\.created_at < datetime\(\$v\d+\)/);
    });

    it('gives numbers to numeric comparisons and strings to text comparisons', () => {
      const { text, params } = compile({ query: { attributes: { level: { $gt: 5, $lte: 'm' } } } });
      expect(text).to.include('toFloatOrNull(e) >');
      expect(text).to.match(/WHERE e <= \$v\d+/);
      expect(Object.values(params)).to.include(5);
      expect(Object.values(params)).to.include('m');
    });

    it('uses the same text for the same conditions in another key order', () => {
      const a = compile({ query: { attributes: { a: { $ne: 'x' }, b: { $in: ['y'] } } } });
      const b = compile({ query: { attributes: { b: { $in: ['z'] }, a: { $ne: 'w' } } } });
      expect(a.text).to.equal(b.text);
    });
  });

  describe('query shape', () => {
    it('answers type, status and connector source alone from the listing template', () => {
      const none = compile({});
      expect(none.name).to.equal('principals/search_listing');
      expect(none.params).to.include({ source: null, labels: null });
      expect(none.params['types']).to.deep.equal(['USER', 'SERVICE_ACCOUNT', 'API_KEY', 'AI_AGENT']);
      // Every status but deleted: the label test, and deleted principals counted off the total.
      expect(none.text).to.include('NOT p:Deleted');
      expect(none.text).to.include('+ COUNT { MATCH (p:Deleted) WHERE true }');

      const typed = compile({
        query: { type: 'AI_AGENT', connector_source: 'okta', status: ['active', 'deleted'] },
      });
      expect(typed.name).to.equal('principals/search_listing');
      expect(typed.params).to.include({ source: 'okta' });
      expect(typed.params['labels']).to.deep.equal(['AiAgent']);
      expect(typed.text).to.include('(p:Active OR p:Deleted)');
      expect(typed.text).to.include(
        '+ COUNT { MATCH (p:Suspended) WHERE true AND (p:AiAgent) AND (p.connector_source = $source) }',
      );
      expect(typed.text).to.include('+ COUNT { MATCH (p:Deprovisioned)');
    });

    it('counts by matching when the statuses asked for are the rare ones', () => {
      const { name, text } = compile({ query: { status: 'suspended' } });
      expect(name).to.equal('principals/search');
      expect(text).to.include('AND (p:Suspended)');
      expect(text).not.to.include('NOT p:Deleted');
    });

    it('leaves deleted principals out unless the status names them', () => {
      expect(compile({ query: { name: 'x' } }).text).to.include('AND (NOT p:Deleted)');
      const deleted = compile({ query: { name: 'x', status: 'deleted' } }).text;
      expect(deleted).to.include('AND (p:Deleted)');
      expect(deleted).not.to.include('NOT p:Deleted');
    });

    it('anchors attribute equalities on their value nodes and lets the query pick the rarest', () => {
      const { text, params } = compile({
        query: { type: ['USER'], attributes: { team: 'payments', environment: 'prod', manager_id: 'prn_x' } },
      });
      expect(text).to.include('UNWIND $anchors AS anchor');
      expect(text).to.include('COUNT { (a0)<-[:HAS_ATTRIBUTE]-() }');
      // manager_id has no value nodes, so it is only ever a filter.
      expect(params['anchors']).to.deep.equal([
        { key: 'environment', value: 'prod' },
        { key: 'team', value: 'payments' },
      ]);
      // Type labels come from a fixed table and are written out, never taken from the request.
      expect(text).to.include('AND (p:User)');
    });

    it('anchors $in, $startsWith and $contains on the attribute key when nothing better exists', () => {
      const inList = compile({
        query: { attributes: { team: { $in: ['a', 'b'] }, env: { $startsWith: 'pr' } } },
      });
      expect(inList.text).to.include('-[r0:HAS_ATTRIBUTE]->(a0:Attribute)');
      expect(inList.text).to.match(/a0\.key = \$v\d+ AND a0\.value IN \$v\d+/);
      expect(inList.text).to.include('collect(DISTINCT p)');
      const contains = compile({ query: { attributes: { role: { $contains: 'eng' } } } });
      expect(contains.text).to.include('NOT coalesce(r0.array, false) OR a0.value =');
      expect(contains.text).not.to.include('DISTINCT');
    });

    it('prefers email and name equality, and timestamps over weak attribute operators', () => {
      const byEmail = compile({ query: { email: 'a@example.com', attributes: { team: 'x' } } });
      expect(byEmail.text).not.to.include('HAS_ATTRIBUTE');
      expect(byEmail.text).to.match(/p\.email = \$v\d+/);
      const byTime = compile({
        query: { last_login: { $gt: '2026-01-01T00:00:00Z' }, attributes: { role: { $contains: 'eng' } } },
      });
      expect(byTime.text).not.to.include('HAS_ATTRIBUTE');
      const byAttribute = compile({
        query: { last_login: { $gt: '2026-01-01T00:00:00Z' }, attributes: { role: { $in: ['eng'] } } },
      });
      expect(byAttribute.text).to.include('HAS_ATTRIBUTE');
    });

    it('takes sort fields and directions from the whitelist only', () => {
      const byName = compile({ query: { name: { $exists: true } }, sort: { field: 'name', order: 'asc' } });
      expect(byName.text).to.include('ORDER BY p.name ASC, p.id ASC');
      expect(byName.text).to.include('USING INDEX p:Principal(name)');
      const byLogin = compile({ query: { name: { $exists: true } }, sort: { field: 'last_login' } });
      expect(byLogin.text).to.include('ORDER BY p.last_login IS NULL, p.last_login DESC, p.id DESC');
      expect(byLogin.text).not.to.include('USING INDEX');
      // The ordered branch cannot serve a key some principals lack: its guard never holds.
      expect(byLogin.params['window']).to.be.greaterThanOrEqual(2 ** 31);
      expect(compile({}).text).to.include('ORDER BY p.created_at DESC, p.id DESC');
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

    it('fills every marker of the templates', () => {
      for (const request of [{}, { query: { name: 'x' } }, { query: { attributes: { a: 'b' } } }]) {
        expect(compile(request).text).not.to.match(/\/\*[A-Z_]+\*\//);
      }
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
