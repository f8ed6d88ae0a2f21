import { expect } from 'chai';
import fc from 'fast-check';
import {
  type AttrPath,
  type CompareOp,
  type FilterValue,
  type ScimFilter,
  evaluateFilter,
  filterPaths,
  parseFilter,
  parsePatchPath,
  ScimSyntaxError,
} from '../../src/scim/filter.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

const cmp = (
  attribute: string,
  op: CompareOp,
  value: FilterValue,
  sub?: string,
  uri?: string,
): ScimFilter => ({
  kind: 'compare',
  path: { ...(uri !== undefined ? { uri } : {}), attribute, ...(sub !== undefined ? { sub } : {}) },
  op,
  value,
});
const and = (a: ScimFilter, b: ScimFilter): ScimFilter => ({ kind: 'and', of: [a, b] });
const or = (a: ScimFilter, b: ScimFilter): ScimFilter => ({ kind: 'or', of: [a, b] });
const not = (a: ScimFilter): ScimFilter => ({ kind: 'not', of: a });
const pr = (attribute: string, sub?: string): ScimFilter => ({
  kind: 'present',
  path: { attribute, ...(sub !== undefined ? { sub } : {}) },
});

/** The message of the ScimSyntaxError `f` throws; fails the test when it throws nothing or something else. */
function syntaxError(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).to.be.instanceOf(ScimSyntaxError);
    return (e as ScimSyntaxError).message;
  }
  expect.fail('expected a ScimSyntaxError');
}

const user = {
  schemas: [CORE_USER, ENTERPRISE],
  id: 'prn_01JABC',
  externalId: 'ext-42',
  userName: 'Ann.Lee@Example.com',
  displayName: 'Ann Lee',
  nickName: '',
  name: { familyName: 'Lee', givenName: 'Ann' },
  emails: [
    { value: 'ann@work.example.com', type: 'work', primary: true },
    { value: 'ann@home.example.org', type: 'home' },
  ],
  phoneNumbers: [],
  x509Certificates: [{}],
  addresses: [{ type: 'work', locality: '' }],
  groups: [{ value: 'grp_1', display: 'Group One' }],
  roles: ['admin', 'Auditor'],
  active: true,
  loginCount: 12,
  score: 2.5,
  meta: {
    resourceType: 'User',
    created: '2025-03-01T08:00:00Z',
    lastModified: '2026-11-22T09:15:02.123Z',
  },
  [ENTERPRISE]: {
    employeeNumber: '00123',
    department: 'R&D',
    manager: { value: 'prn_01JMGR', $ref: '../Users/prn_01JMGR' },
  },
};

const matches = (filter: string, resource: Record<string, unknown> = user): boolean =>
  evaluateFilter(parseFilter(filter), resource);

describe('SCIM filters', () => {
  describe('parseFilter', () => {
    it('reads every comparison operator and pr', () => {
      for (const op of ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'] as const) {
        expect(parseFilter(`title ${op} "x"`)).to.deep.equal(cmp('title', op, 'x'));
      }
      expect(parseFilter('title pr')).to.deep.equal(pr('title'));
    });

    it('reads operators and keywords in any case', () => {
      expect(parseFilter('userName EQ "x"')).to.deep.equal(cmp('userName', 'eq', 'x'));
      expect(parseFilter('userName Eq "x"')).to.deep.equal(cmp('userName', 'eq', 'x'));
      expect(parseFilter('title PR')).to.deep.equal(pr('title'));
      expect(parseFilter('a Eq 1 AND b eq 2 Or NOT (c Pr)')).to.deep.equal(
        or(and(cmp('a', 'eq', 1), cmp('b', 'eq', 2)), not(pr('c'))),
      );
    });

    it('binds and tighter than or', () => {
      expect(parseFilter('a eq 1 or b eq 2 and c eq 3')).to.deep.equal(
        or(cmp('a', 'eq', 1), and(cmp('b', 'eq', 2), cmp('c', 'eq', 3))),
      );
      expect(parseFilter('a eq 1 and b eq 2 or c eq 3')).to.deep.equal(
        or(and(cmp('a', 'eq', 1), cmp('b', 'eq', 2)), cmp('c', 'eq', 3)),
      );
    });

    it('groups chains of and / or from the left', () => {
      expect(parseFilter('a pr and b pr and c pr')).to.deep.equal(and(and(pr('a'), pr('b')), pr('c')));
      expect(parseFilter('a pr or b pr or c pr')).to.deep.equal(or(or(pr('a'), pr('b')), pr('c')));
    });

    it('follows parentheses', () => {
      expect(parseFilter('(a eq 1 or b eq 2) and c eq 3')).to.deep.equal(
        and(or(cmp('a', 'eq', 1), cmp('b', 'eq', 2)), cmp('c', 'eq', 3)),
      );
      expect(parseFilter('a pr and (b pr or c pr)')).to.deep.equal(and(pr('a'), or(pr('b'), pr('c'))));
      expect(parseFilter('((a pr))')).to.deep.equal(pr('a'));
    });

    it('reads not (…) with or without a space, binding tighter than and', () => {
      expect(parseFilter('not (a pr)')).to.deep.equal(not(pr('a')));
      expect(parseFilter('not(a pr)')).to.deep.equal(not(pr('a')));
      expect(parseFilter('not (a pr) and b pr')).to.deep.equal(and(not(pr('a')), pr('b')));
      expect(parseFilter('not (a pr or b pr)')).to.deep.equal(not(or(pr('a'), pr('b'))));
      expect(parseFilter('not (not (a pr))')).to.deep.equal(not(not(pr('a'))));
    });

    it('treats words that merely start like keywords as attribute names', () => {
      expect(parseFilter('notes eq "x"')).to.deep.equal(cmp('notes', 'eq', 'x'));
      expect(parseFilter('order eq 1 and android pr')).to.deep.equal(
        and(cmp('order', 'eq', 1), pr('android')),
      );
    });

    it('reads value paths, alone and inside and / or / not', () => {
      const work: ScimFilter = {
        kind: 'valuePath',
        path: { attribute: 'emails' },
        filter: and(cmp('type', 'eq', 'work'), cmp('value', 'co', '@example.com')),
      };
      expect(parseFilter('emails[type eq "work" and value co "@example.com"]')).to.deep.equal(work);
      expect(
        parseFilter('userName eq "a" and emails[type eq "work" and value co "@example.com"]'),
      ).to.deep.equal(and(cmp('userName', 'eq', 'a'), work));
      expect(
        parseFilter('emails[type eq "work" and value co "@example.com"] or not (members[value eq "x"])'),
      ).to.deep.equal(
        or(work, not({ kind: 'valuePath', path: { attribute: 'members' }, filter: cmp('value', 'eq', 'x') })),
      );
      expect(parseFilter('emails[not (type eq "work") or (primary eq true)]')).to.deep.equal({
        kind: 'valuePath',
        path: { attribute: 'emails' },
        filter: or(not(cmp('type', 'eq', 'work')), cmp('primary', 'eq', true)),
      });
    });

    it('reads schema URN prefixes, sub-attributes and $ref', () => {
      expect(parseFilter(`${CORE_USER}:userName eq "ann"`)).to.deep.equal(
        cmp('userName', 'eq', 'ann', undefined, CORE_USER),
      );
      expect(parseFilter(`${ENTERPRISE}:department eq "R&D"`)).to.deep.equal(
        cmp('department', 'eq', 'R&D', undefined, ENTERPRISE),
      );
      expect(parseFilter(`${ENTERPRISE}:manager.value eq "prn_1"`)).to.deep.equal(
        cmp('manager', 'eq', 'prn_1', 'value', ENTERPRISE),
      );
      expect(parseFilter(`${CORE_USER}:name.familyName sw "L"`)).to.deep.equal(
        cmp('name', 'sw', 'L', 'familyName', CORE_USER),
      );
      expect(parseFilter(`${CORE_USER}:emails[type eq "work"]`)).to.deep.equal({
        kind: 'valuePath',
        path: { uri: CORE_USER, attribute: 'emails' },
        filter: cmp('type', 'eq', 'work'),
      });
      expect(parseFilter('name.familyName eq "Lee"')).to.deep.equal(cmp('name', 'eq', 'Lee', 'familyName'));
      expect(parseFilter('meta.lastModified pr')).to.deep.equal(pr('meta', 'lastModified'));
      expect(parseFilter('manager.$ref pr')).to.deep.equal(pr('manager', '$ref'));
      expect(parseFilter('members[$ref eq "u"]')).to.deep.equal({
        kind: 'valuePath',
        path: { attribute: 'members' },
        filter: cmp('$ref', 'eq', 'u'),
      });
      expect(parseFilter('x-ms_a$1 eq 1')).to.deep.equal(cmp('x-ms_a$1', 'eq', 1));
    });

    it('reads JSON strings with escapes', () => {
      expect(parseFilter('title eq "a\\"b"')).to.deep.equal(cmp('title', 'eq', 'a"b'));
      expect(parseFilter('title eq "\\u00e9t\\u00C9"')).to.deep.equal(cmp('title', 'eq', 'étÉ'));
      expect(parseFilter('title eq "a\\\\b\\/c\\n\\t"')).to.deep.equal(cmp('title', 'eq', 'a\\b/c\n\t'));
      expect(parseFilter('title eq "\\ud83d\\ude00"')).to.deep.equal(cmp('title', 'eq', '😀'));
      expect(parseFilter('title eq ""')).to.deep.equal(cmp('title', 'eq', ''));
      expect(parseFilter('title eq "(and) or [x]"')).to.deep.equal(cmp('title', 'eq', '(and) or [x]'));
    });

    it('reads numbers, booleans and null', () => {
      const values: [string, FilterValue][] = [
        ['42', 42],
        ['-7', -7],
        ['0', 0],
        ['3.25', 3.25],
        ['1e3', 1000],
        ['-2.5E-2', -0.025],
        ['true', true],
        ['FALSE', false],
        ['Null', null],
      ];
      for (const [text, value] of values) {
        expect(parseFilter(`n eq ${text}`), text).to.deep.equal(cmp('n', 'eq', value));
      }
    });

    it('reads unquoted values that are not numbers or keywords as strings', () => {
      expect(parseFilter('userName eq john@example.com')).to.deep.equal(
        cmp('userName', 'eq', 'john@example.com'),
      );
      expect(parseFilter('externalId eq 00123')).to.deep.equal(cmp('externalId', 'eq', '00123'));
      expect(parseFilter('(userName eq bob)')).to.deep.equal(cmp('userName', 'eq', 'bob'));
      expect(parseFilter('members[value eq prn_1]')).to.deep.equal({
        kind: 'valuePath',
        path: { attribute: 'members' },
        filter: cmp('value', 'eq', 'prn_1'),
      });
      expect(parseFilter('userName eq bob and active eq true')).to.deep.equal(
        and(cmp('userName', 'eq', 'bob'), cmp('active', 'eq', true)),
      );
    });

    it('allows any amount of spaces and tabs between tokens', () => {
      expect(parseFilter(' \t userName\t\teq   "x"  and\t( title  pr )  ')).to.deep.equal(
        and(cmp('userName', 'eq', 'x'), pr('title')),
      );
      expect(parseFilter('emails [ type eq "work" ]')).to.deep.equal({
        kind: 'valuePath',
        path: { attribute: 'emails' },
        filter: cmp('type', 'eq', 'work'),
      });
    });

    it('reads the filters Okta and Microsoft Entra send', () => {
      expect(parseFilter('userName eq "john@example.com"')).to.deep.equal(
        cmp('userName', 'eq', 'john@example.com'),
      );
      expect(parseFilter('externalId eq "abc"')).to.deep.equal(cmp('externalId', 'eq', 'abc'));
      expect(parseFilter('displayName eq "Group One"')).to.deep.equal(cmp('displayName', 'eq', 'Group One'));
      expect(parseFilter('id eq "x"')).to.deep.equal(cmp('id', 'eq', 'x'));
      expect(parseFilter('members[value eq "prn_01JABCDEF"]')).to.deep.equal({
        kind: 'valuePath',
        path: { attribute: 'members' },
        filter: cmp('value', 'eq', 'prn_01JABCDEF'),
      });
    });

    it('reports what it expected and where', () => {
      const cases: [string, number, string][] = [
        ['', 0, "expected an attribute path, '(' or 'not', found end of input"],
        ['   ', 3, "expected an attribute path, '(' or 'not'"],
        ['userName', 8, 'expected an operator'],
        ['userName eq', 11, "expected whitespace and a value after 'eq'"],
        ['userName eq ', 12, 'expected a value'],
        ['userName xx "a"', 9, 'expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr), found "x"'],
        ['userName eq "a" extra', 16, "expected 'and', 'or' or the end of the filter, found \"e\""],
        ['userName eq "a")', 15, "expected 'and', 'or' or the end of the filter, found \")\""],
        [
          '(userName eq "a"',
          16,
          "expected 'and', 'or' or ')' closing the '(' at offset 0, found end of input",
        ],
        ['a pr and (b pr or (c pr)', 24, "')' closing the '(' at offset 9"],
        ['emails[type eq "work"', 21, "expected 'and', 'or' or ']' closing the '[' at offset 6"],
        ['emails[type eq "work")', 21, "']' closing the '['"],
        ['a pr and', 8, "expected an attribute path, '(' or 'not', found end of input"],
        ['a pr or )', 8, "expected an attribute path, '(' or 'not', found \")\""],
        ['userName eq "abc', 16, "expected '\"' closing the string that starts at offset 12"],
        ['userName eq "a\\qb"', 15, 'expected an escape'],
        ['userName eq "\\u00g1"', 15, "expected four hexadecimal digits after '\\u'"],
        ['not userName eq "a"', 4, "expected '(' after 'not'"],
        ['1abc eq "a"', 0, "expected an attribute path, '(' or 'not'"],
        ['user@name eq "a"', 4, 'expected whitespace and an operator'],
        ['name.familyName.x eq "a"', 15, 'expected whitespace and an operator'],
        ['name. eq "a"', 5, "expected a sub-attribute name after '.'"],
        ['urn:foo eq "a"', 4, "expected a schema URN followed by ':' and an attribute name"],
        [`${ENTERPRISE}: eq "a"`, ENTERPRISE.length + 1, 'expected an attribute name after the schema URN'],
        ['emails[type eq "work"].value eq "a"', 22, "expected 'and', 'or' or the end of the filter"],
        ['emails[members[value eq "x"]]', 14, 'value filters cannot be nested'],
        ['emails[type.x eq "a"]', 11, 'expected whitespace and an operator'],
        [`emails[${ENTERPRISE}:type eq "a"]`, 10, 'expected whitespace and an operator'],
        ['name.givenName[value eq "a"]', 14, "'[' cannot follow a sub-attribute"],
        ['title pr1', 8, "expected whitespace, ')', ']' or the end after 'pr'"],
        ['title eqx 1', 6, 'expected an operator'],
        ['title eq1', 8, "expected whitespace and a value after 'eq'"],
        ['$foo eq 1', 0, 'expected an attribute name'],
        ['()', 1, "expected an attribute path, '(' or 'not', found \")\""],
        ['emails[]', 7, "expected a sub-attribute name, '(' or 'not', found \"]\""],
      ];
      for (const [text, offset, expected] of cases) {
        const message = syntaxError(() => parseFilter(text));
        expect(message, text).to.contain(`Invalid filter at offset ${offset}: `);
        expect(message, text).to.contain(expected);
      }
    });

    it('refuses filters longer than 4096 characters', () => {
      const fits = `userName eq "${'x'.repeat(4096 - 14)}"`;
      expect(fits).to.have.length(4096);
      expect(parseFilter(fits)).to.deep.equal(cmp('userName', 'eq', 'x'.repeat(4082)));
      const message = syntaxError(() => parseFilter(`${fits} `));
      expect(message).to.equal(
        'Invalid filter at offset 4096: expected at most 4096 characters (the filter has 4097), found " "',
      );
    });

    it('refuses nesting deeper than 32 levels', () => {
      const nested = (levels: number): string => `${'('.repeat(levels)}a pr${')'.repeat(levels)}`;
      expect(parseFilter(nested(32))).to.deep.equal(pr('a'));
      expect(syntaxError(() => parseFilter(nested(33)))).to.contain(
        'Invalid filter at offset 32: expected nesting no deeper than 32 levels',
      );
      const nots = (levels: number): string => `${'not ('.repeat(levels)}a pr${')'.repeat(levels)}`;
      expect(() => parseFilter(nots(32))).not.to.throw();
      expect(syntaxError(() => parseFilter(nots(33)))).to.contain('nesting no deeper than 32 levels');
      const withValuePath = `${'('.repeat(31)}emails[type pr]${')'.repeat(31)}`;
      expect(() => parseFilter(withValuePath)).not.to.throw();
      const tooDeep = `${'('.repeat(32)}emails[type pr]${')'.repeat(32)}`;
      expect(syntaxError(() => parseFilter(tooDeep))).to.contain(
        'offset 38: expected nesting no deeper than 32',
      );
    });

    it('refuses more than 200 comparisons', () => {
      const chain = (n: number): string => Array.from({ length: n }, (_, i) => `a${i} eq ${i}`).join(' or ');
      const parsed = parseFilter(chain(200));
      expect(filterPaths(parsed)).to.have.length(200);
      const message = syntaxError(() => parseFilter(chain(201)));
      expect(message).to.contain('expected at most 200 comparisons');
      expect(message).to.contain(`offset ${chain(200).length + 4}:`);
      const inValuePath = `emails[${Array.from({ length: 201 }, () => 'type pr').join(' or ')}]`;
      expect(syntaxError(() => parseFilter(inValuePath))).to.contain('at most 200 comparisons');
    });

    it('reads back what a printer writes, for random filters', () => {
      const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,6}$/);
      const value: fc.Arbitrary<FilterValue> = fc.oneof(
        fc.string({ maxLength: 8 }),
        fc.string({ unit: 'grapheme', maxLength: 4 }),
        fc.integer({ min: -1e9, max: 1e9 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
        fc.boolean(),
        fc.constant(null),
      );
      const op = fc.constantFrom<CompareOp>('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le');
      const path = fc.record(
        { uri: fc.constant(ENTERPRISE), attribute: name, sub: name },
        { requiredKeys: ['attribute'] },
      ) as fc.Arbitrary<AttrPath>;
      const leaf = (p: fc.Arbitrary<AttrPath>): fc.Arbitrary<ScimFilter> =>
        fc.oneof(
          fc.record({ kind: fc.constant('compare' as const), path: p, op, value }),
          fc.record({ kind: fc.constant('present' as const), path: p }),
        );
      const tree = (atom: fc.Arbitrary<ScimFilter>): fc.Arbitrary<ScimFilter> =>
        fc.letrec<{ node: ScimFilter }>((tie) => ({
          node: fc.oneof(
            { depthSize: 'small', withCrossShrink: true },
            atom,
            fc.tuple(tie('node'), tie('node')).map(([a, b]) => and(a, b)),
            fc.tuple(tie('node'), tie('node')).map(([a, b]) => or(a, b)),
            tie('node').map(not),
          ),
        })).node;
      const inner = tree(leaf(name.map((attribute) => ({ attribute }))));
      const valuePath = fc
        .tuple(path, inner)
        .map(([p, filter]): ScimFilter => ({ kind: 'valuePath', path: { ...p, sub: undefined }, filter }))
        .map((f) => JSON.parse(JSON.stringify(f)) as ScimFilter);
      const filter = tree(fc.oneof(leaf(path), valuePath));

      const printPath = (p: AttrPath): string =>
        `${p.uri !== undefined ? `${p.uri}:` : ''}${p.attribute}${p.sub !== undefined ? `.${p.sub}` : ''}`;
      const print = (f: ScimFilter, upper: boolean): string => {
        const kw = (w: string): string => (upper ? w.toUpperCase() : w);
        const operand = (child: ScimFilter, parent: 'and' | 'or', right: boolean): string => {
          const wrap = child.kind === 'or' ? true : child.kind === parent ? right : false;
          return wrap ? `(${print(child, upper)})` : print(child, upper);
        };
        switch (f.kind) {
          case 'compare':
            return `${printPath(f.path)} ${kw(f.op)} ${JSON.stringify(f.value)}`;
          case 'present':
            return `${printPath(f.path)} ${kw('pr')}`;
          case 'not':
            return `${kw('not')} (${print(f.of, upper)})`;
          case 'valuePath':
            return `${printPath(f.path)}[${print(f.filter, upper)}]`;
          case 'and':
          case 'or':
            return `${operand(f.of[0], f.kind, false)} ${kw(f.kind)} ${operand(f.of[1], f.kind, true)}`;
        }
      };
      const size = (f: ScimFilter): number =>
        f.kind === 'and' || f.kind === 'or'
          ? size(f.of[0]) + size(f.of[1])
          : f.kind === 'not'
            ? size(f.of)
            : f.kind === 'valuePath'
              ? size(f.filter)
              : 1;

      const nesting = (f: ScimFilter): number => {
        switch (f.kind) {
          case 'not':
            return 1 + nesting(f.of);
          case 'valuePath':
            return 1 + nesting(f.filter);
          case 'and':
          case 'or':
            return Math.max(
              ...f.of.map(
                (child, i) =>
                  (child.kind === 'or' || (child.kind === f.kind && i === 1) ? 1 : 0) + nesting(child),
              ),
            );
          default:
            return 0;
        }
      };

      fc.assert(
        fc.property(filter, fc.boolean(), (f, upper) => {
          fc.pre(size(f) <= 200 && nesting(f) <= 32);
          const text = print(f, upper);
          fc.pre(text.length <= 4096);
          expect(parseFilter(text), text).to.deep.equal(f);
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('parsePatchPath', () => {
    it('reads attribute paths', () => {
      expect(parsePatchPath('members')).to.deep.equal({ attribute: 'members' });
      expect(parsePatchPath('name.givenName')).to.deep.equal({ attribute: 'name', sub: 'givenName' });
      expect(parsePatchPath(`${ENTERPRISE}:manager`)).to.deep.equal({
        uri: ENTERPRISE,
        attribute: 'manager',
      });
      expect(parsePatchPath(`${ENTERPRISE}:manager.value`)).to.deep.equal({
        uri: ENTERPRISE,
        attribute: 'manager',
        sub: 'value',
      });
      expect(parsePatchPath(' displayName ')).to.deep.equal({ attribute: 'displayName' });
    });

    it('reads value paths with an optional sub-attribute', () => {
      expect(parsePatchPath('members[value eq "x"]')).to.deep.equal({
        attribute: 'members',
        filter: cmp('value', 'eq', 'x'),
      });
      expect(parsePatchPath('emails[type eq "work"].value')).to.deep.equal({
        attribute: 'emails',
        filter: cmp('type', 'eq', 'work'),
        sub: 'value',
      });
      expect(parsePatchPath('emails[type eq "work" and not (primary eq false)].display')).to.deep.equal({
        attribute: 'emails',
        filter: and(cmp('type', 'eq', 'work'), not(cmp('primary', 'eq', false))),
        sub: 'display',
      });
      expect(parsePatchPath(`${CORE_USER}:addresses[type eq work].locality`)).to.deep.equal({
        uri: CORE_USER,
        attribute: 'addresses',
        filter: cmp('type', 'eq', 'work'),
        sub: 'locality',
      });
    });

    it('reports bad paths with their offset', () => {
      const cases: [string, number, string][] = [
        ['', 0, 'expected an attribute name, found end of input'],
        ['name.', 5, "expected a sub-attribute name after '.'"],
        ['name.givenName.x', 14, 'expected the end of the path, found "."'],
        ['members value', 8, "expected '[' or the end of the path"],
        ['members[value eq "x"', 20, "']' closing the '[' at offset 7"],
        ['members[value eq "x"].', 22, "expected a sub-attribute name after '.'"],
        ['members[value eq "x"]x', 21, 'expected the end of the path, found "x"'],
        ['members[]', 8, 'expected a sub-attribute name'],
        ['name.givenName[value eq "x"]', 14, "'[' cannot follow a sub-attribute"],
        ['members[value eq "x"] or a pr', 22, 'expected the end of the path'],
        [`${ENTERPRISE}:`, ENTERPRISE.length + 1, 'expected an attribute name after the schema URN'],
        ['9lives', 0, 'expected an attribute name'],
      ];
      for (const [text, offset, expected] of cases) {
        const message = syntaxError(() => parsePatchPath(text));
        expect(message, text).to.contain(`Invalid path at offset ${offset}: `);
        expect(message, text).to.contain(expected);
      }
      expect(syntaxError(() => parsePatchPath(`a[${'b pr or '.repeat(600)}b pr]`))).to.contain(
        'at most 4096 characters',
      );
    });
  });

  describe('evaluateFilter', () => {
    it('compares strings ignoring case with every operator', () => {
      const truth: [string, boolean][] = [
        ['displayName eq "ann lee"', true],
        ['displayName eq "Ann"', false],
        ['displayName ne "ann lee"', false],
        ['displayName ne "Bob"', true],
        ['displayName co "N L"', true],
        ['displayName co "bob"', false],
        ['displayName sw "ANN"', true],
        ['displayName sw "Lee"', false],
        ['displayName ew "lee"', true],
        ['displayName ew "Ann"', false],
        ['displayName gt "ann"', true],
        ['displayName gt "ann m"', false],
        ['displayName ge "ANN LEE"', true],
        ['displayName ge "b"', false],
        ['displayName lt "B"', true],
        ['displayName lt "ann lee"', false],
        ['displayName le "ann lee"', true],
        ['displayName le "ann"', false],
      ];
      for (const [filter, expected] of truth) expect(matches(filter), filter).to.equal(expected);
    });

    it('respects case for attributes the caller calls case-exact', () => {
      const exact = (path: AttrPath): boolean => path.attribute === 'id' || path.sub === 'value';
      const run = (f: string): boolean => evaluateFilter(parseFilter(f), user, { caseExact: exact });
      expect(run('id eq "PRN_01JABC"')).to.equal(false);
      expect(run('id eq "prn_01JABC"')).to.equal(true);
      expect(run('displayName eq "ANN LEE"')).to.equal(true);
      expect(run('emails[value sw "ANN@"]')).to.equal(false);
      expect(run('emails[value sw "ann@"]')).to.equal(true);
      const seen: AttrPath[] = [];
      evaluateFilter(parseFilter(`emails[type eq "x"] or ${ENTERPRISE}:manager.value eq "y"`), user, {
        caseExact: (p) => {
          seen.push(p);
          return false;
        },
      });
      expect(seen).to.deep.equal([
        { attribute: 'emails', sub: 'type' },
        { attribute: 'emails', sub: 'type' },
        { uri: ENTERPRISE, attribute: 'manager', sub: 'value' },
      ]);
    });

    it('compares numbers numerically and booleans with eq / ne only', () => {
      const truth: [string, boolean][] = [
        ['loginCount eq 12', true],
        ['loginCount ne 12', false],
        ['loginCount gt 9', true],
        ['loginCount gt 12', false],
        ['loginCount ge 12', true],
        ['loginCount lt 100', true],
        ['loginCount le 11.5', false],
        ['score eq 2.5', true],
        ['score lt 25e-1', false],
        ['loginCount co 1', false],
        ['loginCount sw 1', false],
        ['loginCount eq "12"', true],
        ['active eq true', true],
        ['active eq FALSE', false],
        ['active ne false', true],
        ['active gt false', false],
        ['active co true', false],
        ['active eq "True"', true],
        ['externalId eq 42', false],
        [`${ENTERPRISE}:employeeNumber eq 00123`, true],
        [`${ENTERPRISE}:employeeNumber eq 123`, false],
        [`${ENTERPRISE}:employeeNumber eq "123"`, false],
      ];
      for (const [filter, expected] of truth) expect(matches(filter), filter).to.equal(expected);
      const stringly = { externalId: '42', count: '7' };
      expect(matches('externalId eq 42', stringly)).to.equal(true);
      expect(matches('count gt 10', stringly)).to.equal(false);
      expect(matches('count gt "10"', stringly)).to.equal(true);
    });

    it('compares RFC 3339 timestamps as instants', () => {
      const truth: [string, boolean][] = [
        ['meta.lastModified gt "2026-01-01T00:00:00Z"', true],
        ['meta.lastModified lt "2026-01-01T00:00:00Z"', false],
        ['meta.lastModified gt "2026-11-22T10:15:02+01:00"', true],
        ['meta.lastModified gt "2026-11-22T10:15:02.124+01:00"', false],
        ['meta.lastModified eq "2026-11-22T10:15:02.1230+01:00"', true],
        ['meta.lastModified ge "2026-11-22T09:15:02.123000001Z"', false],
        ['meta.lastModified le "2026-11-22T04:15:02.123-05:00"', true],
        ['meta.lastModified lt "2026-11-22T04:15:02.122-05:00"', false],
        ['meta.lastModified sw "2026-11"', true],
        ['meta.created lt "2025-03-01T08:00:00.5Z"', true],
        ['meta.created gt "2025-03-01t07:59:59z"', true],
      ];
      for (const [filter, expected] of truth) expect(matches(filter), filter).to.equal(expected);
      const lexical = { stamp: '2026-11-22T09:15:02+05:00' };
      expect(matches('stamp gt "2026-11-22T08:00:00Z"', lexical)).to.equal(false);
      expect(matches('stamp gt "2026-11-22T08"', lexical)).to.equal(true);
      expect(matches('stamp gt "2026-13-22T08:00:00Z"', lexical)).to.equal(false);
    });

    it('finds attribute names and URNs ignoring case', () => {
      expect(matches('USERNAME eq "ann.lee@example.com"')).to.equal(true);
      expect(matches('NAME.FAMILYNAME eq "lee"')).to.equal(true);
      expect(matches(`${ENTERPRISE.toUpperCase()}:DEPARTMENT eq "r&d"`)).to.equal(true);
      expect(matches('EMAILS[TYPE eq "home"]')).to.equal(true);
    });

    it('looks inside extensions for paths without a URN, and at the top level for core URNs', () => {
      expect(matches('department eq "R&D"')).to.equal(true);
      expect(matches('manager.value eq "prn_01JMGR"')).to.equal(true);
      expect(matches(`${ENTERPRISE}:manager.value eq "prn_01JMGR"`)).to.equal(true);
      expect(matches(`${ENTERPRISE}:manager eq "prn_01JMGR"`)).to.equal(true);
      expect(matches(`${ENTERPRISE}:manager.$ref ew "/prn_01JMGR"`)).to.equal(true);
      expect(matches(`${ENTERPRISE}:userName pr`)).to.equal(false);
      expect(matches(`${CORE_USER}:userName sw "ann"`)).to.equal(true);
      expect(matches(`urn:example:other:1.0:User:userName pr`)).to.equal(false);
      const shadowed = { department: 'Top', [ENTERPRISE]: { department: 'Ext' } };
      expect(matches('department eq "top"', shadowed)).to.equal(true);
      expect(matches('department eq "ext"', shadowed)).to.equal(false);
      expect(matches(`${ENTERPRISE}:department eq "ext"`, shadowed)).to.equal(true);
    });

    it('matches multi-valued attributes when any element matches', () => {
      expect(matches('emails.value ew ".org"')).to.equal(true);
      expect(matches('emails.value ew ".net"')).to.equal(false);
      expect(matches('emails.type eq "home"')).to.equal(true);
      expect(matches('emails.type ne "work"')).to.equal(true);
      expect(matches('emails co "@work.example"')).to.equal(true);
      expect(matches('emails eq "ann@home.example.org"')).to.equal(true);
      expect(matches('emails co "@nowhere"')).to.equal(false);
      expect(matches('emails.primary eq true')).to.equal(true);
      expect(matches('roles eq "auditor"')).to.equal(true);
      expect(matches('roles eq "owner"')).to.equal(false);
      expect(matches('groups eq "GRP_1"')).to.equal(true);
      expect(matches('name eq "x"')).to.equal(false);
      expect(matches(`${ENTERPRISE}:manager sw "prn_"`)).to.equal(true);
    });

    it('evaluates value paths against each element', () => {
      expect(matches('emails[type eq "work" and value co "@work.example.com"]')).to.equal(true);
      expect(matches('emails[type eq "work" and value co "@home"]')).to.equal(false);
      expect(matches('emails[type eq "home" and primary eq true]')).to.equal(false);
      expect(matches('emails[type eq "home" and not (primary eq true)]')).to.equal(true);
      expect(matches('emails[primary pr]')).to.equal(true);
      expect(matches('emails[type eq "other"] or userName sw "ann"')).to.equal(true);
      expect(matches('emails[type eq "work"] and not (groups[display eq "group one"])')).to.equal(false);
      expect(matches('name[familyName eq "LEE"]')).to.equal(true);
      expect(matches('name[givenName eq "Bob"]')).to.equal(false);
      expect(matches('phoneNumbers[type pr]')).to.equal(false);
      expect(matches('nothing[type pr]')).to.equal(false);
      expect(matches('roles[value eq "admin"]')).to.equal(false);
      expect(matches(`${ENTERPRISE}:manager[value eq "prn_01JMGR"]`)).to.equal(true);
      const group = { displayName: 'Group One', members: [{ value: 'prn_01JA' }, { value: 'prn_01JB' }] };
      expect(matches('members[value eq "prn_01JB"]', group)).to.equal(true);
      expect(matches('members[value eq "prn_01JC"]', group)).to.equal(false);
    });

    it('tests presence', () => {
      const truth: [string, boolean][] = [
        ['userName pr', true],
        ['nickName pr', false],
        ['title pr', false],
        ['phoneNumbers pr', false],
        ['x509Certificates pr', false],
        ['addresses pr', true],
        ['addresses.locality pr', false],
        ['addresses.type pr', true],
        ['emails.primary pr', true],
        ['name pr', true],
        ['name.middleName pr', false],
        ['meta.lastModified pr', true],
        ['department pr', true],
        ['not (title pr)', true],
      ];
      for (const [filter, expected] of truth) expect(matches(filter), filter).to.equal(expected);
      expect(matches('blank pr', { blank: null })).to.equal(false);
      expect(matches('blank pr', { blank: {} })).to.equal(false);
      expect(matches('blank pr', { blank: { value: '' } })).to.equal(false);
      expect(matches('zero pr', { zero: 0 })).to.equal(true);
      expect(matches('no pr', { no: false })).to.equal(true);
    });

    it('fails every comparison on an absent attribute, ne included, unless negated', () => {
      for (const op of ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']) {
        expect(matches(`title ${op} "x"`), op).to.equal(false);
        expect(matches(`title ${op} 1`), op).to.equal(false);
        expect(matches(`not (title ${op} "x")`), op).to.equal(true);
      }
      expect(matches('nickName ne "x"')).to.equal(true);
      expect(matches('phoneNumbers.value ne "x"')).to.equal(false);
    });

    it('treats eq null as absence and ne null as presence', () => {
      expect(matches('title eq null')).to.equal(true);
      expect(matches('nickName eq null')).to.equal(true);
      expect(matches('userName eq null')).to.equal(false);
      expect(matches('userName ne null')).to.equal(true);
      expect(matches('title ne null')).to.equal(false);
      expect(matches('userName gt null')).to.equal(false);
      expect(matches('emails.display eq null')).to.equal(true);
      expect(matches('emails.type eq null')).to.equal(false);
    });

    it('combines with and, or and not', () => {
      expect(matches('userName sw "ann" and active eq false')).to.equal(false);
      expect(matches('userName sw "bob" or active eq true')).to.equal(true);
      expect(matches('not (active eq true)')).to.equal(false);
      expect(matches('title pr or userName pr and active eq false')).to.equal(false);
      expect(matches('(title pr or userName pr) and active eq true')).to.equal(true);
    });

    it('answers the filters Okta and Entra send', () => {
      const group = { id: 'grp_1', displayName: 'Group One', members: [{ value: 'prn_01JABC' }] };
      expect(matches('userName eq "ann.lee@example.com"')).to.equal(true);
      expect(matches('userName eq ann.lee@example.com')).to.equal(true);
      expect(matches('userName eq "john@example.com"')).to.equal(false);
      expect(matches('externalId eq "EXT-42"')).to.equal(true);
      expect(matches('id eq "prn_01JABC"')).to.equal(true);
      expect(matches('displayName eq "Group One"', group)).to.equal(true);
      expect(matches('displayName eq "Group Two"', group)).to.equal(false);
      expect(matches('members[value eq "prn_01JABC"]', group)).to.equal(true);
    });
  });

  describe('filterPaths', () => {
    it('lists every path once, value paths as their attribute with each inner name as sub', () => {
      const filter = parseFilter(
        `emails[type eq "work" and value co "x"] or not (userName pr) and ${ENTERPRISE}:manager.value eq "m"` +
          ` or emails[type eq "home"] or ${ENTERPRISE}:addresses[locality pr] or userName eq "u"`,
      );
      expect(filterPaths(filter)).to.deep.equal([
        { attribute: 'emails', sub: 'type' },
        { attribute: 'emails', sub: 'value' },
        { attribute: 'userName' },
        { uri: ENTERPRISE, attribute: 'manager', sub: 'value' },
        { uri: ENTERPRISE, attribute: 'addresses', sub: 'locality' },
      ]);
      expect(filterPaths(parseFilter('meta.lastModified gt "2026-01-01T00:00:00Z"'))).to.deep.equal([
        { attribute: 'meta', sub: 'lastModified' },
      ]);
    });
  });
});
