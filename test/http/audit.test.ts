import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SECRET } from '../helpers/app.js';
import { basic, tokenFor } from '../helpers/auth.js';
import { useApp } from '../helpers/fixture.js';

describe('audit trail', () => {
  let created: { id: string; client_secret: string };

  const fx = useApp();

  before(async () => {
    created = (
      await fx.api.post(
        '/v1/clients',
        { name: 'audited', scopes: ['audit:read'] },
        { headers: { 'User-Agent': 'audit-test/1.0' } },
      )
    ).body;
  });

  const events = async (query: string) => {
    const res = await fx.api.get(`/v1/audit/events?${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.data as any[];
  };

  it('records client.created with actor, target, request details and changes', async () => {
    const [event] = await events(`type=client.created&target_id=${created.id}`);
    expect(event).to.deep.include({
      type: 'client.created',
      actor: { type: 'client', id: ADMIN_CLIENT_ID },
      target: { type: 'client', id: created.id },
      outcome: 'success',
      user_agent: 'audit-test/1.0',
      source_ip: '127.0.0.1',
    });
    expect(event.id).to.match(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(event.request_id).to.be.a('string');
    expect(event.changes).to.deep.equal({ name: { to: 'audited' }, scopes: { to: ['audit:read'] } });
    const single = await fx.api.get(`/v1/audit/events/${event.id}`);
    expect(single.status).to.equal(200);
    expect(single.body).to.deep.equal(event);
  });

  it('records the bootstrap of the admin client as a system action', async () => {
    const [event] = await events(`type=client.created&target_id=${ADMIN_CLIENT_ID}`);
    expect(event.actor).to.deep.equal({ type: 'system', id: 'system' });
  });

  it('records client.deleted and token.revoked', async () => {
    const victim = (await fx.api.post('/v1/clients', { name: 'short-lived', scopes: ['audit:read'] })).body;
    const token = (await tokenFor(fx.app.http, { id: victim.id, secret: victim.client_secret })).access_token;
    await fx.app.http.withToken(token).delete('/v1/auth/revoke');
    await fx.api.delete(`/v1/clients/${victim.id}`);
    const [deleted] = await events(`type=client.deleted&target_id=${victim.id}`);
    expect(deleted.changes).to.deep.equal({ status: { from: 'active', to: 'deleted' } });
    const revoked = await events(`type=token.revoked&actor_id=${victim.id}`);
    expect(revoked).to.have.length(1);
    expect(revoked[0].target.type).to.equal('access_token');
  });

  it('records failed client authentication with a reason, never the secret tried', async () => {
    await fx.app.http.post('/v1/auth/token', undefined, {
      raw: 'grant_type=client_credentials',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basic({ id: created.id, secret: 'wrong-secret-attempt-xyz' }),
      },
    });
    const [failed] = await events(`type=auth.failed&target_id=${created.id}`);
    expect(failed).to.deep.include({ outcome: 'failure', reason: 'invalid_secret' });
    expect(JSON.stringify(failed)).not.to.contain('wrong-secret-attempt-xyz');
    const failures = await events('outcome=failure');
    expect(failures.map((e) => e.id)).to.include(failed.id);
    expect(failures.filter((e) => e.outcome !== 'failure')).to.deep.equal([]);
  });

  it('filters by type list and prefix, actor, target, outcome and time, newest first', async () => {
    // Its own events of every kind it filters on: a deleted client and a failed authentication.
    const doomed = (await fx.api.post('/v1/clients', { name: 'filtered-away', scopes: ['audit:read'] })).body;
    expect((await fx.api.delete(`/v1/clients/${doomed.id}`)).status).to.equal(200);
    await fx.app.http.post('/v1/auth/token', undefined, {
      raw: 'grant_type=client_credentials',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basic({ id: doomed.id, secret: 'not-its-secret' }),
      },
    });
    const all = await events('limit=100');
    const stamps = all.map((e) => `${e.occurred_at}|${e.id}`);
    expect(stamps).to.deep.equal([...stamps].sort().reverse());

    const clientEvents = await events('type=client.*&limit=100');
    expect(clientEvents.map((e) => e.type)).to.include.members(['client.created', 'client.deleted']);
    expect(clientEvents.filter((e) => !e.type.startsWith('client.'))).to.deep.equal([]);
    const mixed = await events('type=client.deleted,auth.failed&limit=100');
    expect(new Set(mixed.map((e) => e.type))).to.deep.equal(new Set(['client.deleted', 'auth.failed']));

    const byActor = await events(`actor_id=${ADMIN_CLIENT_ID}&limit=100`);
    expect(byActor.map((e) => e.target.id)).to.include(doomed.id);
    expect(byActor.filter((e) => e.actor.id !== ADMIN_CLIENT_ID)).to.deep.equal([]);
    const byTarget = await events(`target_id=${doomed.id}&limit=100`);
    expect(byTarget.map((e) => e.type)).to.deep.equal(['auth.failed', 'client.deleted', 'client.created']);

    const oldest = all[all.length - 1];
    const since = await events(`since=${encodeURIComponent(oldest.occurred_at)}&limit=100`);
    expect(since.length).to.equal(all.length);
    const until = await events(`until=${encodeURIComponent(oldest.occurred_at)}&limit=100`);
    expect(until).to.deep.equal([]);
    const future = await events(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(future).to.deep.equal([]);
    const offset = await events(`since=${encodeURIComponent('2000-01-01T01:00:00+01:00')}&limit=1`);
    expect(offset).to.have.length(1);
  });

  it('paginates', async () => {
    const page1 = await fx.api.get('/v1/audit/events?limit=2&page=1');
    const page2 = await fx.api.get('/v1/audit/events?limit=2&page=2');
    expect(page1.body.pagination).to.include({ page: 1, per_page: 2 });
    expect(page1.body.pagination.pages).to.equal(Math.ceil(page1.body.pagination.total / 2));
    const ids1 = page1.body.data.map((e: any) => e.id);
    const ids2 = page2.body.data.map((e: any) => e.id);
    expect(ids1.filter((id: string) => ids2.includes(id))).to.deep.equal([]);
  });

  it('refuses malformed filters with pointers and unknown event ids with 404', async () => {
    for (const bad of [
      'type=client',
      'type=client.created,',
      "type=x'OR",
      'since=yesterday',
      'outcome=maybe',
      'limit=500',
    ]) {
      const res = await fx.api.get(`/v1/audit/events?${bad}`);
      expect(res.status, bad).to.equal(400);
      expect(res.body.errors[0].pointer).to.match(/^\/query\//);
    }
    expect((await fx.api.get('/v1/audit/events/evt_01JD0000000000000000000000')).status).to.equal(404);
    expect((await fx.api.get('/v1/audit/events/prn_01JD0000000000000000000000')).status).to.equal(404);
  });

  it('needs the audit:read scope', async () => {
    const noAudit = (await fx.api.post('/v1/clients', { name: 'no-audit', scopes: ['principals:read'] }))
      .body;
    const api = fx.app.http.withToken(
      (await tokenFor(fx.app.http, { id: noAudit.id, secret: noAudit.client_secret })).access_token,
    );
    expect((await api.get('/v1/audit/events')).status).to.equal(403);
  });

  it('writes no event when the change fails (same transaction)', async () => {
    const before = (await fx.api.get('/v1/audit/events?type=client.created&limit=1')).body.pagination.total;
    const dup = await fx.api.post('/v1/clients', { name: 'audited', scopes: ['audit:read'] });
    expect(dup.status).to.equal(409);
    const after = (await fx.api.get('/v1/audit/events?type=client.created&limit=1')).body.pagination.total;
    expect(after).to.equal(before);
  });

  it('never lets a secret or hash reach responses, logs or events', async () => {
    const made = await fx.api.post('/v1/clients', { name: 'leak-check', scopes: ['audit:read'] });
    const secret = made.body.client_secret as string;
    const token = await tokenFor(fx.app.http, { id: made.body.id, secret });
    const everything = JSON.stringify((await fx.api.get('/v1/audit/events?limit=100')).body);
    const listing = JSON.stringify((await fx.api.get('/v1/clients?limit=100')).body);
    const stored = await cypher(fx.app.runtime.db, 'MATCH (c:Client {id: $id}) RETURN c.secret_hash AS h', {
      id: made.body.id,
    });
    const hash = String(stored[0]!['h']);
    for (const haystack of [everything, listing, fx.app.logs.text]) {
      expect(haystack).not.to.contain(secret);
      expect(haystack).not.to.contain(hash);
      expect(haystack).not.to.contain(token.refresh_token);
      expect(haystack).not.to.contain(token.access_token);
      expect(haystack).not.to.contain(ADMIN_CLIENT_SECRET);
    }
  });
});
