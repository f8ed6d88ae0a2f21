import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import type { Database, Reader } from '../../src/db/database.js';
import { defineRoute, type AnyRoute } from '../../src/http/route.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpResponse } from '../helpers/http.js';
import { until } from '../helpers/wait.js';

/** Runs until the database stops it: counts to ten billion. */
const ENDLESS = {
  name: 'test/endless',
  text: 'UNWIND range(1, 10000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n',
};
const MARK = { name: 'test/mark', text: 'CREATE (:TimeoutMarker {id: $id})' };
const MARKED = { name: 'test/marked', text: 'MATCH (m:TimeoutMarker {id: $id}) RETURN count(m) AS n' };

/** The unit of work of a request transaction left idle: Neo4j lists it under this name. */
const IDLE = 'test/timeout_idle';
/** How Neo4j sees the open transactions of a unit of work (`Terminated ...` once it ended one). */
const STATUS = {
  name: 'test/transaction_status',
  text: 'SHOW TRANSACTIONS YIELD metaData, status WHERE metaData.unit = $unit RETURN status',
};

/** A promise per key that the routes of this test and the test itself settle and wait for. */
function signals(): { fire(key: string): void; fired(key: string): Promise<void> } {
  const all = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const get = (key: string) => {
    let entry = all.get(key);
    if (!entry) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      entry = { promise, resolve };
      all.set(key, entry);
    }
    return entry;
  };
  return { fire: (key) => get(key).resolve(), fired: (key) => get(key).promise };
}
/** The background transaction of the idle operation is open (its first write made). */
const opened = signals();
/** Neo4j has ended the request transaction of the idle operation. */
const ended = signals();

/**
 * Operations of this test alone that keep a transaction open for too long: one endless statement
 * (alone, or after a write in the same transaction), or a transaction left idle between two
 * statements, for request work (until Neo4j ends it) or for background work (until Neo4j has
 * ended the request transaction `beside` it, opened after it).
 */
function timeoutRoutes(db: () => Database): AnyRoute[] {
  const Done = Type.Object({ n: Type.Integer() }, { additionalProperties: false });
  const Query = Type.Object({ id: Type.String({ pattern: '^[a-z0-9-]{1,40}$' }) });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/_timeout/statement',
      operationId: 'timeoutStatement',
      summary: 'An endless read statement (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      responses: { 200: { description: 'never', schema: Done } },
      handler: async () => ({ body: (await db().first<{ n: number }>(ENDLESS))! }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/_timeout/write',
      operationId: 'timeoutWrite',
      summary: 'A write followed by an endless statement (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      query: Query,
      responses: { 200: { description: 'never', schema: Done } },
      handler: async ({ query }) => ({
        body: await db().write('test/timeout_write', async (tx) => {
          await tx.run(MARK, { id: query.id });
          return (await tx.first<{ n: number }>(ENDLESS))!;
        }),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/_timeout/idle',
      operationId: 'timeoutIdle',
      summary: 'A write transaction left idle past the timeout (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      query: Type.Object({
        id: Type.String({ pattern: '^[a-z0-9-]{1,40}$' }),
        background: Type.Optional(Type.Boolean()),
        beside: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,40}$' })),
      }),
      responses: { 200: { description: 'ok', schema: Done } },
      handler: async ({ query }) => {
        const { id, beside } = query;
        if (query.background) {
          return {
            body: await db()
              .background()
              .write(`${IDLE}_background`, async (tx) => {
                await tx.run(MARK, { id });
                opened.fire(id);
                await ended.fired(beside!);
                return (await tx.first<{ n: number }>(MARKED, { id }))!;
              }),
          };
        }
        return {
          body: await db().write(IDLE, async (tx) => {
            await tx.run(MARK, { id });
            await until(
              'Neo4j to end the idle transaction',
              async () => {
                // Listed as terminated, or no longer listed at all.
                const rows = await db().run<{ status: string }>(STATUS, { unit: IDLE });
                return rows.length === 0 || rows.every((r) => r.status.startsWith('Terminated'));
              },
              30_000,
              50,
            );
            ended.fire(id);
            return (await tx.first<{ n: number }>(MARKED, { id }))!;
          }),
        };
      },
    }),
  ];
}

function expectBusy(res: HttpResponse): void {
  expect(res.status, res.text).to.equal(503);
  expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(res.body).to.include({ status: 503, code: 'UNAVAILABLE' });
  expect(res.body.detail).to.not.match(/Neo|timeout specified|transaction/i);
  expect(res.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
}

describe('transaction timeouts', function () {
  this.timeout(90_000);
  const TIMEOUT_MS = 2_000;
  let app: TestApp;
  let seq = 0;
  const markId = (): string => `mark-${process.pid}-${(seq += 1)}`;
  const marked = async (db: Reader, id: string): Promise<number> =>
    (await db.first<{ n: number }>(MARKED, { id }))!.n;

  const fx = useApp({
    extraRoutes: timeoutRoutes(() => app.runtime.db),
    env: { NEO4J_TX_TIMEOUT_MS: String(TIMEOUT_MS), NEO4J_BACKGROUND_TX_TIMEOUT_MS: '60000' },
  });

  before(async () => {
    app = fx.app;
  });
  after(async () => {
    await app?.close();
  });

  it('stops a statement that outlasts the timeout and answers 503 with Retry-After', async () => {
    const started = Date.now();
    const res = await app.http.get('/v1/_timeout/statement');
    expectBusy(res);
    expect(Date.now() - started, 'ended by the timeout, not by the statement').to.be.below(30_000);
    // The database is not taken for gone: the next request is served.
    expect((await app.http.get('/readyz')).status).to.equal(200);
  });

  it('rolls back a write whose transaction outlasts the timeout', async () => {
    const id = markId();
    expectBusy(await app.http.post(`/v1/_timeout/write?id=${id}`));
    expect(await marked(app.runtime.db, id), 'nothing of the transaction stays').to.equal(0);
  });

  it('ends a transaction left open past the timeout, committing nothing', async () => {
    const id = markId();
    expectBusy(await app.http.post(`/v1/_timeout/idle?id=${id}`));
    expect(await marked(app.runtime.db, id)).to.equal(0);
  });

  it('gives background work its own, longer timeout', async () => {
    const [id, beside] = [markId(), markId()];
    const background = app.http.post(`/v1/_timeout/idle?id=${id}&background=true&beside=${beside}`);
    // Beside it, and opened after it, a request transaction left idle: once Neo4j has ended that
    // one, it has let the older background one outlive the request timeout.
    await opened.fired(id);
    expectBusy(await app.http.post(`/v1/_timeout/idle?id=${beside}`));
    const res = await background;
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ n: 1 });
    expect(await marked(app.runtime.db, id)).to.equal(1);
    expect(await marked(app.runtime.db, beside)).to.equal(0);
  });
});
