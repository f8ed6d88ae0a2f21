import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import type { Database, Reader } from '../../src/db/database.js';
import { defineRoute, type AnyRoute } from '../../src/http/route.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import type { HttpResponse } from '../helpers/http.js';

/** Runs until the database stops it: counts to ten billion. */
const ENDLESS = {
  name: 'test/endless',
  text: 'UNWIND range(1, 10000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n',
};
const MARK = { name: 'test/mark', text: 'CREATE (:TimeoutMarker {id: $id})' };
const MARKED = { name: 'test/marked', text: 'MATCH (m:TimeoutMarker {id: $id}) RETURN count(m) AS n' };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Operations of this test alone that keep a transaction open for too long: one endless statement
 * (alone, or after a write in the same transaction), or a transaction left idle between two
 * statements, for request work or for background work.
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
        ms: Type.Integer({ minimum: 0, maximum: 20_000 }),
        background: Type.Optional(Type.Boolean()),
      }),
      responses: { 200: { description: 'ok', schema: Done } },
      handler: async ({ query }) => {
        const target = query.background ? db().background() : db();
        return {
          body: await target.write('test/timeout_idle', async (tx) => {
            await tx.run(MARK, { id: query.id });
            await sleep(query.ms);
            return (await tx.first<{ n: number }>(MARKED, { id: query.id }))!;
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

  before(async () => {
    app = await startTestApp({
      extraRoutes: timeoutRoutes(() => app.runtime.db),
      env: { NEO4J_TX_TIMEOUT_MS: String(TIMEOUT_MS), NEO4J_BACKGROUND_TX_TIMEOUT_MS: '60000' },
    });
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
    expectBusy(await app.http.post(`/v1/_timeout/idle?id=${id}&ms=${TIMEOUT_MS * 3}`));
    expect(await marked(app.runtime.db, id)).to.equal(0);
  });

  it('gives background work its own, longer timeout', async () => {
    const id = markId();
    const res = await app.http.post(`/v1/_timeout/idle?id=${id}&ms=${TIMEOUT_MS * 3}&background=true`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ n: 1 });
    expect(await marked(app.runtime.db, id)).to.equal(1);
  });
});
