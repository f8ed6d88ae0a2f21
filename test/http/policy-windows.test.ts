import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import { engineApi, namer } from '../helpers/engine.js';
import { Receiver, verifyDelivery } from '../helpers/receiver.js';
import { eventually, scheduledRuns } from '../helpers/wait.js';

/** An instant `ms` from now, as the API writes timestamps. */
const inMs = (ms: number): string => new Date(Date.now() + ms).toISOString();
const HOUR = 3_600_000;

describe('time-bound policies', () => {
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;
  const receiver = new Receiver();

  // The expiry sweep runs every second here, so that a close is recorded within a test's patience.
  const fx = useApp({
    env: {
      POLICY_EXPIRY_INTERVAL_S: '1',
      JOB_POLL_INTERVAL_MS: '100',
      WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    },
  });

  before(async () => {
    world = engineApi(fx.api, uniq);
    await receiver.start();
  });
  after(async () => {
    await receiver.stop();
  });

  const body = (fields: Record<string, unknown>) => ({
    name: uniq('policy'),
    effect: 'allow',
    subjects: { principals: ['prn_01JD0000000000000000000001'] },
    actions: ['read'],
    resources: [{ type: 'database', identifier: 'ledger' }],
    ...fields,
  });
  const policyCount = async (): Promise<number> => {
    const res = await fx.api.get('/v1/policies?limit=1');
    expect(res.status, res.text).to.equal(200);
    return res.body.pagination.total;
  };
  const decide = async (principalId: string, t: string): Promise<{ decision: string; reasons: any[] }> => {
    const res = await fx.api.post('/v1/decisions/evaluate', {
      principal_id: principalId,
      action: 'read',
      resource: { type: t, identifier: 'ledger' },
    });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const accessOf = async (id: string, t: string): Promise<any[]> => {
    const res = await fx.api.get(`/v1/principals/${id}/access?resource_type=${t}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.access;
  };
  const expiredEvents = async (policyId: string): Promise<any[]> => {
    const res = await fx.api.get(`/v1/audit/events?type=policy.expired&target_id=${policyId}`);
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };

  describe('the window as written', () => {
    it('stores the window, returns it to the millisecond in UTC, and a PUT without it removes it', async () => {
      const from = new Date(Date.now() - HOUR);
      const until = new Date(Date.now() + HOUR);
      // Any RFC 3339 offset is taken: +02:00 names the same instant as the UTC text.
      const local = (d: Date): string =>
        new Date(d.getTime() + 2 * HOUR).toISOString().replace(/\.(\d{3})Z$/, '.$1456+02:00');
      const created = await fx.api.post(
        '/v1/policies',
        body({ valid_from: local(from), valid_until: local(until) }),
      );
      expect(created.status, created.text).to.equal(201);
      expect(created.body.valid_from).to.equal(from.toISOString());
      expect(created.body.valid_until).to.equal(until.toISOString());
      const got = await fx.api.get(`/v1/policies/${created.body.id}`);
      expect(got.body).to.deep.equal(created.body);

      const replaced = await fx.api.put(`/v1/policies/${created.body.id}`, body({ name: created.body.name }));
      expect(replaced.status, replaced.text).to.equal(200);
      expect(replaced.body).to.include({ version: 2, valid_from: null, valid_until: null });
      const versions = await fx.api.get(`/v1/policies/${created.body.id}/versions`);
      expect(versions.body.data.map((v: any) => v.policy.valid_until ?? null)).to.deep.equal([
        null,
        until.toISOString(),
      ]);
      const events = await fx.api.get(`/v1/audit/events?type=policy.updated&target_id=${created.body.id}`);
      expect(events.body.data[0].changes.valid_until).to.deep.equal({ from: until.toISOString(), to: null });
    });

    const impossible: [string, () => Record<string, unknown>][] = [
      ['a valid_until in the past', () => ({ valid_until: inMs(-1_000) })],
      [
        'a valid_until equal to valid_from',
        () => {
          // One instant for both: two readings of the clock may differ by a millisecond or more.
          const at = inMs(HOUR);
          return { valid_from: at, valid_until: at };
        },
      ],
      ['a valid_until before valid_from', () => ({ valid_from: inMs(2 * HOUR), valid_until: inMs(HOUR) })],
    ];
    for (const [what, window] of impossible) {
      it(`refuses ${what} with a pointer, and stores nothing`, async () => {
        const before = await policyCount();
        const res = await fx.api.post('/v1/policies', body(window()));
        expect(res.status, res.text).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(res.body.errors.map((e: any) => e.pointer)).to.deep.equal(['/valid_until']);
        expect(await policyCount()).to.equal(before);
      });
    }

    it('refuses a replacement whose window has closed, and keeps the policy as it was', async () => {
      const created = await fx.api.post('/v1/policies', body({ valid_until: inMs(HOUR) }));
      expect(created.status, created.text).to.equal(201);
      const res = await fx.api.put(
        `/v1/policies/${created.body.id}`,
        body({ name: created.body.name, valid_until: inMs(-HOUR) }),
      );
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors.map((e: any) => e.pointer)).to.deep.equal(['/valid_until']);
      const got = await fx.api.get(`/v1/policies/${created.body.id}`);
      expect(got.body).to.deep.equal(created.body);
    });

    it('refuses a date-time that is not RFC 3339', async () => {
      const res = await fx.api.post('/v1/policies', body({ valid_until: 'next tuesday' }));
      expect(res.status, res.text).to.equal(400);
      expect(res.body.errors.map((e: any) => e.pointer)).to.include('/valid_until');
    });
  });

  describe('decisions follow the window to the millisecond, without a restart', () => {
    it('allows until valid_until, then denies as if the policy were not there', async () => {
      const p = await world.principal();
      const t = type();
      const until = inMs(2_500);
      const policy = await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'ledger' }],
        valid_until: until,
      });
      const open = await decide(p.id, t);
      expect(Date.now()).to.be.below(Date.parse(until));
      expect(open.decision).to.equal('ALLOW');
      expect(open.reasons.map((r) => r.policy_id)).to.deep.equal([policy.id]);

      const { value: closed } = await eventually(
        () => decide(p.id, t),
        (d) => d.decision === 'DENY',
        10_000,
      );
      expect(Date.now()).to.be.at.least(Date.parse(until));
      expect(closed.reasons.map((r) => r.code)).to.deep.equal(['NO_MATCHING_POLICY']);
      // The access lists and the reverse lookup leave it out too.
      expect(await accessOf(p.id, t)).to.deep.equal([]);
      const who = await fx.api.get(`/v1/resources/access?type=${t}&identifier=ledger`);
      expect(who.body.principals).to.deep.equal([]);
      // The policy itself is unchanged: still active, its window readable.
      const got = await fx.api.get(`/v1/policies/${policy.id}`);
      expect(got.body).to.include({ status: 'active', version: 1, valid_until: until });
    });

    it('denies until valid_from, then allows, dating the grant from the window', async () => {
      const p = await world.principal();
      const t = type();
      const from = inMs(2_500);
      const policy = await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'ledger' }],
        valid_from: from,
      });
      const early = await decide(p.id, t);
      expect(Date.now()).to.be.below(Date.parse(from));
      expect(early.decision).to.equal('DENY');
      expect(await accessOf(p.id, t)).to.deep.equal([]);

      const { value: opened } = await eventually(
        () => decide(p.id, t),
        (d) => d.decision === 'ALLOW',
        10_000,
      );
      expect(Date.now()).to.be.at.least(Date.parse(from));
      expect(opened.reasons.map((r) => r.policy_id)).to.deep.equal([policy.id]);
      const [entry, ...others] = await accessOf(p.id, t);
      expect(others).to.deep.equal([]);
      expect(entry).to.include({ granted_at: from });
      expect(entry).to.not.have.property('expires_at');
    });

    it('lifts a time-bound deny outside its window', async () => {
      const p = await world.principal();
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'ledger' }],
      });
      const deny = await world.policy({
        effect: 'deny',
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'ledger' }],
        valid_until: inMs(2_000),
      });
      const denied = await decide(p.id, t);
      expect(denied.decision).to.equal('DENY');
      expect(denied.reasons.map((r) => r.policy_id)).to.deep.equal([deny.id]);
      await eventually(
        () => decide(p.id, t),
        (d) => d.decision === 'ALLOW',
        10_000,
      );
    });
  });

  describe('expires_at', () => {
    it('shows when an entry ends: the last close of its grants, only when every grant ends', async () => {
      const p = await world.principal();
      const t = type();
      const soon = inMs(HOUR);
      const later = inMs(2 * HOUR);
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [
          { type: t, identifier: 'ledger' },
          { type: t, identifier: 'crm' },
        ],
        valid_until: soon,
      });
      await world.policy({
        subjects: { principals: [p.id] },
        actions: ['write'],
        resources: [{ type: t, identifier: 'ledger' }],
        valid_until: later,
      });
      await world.policy({ subjects: { principals: [p.id] }, resources: [{ type: t, identifier: 'crm' }] });
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'wiki' }],
        valid_until: later,
      });

      const entries = await accessOf(p.id, t);
      const byResource = new Map(entries.map((e) => [e.resource.identifier, e]));
      expect([...byResource.keys()].sort()).to.deep.equal(['crm', 'ledger', 'wiki']);
      // Its read ends first, with the earlier policy; the entry goes with the later one.
      expect(byResource.get('ledger')).to.include({ expires_at: later });
      expect(byResource.get('ledger').actions).to.deep.equal(['read', 'write']);
      expect(byResource.get('wiki')).to.include({ expires_at: later });
      expect(byResource.get('crm')).to.not.have.property('expires_at');

      const who = await fx.api.get(`/v1/resources/access?type=${t}&identifier=ledger`);
      expect(who.body.principals.map((r: any) => [r.principal.id, r.expires_at])).to.deep.equal([
        [p.id, later],
      ]);

      const report = await fx.api.post('/v1/audit/reports', { type: 'access_review', format: 'json' });
      expect(report.status, report.text).to.equal(202);
      const { value: done } = await eventually(
        async () => (await fx.api.get(`/v1/audit/reports/${report.body.id}`)).body,
        (r) => r.status === 'completed' || r.status === 'failed',
        20_000,
      );
      expect(done.status, JSON.stringify(done)).to.equal('completed');
      const content = await fx.api.get(`/v1/audit/reports/${report.body.id}/content`);
      const rows = (JSON.parse(content.text) as { data: Record<string, unknown>[] }).data.filter(
        (r) => r['principal_id'] === p.id,
      );
      expect(rows.map((r) => [r['resource_identifier'], r['expires_at']])).to.deep.equal([
        ['crm', null],
        ['ledger', later],
        ['wiki', later],
      ]);
    });
  });

  describe('policy.expired', () => {
    it('is recorded once when a window closes, reaches webhooks, and again after a PUT reopens the window', async () => {
      const hook = await fx.api.post('/v1/webhooks', {
        url: receiver.url,
        events: ['policy.expired'],
        description: 'policy windows',
      });
      expect(hook.status, hook.text).to.equal(201);
      try {
        const p = await world.principal();
        const until = inMs(1_500);
        const policy = await world.policy({
          subjects: { principals: [p.id] },
          resources: [{ type: type(), identifier: 'ledger' }],
          valid_until: until,
        });
        expect(await expiredEvents(policy.id)).to.deep.equal([]);

        const { value: first } = await eventually(
          () => expiredEvents(policy.id),
          (events) => events.length > 0,
          15_000,
          100,
        );
        expect(first).to.have.length(1);
        expect(first[0]).to.deep.include({
          type: 'policy.expired',
          actor: { type: 'system', id: 'system' },
          target: { type: 'policy', id: policy.id },
          outcome: 'success',
        });
        expect(Date.parse(first[0].occurred_at)).to.be.at.least(Date.parse(until));

        const { value: delivered } = await eventually(
          async () => receiver.received.filter((r) => r.body.includes(policy.id)),
          (list) => list.length > 0,
          10_000,
        );
        const payload = verifyDelivery<{ type: string; data: { id: string; target: { id: string } } }>(
          hook.body.secret,
          delivered[0]!,
        );
        expect(payload.type).to.equal('policy.expired');
        expect(payload.data).to.deep.include({ id: first[0].id, target: { type: 'policy', id: policy.id } });

        // Several more sweeps find the close recorded already.
        await scheduledRuns(fx.app.runtime.db, 'policies.expiry', 3);
        expect(await expiredEvents(policy.id)).to.have.length(1);
        expect(receiver.received.filter((r) => r.body.includes(policy.id))).to.have.length(1);

        // A replacement opens a new window; its close is recorded in turn.
        const reopened = await fx.api.put(`/v1/policies/${policy.id}`, {
          name: policy.name,
          effect: 'allow',
          subjects: policy.subjects,
          actions: policy.actions,
          resources: policy.resources,
          valid_until: inMs(1_500),
        });
        expect(reopened.status, reopened.text).to.equal(200);
        await eventually(
          () => expiredEvents(policy.id),
          (events) => events.length === 2,
          15_000,
          100,
        );
      } finally {
        await fx.api.delete(`/v1/webhooks/${hook.body.id}`);
      }
    });

    it('is not recorded for a policy that is not active when its window closes', async () => {
      const p = await world.principal();
      const disabled = await world.policy({
        status: 'disabled',
        subjects: { principals: [p.id] },
        resources: [{ type: type(), identifier: 'ledger' }],
        valid_until: inMs(500),
      });
      // A policy that closes later than the disabled one and is recorded: the sweep has run past it.
      const active = await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: type(), identifier: 'ledger' }],
        valid_until: inMs(1_000),
      });
      await eventually(
        () => expiredEvents(active.id),
        (events) => events.length === 1,
        15_000,
        100,
      );
      expect(await expiredEvents(disabled.id)).to.deep.equal([]);
    });
  });

  describe('simulation', () => {
    it('counts the proposed window: a window not open now grants nothing now', async () => {
      const a = await world.principal();
      const t = type();
      const current = await world.policy({
        subjects: { principals: [a.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      const proposal = (window: Record<string, unknown>) => ({
        policy: {
          name: current.name,
          effect: 'allow',
          subjects: { principals: [a.id] },
          actions: ['read'],
          resources: [{ type: t, identifier: 'x' }],
          ...window,
        },
      });
      const simulate = async (request: Record<string, unknown>): Promise<any> => {
        const res = await fx.api.post(`/v1/policies/${current.id}/simulate`, request);
        expect(res.status, res.text).to.equal(200);
        return res.body;
      };

      // Opening in an hour: the access is lost now.
      const later = await simulate(proposal({ valid_from: inMs(HOUR) }));
      expect(later.access_changes.map((c: any) => [c.principal_id, c.gained, c.lost])).to.deep.equal([
        [a.id, [], ['read']],
      ]);
      // Open now, closing in an hour: nothing changes now.
      const bounded = await simulate(proposal({ valid_until: inMs(HOUR) }));
      expect(bounded.access_changes).to.deep.equal([]);
      expect(bounded.summary.changed).to.equal(0);

      const requests = [{ principal_id: a.id, action: 'read', resource: { type: t, identifier: 'x' } }];
      const decided = await simulate({ ...proposal({ valid_from: inMs(HOUR) }), requests });
      expect(decided.results.map((r: any) => [r.current, r.simulated, r.changed])).to.deep.equal([
        ['ALLOW', 'DENY', true],
      ]);

      const refused = await fx.api.post(
        `/v1/policies/${current.id}/simulate`,
        proposal({ valid_until: inMs(-HOUR) }),
      );
      expect(refused.status).to.equal(400);
      expect(refused.body.errors.map((e: any) => e.pointer)).to.deep.equal(['/policy/valid_until']);
    });

    it('counts the stored window: lifting a window not yet open grants now', async () => {
      const a = await world.principal();
      const t = type();
      const current = await world.policy({
        subjects: { principals: [a.id] },
        resources: [{ type: t, identifier: 'x' }],
        valid_from: inMs(HOUR),
      });
      const res = await fx.api.post(`/v1/policies/${current.id}/simulate`, {
        policy: {
          name: current.name,
          effect: 'allow',
          subjects: { principals: [a.id] },
          actions: ['read'],
          resources: [{ type: t, identifier: 'x' }],
        },
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.access_changes.map((c: any) => [c.principal_id, c.gained, c.lost])).to.deep.equal([
        [a.id, ['read'], []],
      ]);
    });
  });
});
