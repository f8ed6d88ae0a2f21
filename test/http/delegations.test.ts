import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { authed, createClient } from '../helpers/auth.js';
import { cypher } from '../helpers/db.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import type { HttpClient } from '../helpers/http.js';
import { insertPrincipal } from '../helpers/principals.js';
import { Receiver } from '../helpers/receiver.js';
import { eventually, until } from '../helpers/wait.js';

const DAY = 24 * 60 * 60 * 1000;
const ahead = (ms: number): string => new Date(Date.now() + ms).toISOString();

describe('delegations (agents acting for people)', () => {
  let app: TestApp;
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp({
    env: {
      DELEGATION_EXPIRY_INTERVAL_S: '1',
      RATE_LIMIT_STANDARD: '100000',
      WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    },
  });

  before(async () => {
    app = fx.app;
    api = fx.api;
    world = engineApi(api, uniq);
  });

  const user = () => insertPrincipal(app, { name: uniq('user') });
  const agent = (attributes: Record<string, unknown> = {}) => world.principal('AI_AGENT', attributes);
  const delegate = async (body: Record<string, unknown>, status = 201): Promise<any> => {
    const res = await api.post('/v1/delegations', { expires_at: ahead(DAY), ...body });
    expect(res.status, res.text).to.equal(status);
    return res.body;
  };
  /** A delegation refused with 422, this code and a pointer at this member; nothing is stored. */
  const refused = async (body: Record<string, unknown>, code: string, pointer: string): Promise<void> => {
    const refusal = await delegate(body, 422);
    expect(refusal.code).to.equal(code);
    expect(refusal.errors[0].pointer).to.equal(pointer);
    const stored = await api.get(
      `/v1/delegations?delegator_id=${body['delegator_id'] as string}&status=active`,
    );
    expect(stored.body.data.map((d: any) => d.delegate_id)).to.not.include(body['delegate_id']);
  };
  const evaluate = async (body: Record<string, unknown>): Promise<any> => {
    const res = await api.post('/v1/decisions/evaluate', body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  /** A decision of `agent` acting for `person`: `read` of `t`:`x` unless said otherwise. */
  const actFor = (agent: any, person: any, t: string, identifier = 'x', action = 'read'): Promise<any> =>
    evaluate({ principal_id: agent.id, action, resource: { type: t, identifier }, on_behalf_of: person.id });
  const codes = (decision: any): string[] => decision.reasons.map((r: any) => r.code);
  const eventsOf = async (targetId: string): Promise<any[]> => {
    const res = await api.get(`/v1/audit/events?target_id=${targetId}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };

  /** A user and an agent both allowed `read` on a resource type of their own. */
  async function pair(): Promise<{ u: any; a: any; t: string }> {
    const [u, a] = [await user(), await agent()];
    const t = type();
    await world.policy({ subjects: { principals: [u.id, a.id] }, resources: [{ type: t, identifier: '*' }] });
    return { u, a, t };
  }

  describe('creating, reading and revoking', () => {
    it('creates a delegation as an edge between the principals, audited in its transaction', async () => {
      const { u, a, t } = await pair();
      const res = await api.post('/v1/delegations', {
        delegator_id: u.id,
        delegate_id: a.id,
        expires_at: ahead(7 * DAY),
        actions: ['read'],
        resources: [{ type: t, identifier: 'docs-*' }],
        reason: 'triage the docs backlog',
      });
      expect(res.status, res.text).to.equal(201);
      const d = res.body;
      expect(res.headers.get('location')).to.equal(`/v1/delegations/${d.id}`);
      expect(d.id).to.match(/^dlg_/);
      expect(d).to.include({ delegator_id: u.id, delegate_id: a.id, status: 'active', applies: true });
      expect(d.actions).to.deep.equal(['read']);
      expect(d.resources).to.deep.equal([{ type: t, identifier: 'docs-*' }]);
      expect(d.reason).to.equal('triage the docs backlog');

      const got = await api.get(`/v1/delegations/${d.id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(d);

      const events = await eventsOf(d.id);
      expect(events.map((e) => e.type)).to.deep.equal(['delegation.created']);
      expect(events[0].target).to.deep.equal({ type: 'delegation', id: d.id });

      const rows = await cypher(
        app.runtime.db,
        'MATCH (:Principal {id: $u})-[d:DELEGATES_TO]->(:Principal {id: $a}) RETURN d.id AS id',
        { u: u.id, a: a.id },
      );
      expect(rows.map((r) => r['id'])).to.deep.equal([d.id]);
    });

    it('defaults to every action and every resource', async () => {
      const { u, a } = await pair();
      const d = await delegate({ delegator_id: u.id, delegate_id: a.id });
      expect(d.actions).to.deep.equal(['*']);
      expect(d.resources).to.equal(null);
    });

    it('refuses an expiry in the past or beyond 90 days (400), storing nothing', async () => {
      const { u, a } = await pair();
      for (const expires_at of [ahead(-1_000), ahead(91 * DAY)]) {
        const res = await api.post('/v1/delegations', { delegator_id: u.id, delegate_id: a.id, expires_at });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.errors.map((e: any) => e.pointer)).to.deep.equal(['/expires_at']);
      }
      const bad = await api.post('/v1/delegations', {
        delegator_id: u.id,
        delegate_id: a.id,
        expires_at: 'tomorrow',
      });
      expect(bad.status).to.equal(400);
      const list = await api.get(`/v1/delegations?delegator_id=${u.id}`);
      expect(list.body.data).to.deep.equal([]);
    });

    it('refuses unknown principals (422 REFERENCE_NOT_FOUND)', async () => {
      const { u, a } = await pair();
      const ghost = 'prn_01JZZZZZZZZZZZZZZZZZZZZZZZ';
      await refused({ delegator_id: ghost, delegate_id: a.id }, 'REFERENCE_NOT_FOUND', '/delegator_id');
      await refused({ delegator_id: u.id, delegate_id: ghost }, 'REFERENCE_NOT_FOUND', '/delegate_id');
    });

    it('lets only agents and service accounts act for others, and only active principals delegate (422 DELEGATION_NOT_ALLOWED)', async () => {
      const [u, other, a] = [await user(), await user(), await agent()];
      await refused({ delegator_id: u.id, delegate_id: other.id }, 'DELEGATION_NOT_ALLOWED', '/delegate_id');
      const key = await world.principal('API_KEY');
      await refused({ delegator_id: u.id, delegate_id: key.id }, 'DELEGATION_NOT_ALLOWED', '/delegate_id');
      const svc = await world.principal('SERVICE_ACCOUNT');
      await delegate({ delegator_id: u.id, delegate_id: svc.id });

      const idle = await world.principal('SERVICE_ACCOUNT');
      expect((await api.patch(`/v1/principals/${idle.id}`, { status: 'suspended' })).status).to.equal(200);
      await refused({ delegator_id: idle.id, delegate_id: a.id }, 'DELEGATION_NOT_ALLOWED', '/delegator_id');
    });

    it('refuses a delegation to oneself and one that would close a cycle (422 CYCLE_DETECTED)', async () => {
      const [a, b, c] = [await agent(), await agent(), await agent()];
      await refused({ delegator_id: a.id, delegate_id: a.id }, 'CYCLE_DETECTED', '/delegate_id');
      const ab = await delegate({ delegator_id: a.id, delegate_id: b.id });
      await delegate({ delegator_id: b.id, delegate_id: c.id });
      await refused({ delegator_id: c.id, delegate_id: a.id }, 'CYCLE_DETECTED', '/delegate_id');
      // A revoked link no longer closes the cycle.
      expect((await api.delete(`/v1/delegations/${ab.id}`)).status).to.equal(200);
      await delegate({ delegator_id: c.id, delegate_id: a.id });
    });

    it('lists newest first, filtered by delegator, delegate and status', async () => {
      const [u, a1, a2] = [await user(), await agent(), await agent()];
      const first = await delegate({ delegator_id: u.id, delegate_id: a1.id });
      const second = await delegate({ delegator_id: u.id, delegate_id: a2.id });
      const byDelegator = await api.get(`/v1/delegations?delegator_id=${u.id}`);
      expect(byDelegator.body.data.map((d: any) => d.id)).to.deep.equal([second.id, first.id]);
      expect(byDelegator.body.pagination.total).to.equal(2);
      const byDelegate = await api.get(`/v1/delegations?delegate_id=${a1.id}`);
      expect(byDelegate.body.data.map((d: any) => d.id)).to.deep.equal([first.id]);
      await api.delete(`/v1/delegations/${first.id}`);
      const revoked = await api.get(`/v1/delegations?delegator_id=${u.id}&status=revoked`);
      expect(revoked.body.data.map((d: any) => d.id)).to.deep.equal([first.id]);
      const bad = await api.get('/v1/delegations?status=paused');
      expect(bad.status).to.equal(400);
    });

    it('revokes: 200 with status revoked, audited, idempotent; an unknown id is 404', async () => {
      const { u, a } = await pair();
      const d = await delegate({ delegator_id: u.id, delegate_id: a.id });
      const res = await api.delete(`/v1/delegations/${d.id}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: d.id, status: 'revoked', applies: false });
      expect(res.body.revoked_at).to.be.a('string');
      expect(res.body.revoked_by).to.be.a('string');
      const again = await api.delete(`/v1/delegations/${d.id}`);
      expect(again.status).to.equal(200);
      expect(again.body.revoked_at).to.equal(res.body.revoked_at);
      expect((await eventsOf(d.id)).map((e) => e.type).sort()).to.deep.equal([
        'delegation.created',
        'delegation.revoked',
      ]);
      expect((await api.get('/v1/delegations/dlg_01JZZZZZZZZZZZZZZZZZZZZZZZ')).status).to.equal(404);
      expect((await api.delete('/v1/delegations/dlg_01JZZZZZZZZZZZZZZZZZZZZZZZ')).status).to.equal(404);
    });

    it('needs delegations:write to delegate and delegations:read to look', async () => {
      const reader = await authed(app, await createClient(app, ['delegations:read']));
      const { u, a } = await pair();
      const denied = await reader.post('/v1/delegations', {
        delegator_id: u.id,
        delegate_id: a.id,
        expires_at: ahead(DAY),
      });
      expect(denied.status).to.equal(403);
      expect((await reader.get(`/v1/delegations?delegator_id=${u.id}`)).status).to.equal(200);
      const other = await authed(app, await createClient(app, ['principals:read']));
      expect((await other.get('/v1/delegations')).status).to.equal(403);
      expect((await other.get(`/v1/principals/${u.id}/delegations`)).status).to.equal(403);
    });
  });

  describe('decisions along the chain', () => {
    it('allows an agent on behalf of a person only while an active delegation covers the request', async () => {
      const { u, a, t } = await pair();
      const ask = () => actFor(a, u, t);
      const before = await ask();
      expect(before.allowed).to.equal(false);
      expect(before.reasons).to.have.length(1);
      expect(before.reasons[0]).to.include({ code: 'NO_DELEGATION', principal_id: u.id, delegate_id: a.id });

      const d = await delegate({ delegator_id: u.id, delegate_id: a.id });
      const during = await ask();
      expect(during.allowed, JSON.stringify(during.reasons)).to.equal(true);
      expect(during.on_behalf_of).to.deep.equal([u.id]);

      await api.delete(`/v1/delegations/${d.id}`);
      expect(codes(await ask())).to.deep.equal(['NO_DELEGATION']);
    });

    it('narrows the delegate to the delegation’s actions and resources', async () => {
      const [u, a] = [await user(), await agent()];
      const t = type();
      await world.policy({
        subjects: { principals: [u.id, a.id] },
        actions: ['read', 'write'],
        resources: [{ type: t, identifier: '*' }],
      });
      await delegate({
        delegator_id: u.id,
        delegate_id: a.id,
        actions: ['read'],
        resources: [{ type: t, identifier: 'public-*' }],
      });
      const ask = (action: string, identifier: string) => actFor(a, u, t, identifier, action);
      expect((await ask('read', 'public-1')).allowed).to.equal(true);
      expect(codes(await ask('write', 'public-1'))).to.deep.equal(['NO_DELEGATION']);
      expect(codes(await ask('read', 'private-1'))).to.deep.equal(['NO_DELEGATION']);
      // The agent alone, not on anyone's behalf, is decided by its own policies.
      const alone = await evaluate({
        principal_id: a.id,
        action: 'write',
        resource: { type: t, identifier: 'private-1' },
      });
      expect(alone.allowed).to.equal(true);
    });

    it('never gives the delegate more than the delegator may do', async () => {
      const [u, a] = [await user(), await agent()];
      const t = type();
      await world.policy({ subjects: { principals: [a.id] }, resources: [{ type: t, identifier: '*' }] });
      await world.policy({ subjects: { principals: [u.id] }, resources: [{ type: t, identifier: 'mine' }] });
      await delegate({ delegator_id: u.id, delegate_id: a.id });
      const ask = (identifier: string) => actFor(a, u, t, identifier);
      expect((await ask('mine')).allowed).to.equal(true);
      const theirs = await ask('theirs');
      expect(theirs.allowed).to.equal(false);
      expect(theirs.reasons[0]).to.include({ code: 'DELEGATOR_DENIED', principal_id: u.id });
    });

    it('decides a chain of delegations link by link, and explains each link and each principal', async () => {
      const [u, a, sub] = [await user(), await agent(), await agent()];
      const t = type();
      await world.policy({
        subjects: { principals: [u.id, a.id, sub.id] },
        resources: [{ type: t, identifier: '*' }],
      });
      const request = {
        principal_id: sub.id,
        action: 'read',
        resource: { type: t, identifier: 'r' },
        on_behalf_of: [u.id, a.id],
      };
      const ua = await delegate({ delegator_id: u.id, delegate_id: a.id });
      const missing = await evaluate(request);
      expect(missing.reasons).to.have.length(1);
      expect(missing.reasons[0]).to.include({
        code: 'NO_DELEGATION',
        principal_id: a.id,
        delegate_id: sub.id,
      });

      const asub = await delegate({ delegator_id: a.id, delegate_id: sub.id });
      const allowed = await evaluate({ ...request, explain: true });
      expect(allowed.allowed, JSON.stringify(allowed.reasons)).to.equal(true);
      expect(allowed.on_behalf_of).to.deep.equal([u.id, a.id]);
      expect(
        allowed.trace.links.map((l: any) => [l.delegator_id, l.delegate_id, l.delegation_id, l.covered]),
      ).to.deep.equal([
        [u.id, a.id, ua.id, true],
        [a.id, sub.id, asub.id, true],
      ]);
      expect(allowed.trace.verdicts.map((v: any) => [v.principal_id, v.allowed])).to.deep.equal([
        [sub.id, true],
        [a.id, true],
        [u.id, true],
      ]);
      expect((await recordedDecision(api, allowed.id)).on_behalf_of).to.deep.equal([u.id, a.id]);

      const tooLong = await api.post('/v1/decisions/evaluate', {
        ...request,
        on_behalf_of: [u.id, a.id, u.id, a.id, u.id],
      });
      expect(tooLong.status).to.equal(400);
    });

    it('stops a delegation at once when its delegator or delegate is no longer active, and lists it so', async () => {
      // A service account delegates here: the API can suspend it (a user's status is its connector's).
      const [u, a] = [await world.principal('SERVICE_ACCOUNT'), await agent()];
      const t = type();
      await world.policy({
        subjects: { principals: [u.id, a.id] },
        resources: [{ type: t, identifier: '*' }],
      });
      const d = await delegate({ delegator_id: u.id, delegate_id: a.id });
      const ask = () => actFor(a, u, t);
      expect((await ask()).allowed).to.equal(true);
      expect((await api.patch(`/v1/principals/${u.id}`, { status: 'suspended' })).status).to.equal(200);
      const refused = await ask();
      expect(refused.allowed).to.equal(false);
      expect(codes(refused)).to.include('DELEGATOR_DENIED');
      const listed = (await api.get(`/v1/delegations/${d.id}`)).body;
      expect(listed).to.include({ status: 'active', applies: false, delegator_status: 'suspended' });
      expect((await api.patch(`/v1/principals/${u.id}`, { status: 'active' })).status).to.equal(200);
      expect((await ask()).allowed).to.equal(true);
    });

    it('stops at expires_at and records delegation.expired within the sweep interval', async () => {
      const { u, a, t } = await pair();
      const d = await delegate({ delegator_id: u.id, delegate_id: a.id, expires_at: ahead(1_500) });
      const ask = () => actFor(a, u, t);
      expect((await ask()).allowed).to.equal(true);
      await until('the delegation to expire', () => Date.now() > Date.parse(d.expires_at), 5_000);
      const after = await ask();
      expect(codes(after)).to.deep.equal(['NO_DELEGATION']);
      const expired = await eventually(
        () => api.get(`/v1/delegations/${d.id}`),
        (res) => res.body.status === 'expired',
        10_000,
      );
      expect(expired.value.body.expired_at).to.be.a('string');
      const events = await eventsOf(d.id);
      expect(events.map((e) => e.type).sort()).to.deep.equal(['delegation.created', 'delegation.expired']);
      expect(events.find((e) => e.type === 'delegation.expired').actor.type).to.equal('system');
      const revoke = await api.delete(`/v1/delegations/${d.id}`);
      expect(revoke.status).to.equal(409);
    });

    it('takes on_behalf_of in batches too', async () => {
      const { u, a, t } = await pair();
      await delegate({ delegator_id: u.id, delegate_id: a.id, resources: [{ type: t, identifier: 'ok' }] });
      const res = await api.post('/v1/decisions/batch', {
        requests: ['ok', 'no'].map((identifier) => ({
          principal_id: a.id,
          action: 'read',
          resource: { type: t, identifier },
          on_behalf_of: [u.id],
        })),
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.results.map((r: any) => r.allowed)).to.deep.equal([true, false]);
      expect(codes(res.body.results[1])).to.deep.equal(['NO_DELEGATION']);
    });
  });

  describe('access for a delegator', () => {
    it('answers what the agent may reach for them: the intersection, ending with the delegation', async () => {
      const [u, a] = [await user(), await agent()];
      const t = type();
      for (const id of ['a', 'b', 'c']) await world.register(t, id);
      await world.policy({
        subjects: { principals: [a.id] },
        actions: ['read', 'write'],
        resources: [{ type: t, identifier: '*' }],
      });
      await world.policy({
        subjects: { principals: [u.id] },
        actions: ['read', 'write'],
        resources: [
          { type: t, identifier: 'a' },
          { type: t, identifier: 'b' },
        ],
      });
      const accessFor = async (query: string): Promise<any[]> => {
        const res = await api.get(`/v1/principals/${a.id}/access?resource_type=${t}${query}`);
        expect(res.status, res.text).to.equal(200);
        return res.body.access;
      };
      const alone = await accessFor('');
      expect(alone.map((e) => e.resource.identifier)).to.deep.equal(['*', 'a', 'b', 'c']);
      expect(await accessFor(`&on_behalf_of=${u.id}`)).to.deep.equal([]);

      const d = await delegate({
        delegator_id: u.id,
        delegate_id: a.id,
        actions: ['read'],
        resources: [{ type: t, identifier: 'a' }],
      });
      const delegated = await accessFor(`&on_behalf_of=${u.id}`);
      expect(delegated.map((e) => [e.resource.identifier, e.actions, e.expires_at])).to.deep.equal([
        ['a', ['read'], d.expires_at],
      ]);
      expect(delegated[0].granted_by).to.have.length(2);
      // Each entry is what a decision along the chain allows.
      const decided = await actFor(a, u, t, 'a');
      expect(decided.allowed).to.equal(true);

      const unknown = await api.get(
        `/v1/principals/${a.id}/access?on_behalf_of=prn_01JZZZZZZZZZZZZZZZZZZZZZZZ`,
      );
      expect(unknown.status).to.equal(422);
      expect(unknown.body.code).to.equal('REFERENCE_NOT_FOUND');
      const malformed = await api.get(`/v1/principals/${a.id}/access?on_behalf_of=someone`);
      expect(malformed.status).to.equal(400);
      await api.delete(`/v1/delegations/${d.id}`);
      expect(await accessFor(`&on_behalf_of=${u.id}`)).to.deep.equal([]);
    });
  });

  describe('webhooks', () => {
    const receiver = new Receiver();
    before(() => receiver.start());
    after(() => receiver.stop());

    it('carries delegation.created, revoked and expired to a webhook subscribed to delegation.*', async () => {
      const hook = await api.post('/v1/webhooks', { url: receiver.url, events: ['delegation.*'] });
      expect(hook.status, hook.text).to.equal(201);
      try {
        const { u, a } = await pair();
        const revoked = await delegate({ delegator_id: u.id, delegate_id: a.id });
        await api.delete(`/v1/delegations/${revoked.id}`);
        const expiring = await delegate({ delegator_id: u.id, delegate_id: a.id, expires_at: ahead(1_000) });
        const seen = (): { type: string; id: string }[] =>
          receiver.received.map((r) => {
            const body = JSON.parse(r.body) as { type: string; data: { target: { id: string } } };
            return { type: body.type, id: body.data.target.id };
          });
        await until(
          'the expiry to be delivered',
          () => seen().some((e) => e.type === 'delegation.expired' && e.id === expiring.id),
          15_000,
        );
        const types = (id: string): string[] =>
          seen()
            .filter((e) => e.id === id)
            .map((e) => e.type)
            .sort();
        expect(types(revoked.id)).to.deep.equal(['delegation.created', 'delegation.revoked']);
        expect(types(expiring.id)).to.deep.equal(['delegation.created', 'delegation.expired']);
      } finally {
        await api.delete(`/v1/webhooks/${hook.body.id}`);
      }
    });
  });

  describe("a principal's delegations", () => {
    it('answers given (with the chains below) and received, each active one with its chain', async () => {
      const [u, a, sub] = [await user(), await agent(), await agent()];
      const ua = await delegate({ delegator_id: u.id, delegate_id: a.id });
      const asub = await delegate({ delegator_id: a.id, delegate_id: sub.id });
      const ofUser = await api.get(`/v1/principals/${u.id}/delegations`);
      expect(ofUser.status, ofUser.text).to.equal(200);
      expect(ofUser.body.principal_id).to.equal(u.id);
      expect(ofUser.body.given.map((d: any) => [d.id, d.chain])).to.deep.equal([
        [ua.id, [u.id, a.id]],
        [asub.id, [u.id, a.id, sub.id]],
      ]);
      expect(ofUser.body.received).to.deep.equal([]);
      const ofSub = (await api.get(`/v1/principals/${sub.id}/delegations`)).body;
      expect(ofSub.received.map((d: any) => [d.id, d.chain])).to.deep.equal([
        [asub.id, [u.id, a.id, sub.id]],
      ]);
      const ofAgent = (await api.get(`/v1/principals/${a.id}/delegations`)).body;
      expect(ofAgent.given.map((d: any) => d.id)).to.deep.equal([asub.id]);
      expect(ofAgent.received.map((d: any) => d.id)).to.deep.equal([ua.id]);
      expect((await api.get('/v1/principals/prn_01JZZZZZZZZZZZZZZZZZZZZZZZ/delegations')).status).to.equal(
        404,
      );
    });
  });
});
