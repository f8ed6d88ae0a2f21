import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { encodeTime } from 'ulid';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { authed } from '../helpers/auth.js';
import type { HttpClient } from '../helpers/http.js';
import { engineApi, namer } from '../helpers/engine.js';
import { insertPrincipal } from '../helpers/principals.js';
import { eventually } from '../helpers/wait.js';

const UNKNOWN_PRINCIPAL = 'prn_01JD0000000000000000000000';

describe('decisions', () => {
  let app: TestApp;
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp();
  before(async () => {
    app = fx.app;
    api = fx.api;
    world = engineApi(api, uniq);
  });

  const principal = async (
    type = 'SERVICE_ACCOUNT',
    attributes: Record<string, unknown> = {},
  ): Promise<string> => (await world.principal(type, attributes)).id as string;
  const group = (): Promise<string> => world.group();
  const addMember = (groupId: string, memberId: string): Promise<void> => world.addMember(groupId, memberId);
  const policy = (fields: Record<string, unknown>): Promise<any> => world.policy(fields);
  const evaluate = async (request: Record<string, unknown>): Promise<any> => {
    const res = await api.post('/v1/decisions/evaluate', request);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const decision = async (
    principalId: string,
    rtype: string,
    identifier: string,
    extra: Record<string, unknown> = {},
  ) =>
    evaluate({ principal_id: principalId, action: 'read', resource: { type: rtype, identifier }, ...extra });

  describe('semantics', () => {
    it('allows what an active policy allows, and denies by default', async () => {
      const p = await principal();
      const t = type();
      const allow = await policy({
        subjects: { principals: [p] },
        resources: [{ type: t, identifier: 'a' }],
      });
      const yes = await decision(p, t, 'a');
      expect(yes).to.include({ decision: 'ALLOW', allowed: true, principal_id: p, action: 'read' });
      expect(yes.id).to.match(/^dec_/);
      expect(yes.reasons).to.deep.equal([{ code: 'POLICY_ALLOW', policy_id: allow.id, policy_version: 1 }]);
      expect(yes.granted_by).to.deep.equal([allow.id]);
      const no = await decision(p, t, 'b');
      expect(no).to.include({ decision: 'DENY', allowed: false });
      expect(no.reasons.map((r: any) => r.code)).to.deep.equal(['NO_MATCHING_POLICY']);
      expect(no.granted_by).to.deep.equal([]);
      const otherAction = await evaluate({
        principal_id: p,
        action: 'write',
        resource: { type: t, identifier: 'a' },
      });
      expect(otherAction.decision).to.equal('DENY');
    });

    it('lets a deny override an allow', async () => {
      const p = await principal();
      const t = type();
      await policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: '*' }] });
      const deny = await policy({
        effect: 'deny',
        subjects: { principals: [p] },
        resources: [{ type: t, identifier: 'secret-*' }],
      });
      expect((await decision(p, t, 'public-1')).decision).to.equal('ALLOW');
      const denied = await decision(p, t, 'secret-1');
      expect(denied.decision).to.equal('DENY');
      expect(denied.reasons).to.deep.equal([{ code: 'POLICY_DENY', policy_id: deny.id, policy_version: 1 }]);
    });

    it('reaches members of nested groups, and explains the membership path', async () => {
      const p = await principal();
      const outer = await group();
      const inner = await group();
      await addMember(outer, inner);
      await addMember(inner, p);
      const t = type();
      const allow = await policy({
        subjects: { groups: [outer] },
        resources: [{ type: t, identifier: 'x' }],
      });
      const res = await decision(p, t, 'x', { explain: true });
      expect(res.decision).to.equal('ALLOW');
      const candidate = res.trace.candidates.find((c: any) => c.policy_id === allow.id);
      expect(candidate.subject.via).to.equal('group');
      expect(candidate.subject.path.map((s: any) => s.id)).to.deep.equal([p, inner, outer]);
      expect(candidate.applied).to.equal(true);
    });

    it('follows membership changes at once: removed from the group, denied', async () => {
      const p = await principal();
      const g = await group();
      await addMember(g, p);
      const t = type();
      await policy({ subjects: { groups: [g] }, resources: [{ type: t, identifier: 'x' }] });
      expect((await decision(p, t, 'x')).decision).to.equal('ALLOW');
      expect((await api.delete(`/v1/groups/${g}/members/${p}`)).status).to.equal(200);
      expect((await decision(p, t, 'x')).decision).to.equal('DENY');
    });

    it('selects principals by match query, and follows their attribute changes', async () => {
      const p = await principal('AI_AGENT', { team: 'payments' });
      const t = type();
      await policy({
        subjects: { match: { type: 'AI_AGENT', attributes: { team: 'payments' } } },
        resources: [{ type: t, identifier: 'x' }],
      });
      expect((await decision(p, t, 'x')).decision).to.equal('ALLOW');
      const patched = await api.patch(`/v1/principals/${p}`, { attributes: { team: 'growth' } });
      expect(patched.status).to.equal(200);
      expect((await decision(p, t, 'x')).decision).to.equal('DENY');
    });

    it('fails closed on an unknown principal and on suspended or deleted ones', async () => {
      const unknown = await decision(UNKNOWN_PRINCIPAL, 'db', 'x');
      expect(unknown.decision).to.equal('DENY');
      expect(unknown.reasons[0].code).to.equal('PRINCIPAL_NOT_FOUND');
      const p = await principal();
      const t = type();
      await policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'x' }] });
      expect((await api.patch(`/v1/principals/${p}`, { status: 'suspended' })).status).to.equal(200);
      const suspended = await decision(p, t, 'x');
      expect(suspended.decision).to.equal('DENY');
      expect(suspended.reasons[0].code).to.equal('PRINCIPAL_INACTIVE');
      expect((await api.patch(`/v1/principals/${p}`, { status: 'active' })).status).to.equal(200);
      expect((await decision(p, t, 'x')).decision).to.equal('ALLOW');
      expect((await api.delete(`/v1/principals/${p}`)).status).to.equal(200);
      expect((await decision(p, t, 'x')).reasons[0].code).to.equal('PRINCIPAL_INACTIVE');
    });

    it('takes policy changes into account at once: disabled, replaced, deleted', async () => {
      const p = await principal();
      const t = type();
      const allow = await policy({
        subjects: { principals: [p] },
        resources: [{ type: t, identifier: 'x' }],
      });
      expect((await decision(p, t, 'x')).decision).to.equal('ALLOW');
      const body = {
        name: allow.name,
        effect: 'allow',
        subjects: allow.subjects,
        actions: ['read'],
        resources: allow.resources,
      };
      expect((await api.put(`/v1/policies/${allow.id}`, { ...body, status: 'disabled' })).status).to.equal(
        200,
      );
      expect((await decision(p, t, 'x')).decision).to.equal('DENY');
      expect((await api.put(`/v1/policies/${allow.id}`, body)).status).to.equal(200);
      const again = await decision(p, t, 'x');
      expect(again.decision).to.equal('ALLOW');
      expect(again.reasons[0].policy_version).to.equal(3);
      expect((await api.delete(`/v1/policies/${allow.id}`)).status).to.equal(200);
      expect((await decision(p, t, 'x')).decision).to.equal('DENY');
    });

    it('limits an AI agent to its allowed_tools, whatever the policies say', async () => {
      const agent = await principal('AI_AGENT', { allowed_tools: ['search'], capabilities: [] });
      await policy({
        subjects: { principals: [agent] },
        actions: ['invoke'],
        resources: [{ type: 'tool', identifier: '*' }],
      });
      const ok = await evaluate({
        principal_id: agent,
        action: 'invoke',
        resource: { type: 'tool', identifier: 'search' },
      });
      expect(ok.decision).to.equal('ALLOW');
      const no = await evaluate({
        principal_id: agent,
        action: 'invoke',
        resource: { type: 'tool', identifier: 'shell' },
      });
      expect(no.decision).to.equal('DENY');
      expect(no.reasons.map((r: any) => r.code)).to.deep.equal(['TOOL_NOT_ALLOWED']);
    });

    it('allows on behalf of another principal only when both are allowed and a delegation covers it', async () => {
      const agent = await principal('AI_AGENT', { allowed_tools: ['*'] });
      const user = await insertPrincipal(app, { name: uniq('user') });
      const t = type();
      const agentPolicy = await policy({
        subjects: { principals: [agent] },
        resources: [{ type: t, identifier: '*' }],
      });
      const userPolicy = await policy({
        subjects: { principals: [user.id] },
        resources: [{ type: t, identifier: 'shared' }],
      });
      const undelegated = await decision(agent, t, 'shared', { on_behalf_of: user.id });
      expect(undelegated.decision).to.equal('DENY');
      expect(undelegated.reasons.map((r: any) => r.code)).to.deep.equal(['NO_DELEGATION']);
      await world.delegation(user.id, agent);
      const both = await decision(agent, t, 'shared', { on_behalf_of: user.id });
      expect(both.decision).to.equal('ALLOW');
      expect(both.on_behalf_of).to.deep.equal([user.id]);
      expect(both.granted_by).to.deep.equal([agentPolicy.id, userPolicy.id].sort());
      const onlyAgent = await decision(agent, t, 'private', { on_behalf_of: user.id });
      expect(onlyAgent.decision).to.equal('DENY');
      expect(onlyAgent.reasons[0]).to.include({ code: 'DELEGATOR_DENIED', principal_id: user.id });
    });
  });

  describe('conditions', () => {
    it('checks the context: $cidr on the caller address', async () => {
      const p = await principal();
      const t = type();
      await policy({
        subjects: { principals: [p] },
        resources: [{ type: t, identifier: 'x' }],
        conditions: { 'context.ip': { $cidr: ['10.0.0.0/8', '2001:db8::/32'] } },
      });
      expect((await decision(p, t, 'x', { context: { ip: '10.1.2.3' } })).decision).to.equal('ALLOW');
      expect((await decision(p, t, 'x', { context: { ip: '2001:db8::1' } })).decision).to.equal('ALLOW');
      expect((await decision(p, t, 'x', { context: { ip: '192.168.1.1' } })).decision).to.equal('DENY');
    });

    it('compares two attributes with $ref, request resource attributes winning over registered ones', async () => {
      const p = await principal('SERVICE_ACCOUNT', { team: 'payments' });
      const t = type();
      await policy({
        subjects: { principals: [p] },
        resources: [{ type: t, identifier: '*' }],
        conditions: { 'resource.attributes.team': { $ref: 'principal.attributes.team' } },
      });
      expect(
        (await api.put(`/v1/resources/${t}/ledger`, { attributes: { team: 'payments' } })).status,
      ).to.equal(201);
      expect((await api.put(`/v1/resources/${t}/crm`, { attributes: { team: 'sales' } })).status).to.equal(
        201,
      );
      expect((await decision(p, t, 'ledger')).decision).to.equal('ALLOW');
      expect((await decision(p, t, 'crm')).decision).to.equal('DENY');
      expect(
        (
          await decision(p, t, 'crm', {
            resource: { type: t, identifier: 'crm', attributes: { team: 'payments' } },
          })
        ).decision,
      ).to.equal('ALLOW');
    });

    it('treats a missing path as unknown: an allow does not apply, a deny does, and explain names the path', async () => {
      const p = await principal();
      const t = type();
      await policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: '*' }] });
      const deny = await policy({
        effect: 'deny',
        subjects: { principals: [p] },
        resources: [{ type: t, identifier: 'guarded' }],
        conditions: { 'context.risk': { $gt: 50 } },
      });
      expect((await decision(p, t, 'guarded', { context: { risk: 10 } })).decision).to.equal('ALLOW');
      expect((await decision(p, t, 'guarded', { context: { risk: 90 } })).decision).to.equal('DENY');
      const missing = await decision(p, t, 'guarded', { explain: true });
      expect(missing.decision).to.equal('DENY');
      const c = missing.trace.candidates.find((x: any) => x.policy_id === deny.id);
      expect(c.conditions).to.deep.equal([
        { path: 'context.risk', result: 'unknown', missing: ['context.risk'] },
      ]);
      expect(c.applied).to.equal(true);
    });
  });

  describe('batch and records', () => {
    it('answers a batch in order with a summary', async () => {
      const p = await principal();
      const t = type();
      await policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'a' }] });
      const requests = ['a', 'b', 'a'].map((identifier) => ({
        principal_id: p,
        action: 'read',
        resource: { type: t, identifier },
      }));
      const res = await api.post('/v1/decisions/batch', { requests });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.results.map((r: any) => r.decision)).to.deep.equal(['ALLOW', 'DENY', 'ALLOW']);
      expect(res.body.summary).to.deep.equal({ total: 3, allowed: 2, denied: 1 });
    });

    it('refuses a batch of 1,001 requests with a pointer', async () => {
      const requests = Array.from({ length: 1001 }, () => ({
        principal_id: UNKNOWN_PRINCIPAL,
        action: 'read',
        resource: { type: 'db', identifier: 'x' },
      }));
      const res = await api.post('/v1/decisions/batch', { requests });
      expect(res.status).to.equal(400);
      expect(res.body.errors.map((e: any) => e.pointer)).to.include('/requests');
    });

    it('records every decision: readable at once here, and from the database once flushed', async () => {
      const p = await principal();
      const answer = await decision(p, type(), 'x', { context: { ip: '10.0.0.1' } });
      const got = await api.get(`/v1/decisions/${answer.id}`);
      expect(got.status, got.text).to.equal(200);
      expect(got.body).to.deep.include({ id: answer.id, decision: 'DENY', context: { ip: '10.0.0.1' } });
      await app.runtime.engine.log.flush();
      expect(app.runtime.engine.log.pending, 'nothing left in memory').to.equal(0);
      const stored = await api.get(`/v1/decisions/${answer.id}`);
      expect(stored.status, stored.text).to.equal(200);
      expect(stored.body).to.deep.equal(got.body);
      expect((await api.get('/v1/decisions/dec_01JD0000000000000000000000')).status).to.equal(404);
    });

    it('finds a decision by its own id, not by an id its context quotes', async () => {
      const p = await principal();
      const first = await decision(p, type(), 'x');
      const second = await decision(p, type(), 'y', { context: { note: `{"id":"${first.id}"` } });
      for (const flushed of [false, true]) {
        if (flushed) await app.runtime.engine.log.flush();
        const got = await api.get(`/v1/decisions/${first.id}`);
        expect(got.status, got.text).to.equal(200);
        expect(got.body.resource.identifier, flushed ? 'from the database' : 'from memory').to.equal('x');
        expect((await api.get(`/v1/decisions/${second.id}`)).body.context).to.deep.equal({
          note: `{"id":"${first.id}"`,
        });
      }
    });

    it('keeps every one of thousands of decisions, first to last', async () => {
      const p = await principal();
      const t = type();
      const ids: string[] = [];
      for (let round = 0; round < 3; round += 1) {
        const requests = Array.from({ length: 1_000 }, (_, i) => ({
          principal_id: p,
          action: 'read',
          resource: { type: t, identifier: `r-${round}-${i}` },
          context: { padding: 'x'.repeat(400), i },
        }));
        const res = await api.post('/v1/decisions/batch', { requests });
        expect(res.status, res.text).to.equal(200);
        ids.push(...res.body.results.map((r: any) => r.id as string));
      }
      await app.runtime.engine.log.flush();
      for (const at of [0, 1, 999, 1_000, 1_500, 2_998, 2_999]) {
        const got = await api.get(`/v1/decisions/${ids[at]}`);
        expect(got.status, `decision ${at}`).to.equal(200);
        expect(got.body.resource.identifier).to.equal(`r-${Math.floor(at / 1_000)}-${at % 1_000}`);
        expect(got.body.context.i).to.equal(at % 1_000);
      }
    });
  });

  describe('records over time', () => {
    let otherApi: HttpClient;
    // A second instance on the same store.
    const fx2 = useApp({ keepData: true });
    before(() => {
      otherApi = fx2.api;
    });

    it('reach every other instance within a second without anyone asking', async () => {
      const p = await principal();
      const answer = await decision(p, type(), 'x', { context: { ip: '10.9.8.7' } });
      const { value: status } = await eventually(
        async () => (await otherApi.get(`/v1/decisions/${answer.id}`)).status,
        (s) => s === 200,
        1_000,
      );
      expect(status).to.equal(200);
      const got = await otherApi.get(`/v1/decisions/${answer.id}`);
      expect(got.body).to.deep.include({ id: answer.id, principal_id: p, context: { ip: '10.9.8.7' } });
    });

    it('are written before a graceful shutdown ends', async () => {
      const leaving = await startTestApp({ keepData: true, env: { DECISION_FLUSH_INTERVAL_MS: '1000' } });
      let id: string;
      try {
        const res = await (
          await authed(leaving)
        ).post('/v1/decisions/evaluate', {
          principal_id: UNKNOWN_PRINCIPAL,
          action: 'read',
          resource: { type: 'db', identifier: 'x' },
        });
        expect(res.status).to.equal(200);
        id = res.body.id;
        expect(leaving.runtime.engine.log.pending).to.equal(1);
      } finally {
        await leaving.close();
      }
      const got = await api.get(`/v1/decisions/${id}`);
      expect(got.status, got.text).to.equal(200);
      expect(got.body.principal_id).to.equal(UNKNOWN_PRINCIPAL);
    });

    it('are gone after the retention period, whether stored in a batch or on their own', async () => {
      const at = Date.now() - 31 * 86_400_000;
      const old = (n: number) => `dec_${encodeTime(at + n, 10)}${'0'.repeat(16)}`;
      const record = (id: string) => ({
        id,
        decision: 'DENY',
        allowed: false,
        principal_id: UNKNOWN_PRINCIPAL,
        action: 'read',
        resource: { type: 'db', identifier: 'x' },
        reasons: [{ code: 'PRINCIPAL_NOT_FOUND' }],
        granted_by: [],
        evaluated_at: new Date(at).toISOString(),
      });
      const [alone, batched] = [old(0), old(1)];
      const body = gzipSync(`${JSON.stringify(record(batched))}\n`);
      await app.runtime.db.write('test/old_decisions', async (tx) => {
        await tx.run(
          {
            name: 'test/old_decision',
            text: 'CREATE (:Decision {id: $id, principal_id: $p, decision: "DENY", evaluated_at: datetime($at), record: $record})',
          },
          {
            id: alone,
            p: UNKNOWN_PRINCIPAL,
            at: record(alone).evaluated_at,
            record: JSON.stringify(record(alone)),
          },
        );
        await tx.run(
          {
            name: 'test/old_batch',
            text: `CREATE (:DecisionBatch {first_id: $id, last_id: $id, first_at: datetime($at), last_at: datetime($at),
                     count: 1, allowed: 0, encoding: 'jsonl+gzip+base64', body: $body})`,
          },
          {
            id: batched,
            at: record(batched).evaluated_at,
            body: body.toString('base64'),
          },
        );
      });
      for (const id of [alone, batched]) {
        expect(
          (await api.get(`/v1/decisions/${id}`)).status,
          'past retention, even before the purge',
        ).to.equal(404);
      }
      const fresh = await decision(await principal(), type(), 'x');
      await app.runtime.engine.log.flush();
      expect(await app.runtime.engine.log.purge()).to.be.at.least(2);
      const left = await app.runtime.db.run<{ n: number }>(
        {
          name: 'test/old_left',
          text: `OPTIONAL MATCH (d:Decision) WHERE d.id IN $ids WITH count(d) AS nodes
               OPTIONAL MATCH (b:DecisionBatch) WHERE b.first_id IN $ids WITH nodes, count(b) AS batches
               RETURN nodes + batches AS n`,
        },
        { ids: [alone, batched] },
      );
      expect(left[0]!.n, 'both old records removed').to.equal(0);
      expect((await api.get(`/v1/decisions/${fresh.id}`)).status, 'a recent one stays').to.equal(200);
    });
  });

  describe('bad input changes nothing and answers 400 with a pointer', () => {
    const cases: [string, unknown, string][] = [
      [
        'an id of another kind',
        {
          principal_id: 'grp_01JD0000000000000000000000',
          action: 'read',
          resource: { type: 'db', identifier: 'x' },
        },
        '/principal_id',
      ],
      [
        'an unknown field',
        {
          principal_id: UNKNOWN_PRINCIPAL,
          action: 'read',
          resource: { type: 'db', identifier: 'x' },
          user: 'x',
        },
        '/user',
      ],
      [
        'a context that is not an object',
        {
          principal_id: UNKNOWN_PRINCIPAL,
          action: 'read',
          resource: { type: 'db', identifier: 'x' },
          context: 'ip=1',
        },
        '/context',
      ],
      [
        'a wildcard action',
        { principal_id: UNKNOWN_PRINCIPAL, action: '*', resource: { type: 'db', identifier: 'x' } },
        '/action',
      ],
      ['a missing resource', { principal_id: UNKNOWN_PRINCIPAL, action: 'read' }, '/resource'],
    ];
    for (const [what, request, pointer] of cases) {
      it(`refuses ${what}`, async () => {
        const res = await api.post('/v1/decisions/evaluate', request);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(res.body.errors.map((e: any) => e.pointer)).to.include(pointer);
      });
    }
  });

  it('counts evaluate against the decisions bucket and batch against bulk', async () => {
    const request = {
      principal_id: UNKNOWN_PRINCIPAL,
      action: 'read',
      resource: { type: 'db', identifier: 'x' },
    };
    const single = await api.post('/v1/decisions/evaluate', request);
    expect(single.headers.get('ratelimit-policy')).to.match(/^"decisions";q=10000;w=60$/);
    const batch = await api.post('/v1/decisions/batch', { requests: [request] });
    expect(batch.headers.get('ratelimit-policy')).to.match(/^"bulk";q=100;w=60$/);
  });

  it('sees a change made through another instance within a second', async () => {
    const other = await startTestApp({ keepData: true });
    try {
      const otherApi = await authed(other);
      const p = await principal();
      const t = type();
      const created = await otherApi.post('/v1/policies', {
        name: uniq('remote'),
        effect: 'allow',
        subjects: { principals: [p] },
        actions: ['read'],
        resources: [{ type: t, identifier: 'x' }],
      });
      expect(created.status, created.text).to.equal(201);
      await eventually(
        async () => (await decision(p, t, 'x')).decision,
        (d) => d === 'ALLOW',
        1_000,
      );
    } finally {
      await other.close();
    }
  });
});
