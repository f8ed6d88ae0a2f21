import { expect } from 'chai';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { authed, createClient } from '../helpers/auth.js';
import { cypher } from '../helpers/db.js';
import type { HttpClient } from '../helpers/http.js';
import { Receiver, verifyDelivery } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';

describe('webhooks', () => {
  let app: TestApp;
  let api: HttpClient;
  const receiver = new Receiver();

  const fx = useApp({
    env: {
      WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    },
  });
  before(async () => {
    app = fx.app;
    api = fx.api;
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.reply = () => ({ status: 204 });
  });
  afterEach(async () => {
    // Each test's webhooks go, so that later tests' events reach only their own.
    const list = await api.get('/v1/webhooks?limit=100');
    for (const w of list.body.data as { id: string }[]) await api.delete(`/v1/webhooks/${w.id}`);
  });

  async function subscribe(events: string[], url = receiver.url): Promise<{ id: string; secret: string }> {
    const res = await api.post('/v1/webhooks', { url, events, description: 'test receiver' });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  /**
   * Waits until no delivery is queued (for one webhook, or any): every event queued so far has
   * been sent and its attempt recorded, or given up, and nothing more goes out until a new event
   * commits (events are queued in the transaction of their change).
   */
  async function outboxEmpty(webhookId?: string): Promise<void> {
    await eventually(
      async () =>
        (
          await cypher(
            app.runtime.db,
            'MATCH (m:WebhookMessage) WHERE $id IS NULL OR m.webhook_id = $id RETURN count(m) AS n',
            { id: webhookId ?? null },
          )
        )[0]!['n'],
      (n) => n === 0,
      10_000,
    );
  }

  async function newAgent(name: string): Promise<string> {
    const res = await api.post('/v1/principals', { type: 'AI_AGENT', name });
    expect(res.status, res.text).to.equal(201);
    return res.body.id;
  }

  describe('registry', () => {
    it('creates a webhook, shows its secret once and never again, and audits each change', async () => {
      const created = await api.post('/v1/webhooks', {
        url: receiver.url,
        events: ['principal.*', 'policy.updated'],
      });
      expect(created.status).to.equal(201);
      expect(created.headers.get('location')).to.equal(`/v1/webhooks/${created.body.id}`);
      expect(created.body.id).to.match(/^whk_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(created.body.secret).to.match(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(created.body).to.include({
        url: receiver.url,
        status: 'active',
        failure_count: 0,
        description: null,
      });
      expect(created.body.last_delivery_at).to.equal(null);
      const id = created.body.id as string;

      const got = await api.get(`/v1/webhooks/${id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.not.have.property('secret');
      expect(JSON.stringify(got.body)).to.not.include(created.body.secret);
      const listed = await api.get('/v1/webhooks');
      expect(listed.body.data.map((w: { id: string }) => w.id)).to.include(id);
      expect(JSON.stringify(listed.body)).to.not.include(created.body.secret);

      const patched = await api.patch(`/v1/webhooks/${id}`, { events: ['*'], description: 'all of it' });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body).to.include({ description: 'all of it' });
      expect(patched.body.events).to.deep.equal(['*']);

      const rotated = await api.post(`/v1/webhooks/${id}/rotate-secret`);
      expect(rotated.status).to.equal(200);
      expect(rotated.body.secret)
        .to.match(/^whsec_/)
        .and.not.equal(created.body.secret);

      const deleted = await api.delete(`/v1/webhooks/${id}`);
      expect(deleted.status).to.equal(200);
      expect(deleted.body).to.include({ id, status: 'deleted' });
      expect((await api.get(`/v1/webhooks/${id}`)).status).to.equal(404);

      const events = await api.get(`/v1/audit/events?target_id=${id}&limit=100`);
      const types = (events.body.data as { type: string }[]).map((e) => e.type).sort();
      expect(types).to.deep.equal([
        'webhook.created',
        'webhook.deleted',
        'webhook.secret_rotated',
        'webhook.updated',
      ]);
      expect(events.text).to.not.include(created.body.secret).and.not.include(rotated.body.secret);
    });

    it('keeps a secret a URL carries out of the audit trail', async () => {
      const url = `${receiver.url}/T0001/B0002/s3cr3t-in-path?token=s3cr3t-in-query`;
      const created = await api.post('/v1/webhooks', { url, events: ['*'] });
      expect(created.status).to.equal(201);
      expect(created.body.url).to.equal(url);
      await api.patch(`/v1/webhooks/${created.body.id}`, { url: `${url}&v=2` });
      const events = await api.get(`/v1/audit/events?target_id=${created.body.id}`);
      expect(events.body.data).to.have.length(2);
      expect(events.text).to.not.include('s3cr3t');
      const changed = (
        events.body.data as { type: string; changes: Record<string, { from: string; to: string }> }[]
      ).find((e) => e.type === 'webhook.updated')!;
      expect(changed.changes['url']!.from).to.not.equal(changed.changes['url']!.to);
      expect(changed.changes['url']!.to).to.match(/^http:\/\/127\.0\.0\.1:\d+\/… \(sha256:/);
    });

    it('refuses bad URLs and event patterns with 400 and keeps nothing', async () => {
      const before = (await api.get('/v1/webhooks')).body.pagination.total;
      const cases: [unknown, string][] = [
        [{ url: 'ftp://127.0.0.1/x', events: ['*'] }, '/url'],
        [{ url: 'https://10.0.0.1/hook', events: ['*'] }, '/url'],
        [{ url: 'https://169.254.169.254/latest', events: ['*'] }, '/url'],
        [{ url: 'https://[::ffff:192.168.0.1]/hook', events: ['*'] }, '/url'],
        [{ url: 'https://user:pw@hooks.example.test/', events: ['*'] }, '/url'],
        [{ url: 'not a url', events: ['*'] }, '/url'],
        [{ url: receiver.url, events: ['principal.exploded'] }, '/events/0'],
        [{ url: receiver.url, events: ['nothing.*'] }, '/events/0'],
        [{ url: receiver.url, events: [] }, '/events'],
        [{ url: receiver.url, events: ['*'], secret: 'mine' }, ''],
      ];
      for (const [body, pointer] of cases) {
        const res = await api.post('/v1/webhooks', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        if (pointer) expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).to.include(pointer);
      }
      expect((await api.get('/v1/webhooks')).body.pagination.total).to.equal(before);
    });

    it('needs webhooks:read to read and webhooks:write to change', async () => {
      const reader = await authed(app, await createClient(app, ['webhooks:read']));
      expect((await reader.get('/v1/webhooks')).status).to.equal(200);
      const refused = await reader.post('/v1/webhooks', { url: receiver.url, events: ['*'] });
      expect(refused.status).to.equal(403);
      expect(refused.body.code).to.equal('INSUFFICIENT_SCOPE');
      const other = await authed(app, await createClient(app, ['principals:read']));
      expect((await other.get('/v1/webhooks')).status).to.equal(403);
    });

    it('answers 404 for unknown or malformed webhook ids', async () => {
      expect((await api.get('/v1/webhooks/whk_01JAAAAAAAAAAAAAAAAAAAAAAA')).status).to.equal(404);
      expect((await api.get('/v1/webhooks/pol_01JAAAAAAAAAAAAAAAAAAAAAAA')).status).to.equal(404);
      expect((await api.post('/v1/webhooks/whk_01JAAAAAAAAAAAAAAAAAAAAAAA/test')).status).to.equal(404);
      expect((await api.get('/v1/webhooks/whk_01JAAAAAAAAAAAAAAAAAAAAAAA/deliveries')).status).to.equal(404);
    });
  });

  describe('delivery', () => {
    it('delivers subscribed events signed as Standard Webhooks, with the audit event as data', async () => {
      const hook = await subscribe(['principal.*']);
      const agent = await newAgent('webhook-subject');
      await api.post('/v1/policies', {
        name: `not-subscribed-${Date.now()}`,
        effect: 'allow',
        subjects: { principals: [agent] },
        actions: ['read'],
        resources: ['doc:x'],
      });
      await api.patch(`/v1/principals/${agent}`, { description: 'changed' });
      const { value } = await eventually(
        async () => receiver.received.slice(),
        (r) => r.length >= 2,
        10_000,
      );
      const payloads = value.map((r) =>
        verifyDelivery<{
          type: string;
          timestamp: string;
          data: { id: string; type: string };
        }>(hook.secret, r),
      );
      expect(payloads.map((p) => p.type)).to.deep.equal(['principal.created', 'principal.updated']);
      for (const [i, p] of payloads.entries()) {
        expect(value[i]!.headers['webhook-id']).to.equal(p.data.id);
        expect(p.timestamp).to.equal((p.data as unknown as { occurred_at: string }).occurred_at);
        const stored = await api.get(`/v1/audit/events/${p.data.id}`);
        expect(stored.status).to.equal(200);
        expect(p.data).to.deep.equal(stored.body);
        expect(value[i]!.headers['content-type']).to.equal('application/json');
      }
      // The policy's event is not subscribed: nothing more arrives.
      await outboxEmpty(hook.id);
      expect(receiver.received).to.have.length(2);

      const { value: log } = await eventually(
        () => api.get(`/v1/webhooks/${hook.id}/deliveries`),
        (res) => res.body.data.length === 2,
        5_000,
      );
      for (const d of log.body.data) {
        expect(d).to.include({
          attempt: 1,
          success: true,
          status_code: 204,
          error: null,
          next_attempt_at: null,
        });
        expect(d.id).to.match(/^dlv_/);
      }
      const webhook = await api.get(`/v1/webhooks/${hook.id}`);
      expect(webhook.body.last_delivery_at).to.be.a('string');
    });

    it('sends a test event now and logs the attempt', async () => {
      const hook = await subscribe(['policy.deleted']);
      const res = await api.post(`/v1/webhooks/${hook.id}/test`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ success: true, status_code: 204, error: null });
      expect(res.body.delivery_id).to.match(/^dlv_/);
      expect(receiver.received).to.have.length(1);
      const payload = verifyDelivery<{ type: string; data: { target: { id: string } } }>(
        hook.secret,
        receiver.received[0]!,
      );
      expect(payload.type).to.equal('webhook.test');
      expect(payload.data.target.id).to.equal(hook.id);

      receiver.reply = () => ({ status: 503, body: 'down for maintenance' });
      const failed = await api.post(`/v1/webhooks/${hook.id}/test`);
      expect(failed.body).to.include({ success: false, status_code: 503 });
      expect(failed.body.error).to.include('HTTP 503').and.include('down for maintenance');
      const log = await api.get(`/v1/webhooks/${hook.id}/deliveries`);
      expect(log.body.data.map((d: { id: string }) => d.id)).to.deep.equal([
        failed.body.delivery_id,
        res.body.delivery_id,
      ]);
      expect(log.body.data[0].event_type).to.equal('webhook.test');
    });

    it('retries a failed delivery on the schedule with the same webhook-id until it succeeds', async () => {
      const hook = await subscribe(['principal.created']);
      let calls = 0;
      receiver.reply = () => (++calls <= 2 ? { status: 500, body: 'boom' } : { status: 200 });
      await newAgent('retried');
      await eventually(
        async () => receiver.received.length,
        (n) => n >= 3,
        15_000,
      );
      const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
      expect(ids.size).to.equal(1);
      for (const r of receiver.received) verifyDelivery(hook.secret, r);
      const { value: log } = await eventually(
        async () =>
          (await api.get(`/v1/webhooks/${hook.id}/deliveries`)).body.data as Record<string, unknown>[],
        (d) => d.length === 3,
        5_000,
      );
      expect(log.map((d) => [d['attempt'], d['success'], d['status_code']])).to.deep.equal([
        [3, true, 200],
        [2, false, 500],
        [1, false, 500],
      ]);
      expect(log[1]!['next_attempt_at']).to.be.a('string');
      expect(log[1]!['error']).to.include('HTTP 500');
      const webhook = await api.get(`/v1/webhooks/${hook.id}`);
      expect(webhook.body.failure_count).to.equal(0);
    });

    it('gives a delivery up after the last retry', async () => {
      const hook = await subscribe(['principal.created']);
      receiver.reply = () => ({ status: 500 });
      await newAgent('given-up');
      // The first attempt and three retries (WEBHOOK_RETRY_SCHEDULE=1,1,1).
      await eventually(
        async () => receiver.received.length,
        (n) => n >= 4,
        15_000,
      );
      // Given up after the fourth: its entry leaves the outbox, and nothing more is sent.
      await outboxEmpty(hook.id);
      expect(receiver.received).to.have.length(4);
      const log = (await api.get(`/v1/webhooks/${hook.id}/deliveries`)).body.data as Record<
        string,
        unknown
      >[];
      expect(log[0]).to.include({ attempt: 4, success: false, next_attempt_at: null });
      const queued = await cypher(
        app.runtime.db,
        'MATCH (m:WebhookMessage {webhook_id: $id}) RETURN count(m) AS n',
        { id: hook.id },
      );
      expect(queued[0]!['n']).to.equal(0);
      expect((await api.get(`/v1/webhooks/${hook.id}`)).body).to.include({
        status: 'active',
        failure_count: 4,
      });
    });

    it('disables a webhook whose receiver answers 410 Gone, with an audit event', async () => {
      const hook = await subscribe(['principal.*']);
      receiver.reply = () => ({ status: 410 });
      await newAgent('gone');
      const { value } = await eventually(
        async () => (await api.get(`/v1/webhooks/${hook.id}`)).body,
        (w) => w.status === 'disabled',
        10_000,
      );
      expect(value.disabled_reason).to.include('410');
      const events = await api.get(`/v1/audit/events?target_id=${hook.id}&type=webhook.disabled`);
      expect(events.body.data).to.have.length(1);
      expect(events.body.data[0].actor.type).to.equal('system');
      // Nothing more is queued or delivered for it.
      await newAgent('after-gone');
      await outboxEmpty(hook.id);
      expect(receiver.received).to.have.length(1);
      // Enabled again, it is delivered to afresh.
      receiver.reply = () => ({ status: 204 });
      const enabled = await api.patch(`/v1/webhooks/${hook.id}`, { status: 'active' });
      expect(enabled.body).to.include({ status: 'active', failure_count: 0 });
      await newAgent('after-enable');
      await eventually(
        async () => receiver.events().map((e) => e.type),
        (t) => t.length === 2,
        10_000,
      );
    });

    it('disables a webhook that has failed for longer than allowed', async () => {
      const hook = await subscribe(['principal.*']);
      receiver.reply = () => ({ status: 502 });
      await newAgent('failing');
      await eventually(
        async () => (await api.get(`/v1/webhooks/${hook.id}`)).body,
        (w) => w.failure_count >= 1,
        10_000,
      );
      // As if the receiver had been failing for six days.
      await cypher(
        app.runtime.db,
        'MATCH (w:Webhook {id: $id}) SET w.failing_since = datetime() - duration({days: 6})',
        {
          id: hook.id,
        },
      );
      const { value } = await eventually(
        async () => (await api.get(`/v1/webhooks/${hook.id}`)).body,
        (w) => w.status === 'disabled',
        10_000,
      );
      expect(value.disabled_reason).to.match(/failed since/);
    });

    it('does not follow redirects', async () => {
      const other = new Receiver();
      await other.start();
      try {
        const hook = await subscribe(['principal.created']);
        receiver.reply = () => ({ status: 302, headers: { location: other.url } });
        await newAgent('redirected');
        const { value } = await eventually(
          async () =>
            (await api.get(`/v1/webhooks/${hook.id}/deliveries`)).body.data as Record<string, unknown>[],
          (d) => d.length >= 1,
          10_000,
        );
        expect(value[0]).to.include({ success: false, status_code: 302 });
        expect(String(value[0]!['error'])).to.include('not followed');
        expect(other.received).to.have.length(0);
      } finally {
        await other.stop();
      }
    });

    it('signs with both secrets while a rotated one overlaps', async () => {
      const hook = await subscribe(['principal.created']);
      const rotated = await api.post(`/v1/webhooks/${hook.id}/rotate-secret`);
      await newAgent('two-signatures');
      const { value } = await eventually(
        async () => receiver.received.slice(),
        (r) => r.length >= 1,
        10_000,
      );
      const signatures = String(value[0]!.headers['webhook-signature']).split(' ');
      expect(signatures).to.have.length(2);
      for (const s of signatures) expect(s).to.match(/^v1,/);
      verifyDelivery(hook.secret, value[0]!);
      verifyDelivery(rotated.body.secret, value[0]!);
    });

    it('queues an event only with its change: a refused change delivers nothing', async () => {
      await subscribe(['*']);
      const refused = await api.post('/v1/principals', {
        type: 'AI_AGENT',
        name: 'orphan-manager',
        attributes: { manager_id: 'prn_01JAAAAAAAAAAAAAAAAAAAAAAA' },
      });
      expect(refused.status).to.equal(422);
      const committed = await newAgent('committed');
      await eventually(
        async () => receiver.received.length,
        (n) => n >= 1,
        10_000,
      );
      await outboxEmpty();
      // The webhook's own creation is an event too; of principals, only the committed one.
      expect(receiver.events().map((e) => e.type)).to.deep.equal(['webhook.created', 'principal.created']);
      expect(receiver.events()[1]!.data.target.id).to.equal(committed);
      const queued = await cypher(app.runtime.db, 'MATCH (m:WebhookMessage) RETURN count(m) AS n');
      expect(queued[0]!['n']).to.equal(0);
    });

    it('with two instances, delivers each event once, in order, whichever instance sends it', async () => {
      const second = await startTestApp({
        keepData: true,
        env: { WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '20' },
      });
      try {
        await subscribe(['principal.created']);
        const secondApi = await authed(second);
        const created: string[] = [];
        for (let i = 0; i < 30; i += 1) {
          const via = i % 2 === 0 ? api : secondApi;
          const res = await via.post('/v1/principals', { type: 'AI_AGENT', name: `twin-${i}` });
          created.push(res.body.id as string);
        }
        const { value } = await eventually(
          async () => receiver.events(),
          (events) => events.length >= 30,
          20_000,
        );
        await outboxEmpty();
        expect(receiver.received).to.have.length(30);
        const ids = receiver.received.map((r) => r.headers['webhook-id']);
        expect(new Set(ids).size).to.equal(30);
        expect(value.map((e) => e.data.target.id)).to.deep.equal(created);
      } finally {
        await second.close();
      }
    });

    it('does not hammer a receiver that is down: the webhook waits, its events keep their order', async () => {
      await subscribe(['principal.created']);
      receiver.reply = () => ({ status: 503 });
      const queued = [await newAgent('queued-1'), await newAgent('queued-2'), await newAgent('queued-3')];
      // Until the first retry (one step of the schedule, 1 s here) arrives, nothing else is sent:
      // one attempt per step, each for the oldest event.
      await eventually(
        async () => receiver.received.length,
        (n) => n >= 2,
        10_000,
      );
      expect(receiver.received).to.have.length(2);
      expect(receiver.received[1]!.at - receiver.received[0]!.at).to.be.at.least(900);
      expect(new Set(receiver.events().map((e) => e.data.target.id))).to.deep.equal(new Set([queued[0]]));
      receiver.reply = () => ({ status: 204 });
      const { value } = await eventually(
        async () => receiver.events(),
        (events) => queued.every((id) => events.some((e) => e.data.target.id === id)),
        10_000,
      );
      const delivered = value.map((e) => e.data.target.id);
      expect(delivered.slice(-3)).to.deep.equal(queued);
    });

    it('lets one event the receiver refuses wait for its retry without holding up the others', async () => {
      const hook = await subscribe(['principal.created']);
      // Decided by name, so the answer is in place before the event exists.
      receiver.reply = (r) =>
        (JSON.parse(r.body) as { data: { changes: { name?: { to?: string } } } }).data.changes.name?.to ===
        'poison'
          ? { status: 422, body: 'cannot take this one' }
          : { status: 204 };
      await newAgent('poison');
      const others = [await newAgent('fine-1'), await newAgent('fine-2')];
      await eventually(
        async () => receiver.events().map((e) => e.data.target.id),
        (ids) => others.every((id) => ids.includes(id)),
        10_000,
      );
      // Attempts are recorded once their round ends, just after the receiver has them.
      const { value: log } = await eventually(
        async () =>
          (await api.get(`/v1/webhooks/${hook.id}/deliveries?success=false`)).body.data as Record<
            string,
            unknown
          >[],
        (failed) => failed.length >= 1,
        5_000,
      );
      expect(log[0]).to.include({ status_code: 422, success: false });
      expect(String(log[0]!['error'])).to.include('cannot take this one');
    });

    it('delivers everything once the receiver is back, in order', async () => {
      const hook = await subscribe(['principal.created']);
      const before = [await newAgent('up-1'), await newAgent('up-2'), await newAgent('up-3')];
      await eventually(
        async () => receiver.received.length,
        (n) => n >= 3,
        10_000,
      );
      await receiver.stop();
      const during = [await newAgent('down-1'), await newAgent('down-2')];
      await eventually(
        async () => (await api.get(`/v1/webhooks/${hook.id}`)).body.failure_count as number,
        (n) => n >= 1,
        10_000,
      );
      await receiver.start();
      const after = [await newAgent('back-1'), await newAgent('back-2'), await newAgent('back-3')];
      const all = [...before, ...during, ...after];
      const { value } = await eventually(
        async () => receiver.events(),
        (events) => all.every((id) => events.some((e) => e.data.target.id === id)),
        20_000,
      );
      for (const r of receiver.received) verifyDelivery(hook.secret, r);
      // Each event first arrived in the order they happened, those queued while it was down too.
      const targets = value.map((e) => e.data.target.id);
      const firstSeen = all.map((id) => targets.indexOf(id));
      expect(firstSeen).to.deep.equal([...firstSeen].sort((a, b) => a - b));
    });
  });
});

describe('webhooks at shutdown', () => {
  it('lets a delivery in flight finish and records it before the service stops', async () => {
    const app = await startTestApp({
      env: { WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' },
    });
    const receiver = new Receiver();
    await receiver.start();
    try {
      const api = await authed(app);
      receiver.reply = () => ({ status: 200, delayMs: 1_000 });
      const hook = await api.post('/v1/webhooks', { url: receiver.url, events: ['principal.created'] });
      await api.post('/v1/principals', { type: 'AI_AGENT', name: 'in-flight-at-shutdown' });
      await eventually(
        async () => receiver.received.length,
        (n) => n === 1,
        10_000,
      );
      const db = app.runtime.db;
      // Stop while the receiver still holds the request; read what was recorded before the
      // database connection goes.
      let recorded: Record<string, unknown>[] = [];
      const closing = app.runtime.jobs.stop(5_000).then(async () => {
        recorded = await cypher(
          db,
          'MATCH (d:WebhookDelivery {webhook_id: $id}) RETURN d.success AS success, d.status_code AS status',
          { id: hook.body.id },
        );
        recorded.push(
          ...(await cypher(db, 'MATCH (m:WebhookMessage {webhook_id: $id}) RETURN count(m) AS queued', {
            id: hook.body.id,
          })),
        );
      });
      await closing;
      expect(recorded).to.deep.equal([{ success: true, status: 200 }, { queued: 0 }]);
      expect(receiver.received).to.have.length(1);
    } finally {
      await app.close();
      await receiver.stop();
    }
  });
});
