import { expect } from 'chai';
import fc from 'fast-check';
import { checkPolicyText, locate } from '../../console/src/policy-check.js';
import {
  ATTRIBUTE_OPS,
  EMPTY,
  readSearch,
  SORTS,
  STATUSES,
  toQuery,
  TYPES,
  type AttributeOp,
  type SearchForm,
} from '../../console/src/search-form.js';

const OPS = Object.keys(ATTRIBUTE_OPS) as AttributeOp[];

/** Any form the page's controls can hold (free text where the page has free text). */
export const arbitraryForm: fc.Arbitrary<SearchForm> = fc.record({
  name: fc.string({ maxLength: 12 }),
  types: fc.subarray([...TYPES]),
  statuses: fc.subarray([...STATUSES]),
  attributes: fc.array(
    fc.record({
      key: fc.string({ maxLength: 8 }),
      op: fc.constantFrom(...OPS),
      value: fc.string({ maxLength: 12 }),
    }),
    { maxLength: 4 },
  ),
  login: fc.constantFrom('any', 'before', 'after', 'never'),
  loginDate: fc.oneof(
    fc.constant(''),
    fc.constantFrom('2026-01-31', '2025-12-01', '2026-13-45', 'yesterday'),
  ),
  riskMin: fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 100 }).map(String), fc.constant('lots')),
  riskMax: fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 100 }).map(String)),
  sort: fc.constantFrom(...SORTS.map(([field]) => field)),
  order: fc.constantFrom('asc', 'desc'),
  limit: fc.constantFrom(25, 50, 100),
});

describe('console: the search form', () => {
  it('sends each filled-in field as one condition of the search language', () => {
    const query = toQuery({
      ...EMPTY,
      name: ' ada ',
      types: ['USER', 'AI_AGENT'],
      statuses: ['active'],
      attributes: [
        { key: 'team', op: 'eq', value: 'payments' },
        { key: 'env', op: 'in', value: 'prod, staging,' },
        { key: 'env', op: 'ne', value: 'dev' },
        { key: 'tools', op: 'contains', value: 'github' },
        { key: 'region', op: 'startsWith', value: 'eu-' },
        { key: 'owner', op: 'exists', value: '' },
        { key: 'legacy', op: 'missing', value: 'ignored' },
      ],
      login: 'before',
      loginDate: '2026-08-01',
      riskMin: '40',
      riskMax: '90',
    });
    expect(query).to.deep.equal({
      name: { $contains: 'ada' },
      type: ['USER', 'AI_AGENT'],
      status: ['active'],
      attributes: {
        team: { $eq: 'payments' },
        env: { $in: ['prod', 'staging'], $ne: 'dev' },
        tools: { $contains: 'github' },
        region: { $startsWith: 'eu-' },
        owner: { $exists: true },
        legacy: { $exists: false },
      },
      last_login: { $lt: '2026-08-01T00:00:00.000Z' },
      risk_score: { $gte: 40, $lte: 90 },
    });
  });

  it('leaves out what is not filled in, and never sends an empty or malformed operand', () => {
    expect(
      toQuery({
        ...EMPTY,
        attributes: [
          { key: '', op: 'eq', value: 'x' },
          { key: 'team', op: 'eq', value: '  ' },
          { key: 'env', op: 'in', value: ' , ,' },
        ],
        login: 'after',
        loginDate: 'not a date',
        riskMin: 'lots',
      }),
    ).to.deep.equal({});
    expect(toQuery({ ...EMPTY, login: 'never' })).to.deep.equal({ last_login: { $exists: false } });
    /** Every operand in the query: none may be empty, missing or not a number where one is due. */
    const bad = (value: unknown, at: string): string[] => {
      if (value === null || value === undefined || (typeof value === 'number' && !Number.isFinite(value))) {
        return [at];
      }
      if (Array.isArray(value))
        return value.length === 0 ? [at] : value.flatMap((v, i) => bad(v, `${at}/${i}`));
      if (typeof value === 'object') {
        const entries = Object.entries(value);
        return entries.length === 0 ? [at] : entries.flatMap(([k, v]) => bad(v, `${at}/${k}`));
      }
      return [];
    };
    fc.assert(
      fc.property(arbitraryForm, (form) => {
        const query = toQuery(form);
        if (Object.keys(query).length > 0) expect(bad(query, '')).to.deep.equal([]);
      }),
    );
  });

  it('reads back from the address every search it wrote there', () => {
    fc.assert(
      fc.property(arbitraryForm, fc.integer({ min: 1, max: 500 }), (form, page) => {
        const params = new URLSearchParams({ q: JSON.stringify({ form, page }) });
        expect(readSearch(params)).to.deep.equal({ form, page });
      }),
    );
  });

  it('reads a hand-edited address defensively: junk becomes the defaults, never an error', () => {
    expect(readSearch(new URLSearchParams())).to.equal(null);
    expect(readSearch(new URLSearchParams({ q: '{not json' }))).to.equal(null);
    expect(readSearch(new URLSearchParams({ q: '42' }))).to.equal(null);
    const odd = readSearch(
      new URLSearchParams({
        q: JSON.stringify({
          form: {
            types: ['USER', 'ROBOT', 7],
            attributes: [null, { key: 'team', op: 'drop table', value: 3 }],
            sort: 'password',
            limit: 1e9,
            login: 'sometimes',
          },
          page: -3,
        }),
      }),
    );
    expect(odd).to.deep.equal({
      form: { ...EMPTY, types: ['USER'], attributes: [{ key: 'team', op: 'eq', value: '' }] },
      page: 1,
    });
    expect(readSearch(new URLSearchParams({ type: 'AI_AGENT' }))?.form.types).to.deep.equal(['AI_AGENT']);
  });
});

describe('console: the policy editor check', () => {
  const valid = {
    name: 'p',
    effect: 'allow',
    subjects: { groups: ['grp_1'] },
    actions: ['read'],
    resources: [{ type: 'database', identifier: 'ledger-*' }],
  };

  it('accepts a policy body and gives it back parsed', () => {
    expect(checkPolicyText(JSON.stringify(valid))).to.deep.equal({ body: valid, problems: [] });
  });

  it('refuses text that is not JSON, saying where it breaks when the parser tells', () => {
    const text = '{\n  "name": "p",\n  "effect": allow\n}';
    const { body, problems } = checkPolicyText(text);
    expect(body).to.equal(undefined);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.match(/^Not valid JSON/);
    // Browsers word the place differently: by line and column, or by offset.
    expect(locate(text, 'Unexpected token (line 3 column 13)')).to.equal('line 3, column 13');
    expect(locate(text, 'Unexpected token a in JSON at position 29')).to.equal('line 3, column 13');
    expect(locate(text, 'Unexpected token')).to.equal('');
  });

  it('names each missing, unknown or mistyped field by its pointer', () => {
    const { body, problems } = checkPolicyText(
      JSON.stringify({
        name: 'p',
        effect: 'permit',
        actions: 'read',
        resources: [{ type: 'db' }],
        id: 'pol_x',
      }),
    );
    expect(body).to.equal(undefined);
    expect(problems).to.deep.equal([
      '/subjects is required.',
      '/id is not a policy field a client writes.',
      '/effect must be "allow" or "deny".',
      '/actions must be a list of action names.',
      '/resources must be a list of { "type", "identifier" }.',
    ]);
    expect(checkPolicyText('[1]').problems).to.deep.equal(['The policy must be a JSON object.']);
  });
});
