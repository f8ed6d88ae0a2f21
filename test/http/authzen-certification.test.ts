import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient, HttpResponse } from '../helpers/http.js';
import { createConnector } from '../helpers/identities.js';

const EVALUATION = '/access/v1/evaluation';
const EVALUATIONS = '/access/v1/evaluations';
const SEARCH_SUBJECT = '/access/v1/search/subject';
const SEARCH_RESOURCE = '/access/v1/search/resource';
const SEARCH_ACTION = '/access/v1/search/action';

/**
 * The OpenID AuthZEN Authorization API 1.0 certification scenario, every level (Basic, Batch,
 * Search and Discovery, each with its Core and Properties variants), against the service with
 * the scenario's fixture built through the public API:
 *
 * - subjects `alice` and `bob`, users an identity connector provisions through SCIM with those
 *   externalIds (so their AuthZEN ids); bob's directory title makes him an admin;
 * - resources `record-1` (active) and `record-2` (archived), registered with their status;
 * - policies: alice and bob read records; alice writes records that are not archived; an admin
 *   (by the directory, or by the `role` the caller claims) writes archived records; alice deletes
 *   a record when the caller says the delete is soft.
 *
 * The scenario's eight decision rules, its searches S1-S6 and the structure of every answer are
 * asserted exactly; the scenario itself asks only that the expected entities appear.
 */
describe('AuthZEN certification scenario', () => {
  let app: TestApp;
  let api: HttpClient;

  const fx = useApp({ env: { RATE_LIMIT_BULK: '100000' } });

  before(async function () {
    this.timeout(60_000);
    app = fx.app;
    api = fx.api;
    const idp = await createConnector(app, api, 'certification-idp');
    const alice = await idp.provision({
      userName: 'alice@cert.example',
      externalId: 'alice',
      displayName: 'Alice',
    });
    const bob = await idp.provision({
      userName: 'bob@cert.example',
      externalId: 'bob',
      displayName: 'Bob',
      title: 'admin',
    });
    for (const [id, status] of [
      ['record-1', 'active'],
      ['record-2', 'archived'],
    ] as const) {
      const res = await api.put(`/v1/resources/record/${id}`, { attributes: { status } });
      expect(res.status, res.text).to.equal(201);
    }
    const records = [
      { type: 'record', identifier: 'record-1' },
      { type: 'record', identifier: 'record-2' },
    ];
    const users = { type: 'USER', connector_source: idp.name };
    const policies = [
      { name: 'users read records', subjects: { principals: [alice, bob] }, actions: ['read'] },
      {
        name: 'alice writes records that are not archived',
        subjects: { principals: [alice] },
        actions: ['write'],
        conditions: { 'resource.attributes.status': { $ne: 'archived' } },
      },
      {
        name: 'directory admins write archived records',
        subjects: { match: { ...users, attributes: { role: 'admin' } } },
        actions: ['write'],
        conditions: { 'resource.attributes.status': 'archived' },
      },
      {
        name: 'claimed admins write archived records',
        subjects: { match: users },
        actions: ['write'],
        conditions: { 'subject.properties.role': 'admin', 'resource.attributes.status': 'archived' },
      },
      {
        name: 'alice soft-deletes records',
        subjects: { principals: [alice] },
        actions: ['delete'],
        conditions: { 'action.properties.soft': true },
      },
    ];
    for (const policy of policies) {
      const res = await api.post('/v1/policies', { effect: 'allow', resources: records, ...policy });
      expect(res.status, res.text).to.equal(201);
    }
  });

  const send = (path: string, body: unknown): Promise<HttpResponse> => api.post(path, body);
  const ok = async (path: string, body: unknown): Promise<any> => {
    const res = await send(path, body);
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    return res.body;
  };
  /** An AuthZEN decision: a boolean, and a context object. */
  const decisionOf = (answer: any): boolean => {
    expect(answer).to.have.all.keys('decision', 'context');
    expect(answer.decision).to.be.a('boolean');
    expect(answer.context).to.be.an('object');
    return answer.decision as boolean;
  };
  const decide = async (body: unknown): Promise<boolean> => decisionOf(await ok(EVALUATION, body));
  const batch = async (body: unknown): Promise<boolean[]> => {
    const answer = await ok(EVALUATIONS, body);
    expect(answer).to.have.all.keys('evaluations');
    return (answer.evaluations as unknown[]).map(decisionOf);
  };
  const refused = async (path: string, raw: string, contentType = 'application/json'): Promise<void> => {
    const res = await api.post(path, undefined, { raw, headers: { 'Content-Type': contentType } });
    expect(res.status, `${path} ${raw}`).to.equal(400);
  };

  const user = (id: string, properties?: Record<string, unknown>) => ({
    type: 'user',
    id,
    ...(properties ? { properties } : {}),
  });
  const record = (id: string, status?: string) => ({
    type: 'record',
    id,
    ...(status ? { properties: { status } } : {}),
  });
  const act = (name: string, properties?: Record<string, unknown>) => ({
    name,
    ...(properties ? { properties } : {}),
  });
  const CONTEXT = { time: '2025-06-27T18:03-07:00', ip: '192.168.1.1' };

  describe('Basic, Core: Access Evaluation with identifiers only', () => {
    it('makes decision rules 1-4, with or without a context', async () => {
      const rules: [string, string, boolean][] = [
        ['alice', 'read', true],
        ['alice', 'write', true],
        ['bob', 'read', true],
        ['bob', 'write', false],
      ];
      for (const [subject, action, expected] of rules) {
        for (const extra of [{}, { context: CONTEXT }]) {
          const body = {
            subject: user(subject),
            action: act(action),
            resource: record('record-1'),
            ...extra,
          };
          expect(await decide(body), JSON.stringify(body)).to.equal(expected);
        }
      }
    });

    it('takes entities with properties beyond the fixture, and members it does not know', async () => {
      expect(
        await decide({
          subject: user('alice', { department: 'Sales', role: 'manager' }),
          action: act('read', { method: 'GET' }),
          resource: { type: 'record', id: 'record-1', properties: { status: 'active', owner: 'bob' } },
        }),
      ).to.equal(true);
      expect(
        await decide({
          subject: user('alice'),
          action: act('read'),
          resource: record('record-1'),
          foo: 'bar',
          futureField: { nested: true },
        }),
      ).to.equal(true);
    });

    it('refuses missing members and sub-members, bodies it cannot read and wrong types with 400', async () => {
      const whole = { subject: user('alice'), action: act('read'), resource: record('record-1') };
      const without = (key: string) => JSON.stringify({ ...whole, [key]: undefined });
      for (const key of ['subject', 'action', 'resource']) await refused(EVALUATION, without(key));
      for (const partial of [
        { ...whole, subject: { id: 'alice' } },
        { ...whole, subject: { type: 'user' } },
        { ...whole, action: {} },
        { ...whole, resource: { id: 'record-1' } },
        { ...whole, resource: { type: 'record' } },
        { ...whole, subject: 'alice' },
        { ...whole, action: { name: 123 } },
      ])
        await refused(EVALUATION, JSON.stringify(partial));
      await refused(EVALUATION, JSON.stringify(whole), 'text/plain');
      await refused(EVALUATION, '{"subject": {"type": "user", "id": "alice"},');
      await refused(EVALUATION, '');
    });

    it('echoes X-Request-ID, works without it, and answers the same decision every time', async () => {
      const body = { subject: user('alice'), action: act('read'), resource: record('record-1') };
      const echoed = await api.post(EVALUATION, body, { headers: { 'X-Request-ID': 'cert-request-1' } });
      expect(echoed.status).to.equal(200);
      expect(echoed.headers.get('x-request-id')).to.equal('cert-request-1');
      const plain = await api.post(EVALUATION, body);
      expect(plain.status).to.equal(200);
      const answers: boolean[] = [];
      for (let i = 0; i < 5; i += 1) answers.push(await decide(body));
      expect(answers).to.deep.equal([true, true, true, true, true]);
    });
  });

  describe('Basic, Properties: Access Evaluation with entity properties', () => {
    it('makes decision rules 5-8 from the properties of the request', async () => {
      const cases: [unknown, boolean][] = [
        // Rule 5: the status the request gives decides, not the identifier.
        [{ subject: user('alice'), action: act('write'), resource: record('record-2', 'archived') }, false],
        [{ subject: user('alice'), action: act('write'), resource: record('record-1', 'archived') }, false],
        // Rule 6: any subject the caller says is an admin.
        [
          {
            subject: user('bob', { role: 'admin' }),
            action: act('write'),
            resource: record('record-2', 'archived'),
          },
          true,
        ],
        [
          {
            subject: user('alice', { role: 'admin' }),
            action: act('write'),
            resource: record('record-2', 'archived'),
          },
          true,
        ],
        // Rules 7 and 8.
        [
          { subject: user('alice'), action: act('delete', { soft: true }), resource: record('record-1') },
          true,
        ],
        [
          { subject: user('alice'), action: act('delete', { soft: false }), resource: record('record-1') },
          false,
        ],
        [{ subject: user('alice'), action: act('delete'), resource: record('record-1') }, false],
      ];
      for (const [body, expected] of cases) {
        expect(await decide(body), JSON.stringify(body)).to.equal(expected);
        expect(await decide({ ...(body as object), context: CONTEXT }), JSON.stringify(body)).to.equal(
          expected,
        );
      }
    });
  });

  describe('Batch, Core: Access Evaluations with identifiers only', () => {
    it('answers each evaluation in order, with the top-level members as defaults', async () => {
      expect(
        await batch({
          subject: user('alice'),
          action: act('read'),
          evaluations: [{ resource: record('record-1') }, { resource: record('record-2') }],
        }),
      ).to.deep.equal([true, true]);
      expect(
        await batch({
          subject: user('bob'),
          resource: record('record-1'),
          evaluations: [{ action: act('read') }, { action: act('write') }],
        }),
      ).to.deep.equal([true, false]);
      expect(
        await batch({
          evaluations: [
            { subject: user('alice'), action: act('read'), resource: record('record-1') },
            { subject: user('bob'), action: act('write'), resource: record('record-1') },
          ],
        }),
      ).to.deep.equal([true, false]);
      expect(
        await batch({
          subject: user('alice'),
          action: act('read'),
          context: { time: '2025-06-27T18:03-07:00' },
          evaluations: [
            { resource: record('record-1') },
            {
              resource: record('record-2'),
              context: { time: '2025-06-27T19:00-07:00', source: 'batch-override' },
            },
          ],
        }),
      ).to.deep.equal([true, true]);
    });

    it('denies an evaluation missing a member under execute_all, and answers the others', async () => {
      const answer = await ok(EVALUATIONS, {
        subject: user('alice'),
        action: act('read'),
        options: { evaluations_semantic: 'execute_all' },
        evaluations: [{ resource: record('record-1') }, {}],
      });
      expect(answer.evaluations.map(decisionOf)).to.deep.equal([true, false]);
      expect(answer.evaluations[1].context).to.deep.equal({
        error: { status: 400, message: 'resource is required' },
      });
    });

    it('answers a single decision without evaluations or with an empty list', async () => {
      const single = { subject: user('alice'), action: act('read'), resource: record('record-1') };
      for (const body of [single, { ...single, evaluations: [] }]) {
        expect(decisionOf(await ok(EVALUATIONS, body))).to.equal(true);
      }
    });
  });

  describe('Batch, Properties: Access Evaluations with entity properties', () => {
    it('evaluates the properties of each evaluation, and inherits whole top-level members', async () => {
      expect(
        await batch({
          subject: user('alice'),
          action: act('write'),
          evaluations: [
            { resource: record('record-1', 'active') },
            { resource: record('record-2', 'archived') },
          ],
        }),
      ).to.deep.equal([true, false]);
      expect(
        await batch({
          action: act('write'),
          resource: record('record-2', 'archived'),
          evaluations: [{ subject: user('alice') }, { subject: user('bob', { role: 'admin' }) }],
        }),
      ).to.deep.equal([false, true]);
      expect(
        await batch({
          subject: user('alice'),
          action: act('write'),
          resource: record('record-1', 'active'),
          evaluations: [{}, { resource: record('record-2', 'archived') }],
        }),
      ).to.deep.equal([true, false]);
    });
  });

  describe('Search, Core', () => {
    const subjects = async (body: Record<string, unknown>): Promise<unknown[]> => {
      const answer = await ok(SEARCH_SUBJECT, body);
      expect(answer.page.next_token).to.equal('');
      return answer.results as unknown[];
    };
    const readersOfRecord1 = { subject: { type: 'user' }, action: act('read'), resource: record('record-1') };

    it('S1: finds the users who may read record-1 by the ids callers send, with a context or a subject id too', async () => {
      const expected = [user('alice'), user('bob')];
      expect(await subjects(readersOfRecord1)).to.deep.equal(expected);
      expect(await subjects({ ...readersOfRecord1, context: CONTEXT })).to.deep.equal(expected);
      expect(await subjects({ ...readersOfRecord1, subject: user('alice') })).to.deep.equal(expected);
    });

    it('S2: finds the records alice may read, with a context or a resource id too', async () => {
      const body = { subject: user('alice'), action: act('read'), resource: { type: 'record' } };
      const expected = [record('record-1'), record('record-2')];
      for (const variant of [
        body,
        { ...body, context: CONTEXT },
        { ...body, resource: record('record-1') },
      ]) {
        expect((await ok(SEARCH_RESOURCE, variant)).results).to.deep.equal(expected);
      }
    });

    it('S3: finds the actions alice may take on record-1, with a context too', async () => {
      // Deleting depends on a claim about the action, which an action search cannot carry.
      const body = { subject: user('alice'), resource: record('record-1') };
      for (const variant of [body, { ...body, context: CONTEXT }]) {
        expect((await ok(SEARCH_ACTION, variant)).results).to.deep.equal([
          { name: 'read' },
          { name: 'write' },
        ]);
      }
    });

    it('pages with a limit, and follows with the token alone', async () => {
      const first = await ok(SEARCH_SUBJECT, { ...readersOfRecord1, page: { limit: 1 } });
      expect(first.results).to.deep.equal([user('alice')]);
      expect(first.page).to.include({ count: 1, total: 2 });
      expect(first.page.next_token).to.be.a('string').and.not.equal('');
      const second = await ok(SEARCH_SUBJECT, {
        ...readersOfRecord1,
        page: { token: first.page.next_token },
      });
      expect(second.results).to.deep.equal([user('bob')]);
      expect(second.page).to.deep.equal({ next_token: '', count: 1, total: 2 });
    });

    it('answers an empty list for unknown identifiers and types on every search', async () => {
      const empty = async (path: string, body: unknown) =>
        expect((await ok(path, body)).results, `${path} ${JSON.stringify(body)}`).to.deep.equal([]);
      await empty(SEARCH_ACTION, { subject: user('nonexistent-user'), resource: record('record-1') });
      await empty(SEARCH_ACTION, { subject: user('alice'), resource: record('record-99') });
      await empty(SEARCH_ACTION, {
        subject: { type: 'spaceship', id: 'alice' },
        resource: record('record-1'),
      });
      await empty(SEARCH_SUBJECT, { ...readersOfRecord1, subject: { type: 'spaceship' } });
      await empty(SEARCH_SUBJECT, { ...readersOfRecord1, resource: record('record-99') });
      await empty(SEARCH_SUBJECT, { ...readersOfRecord1, resource: { type: 'spaceship', id: 'record-1' } });
      await empty(SEARCH_RESOURCE, {
        subject: user('nonexistent-user'),
        action: act('read'),
        resource: { type: 'record' },
      });
      await empty(SEARCH_RESOURCE, {
        subject: user('alice'),
        action: act('read'),
        resource: { type: 'spaceship' },
      });
    });

    it('refuses searches missing a member or an input entity id with 400', async () => {
      const cases: [string, unknown][] = [
        [SEARCH_SUBJECT, { subject: { type: 'user' }, resource: record('record-1') }],
        [SEARCH_RESOURCE, { action: act('read'), resource: { type: 'record' } }],
        [SEARCH_ACTION, { subject: user('alice') }],
        [SEARCH_SUBJECT, { subject: { type: 'user' }, action: act('read'), resource: { type: 'record' } }],
        [SEARCH_RESOURCE, { subject: { type: 'user' }, action: act('read'), resource: { type: 'record' } }],
        [SEARCH_ACTION, { subject: { type: 'user' }, resource: record('record-1') }],
      ];
      for (const [path, body] of cases) await refused(path, JSON.stringify(body));
    });
  });

  describe('Search, Properties', () => {
    it('S4: finds the users who may write an archived record-2', async () => {
      const answer = await ok(SEARCH_SUBJECT, {
        subject: { type: 'user' },
        action: act('write'),
        resource: record('record-2', 'archived'),
      });
      expect(answer.results).to.deep.equal([user('bob')]);
      // Claims in the search stand for every subject sought: each claimed admin may.
      const claimed = await ok(SEARCH_SUBJECT, {
        subject: { type: 'user', properties: { role: 'admin' } },
        action: act('write'),
        resource: record('record-2', 'archived'),
      });
      expect(claimed.results).to.deep.equal([user('alice'), user('bob')]);
    });

    it('S5: finds the records bob, claimed an admin, may write', async () => {
      const answer = await ok(SEARCH_RESOURCE, {
        subject: user('bob', { role: 'admin' }),
        action: act('write'),
        resource: { type: 'record' },
      });
      expect(answer.results).to.deep.equal([record('record-2')]);
    });

    it('S6: finds the actions bob, claimed an admin, may take on an archived record-2', async () => {
      const answer = await ok(SEARCH_ACTION, {
        subject: user('bob', { role: 'admin' }),
        resource: record('record-2', 'archived'),
      });
      expect(answer.results).to.deep.equal([{ name: 'read' }, { name: 'write' }]);
    });
  });

  describe('Discovery', () => {
    it('publishes the PDP metadata at the well-known address, without a token', async () => {
      const res = await app.http.get('/.well-known/authzen-configuration');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      const base = app.config.publicBaseUrl;
      expect(res.body.policy_decision_point).to.equal(base);
      const endpoints: [string, string][] = [
        ['access_evaluation_endpoint', EVALUATION],
        ['access_evaluations_endpoint', EVALUATIONS],
        ['search_subject_endpoint', SEARCH_SUBJECT],
        ['search_resource_endpoint', SEARCH_RESOURCE],
        ['search_action_endpoint', SEARCH_ACTION],
      ];
      for (const [key, path] of endpoints) {
        const url = new URL(res.body[key] as string);
        expect(`${url.origin}${url.pathname}`, key).to.equal(`${base}${path}`);
        expect(url.search + url.hash, key).to.equal('');
      }
      // Each published endpoint answers there.
      const reached = await api.post(new URL(res.body.access_evaluation_endpoint as string).pathname, {
        subject: user('alice'),
        action: act('read'),
        resource: record('record-1'),
      });
      expect(reached.status).to.equal(200);
      expect(reached.body.decision).to.equal(true);
    });
  });
});
