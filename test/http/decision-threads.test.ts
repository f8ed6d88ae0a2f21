import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { HttpClient } from '../helpers/http.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';
import { syncSnapshot } from '../helpers/sync.js';
import { metricValue, until } from '../helpers/wait.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

const metric = (http: HttpClient, name: string): Promise<number> => metricValue(http, name);

const read = (principal: string, type: string, identifier: string) => ({
  principal_id: principal,
  action: 'read',
  resource: { type, identifier },
});

/** A batch's body of `count` requests as JSON text, each of about 100 bytes. */
const batchText = (count: number, request: (i: number) => unknown): string =>
  JSON.stringify({ requests: Array.from({ length: count }, (_, i) => request(i)) });

/**
 * Bodies of long batches that are not batches, refused the same way whether a decision thread
 * reads them or the event loop does: the problem each one gets, nothing decided.
 */
async function expectBodiesRefused(api: HttpClient, principal: string): Promise<void> {
  const post = (raw: string | Buffer, headers: Record<string, string> = {}) =>
    api.request('POST', '/v1/decisions/batch', {
      raw,
      headers: { 'Content-Type': 'application/json', ...headers },
    });
  const valid = (i: number) => read(principal, 'doc', `d${i}`);
  const cut = batchText(40, valid).slice(0, -2);
  const malformed = await post(cut);
  expect(malformed.status, malformed.text).to.equal(400);
  expect(malformed.body).to.include({ code: 'MALFORMED_JSON', detail: 'the request body is not valid JSON' });

  const wrong = await post(
    batchText(40, (i) =>
      i === 17
        ? { principal_id: principal, action: 'read' }
        : i === 20
          ? { ...valid(i), extra: 1 }
          : valid(i),
    ),
  );
  expect(wrong.status, wrong.text).to.equal(400);
  expect(wrong.body).to.include({ code: 'VALIDATION_FAILED', detail: 'the request body is invalid' });
  expect(wrong.body.errors).to.deep.include.members([
    { pointer: '/requests/17/resource', message: 'is required' },
    { pointer: '/requests/20/extra', message: 'is not an allowed field' },
  ]);

  const tooMany = await post(batchText(1001, valid));
  expect(tooMany.status).to.equal(400);
  expect(tooMany.body.code).to.equal('VALIDATION_FAILED');
  expect(tooMany.body.errors.map((e: { pointer: string }) => e.pointer)).to.deep.equal(['/requests']);

  const empty = await post('   ');
  expect(empty.status).to.equal(400);
  expect(empty.body.errors).to.deep.equal([{ pointer: '/requests', message: 'is required' }]);

  // Compressed, it is read by the body parser first, then checked and decided the same way.
  const zipped = await post(gzipSync(batchText(40, valid)), { 'Content-Encoding': 'gzip' });
  expect(zipped.status, zipped.text).to.equal(200);
  expect(zipped.body.summary).to.deep.equal({ total: 40, allowed: 0, denied: 40 });
  const zippedWrong = await post(gzipSync(cut), { 'Content-Encoding': 'gzip' });
  expect(zippedWrong.status).to.equal(400);
}

/**
 * Batches, AuthZEN evaluation lists and simulations go to a decision thread holding a replica of
 * the index; what a client sees must be what deciding in place gives, with every write made
 * before the list seen by it.
 */
describe('decision threads', function () {
  this.timeout(120_000);
  const fx = useApp();
  const { uniq, type } = namer();
  const world = () => engineApi(fx.api, uniq);

  const batch = async (requests: Record<string, unknown>[]): Promise<any[]> => {
    const res = await fx.api.post('/v1/decisions/batch', { requests });
    expect(res.status, res.text).to.equal(200);
    return res.body.results;
  };
  const tasks = (): Promise<number> => metric(fx.app.http, 'decision_thread_tasks_total');

  it('decides a batch on a thread, as single decisions decide it, and records every decision', async () => {
    expect(await metric(fx.app.http, 'decision_threads_ready')).to.equal(1);
    const [p, q] = [(await world().principal()).id, (await world().principal()).id];
    const t = type();
    await world().policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'a*' }] });
    const requests = Array.from({ length: 40 }, (_, i) =>
      read(i % 2 === 0 ? p : q, t, `${i % 3 ? 'a' : 'b'}${i}`),
    );
    const before = await tasks();
    const results = await batch(requests);
    expect(await tasks(), 'one task on a thread').to.equal(before + 1);
    for (const [i, request] of requests.entries()) {
      const single = await fx.api.post('/v1/decisions/evaluate', request);
      expect(results[i].decision, `request ${i}`).to.equal(single.body.decision);
      expect(results[i].reasons).to.deep.equal(single.body.reasons);
    }
    expect(results.filter((r) => r.allowed)).to.have.length(
      requests.filter((r, i) => r.principal_id === p && i % 3 !== 0).length,
    );
    const recorded = await recordedDecision(fx.api, results[39].id);
    expect(recorded).to.include({ id: results[39].id, decision: results[39].decision });
    expect(recorded.resource).to.deep.equal(requests[39]!.resource);
  });

  it("reads a long batch's body on the thread, and refuses one that is not a batch as the edge does", async () => {
    const p = (await world().principal()).id;
    const before = await tasks();
    await expectBodiesRefused(fx.api, p);
    // The malformed, wrong, too long and compressed bodies went to the thread; the empty one and
    // the compressed one that is not JSON did not (the body parser refused that one first).
    expect(await tasks()).to.equal(before + 4);
  });

  it('answers text beyond ASCII byte for byte, as recorded', async () => {
    const p = (await world().principal()).id;
    const t = type();
    await world().policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'é*' }] });
    const names = Array.from({ length: 40 }, (_, i) => (i % 2 ? `é-文書-${i}-😀` : `plain-${i}`));
    const res = await fx.api.request('POST', '/v1/decisions/batch', {
      raw: Buffer.from(
        batchText(40, (i) => read(p, t, names[i]!)),
        'utf8',
      ),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status, res.text).to.equal(200);
    expect(Number(res.headers.get('content-length'))).to.equal(Buffer.byteLength(res.text, 'utf8'));
    expect(res.body.results.map((r: { allowed: boolean }) => r.allowed)).to.deep.equal(
      names.map((n) => n.startsWith('é')),
    );
    const recorded = await recordedDecision(fx.api, res.body.results[39].id);
    expect(recorded.resource).to.deep.equal({ type: t, identifier: names[39] });
  });

  it('sees each write acknowledged before the batch, without waiting', async () => {
    const p = (await world().principal()).id;
    const g = await world().group();
    const t = type();
    const requests = Array.from({ length: 20 }, (_, i) => read(p, t, `r${i}`));
    const policy = await world().policy({
      subjects: { groups: [g] },
      resources: [{ type: t, identifier: '*' }],
    });
    expect(
      (await batch(requests)).every((r) => !r.allowed),
      'not a member yet',
    ).to.equal(true);
    await world().addMember(g, p);
    expect(
      (await batch(requests)).every((r) => r.allowed),
      'a member',
    ).to.equal(true);
    const removed = await fx.api.delete(`/v1/policies/${policy.id}`);
    expect(removed.status, removed.text).to.be.within(200, 204);
    expect(
      (await batch(requests)).every((r) => !r.allowed),
      'the policy deleted',
    ).to.equal(true);
  });

  it('answers an AuthZEN list on a thread, stopping at the first deny', async () => {
    const p = (await world().principal()).id;
    const t = type();
    await world().policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'ok-*' }] });
    const ids = [...Array.from({ length: 17 }, (_, i) => `ok-${i}`), 'no', 'ok-x'];
    const before = await tasks();
    const res = await fx.api.post('/access/v1/evaluations', {
      subject: { type: 'service_account', id: p },
      action: { name: 'read' },
      options: { evaluations_semantic: 'deny_on_first_deny' },
      evaluations: ids.map((id) => ({ resource: { type: t, id } })),
    });
    expect(res.status, res.text).to.equal(200);
    expect(await tasks()).to.equal(before + 1);
    expect(res.body.evaluations.map((e: any) => e.decision)).to.deep.equal([...Array(17).fill(true), false]);
    const last = res.body.evaluations[17];
    expect(last.context.reasons[0].code).to.equal('NO_MATCHING_POLICY');
    expect((await recordedDecision(fx.api, last.context.id)).decision).to.equal('DENY');
  });

  it('simulates on a thread', async () => {
    const p = (await world().principal()).id;
    const t = type();
    const policy = await world().policy({
      subjects: { principals: [p] },
      resources: [{ type: t, identifier: 'a' }],
    });
    const before = await tasks();
    const res = await fx.api.post(`/v1/policies/${policy.id}/simulate`, {
      delete: true,
      requests: [read(p, t, 'a'), read(p, t, 'b')],
    });
    expect(res.status, res.text).to.equal(200);
    expect(await tasks()).to.equal(before + 1);
    expect(res.body.results.map((r: any) => [r.current, r.simulated])).to.deep.equal([
      ['ALLOW', 'DENY'],
      ['DENY', 'DENY'],
    ]);
  });

  it('follows a sync of 1,200 users, which reaches the thread in slices', async () => {
    const department = uniq('dept');
    const t = type();
    await world().policy({
      subjects: { match: { type: 'USER', attributes: { department } } },
      resources: [{ type: t, identifier: 'x' }],
    });
    const made = await fx.api.post('/v1/connectors', { name: uniq('threads-') });
    expect(made.status, made.text).to.equal(201);
    const lines = Array.from({ length: 1_200 }, (_, i) =>
      JSON.stringify({
        schemas: [USER, ENTERPRISE],
        userName: `${department}-${i}@example.com`,
        active: true,
        [ENTERPRISE]: { department },
      }),
    );
    await syncSnapshot(fx.api, made.body.id, lines.join('\n'));
    const ids: string[] = [];
    for (let page = 1; ids.length < 1_200 && page <= 20; page += 1) {
      const listed = await fx.api.get(
        `/v1/principals?connector_source=${made.body.name}&limit=100&page=${page}`,
      );
      expect(listed.status, listed.text).to.equal(200);
      ids.push(...listed.body.data.map((x: any) => x.id));
    }
    expect(ids).to.have.length(1_200);
    const requests = ids.slice(0, 1_000).map((id) => read(id, t, 'x'));
    const results = await batch(requests);
    expect(results.filter((r) => !r.allowed).map((r) => r.principal_id)).to.deep.equal([]);
  });

  it('decides in place while its thread is away, and starts it again from the index as it then is', async () => {
    const threads = fx.app.runtime.engine.threads!;
    const p = (await world().principal()).id;
    const t = type();
    const requests = Array.from({ length: 20 }, (_, i) => read(p, t, `r${i}`));
    const worker = (threads as unknown as { slots: { worker?: { terminate(): Promise<number> } }[] })
      .slots[0]!.worker!;
    await worker.terminate();
    // Written while no replica follows: the thread started again must hold it.
    await world().policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'r*' }] });
    expect(
      (await batch(requests)).every((r) => r.allowed),
      'decided while the thread is away',
    ).to.equal(true);
    await until(
      'the thread started again',
      async () => (await metric(fx.app.http, 'decision_threads_ready')) === 1,
    );
    const before = await tasks();
    expect(
      (await batch(requests)).every((r) => r.allowed),
      'decided on the new thread',
    ).to.equal(true);
    expect(await tasks()).to.equal(before + 1);
  });
});

describe('decision threads turned off', function () {
  this.timeout(60_000);
  const fx = useApp({ env: { DECISION_THREADS: '0' } });
  const { uniq, type } = namer();

  it('decides batches in place, with the same answers', async () => {
    const world = engineApi(fx.api, uniq);
    const p = (await world.principal()).id;
    const t = type();
    await world.policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'a*' }] });
    const res = await fx.api.post('/v1/decisions/batch', {
      requests: Array.from({ length: 20 }, (_, i) => read(p, t, i % 2 ? `a${i}` : `b${i}`)),
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.summary).to.deep.equal({ total: 20, allowed: 10, denied: 10 });
    expect(await metric(fx.app.http, 'decision_threads_ready')).to.equal(0);
    expect(await metric(fx.app.http, 'decision_thread_tasks_total')).to.equal(0);
  });

  it("refuses a long batch's body that is not a batch as a thread does", async () => {
    const p = (await engineApi(fx.api, uniq).principal()).id;
    await expectBodiesRefused(fx.api, p);
    expect(await metric(fx.app.http, 'decision_thread_tasks_total')).to.equal(0);
  });
});
