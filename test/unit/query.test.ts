import { expect } from 'chai';
import { Catalogue } from '../../src/db/catalogue.js';
import { AppError } from '../../src/errors/errors.js';
import { compile, type LiteralParam, type SearchParams } from '../../src/principals/search/cypher.js';
import {
  and,
  assertWellFormed,
  attribute,
  condition,
  field,
  not,
  or,
  type Condition,
  type Query,
} from '../../src/principals/search/model.js';
import { MAX_LITERALS, normalise, type Normal } from '../../src/principals/search/normal.js';

const team = (v: string): Condition => condition(attribute('team'), '$eq', v);
const env = (v: string): Condition => condition(attribute('environment'), '$eq', v);

/** A normal form written compactly: `team=a` for a literal, `!team=a` for a negated one. */
function shape(normal: Normal): string[][][] {
  return normal.map((clause) =>
    clause.map((term) =>
      term.map((l) => {
        const target = 'attribute' in l.target ? l.target.attribute : l.target.field;
        const operand = Array.isArray(l.operand) ? `[${l.operand.join(',')}]` : String(l.operand);
        return `${l.negated ? '!' : ''}${target}${l.op === '$eq' ? '=' : ` ${l.op} `}${operand}`;
      }),
    ),
  );
}

describe('query representation', () => {
  describe('normal form', () => {
    it('makes each condition of a conjunction a clause of its own', () => {
      expect(shape(normalise(and(team('a'), env('prod'))))).to.deep.equal([
        [['team=a']],
        [['environment=prod']],
      ]);
    });

    it('turns $ne, $nin and $exists: false into negated $eq, $in and $exists', () => {
      const q = and(
        condition(attribute('team'), '$ne', 'a'),
        condition(attribute('team'), '$nin', ['a', 'b']),
        condition(field('email'), '$exists', false),
        condition(field('email'), '$exists', true),
      );
      expect(shape(normalise(q))).to.deep.equal([
        [['!team=a']],
        [['!team $in [a,b]']],
        [['!email $exists true']],
        [['email $exists true']],
      ]);
    });

    it('moves not down to the conditions (De Morgan), and not of $ne is $eq', () => {
      expect(shape(normalise(not(and(team('a'), env('prod')))))).to.deep.equal([
        [['!team=a'], ['!environment=prod']],
      ]);
      expect(shape(normalise(not(or(team('a'), env('prod')))))).to.deep.equal([
        [['!team=a']],
        [['!environment=prod']],
      ]);
      expect(shape(normalise(not(condition(attribute('team'), '$ne', 'a'))))).to.deep.equal([[['team=a']]]);
      expect(shape(normalise(not(not(team('a')))))).to.deep.equal([[['team=a']]]);
    });

    it('keeps conjunctions of disjunctions of conjunctions as they are', () => {
      const q = and(team('a'), or(and(env('prod'), team('b')), env('dev')));
      expect(shape(normalise(q))).to.deep.equal([
        [['team=a']],
        [['environment=prod', 'team=b'], ['environment=dev']],
      ]);
    });

    it('distributes an or nested deeper over the and above it', () => {
      const q = or(team('a'), and(team('b'), or(env('prod'), env('dev'))));
      expect(shape(normalise(q))).to.deep.equal([
        [['team=a'], ['team=b', 'environment=prod'], ['team=b', 'environment=dev']],
      ]);
    });

    it('reads an empty and as true and an empty or as false', () => {
      expect(normalise(and())).to.deep.equal([]);
      expect(normalise(or())).to.deep.equal([[]]);
      // not(or()) is true, not(and()) false.
      expect(normalise(not(or()))).to.deep.equal([]);
      expect(normalise(not(and()))).to.deep.equal([[]]);
    });

    it('refuses a tree whose distribution would exceed the limit', () => {
      // (a1 or b1) and ... and (a10 or b10), under an or: 2^10 terms of 10 literals.
      const pairs = Array.from({ length: 10 }, (_, i) => or(team(`a${i}`), team(`b${i}`)));
      let error: unknown;
      try {
        normalise(or(env('x'), and(...pairs)));
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).code).to.equal('VALIDATION_FAILED');
      // The same pairs as a conjunction need no distribution at all.
      expect(normalise(and(...pairs))).to.have.length(10);
      expect(MAX_LITERALS).to.be.greaterThan(20);
    });
  });

  describe('well-formed queries', () => {
    it('refuses operators a target does not take and operands of the wrong shape', () => {
      const bad: Query[] = [
        condition(field('type'), '$contains', 'US'),
        condition(field('created_at'), '$startsWith', '2026'),
        condition(attribute('team'), '$in', 'a'),
        condition(attribute('team'), '$eq', ['a']),
        condition(attribute('team'), '$exists', 'yes'),
        not(and(team('a'), condition(field('risk_score'), '$endsWith', '5'))),
      ];
      for (const q of bad) expect(() => assertWellFormed(q), JSON.stringify(q)).to.throw();
      assertWellFormed(and(team('a'), or(condition(field('type'), '$in', ['USER']), not(env('prod')))));
    });
  });

  describe('compiled trees', () => {
    let catalogue: Catalogue;
    before(async () => {
      catalogue = await Catalogue.load();
    });
    const params = (q: Query): SearchParams =>
      compile(q, { field: 'created_at', order: 'desc' }, { skip: 0, limit: 50 }, catalogue).params.q;
    const literals = (p: SearchParams): LiteralParam[] => p.clauses.flatMap((c) => c.terms.flat());

    it('passes disjunctions as clauses of several terms, with negations as flags', () => {
      const p = params(and(team('a'), or(not(env('prod')), condition(attribute('tags'), '$endsWith', 'X'))));
      expect(
        p.clauses.map((c) => c.terms.map((t) => t.map((l) => `${l.neg ? '!' : ''}${l.op}:${l.prop}`))),
      ).to.deep.equal([[['eq:attr.team']], [['!eq:attr.environment'], ['endsWith:attr.tags']]]);
    });

    it('anchors only on conditions every match must meet', () => {
      expect(params(or(team('a'), team('b'))).anchor.kind).to.equal('all');
      expect(params(not(team('a'))).anchor.kind).to.equal('all');
      expect(params(and(or(team('a'), env('b')), env('prod'))).anchor).to.deep.include({
        kind: 'values',
        groups: [{ at: 1, key: 'environment', values: ['prod'] }],
      });
    });

    it('narrows the type and status label sets by top-level conditions, negated or not', () => {
      const p = params(
        and(
          not(condition(field('type'), '$eq', 'USER')),
          condition(field('type'), '$nin', ['API_KEY']),
          condition(field('status'), '$ne', 'deleted'),
        ),
      );
      expect(p.types).to.deep.equal(['ServiceAccount', 'AiAgent']);
      expect(p).to.include({ allTypes: false, notDeleted: true });
      expect(p.anchor).to.deep.equal({ kind: 'labels', labels: ['ServiceAccount', 'AiAgent'], checked: [] });
      // Nothing implied: without a status condition every status counts, deleted included.
      expect(params(team('a')).statuses).to.deep.equal(['Active', 'Suspended', 'Deprovisioned', 'Deleted']);
    });

    it('tests type and status inside a disjunction by label', () => {
      const p = params(
        or(
          condition(field('type'), '$in', ['AI_AGENT', 'ROBOT']),
          condition(field('status'), '$eq', 'suspended'),
        ),
      );
      expect(literals(p).map((l) => [l.op, l.values])).to.deep.equal([
        ['labels', ['AiAgent']],
        ['labels', ['Suspended']],
      ]);
      expect(p.counted).to.equal(null);
    });
  });
});
