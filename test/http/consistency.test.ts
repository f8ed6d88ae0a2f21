import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { cypher } from '../helpers/db.js';
import { engineApi, namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient, HttpResponse } from '../helpers/http.js';

const TOKEN = 'Consistency-Token';

/**
 * Consistency tokens between two instances on one database. The second instance has no Redis and
 * polls the change sequence only once a minute, so without a token it stays behind for the whole
 * test: what it answers with a token can only come from waiting for the token.
 */
describe('consistency tokens', () => {
  let a: TestApp;
  let b: TestApp;
  let apiA: HttpClient;
  let apiB: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fxA = useApp();
  // A second instance on the same store that never polls the change feed: it sees a write only
  // when a token makes it wait for one.
  const fxB = useApp({
    keepData: true,
    env: { EVENT_POLL_INTERVAL_MS: '60000', CONSISTENCY_WAIT_MS: '2000' },
  });
  before(() => {
    a = fxA.app;
    b = fxB.app;
    apiA = fxA.api;
    apiB = fxB.api;
    world = engineApi(apiA, uniq);
  });

  const tokenOf = (res: HttpResponse): string => {
    const token = res.headers.get(TOKEN);
    expect(token, `${res.status} ${res.text}`).to.be.a('string').and.not.equal('');
    return token!;
  };
  const withToken = (token: string) => ({ headers: { [TOKEN]: token } });
  const decide = async (api: HttpClient, principalId: string, t: string, token?: string) => {
    const res = await api.post(
      '/v1/decisions/evaluate',
      { principal_id: principalId, action: 'read', resource: { type: t, identifier: 'x' } },
      token ? withToken(token) : {},
    );
    expect(res.status, res.text).to.equal(200);
    return res.body.decision as string;
  };

  it('is answered by every successful write of the API and SCIM, and by no read or refusal', async () => {
    const created = await apiA.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('p') });
    expect(created.status).to.equal(201);
    const patched = await apiA.patch(`/v1/principals/${created.body.id}`, { description: 'changed' });
    expect(patched.status).to.equal(200);
    const group = await world.group();
    const added = await apiA.put(`/v1/groups/${group}/members/${created.body.id}`);
    expect(added.status).to.equal(200);
    const removed = await apiA.delete(`/v1/groups/${group}/members/${created.body.id}`);
    expect(removed.status).to.equal(200);
    for (const res of [created, patched, added, removed]) tokenOf(res);

    const connector = await apiA.post('/v1/connectors', { name: uniq('idp'), profile: 'okta' });
    expect(connector.status, connector.text).to.equal(201);
    const scim = apiA.withToken(connector.body.token as string);
    const user = await scim.post(
      '/scim/v2/Users',
      { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `${uniq('u')}@example.com` },
      { headers: { 'Content-Type': 'application/scim+json' } },
    );
    expect(user.status, user.text).to.equal(201);
    tokenOf(user);

    const read = await apiA.get(`/v1/principals/${created.body.id}`);
    expect(read.status).to.equal(200);
    expect(read.headers.get(TOKEN)).to.equal(null);
    const refused = await apiA.post('/v1/principals', { type: 'SERVICE_ACCOUNT' });
    expect(refused.status).to.equal(400);
    expect(refused.headers.get(TOKEN)).to.equal(null);
  });

  it('makes a decision on another instance see a policy and a membership written on the first', async () => {
    const t = type();
    const p = await world.principal();
    // Instance B knows the principal before anything else happens, as it will stay without a token.
    expect(
      await decide(
        apiB,
        p.id,
        t,
        tokenOf(await apiA.patch(`/v1/principals/${p.id}`, { description: 'seen' })),
      ),
    ).to.equal('DENY');
    const group = await world.group();
    const policy = await apiA.post('/v1/policies', {
      name: uniq('policy'),
      effect: 'allow',
      actions: ['read'],
      subjects: { groups: [group] },
      resources: [{ type: t, identifier: '*' }],
    });
    expect(policy.status, policy.text).to.equal(201);
    const joined = await apiA.put(`/v1/groups/${group}/members/${p.id}`);
    expect(joined.status).to.equal(200);
    const token = tokenOf(joined);

    expect(await decide(apiA, p.id, t), 'the instance that wrote').to.equal('ALLOW');
    expect(await decide(apiB, p.id, t), 'the other instance, without the token').to.equal('DENY');
    expect(await decide(apiB, p.id, t, token), 'the other instance, with the token').to.equal('ALLOW');

    const access = await apiB.get(`/v1/principals/${p.id}/access?resource_type=${t}`, withToken(token));
    expect(access.status, access.text).to.equal(200);
    expect(access.body.access.map((e: any) => e.resource.type)).to.include(t);

    const authzen = await apiB.post(
      '/access/v1/evaluation',
      {
        subject: { type: 'service_account', id: p.id },
        action: { name: 'read' },
        resource: { type: t, id: 'y' },
      },
      withToken(token),
    );
    expect(authzen.status, authzen.text).to.equal(200);
    expect(authzen.body.decision).to.equal(true);
  });

  it('carries what a write on the second instance made to the first', async () => {
    const t = type();
    const p = await world.principal();
    const policy = await apiB.post('/v1/policies', {
      name: uniq('policy'),
      effect: 'allow',
      actions: ['read'],
      subjects: { principals: [p.id] },
      resources: [{ type: t, identifier: '*' }],
    });
    expect(policy.status, policy.text).to.equal(201);
    expect(await decide(apiA, p.id, t, tokenOf(policy))).to.equal('ALLOW');
  });

  it('refuses a token the service did not issue with 400, and changes nothing', async () => {
    const issued = tokenOf(
      await apiA.patch(`/v1/principals/${(await world.principal()).id}`, { description: 'x' }),
    );
    const [version, payload, mac] = issued.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ b: [], p: [0, 9_999_999] })).toString('base64url');
    const flipped = `${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    const bad = [
      'garbage',
      '',
      `${version}.${payload}`,
      `${version}.${forged}.${mac}`,
      `${version}.${payload}.${flipped}`,
      `ct9.${payload}.${mac}`,
      `${version}.${'A'.repeat(3_000)}.${mac}`,
    ];
    for (const token of bad.filter((t) => t !== '')) {
      const name = uniq('refused');
      const res = await apiB.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name }, withToken(token));
      expect(res.status, `${token.slice(0, 40)}: ${res.text}`).to.equal(400);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors[0].pointer).to.equal('/headers/Consistency-Token');
      const stored = await cypher(a.runtime.db, 'MATCH (p:Principal {name: $name}) RETURN count(p) AS n', {
        name,
      });
      expect(stored[0]!['n']).to.equal(0);
    }
  });

  it('answers 503 with Retry-After when the instance cannot catch up within CONSISTENCY_WAIT_MS', async () => {
    // A token of this service for a change the feed will not have for a long while.
    const ahead = b.runtime.consistency.encode({ bookmarks: [], places: [[3, 1_000_000_000]] });
    const started = Date.now();
    const res = await apiB.get('/v1/principals?per_page=1', withToken(ahead));
    expect(res.status, res.text).to.equal(503);
    expect(res.body.code).to.equal('UNAVAILABLE');
    expect(Number(res.headers.get('Retry-After'))).to.be.greaterThan(0);
    expect(Date.now() - started).to.be.at.least(2_000);
  });

  it('refuses a signed token naming a database state that never was with 400', async () => {
    const bookmark = b.runtime.db.committedBookmarks().bookmarks[0];
    expect(bookmark, 'the instance has committed something').to.be.a('string');
    const foreign = b.runtime.consistency.encode({ bookmarks: ['not-a-bookmark'], places: [] });
    const res = await apiB.get('/v1/principals?per_page=1', withToken(foreign));
    expect(res.status, res.text).to.equal(400);
    expect(res.body.code).to.equal('VALIDATION_FAILED');
  });
});
