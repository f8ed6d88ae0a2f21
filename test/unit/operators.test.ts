import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Catalogue } from '../../src/db/catalogue.js';
import {
  FILTER_TESTS,
  OPERATORS,
  OPERATOR_TABLE,
  isAvailable,
  type Operator,
} from '../../src/operators/table.js';
import { projectRoot } from '../../src/paths.js';
import { evaluateConditions, parseConditions } from '../../src/policies/conditions.js';
import { compile } from '../../src/principals/search/cypher.js';
import { compilePredicate } from '../../src/principals/search/evaluate.js';
import {
  attribute,
  condition,
  field,
  OPERATORS as QUERY_MODEL_OPERATORS,
} from '../../src/principals/search/model.js';
import type { Condition, Query } from '../../src/principals/search/model.js';
import { compileShaped } from '../../src/principals/search/shaped.js';
import {
  AttributeCondition,
  ScoreCondition,
  TextCondition,
  TimestampCondition,
} from '../../src/schemas/search.js';
import { CONDITION_OPERATORS } from '../../src/vocabulary/policies.js';
import { QUERY_OPERATORS, SEARCH_OPERATORS } from '../../src/vocabulary/search.js';
import {
  conditionInputOf,
  conditionsOf,
  expectedTri,
  operatorCases,
  queryOf,
  subjectOf,
} from '../helpers/operator-cases.js';

const COLUMNS = ['name', 'operand', 'condition', 'search', 'cypher'] as const;

describe('operator table', () => {
  let catalogue: Catalogue;
  before(async () => {
    catalogue = await Catalogue.load();
  });

  it('has a row with every column for every operator the vocabularies name', () => {
    const named = new Set<string>([
      ...SEARCH_OPERATORS,
      ...QUERY_OPERATORS,
      ...CONDITION_OPERATORS,
      ...QUERY_MODEL_OPERATORS,
    ]);
    expect([...OPERATORS].sort()).to.deep.equal([...named].sort());
    expect(Object.keys(OPERATOR_TABLE).sort()).to.deep.equal([...named].sort());
    for (const op of named) {
      const row = OPERATOR_TABLE[op as Operator] as unknown as Record<string, unknown>;
      for (const column of COLUMNS) expect(row[column], `${op} ${column}`).to.not.equal(undefined);
      expect(row['name']).to.equal(op);
      for (const column of ['condition', 'search', 'cypher'] as const) {
        const form = OPERATOR_TABLE[op as Operator][column];
        // A form is there, or says why it is not.
        const reason = (form as { unavailable?: unknown }).unavailable;
        if (reason !== undefined) expect(reason, `${op} ${column}`).to.be.a('string').and.not.empty;
      }
    }
  });

  it('gives condition operators a three-valued test and query operators a boolean test and Cypher', () => {
    for (const op of CONDITION_OPERATORS)
      expect(isAvailable(OPERATOR_TABLE[op].condition), op).to.equal(true);
    for (const op of QUERY_OPERATORS) {
      expect(isAvailable(OPERATOR_TABLE[op].search), op).to.equal(true);
      expect(isAvailable(OPERATOR_TABLE[op].cypher), op).to.equal(true);
    }
  });

  it('uses only tests the search filter names, each in both its branches', () => {
    const filter = readFileSync(
      path.join(projectRoot(), 'cypher', 'principals', 'search_filter.cypher'),
      'utf8',
    );
    // The branch of fields and the branch of attributes, each a CASE on c.op.
    const [fields = '', attributes = ''] = filter.split(/ELSE any\(x IN \[p\[c\.prop\]\]/);
    const named = (text: string, test: string): boolean =>
      text.includes(`WHEN '${test}' THEN`) || text.includes(`c.op = '${test}'`);
    const used = new Set<string>();
    for (const op of QUERY_OPERATORS) {
      const cypher = OPERATOR_TABLE[op].cypher;
      if (!isAvailable(cypher) || !('test' in cypher.generic)) continue;
      used.add(cypher.generic.test);
    }
    for (const test of used) {
      expect(FILTER_TESTS).to.include(test);
      expect(named(fields, test), `${test} among the field tests`).to.equal(true);
      expect(
        named(test === 'exists' ? fields : attributes, test),
        `${test} among the attribute tests`,
      ).to.equal(true);
    }
  });

  it('says what a search operand may be as the search body schema does', () => {
    const schemas = { TextCondition, AttributeCondition, TimestampCondition, ScoreCondition };
    for (const [name, schema] of Object.entries(schemas)) {
      const properties = schema.properties as Record<string, { type?: string; anyOf?: unknown[] }>;
      for (const [op, property] of Object.entries(properties)) {
        const { shape } = OPERATOR_TABLE[op as Operator].operand;
        const type = property.type ?? 'union';
        const expected = { list: 'array', flag: 'boolean', text: 'string' }[shape as string];
        if (expected) expect(type, `${name}.${op}`).to.equal(expected);
        else expect(['value', 'bound'], `${name}.${op}`).to.include(shape);
      }
    }
  });

  describe('compilers refuse an operator without a row or a form', () => {
    const bogus = (op: string): Condition => condition(attribute('team'), op as Condition['op'], 'x');
    const sort = { field: 'created_at', order: 'desc' } as const;
    const page = { skip: 0, limit: 10 };

    it('an operator missing from the table', () => {
      const message = /\$regex is not an operator of the operator table/;
      expect(() => compilePredicate(bogus('$regex'))).to.throw(message);
      expect(() => compile(bogus('$regex'), sort, page, catalogue)).to.throw(message);
      expect(() => compileShaped(bogus('$regex'), sort, page, catalogue)).to.throw(message);
    });

    it('an operator whose row says it has no such form', () => {
      expect(() => compilePredicate(bogus('$cidr'))).to.throw(
        /\$cidr has no boolean test .*principals hold no addresses/,
      );
      expect(() => compile(bogus('$cidr'), sort, page, catalogue)).to.throw(/\$cidr has no Cypher form/);
      expect(() => compileShaped(bogus('$cidr'), sort, page, catalogue)).to.throw(
        /\$cidr has no Cypher form/,
      );
    });

    it('leaves an operator without a shaped statement to the generic one', () => {
      const q: Query = condition(field('name'), '$endsWith', 'x');
      expect(compileShaped(q, sort, page, catalogue)).to.equal(undefined);
      expect(compile(q, sort, page, catalogue).params.q.clauses[0]!.terms[0]![0]).to.include({
        op: 'endsWith',
      });
    });

    it('refuses in a policy what conditions cannot say, with the operators they can', () => {
      const { errors } = parseConditions({ 'context.v': { $endsWith: 'x' } });
      expect(errors).to.deep.equal([
        {
          pointer: '/conditions/context.v/$endsWith',
          message: `is not an operator; use one of ${CONDITION_OPERATORS.join(', ')}`,
        },
      ]);
    });
  });
});

describe('operator cases (test/cases/operators)', () => {
  const { files, cases } = operatorCases();

  it('cover every operator, and every form its row has', () => {
    expect(files.map((f) => f.operator).sort()).to.deep.equal([...OPERATORS].sort());
    for (const op of OPERATORS) {
      const row = OPERATOR_TABLE[op];
      const mine = cases.filter((c) => c.operator === op);
      expect(
        mine.some((c) => c.condition !== undefined),
        `${op}: condition cases`,
      ).to.equal(isAvailable(row.condition));
      expect(
        mine.some((c) => c.search !== undefined),
        `${op}: search cases`,
      ).to.equal(isAvailable(row.search));
      // True and false outcomes both, and a missing value.
      if (isAvailable(row.search)) {
        expect(mine.some((c) => c.search === true) && mine.some((c) => c.search === false), op).to.equal(
          true,
        );
      }
      expect(
        mine.some((c) => !('stored' in c)),
        `${op}: a missing value`,
      ).to.equal(true);
    }
  });

  it('answer as written in policy conditions', () => {
    for (const c of cases) {
      const want = expectedTri(c);
      if (want === undefined) continue;
      const { conditions, errors } = parseConditions(conditionsOf(c));
      expect(errors, c.where).to.deep.equal([]);
      expect(evaluateConditions(conditions, conditionInputOf(c)), c.where).to.equal(want);
    }
  });

  it('answer as written in queries evaluated in memory', () => {
    for (const c of cases) {
      if (c.search === undefined) continue;
      expect(compilePredicate(queryOf(c))(subjectOf(c)), c.where).to.equal(c.search);
    }
  });

  it('agree where a condition and a search both answer: true with true, false with false', () => {
    let compared = 0;
    for (const c of cases) {
      if (c.search === undefined || c.condition === undefined || c.condition === 'unknown') continue;
      compared += 1;
      expect(c.search, c.where).to.equal(c.condition);
    }
    expect(compared).to.be.greaterThan(50);
  });
});
