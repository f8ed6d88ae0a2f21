import { expect } from 'chai';
import { compile, type CompiledQuery } from '../../src/principals/search/cypher.js';
import { compileShaped, type ShapedStatement } from '../../src/principals/search/shaped.js';
import type { TestApp } from '../helpers/app.js';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import { operatorCases, queryOf, storedOf, type LoadedCase } from '../helpers/operator-cases.js';
import { insertPrincipal } from '../helpers/principals.js';

/**
 * The search cases of test/cases/operators on Neo4j: one principal per case, holding the case's
 * value, and each case's condition compiled to the generic search statement and, where the
 * operator has one, to the statement written for its shape. Each must find the case's principal
 * exactly when the case says the search matches. The unit tests run the same cases against the
 * in-memory evaluator, so the two agree case by case.
 */
describe('operator cases on Neo4j', () => {
  let app: TestApp;
  const cases = operatorCases().cases.filter((c) => c.search !== undefined);
  const principalOf = new Map<LoadedCase, string>();

  const fx = useApp();

  before(async function () {
    this.timeout(120_000);
    app = fx.app;
    for (const [i, c] of cases.entries()) {
      const stored = storedOf(c);
      const principal = await insertPrincipal(app, {
        type: 'SERVICE_ACCOUNT',
        name: c.field === 'name' ? (stored as string) : `case-${i}`,
        ...(c.field === 'email' && stored !== null ? { email: stored as string } : {}),
        ...(c.field === 'last_login' && stored !== null ? { lastLogin: stored as string } : {}),
        ...(c.field === undefined && stored !== null
          ? { attributes: { v: stored as string | string[] } }
          : {}),
      });
      if (c.field === 'risk_score') {
        await cypher(app.runtime.db, 'MATCH (p:Principal {id: $id}) SET p.risk_score = $risk', {
          id: principal.id,
          risk: stored,
        });
      }
      principalOf.set(c, principal.id);
    }
  });

  const sort = { field: 'created_at', order: 'desc' } as const;
  const page = { skip: 0, limit: 1000 };

  /** Whether the statement finds the case's principal. */
  const finds = async (c: LoadedCase, statement: CompiledQuery | ShapedStatement): Promise<boolean> => {
    const [row] = await app.runtime.db.run<{ rows: { id: string }[] }>(statement, statement.params);
    const ids = row!.rows.map((r) => r.id);
    expect(ids.length, `${c.where}: the page holds every match`).to.be.lessThan(page.limit);
    return ids.includes(principalOf.get(c)!);
  };

  it('finds the principal of each case exactly when the case matches, on the generic statement', async function () {
    this.timeout(120_000);
    for (const c of cases) {
      const statement = compile(queryOf(c), sort, page, app.runtime.db.catalogue);
      expect(await finds(c, statement), c.where).to.equal(c.search);
    }
  });

  it('and on the statement written for its shape, where the operator has one', async function () {
    this.timeout(120_000);
    let shaped = 0;
    for (const c of cases) {
      const statement = compileShaped(queryOf(c), sort, page, app.runtime.db.catalogue);
      if (!statement) continue;
      shaped += 1;
      expect(await finds(c, statement), c.where).to.equal(c.search);
    }
    // Every operator but $endsWith has a shaped statement.
    expect(shaped).to.equal(cases.filter((c) => c.operator !== '$endsWith').length);
  });
});
