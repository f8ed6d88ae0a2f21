import { expect } from 'chai';
import { tokenFor } from '../helpers/auth.js';
import { engineApi, namer } from '../helpers/engine.js';
import { cypher } from '../helpers/db.js';
import { holdingLease } from '../helpers/access-history.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { Receiver, verifyDelivery } from '../helpers/receiver.js';
import { eventually, metricValue } from '../helpers/wait.js';
import {
  accessHistoryRepository as repo,
  readyPart,
  toStored,
  type AccessCause,
  type AccessChange,
  type StoredPart,
} from '../../src/access-history/repository.js';
import { newId } from '../../src/ids.js';

/**
 * The access history's changes through GET /v1/access-changes (docs/api.md §11): what each
 * committed change did to who can reach what, with the policies behind it and the audit event
 * that caused it; read back in the order they were recorded. Every answer is checked against the
 * OpenAPI document.
 */
describe('access changes', () => {
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const receiver = new Receiver();
  const env = {
    WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    POLICY_EXPIRY_INTERVAL_S: '1',
    DELEGATION_EXPIRY_INTERVAL_S: '1',
  };
  const fx = useApp({ env });
  before(async () => {
    api = fx.api;
    world = engineApi(api, uniq);
    await receiver.start();
  });
  after(() => receiver.stop());

  /**
   * Runs `body` with a webhook subscribed to `access.changed` at the receiver, deleted after (by
   * the client current then).
   */
  const withAccessHook = async (
    body: (hook: { id: string; secret: string }) => Promise<void>,
  ): Promise<void> => {
    const hook = await api.post('/v1/webhooks', { url: receiver.url, events: ['access.changed'] });
    expect(hook.status, hook.text).to.equal(201);
    try {
      await body(hook.body);
    } finally {
      await api.delete(`/v1/webhooks/${hook.body.id}`);
    }
  };

  const changes = async (query: string): Promise<any> => {
    const res = await api.get(`/v1/access-changes?${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  /** The changes of one resource type, as `principal resource +gained -lost by cause`. */
  const story = async (t: string): Promise<string[]> =>
    (await changes(`resource_type=${t}&limit=500`)).data.map(
      (c: any) =>
        `${c.principal.id} ${c.resource.identifier}${c.resource.pattern ? ' (glob)' : ''} ${[
          ...c.actions_gained.map((a: string) => `+${a}`),
          ...c.actions_lost.map((a: string) => `-${a}`),
        ].join(' ')} by ${c.cause.event_type}`,
    );

  const eventOf = async (type: string, target: string): Promise<any> => {
    const res = await api.get(`/v1/audit/events?type=${type}&target_id=${target}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.data[0];
  };

  /** A policy, a membership and a deletion: what each did to each principal it reached, and why. */
  const policyStory = async (): Promise<void> => {
    const t = type();
    const alice = (await world.principal()).id as string;
    const bob = (await world.principal()).id as string;
    const g = await world.group();
    await world.addMember(g, alice);
    await world.addMember(g, bob);

    const policy = await world.policy({
      subjects: { groups: [g] },
      actions: ['read', 'write'],
      resources: [{ type: t, identifier: 'doc-1' }],
    });
    const created = await eventOf('policy.created', policy.id);
    const gained = await changes(`event_id=${created.id}`);
    expect(gained.data.map((c: any) => c.principal.id).sort()).to.deep.equal([alice, bob].sort());
    for (const c of gained.data) {
      expect(c.id).to.match(/^acc_/);
      expect(c.resource).to.deep.equal({ type: t, identifier: 'doc-1' });
      expect(c.actions_gained).to.deep.equal(['read', 'write']);
      expect(c.actions_lost).to.deep.equal([]);
      expect(c.at).to.equal(created.occurred_at);
      expect(c.cause).to.deep.equal({
        event_id: created.id,
        event_type: 'policy.created',
        actor: created.actor,
      });
      expect(c.via).to.have.length(1);
      expect(c.via[0]).to.include({ policy_id: policy.id, policy_name: policy.name, via: 'group' });
      expect(c.via[0].path.map((s: any) => s.id)).to.deep.equal([c.principal.id, g]);
    }

    // Bob leaves the group: he alone loses both, through the policy as it reached him before.
    const removed = await api.delete(`/v1/groups/${g}/members/${bob}`);
    expect(removed.status, removed.text).to.be.within(200, 204);
    const left = await eventOf('group.member_removed', g);
    const lost = await changes(`event_id=${left.id}`);
    expect(lost.data).to.have.length(1);
    expect(lost.data[0]).to.deep.include({ actions_gained: [], actions_lost: ['read', 'write'] });
    expect(lost.data[0].principal.id).to.equal(bob);
    expect(lost.data[0].via[0]).to.include({ policy_id: policy.id, via: 'group' });

    // The policy narrowed to read: alice loses write.
    const narrowed = await api.put(
      `/v1/policies/${policy.id}`,
      {
        name: policy.name,
        effect: 'allow',
        subjects: { groups: [g] },
        actions: ['read'],
        resources: [{ type: t, identifier: 'doc-1' }],
      },
      { headers: { 'If-Match': `"${policy.version}"` } },
    );
    expect(narrowed.status, narrowed.text).to.equal(200);

    // Deleted: alice loses what is left.
    const deleted = await api.delete(`/v1/policies/${policy.id}`);
    expect(deleted.status, deleted.text).to.be.within(200, 204);

    expect(await story(t)).to.deep.equal([
      `${[alice, bob].sort()[0]} doc-1 +read +write by policy.created`,
      `${[alice, bob].sort()[1]} doc-1 +read +write by policy.created`,
      `${bob} doc-1 -read -write by group.member_removed`,
      `${alice} doc-1 -write by policy.updated`,
      `${alice} doc-1 -read by policy.deleted`,
    ]);
  };

  const computed = (where: string): Promise<number> =>
    metricValue(fx.app.http, `access_history_batches_total{where="${where}"}`);

  it('records what a policy, a membership and a deletion did to each principal they reach, with the cause', async () => {
    const [onThread, inPlace] = [await computed('decision_thread'), await computed('event_loop')];
    await policyStory();
    // Computed on the decision thread's replica of the index, none on the event loop.
    expect(await computed('decision_thread')).to.be.above(onThread);
    expect(await computed('event_loop')).to.equal(inPlace);
  });

  it('records the same where no decision thread computes them, on the event loop', async () => {
    await fx.restart({ env: { ...env, DECISION_THREADS: '0' } });
    try {
      api = fx.api;
      world = engineApi(api, uniq);
      const inPlace = await computed('event_loop');
      await policyStory();
      expect(await computed('event_loop')).to.be.above(inPlace);
      expect(await computed('decision_thread')).to.equal(0);
    } finally {
      await fx.restart({ env });
      api = fx.api;
      world = engineApi(api, uniq);
    }
  });

  it('records a window opening and closing as changes of their own, at the instants they did', async function () {
    this.timeout(45_000);
    const t = type();
    const p = (await world.principal()).id as string;
    // Far enough ahead that the policy is stored before its window opens, on a loaded machine too.
    const from = new Date(Date.now() + 3_000).toISOString();
    const until = new Date(Date.now() + 6_000).toISOString();
    const policy = await world.policy({
      subjects: { principals: [p] },
      resources: [{ type: t, identifier: 'x' }],
      valid_from: from,
      valid_until: until,
    });
    const { value } = await eventually(
      async () => (await changes(`resource_type=${t}`)).data,
      (data) => data.length >= 2,
      20_000,
    );
    expect(value.map((c: any) => [c.at, c.actions_gained, c.actions_lost, c.cause.event_type])).to.deep.equal(
      [
        [from, ['read'], [], 'policy.window_opened'],
        [until, [], ['read'], 'policy.expired'],
      ],
    );
    for (const c of value) {
      expect(c.cause.actor).to.deep.equal({ type: 'system', id: 'system' });
      expect(c.via[0]).to.include({ policy_id: policy.id, via: 'principal' });
    }
    const opened = await eventOf('policy.window_opened', policy.id);
    expect(opened.reason).to.equal(`its window opened at ${from}`);
  });

  it('records what a delegation made, revoked or expired did to the delegate acting for the delegator', async function () {
    this.timeout(60_000);
    const t = type();
    const person = (await world.principal('SERVICE_ACCOUNT')).id as string;
    const agent = (await world.principal('AI_AGENT')).id as string;
    const both = await world.policy({
      subjects: { principals: [person, agent] },
      actions: ['read', 'write'],
      resources: [{ type: t, identifier: 'a' }],
    });
    const handed = await world.delegation(person, agent, { actions: ['read'] });
    const made = await eventOf('delegation.created', handed.id);
    const gained = (await changes(`event_id=${made.id}`)).data;
    expect(gained).to.have.length(1);
    expect(gained[0]).to.deep.include({
      actions_gained: ['read'],
      actions_lost: [],
      resource: { type: t, identifier: 'a' },
    });
    expect(gained[0].principal.id).to.equal(agent);
    expect(gained[0].on_behalf_of).to.include({ id: person, type: 'SERVICE_ACCOUNT' });
    expect(gained[0].via).to.deep.equal([
      {
        policy_id: both.id,
        policy_name: both.name,
        via: 'delegation',
        path: [
          { id: agent, name: gained[0].principal.name, type: 'AI_AGENT' },
          { id: person, name: gained[0].on_behalf_of.name, type: 'SERVICE_ACCOUNT' },
        ],
      },
    ]);

    const revoked = await api.delete(`/v1/delegations/${handed.id}`);
    expect(revoked.status, revoked.text).to.equal(200);
    const brief = await world.delegation(person, agent, {
      expires_at: new Date(Date.now() + 3_000).toISOString(),
    });
    const { value: expired } = await eventually(
      async () => (await api.get(`/v1/audit/events?type=delegation.expired&target_id=${brief.id}`)).body.data,
      (data: any[]) => data.length > 0,
      20_000,
    );
    const { value: lost } = await eventually(
      async () => (await changes(`event_id=${expired[0].id}`)).data,
      (data: any[]) => data.length > 0,
      10_000,
    );
    // Dated when it expired, not when the sweep noticed.
    expect(lost.map((c: any) => [c.at, c.actions_gained, c.actions_lost])).to.deep.equal([
      [brief.expires_at, [], ['read', 'write']],
    ]);
    expect(await story(t)).to.deep.equal([
      ...[agent, person].sort().map((p) => `${p} a +read +write by policy.created`),
      `${agent} a +read by delegation.created`,
      `${agent} a -read by delegation.revoked`,
      `${agent} a +read +write by delegation.created`,
      `${agent} a -read -write by delegation.expired`,
    ]);
    // Not the agent's own access: as of any instant, that is the policy's alone.
    const asOf = await api.get(
      `/v1/principals/${agent}/access?resource_type=${t}&as_of=${encodeURIComponent(new Date().toISOString())}`,
    );
    expect(asOf.status, asOf.text).to.equal(200);
    expect(asOf.body.access.map((e: any) => e.actions)).to.deep.equal([['read', 'write']]);
  });

  it('records nothing for a change that moves no access', async () => {
    const t = type();
    const p = (await world.principal('SERVICE_ACCOUNT', { team: 'a' })).id as string;
    await world.policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'x' }] });
    const res = await api.patch(
      `/v1/principals/${p}`,
      { attributes: { team: 'b' } },
      { headers: { 'Content-Type': 'application/merge-patch+json' } },
    );
    expect(res.status, res.text).to.equal(200);
    const updated = await eventOf('principal.updated', p);
    expect((await changes(`event_id=${updated.id}`)).data).to.deep.equal([]);
    expect(await story(t)).to.deep.equal([`${p} x +read by policy.created`]);
  });

  it('a glob policy is an entry of its own and one for each registered resource it matches', async () => {
    const t = type();
    const p = (await world.principal()).id as string;
    await world.register(t, 'r1');
    await world.policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'r*' }] });
    await world.register(t, 'r2');
    const unregistered = await api.delete(`/v1/resources/${t}/r1`);
    expect(unregistered.status, unregistered.text).to.be.within(200, 204);
    expect(await story(t)).to.deep.equal([
      `${p} r* (glob) +read by policy.created`,
      `${p} r1 +read by policy.created`,
      `${p} r2 +read by resource.created`,
      `${p} r1 -read by resource.deleted`,
    ]);
  });

  it('filters by principal, resource, action and time, and pages by number or by cursor', async () => {
    const t = type();
    const ps = [];
    for (let i = 0; i < 5; i += 1) ps.push((await world.principal()).id as string);
    const policy = await world.policy({
      subjects: { principals: ps },
      actions: ['read', 'list'],
      resources: [{ type: t, identifier: 'shared' }],
    });
    const started = new Date().toISOString();
    await world.policy({
      subjects: { principals: [ps[0]] },
      actions: ['delete'],
      resources: [{ type: t, identifier: 'own' }],
    });

    const mine = await changes(`principal_id=${ps[0]}&resource_type=${t}`);
    expect(mine.data.map((c: any) => c.resource.identifier)).to.deep.equal(['shared', 'own']);
    expect((await changes(`resource_type=${t}&identifier=own`)).data).to.have.length(1);
    expect(
      (await changes(`resource_type=${t}&action=delete`)).data.map((c: any) => c.principal.id),
    ).to.deep.equal([ps[0]]);
    expect((await changes(`resource_type=${t}&action=list`)).data).to.have.length(5);
    expect((await changes(`resource_type=${t}&since=${encodeURIComponent(started)}`)).data).to.have.length(1);
    expect((await changes(`resource_type=${t}&until=${encodeURIComponent(started)}`)).data).to.have.length(5);

    // By page number.
    const first = await changes(`resource_type=${t}&limit=2`);
    expect(first.pagination).to.include({ total: 6, page: 1, per_page: 2, pages: 3 });
    const third = await changes(`resource_type=${t}&limit=2&page=3`);
    expect(third.data).to.have.length(2);

    // By cursor: the same changes in the same order, then a follower sees only what comes after.
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 4; n += 1) {
      const pageOf: any = await changes(`resource_type=${t}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      if (cursor) expect(pageOf.pagination).to.not.have.property('page');
      seen.push(...pageOf.data.map((c: any) => c.id));
      cursor = pageOf.pagination.next_cursor;
      if (pageOf.data.length === 0) break;
    }
    const all = (await changes(`resource_type=${t}&limit=500`)).data.map((c: any) => c.id);
    expect(seen).to.deep.equal(all);
    expect(all).to.deep.equal([...all].sort());
    const removed = await api.delete(`/v1/policies/${policy.id}`);
    expect(removed.status, removed.text).to.be.within(200, 204);
    const after: any = await changes(`resource_type=${t}&limit=500&cursor=${cursor}`);
    expect(after.data.map((c: any) => c.cause.event_type)).to.deep.equal(Array(5).fill('policy.deleted'));
    expect(Date.parse(after.pagination.horizon)).to.be.below(Date.now() - 399 * 86_400_000);
  });

  it('refuses a bad query with 400 and a client without audit:read with 403', async () => {
    for (const query of [
      'page=1&cursor=YWJj',
      'cursor=bm90LWFuLWlk',
      'cursor=!!',
      'limit=501',
      'limit=0',
      'since=yesterday',
      'event_id=prn_01JD0000000000000000000000',
      'resource_type=Not%20A%20Type',
    ]) {
      const res = await api.get(`/v1/access-changes?${query}`);
      expect(res.status, `${query}: ${res.text}`).to.equal(400);
      expect(res.body.code, query).to.equal('VALIDATION_FAILED');
    }
    const reader = (await api.post('/v1/clients', { name: uniq('no-audit'), scopes: ['principals:read'] }))
      .body;
    const other = fx.app.http.withToken(
      (await tokenFor(fx.app.http, { id: reader.id, secret: reader.client_secret })).access_token,
    );
    expect((await other.get('/v1/access-changes')).status).to.equal(403);
  });

  it('sends each cause’s changes to webhooks as access.changed, in parts of at most 500', async function () {
    // 501 resources registered one request at a time.
    this.timeout(90_000);
    await withAccessHook(async (hook) => {
      const t = type();
      const p = (await world.principal()).id as string;
      const names = Array.from({ length: 501 }, (_, i) => `r${String(i).padStart(3, '0')}`);
      for (let i = 0; i < names.length; i += 25)
        await Promise.all(names.slice(i, i + 25).map((n) => world.register(t, n)));
      const policy = await world.policy({
        subjects: { principals: [p] },
        resources: [{ type: t, identifier: 'r*' }],
      });
      const created = await eventOf('policy.created', policy.id);
      const listed = (await changes(`event_id=${created.id}&limit=500`)).data.concat(
        (await changes(`event_id=${created.id}&limit=500&page=2`)).data,
      );
      expect(listed).to.have.length(502);

      const { value } = await eventually(
        async () => receiver.received.slice(),
        (r) => r.length >= 2,
        10_000,
      );
      const payloads = value.map((r) => verifyDelivery<any>(hook.secret, r));
      expect(payloads.map((x) => [x.type, x.data.part, x.data.parts, x.data.changes.length])).to.deep.equal([
        ['access.changed', 1, 2, 500],
        ['access.changed', 2, 2, 2],
      ]);
      for (const [i, x] of payloads.entries()) {
        expect(x.data.cause).to.deep.equal({
          event_id: created.id,
          event_type: 'policy.created',
          actor: created.actor,
        });
        expect(x.timestamp).to.equal(created.occurred_at);
        expect(value[i]!.headers['webhook-id']).to.equal(x.data.changes[0].id);
      }
      expect(payloads.flatMap((x) => x.data.changes)).to.deep.equal(listed);
    });
  });

  it('delivers a message queued with its data as it was queued, and gives up one whose changes are gone', async function () {
    // Messages queued by a version that stored each message's data with it; and one announcing
    // a part purged since (past the retention).
    await withAccessHook(async (hook) => {
      const data = {
        cause: {
          event_id: 'evt_01JD0000000000000000000000',
          event_type: 'policy.created',
          actor: { type: 'client', id: 'cli_x' },
        },
        changes: [{ id: 'acc_01JD0000000000000000000001', note: 'as stored then' }],
        part: 1,
        parts: 1,
      };
      const queue = `
        UNWIND $messages AS m
        CREATE (:AccessChangeMessage {id: m.id, occurred_at: datetime(), body: m.body})
        CREATE (:WebhookMessage {id: m.id + '/' + $webhook, webhook_id: $webhook, event_id: m.id,
          event_type: 'access.changed', occurred_at: datetime(), attempt: 0, next_attempt_at: datetime()})`;
      const before = receiver.received.length;
      await cypher(fx.app.runtime.db, queue, {
        webhook: hook.id,
        messages: [
          { id: 'acc_01JD0000000000000000000001', body: JSON.stringify(data) },
          { id: 'acc_01JD0000000000000000000002', body: null },
        ],
      });
      const { value } = await eventually(
        () => api.get(`/v1/webhooks/${hook.id}/deliveries`),
        (r) => r.body.data.length >= 2,
        10_000,
      );
      const received = receiver.received.slice(before);
      expect(received).to.have.length(1);
      const payload = verifyDelivery<any>(hook.secret, received[0]!);
      expect(payload.data).to.deep.equal(data);
      const gone = value.body.data.find((d: any) => d.event_id === 'acc_01JD0000000000000000000002');
      expect(gone).to.include({ success: false, error: 'the event no longer exists' });
    });
  });

  /** A part of one listed change of `cause`, its message `part` of `parts` (null: not known yet). */
  const cutPart = (t: string, cause: AccessCause, part: number, parts: number | null): StoredPart => {
    const change: AccessChange = {
      id: newId('access_change'),
      at: new Date().toISOString(),
      principal: { id: newId('principal'), name: `p${part}`, type: 'HUMAN' },
      resource: { type: t, identifier: `r${part}` },
      actions_gained: ['read'],
      actions_lost: [],
      via: [{ policy_id: newId('policy'), policy_name: 'cut', via: 'principal' }],
      cause,
    };
    return {
      id: change.id,
      cause_id: cause.event_id,
      at: change.at,
      rows: [toStored(change, null)],
      message: { part, parts },
    };
  };

  /**
   * The messages the receiver got after its `before`th, once there are `count`: each as which
   * part of how many it is, and the id of its first change.
   */
  const announced = async (
    hook: { secret: string },
    before: number,
    count: number,
  ): Promise<[number, number, string][]> => {
    const { value } = await eventually(
      async () => receiver.received.slice(before),
      (r) => r.length >= count,
      15_000,
    );
    return value
      .map((r) => verifyDelivery<any>(hook.secret, r))
      .map((x) => [x.data.part, x.data.parts, x.data.changes[0].id]);
  };

  it('holds back the messages of a cause cut as it was computed until its last part says how many there are', async function () {
    this.timeout(40_000);
    await withAccessHook(async (hook) => {
      const t = type();
      const cause = {
        event_id: newId('event'),
        event_type: 'policy.created',
        actor: { type: 'client', id: 'cli_x' },
      };
      const parts = [cutPart(t, cause, 1, null), cutPart(t, cause, 2, null), cutPart(t, cause, 3, 3)];
      const db = fx.app.runtime.db;
      const before = receiver.received.length;
      const store = async (part: StoredPart): Promise<void> => {
        expect(await repo.record(db, [readyPart(part)], 'cut')).to.equal(true);
      };
      const due = async (): Promise<unknown[]> =>
        (
          await cypher(
            db,
            'MATCH (m:WebhookMessage) WHERE m.event_id IN $ids RETURN m.next_attempt_at AS due',
            {
              ids: parts.map((p) => p.id),
            },
          )
        ).map((r) => r['due']);
      // Stored as the holder of the lease would store them (only the holder's parts are stored),
      // which holds it throughout: a recorder taking it over meanwhile would announce the cause.
      await holdingLease(fx.app, 'cut', async () => {
        // The first two in statements of their own: stored, listed, and not due.
        for (const part of parts.slice(0, 2)) await store(part);
        expect((await changes(`event_id=${cause.event_id}`)).data).to.have.length(2);
        expect(await due()).to.deep.equal([null, null]);
        // The last says the count: all three are due then, and go out with it, in order.
        await store(parts[2]!);
        expect((await due()).every((d) => d !== null)).to.equal(true);
      });
      expect(await announced(hook, before, 3)).to.deep.equal(parts.map((p, i) => [i + 1, 3, p.id]));
    });
  });

  it('announces a cause whose last part was never stored, as far as it was, once the next recorder takes over', async function () {
    this.timeout(60_000);
    await withAccessHook(async (hook) => {
      const cause = {
        event_id: newId('event'),
        event_type: 'policy.created',
        actor: { type: 'client', id: 'cli_x' },
      };
      const parts = [cutPart(type(), cause, 1, null), cutPart(type(), cause, 2, null)];
      const before = receiver.received.length;
      // Stored by a recorder that stopped before the last part.
      await holdingLease(fx.app, 'gone', async () => {
        for (const part of parts) await repo.record(fx.app.runtime.db, [readyPart(part)], 'gone');
      });
      // The next to take the lease (this instance, started again) announces what was stored.
      await fx.restart();
      api = fx.api;
      world = engineApi(api, uniq);
      expect(await announced(hook, before, 2)).to.deep.equal(parts.map((p, i) => [i + 1, 2, p.id]));
    });
  });

  describe('with a second instance', () => {
    // On the same data, renewing a lease of a second: it takes over within one when the other stops.
    const twin = useApp({ keepData: true, env: { JOB_LEASE_S: '1' } });

    /** What each instance logged at warn or above, and its recorder's counters, to read a failure by. */
    const state = async (): Promise<string> => {
      const one = async (name: string, app: typeof fx.app): Promise<string> => {
        const loud = app.logs
          .entries()
          .filter((e) => ['warn', 'error', 'fatal'].includes(String(e['level'])));
        const metrics = (await app.http.get('/metrics')).text
          .split('\n')
          .filter((l) => l.startsWith('access_history_'));
        return `${name}: ${JSON.stringify(metrics)} ${JSON.stringify(loud.slice(-10))}`;
      };
      return [await one('first', fx.app), await one('second', twin.app)].join('\n');
    };
    const within = async <T>(probe: () => Promise<T>, accept: (value: T) => boolean): Promise<T> => {
      try {
        return (await eventually(probe, accept, 10_000)).value;
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${await state()}`, { cause: err });
      }
    };

    it('stores each change once, and the other takes over when the one storing stops', async () => {
      const other = engineApi(twin.api, uniq);
      const t = type();
      const made = [];
      for (let i = 0; i < 2; i += 1) {
        const res = await twin.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('p') });
        expect(res.status, res.text).to.equal(201);
        made.push(res);
      }
      const ps = made.map((res) => res.body.id as string);
      // The instance that stores has both principals in its index before the policy comes (the
      // feed's shards may otherwise hand it a principal and the policy in one batch, whose change
      // would then be the principal's).
      const caughtUp = await fx.api.get(`/v1/principals/${ps[1]}/access`, {
        headers: { 'Consistency-Token': made[1]!.headers.get('consistency-token')! },
      });
      expect(caughtUp.status, caughtUp.text).to.equal(200);
      // Made through the instance that does not store: each change is stored once, by the other.
      const both = await other.policy({
        subjects: { principals: ps },
        resources: [{ type: t, identifier: 'a' }],
      });
      const created = await eventOf('policy.created', both.id);
      const listed = await within(
        async () => (await changes(`event_id=${created.id}`)).data,
        (data: any[]) => data.length >= 2,
      );
      expect(listed.map((c: any) => c.principal.id).sort()).to.deep.equal([...ps].sort());

      // The one storing stops (and gives its lease up); changes made meanwhile are stored by the other.
      await fx.restart(undefined, async () => {
        const alone = await other.policy({
          subjects: { principals: [ps[0]] },
          resources: [{ type: t, identifier: 'b' }],
        });
        const value = await within(
          async () => (await twin.api.get(`/v1/access-changes?resource_type=${t}&identifier=b`)).body.data,
          (data: any[]) => data.length >= 1,
        );
        expect(value.map((c: any) => [c.principal.id, c.via[0].policy_id])).to.deep.equal([
          [ps[0], alone.id],
        ]);
      });
      api = fx.api;
      world = engineApi(api, uniq);
      expect(await story(t)).to.deep.equal([
        ...[...ps].sort().map((p) => `${p} a +read by policy.created`),
        `${ps[0]} b +read by policy.created`,
      ]);
    });
  });
});
