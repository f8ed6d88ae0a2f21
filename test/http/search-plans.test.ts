import { expect } from 'chai';
import type { SearchPlans } from '../../src/principals/search/plans.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { insertPrincipal } from '../helpers/principals.js';

/** How often each search statement ran, from the database metrics. */
async function runs(app: TestApp, unit: string): Promise<number> {
  const metric = await app.runtime.metrics.dbTransactions.get();
  return metric.values.filter((v) => v.labels.unit === unit).reduce((sum, v) => sum + v.value, 0);
}

/** The app's search plans, whose `settled()` says when background planning has had its chance. */
function plansOf(app: TestApp): SearchPlans {
  return app.runtime.searchPlans;
}

describe('search shapes planned within a budget', () => {
  const fx = useApp({ env: { SEARCH_PLANS_PER_MINUTE: '2' } });
  before(async () => {
    for (const [name, team, env] of [
      ['ana', 'payments', 'prod'],
      ['ben', 'payments', 'staging'],
      ['cid', 'platform', 'prod'],
    ] as const) {
      await insertPrincipal(fx.app, {
        type: 'SERVICE_ACCOUNT',
        name,
        attributes: { team, environment: env },
      });
    }
  });

  const search = async (body: unknown): Promise<string[]> => {
    const res = await fx.api.post('/v1/principals/search', body);
    expect(res.status, res.text).to.equal(200);
    return (res.body.data as { name: string }[]).map((p) => p.name);
  };

  it('answers a new shape with the generic statement, plans it in the background when it comes back, then answers with its own', async () => {
    const shapes = [
      { query: { attributes: { team: 'payments' } }, sort: { field: 'name', order: 'asc' } },
      { query: { attributes: { environment: { $in: ['prod'] } } }, sort: { field: 'name', order: 'asc' } },
      {
        query: { name: { $startsWith: 'c' }, attributes: { team: { $ne: 'x' } } },
        sort: { field: 'name', order: 'asc' },
      },
    ];
    const expected = [['ana', 'ben'], ['ana', 'cid'], ['cid']];
    const shapedBefore = await runs(fx.app, 'principals/shaped_search');
    const genericBefore = await runs(fx.app, 'principals/search');
    for (const [i, body] of shapes.entries()) expect(await search(body)).to.deep.equal(expected[i]);
    await plansOf(fx.app).settled();
    expect(
      (await runs(fx.app, 'principals/search')) - genericBefore,
      'every first sight is generic',
    ).to.equal(3);
    expect(
      (await runs(fx.app, 'principals/shaped_search')) - shapedBefore,
      'a first sight plans nothing',
    ).to.equal(0);
    for (const [i, body] of shapes.entries()) expect(await search(body)).to.deep.equal(expected[i]);
    expect((await runs(fx.app, 'principals/search')) - genericBefore, 'so is every second sight').to.equal(6);
    // Coming back, they ask for plans; the budget of two a minute plans two (one background run
    // each), and no third.
    await plansOf(fx.app).settled();
    const planning = (await runs(fx.app, 'principals/shaped_search')) - shapedBefore;
    expect(planning, 'two plans, no third').to.equal(2);
    expect(plansOf(fx.app).size).to.equal(2);

    const shaped = await runs(fx.app, 'principals/shaped_search');
    const generic = await runs(fx.app, 'principals/search');
    for (const [i, body] of shapes.entries()) expect(await search(body)).to.deep.equal(expected[i]);
    expect(
      (await runs(fx.app, 'principals/shaped_search')) - shaped,
      'the planned shapes run their own',
    ).to.equal(2);
    expect((await runs(fx.app, 'principals/search')) - generic, 'the third stays generic').to.equal(1);
  });

  it('answers every sighting of a shape with the generic statement once the budget is spent', async () => {
    // Two new shapes, each coming back once, take what is left of this minute's budget of two.
    for (let i = 0; i < 2; i += 1) {
      await search({
        query: { attributes: { team: 'nobody' } },
        sort: { field: 'created_at', order: 'asc' },
      });
      await search({
        query: { attributes: { team: { $in: ['nobody'] } } },
        sort: { field: 'created_at', order: 'asc' },
      });
    }
    // Whatever of them was planned, is.
    await plansOf(fx.app).settled();
    const generic = await runs(fx.app, 'principals/search');
    const shaped = await runs(fx.app, 'principals/shaped_search');
    const planned = plansOf(fx.app).size;
    const body = { query: { type: 'AI_AGENT', attributes: { environment: { $startsWith: 'pr' } } } };
    for (let i = 0; i < 3; i += 1) expect(await search(body)).to.deep.equal([]);
    await plansOf(fx.app).settled();
    expect((await runs(fx.app, 'principals/search')) - generic, 'every sighting is generic').to.equal(3);
    expect((await runs(fx.app, 'principals/shaped_search')) - shaped, 'nothing planned').to.equal(0);
    expect(plansOf(fx.app).size).to.equal(planned);
  });
});
