import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';

/**
 * Claims in decisions: the action's name and properties and the subject's properties that an
 * enforcement point sends with a request, which `action.*` and `subject.properties.*` conditions
 * read; and action names that MCP method names fit.
 */
describe('decisions: request claims and action names', () => {
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp({ env: { RATE_LIMIT_BULK: '100000' } });

  before(async () => {
    world = engineApi(fx.api, uniq);
  });

  const evaluate = async (request: Record<string, unknown>): Promise<any> => {
    const res = await fx.api.post('/v1/decisions/evaluate', request);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const recorded = (id: string): Promise<any> => recordedDecision(fx.api, id);
  const policyBody = (fields: Record<string, unknown>) => ({
    name: uniq('policy'),
    effect: 'allow',
    subjects: { principals: ['prn_01JD0000000000000000000000'] },
    actions: ['read'],
    resources: [{ type: 'db', identifier: 'x' }],
    ...fields,
  });

  describe('conditions on claims', () => {
    it('reads action.name, action.properties and subject.properties from the request, never the stored principal', async () => {
      const p = await world.principal('SERVICE_ACCOUNT', { role: 'admin' });
      const t = type();
      const policy = await world.policy({
        subjects: { principals: [p.id] },
        actions: ['read', 'delete'],
        resources: [{ type: t, identifier: '*' }],
        conditions: {
          'action.name': 'delete',
          'action.properties.mode.soft': true,
          'subject.properties.role': { $in: ['admin', 'owner'] },
        },
      });
      const request = (action: unknown, subjectProperties?: Record<string, unknown>) => ({
        principal_id: p.id,
        action,
        resource: { type: t, identifier: 'r' },
        ...(subjectProperties ? { subject_properties: subjectProperties } : {}),
      });
      const allowed = await evaluate(
        request({ name: 'delete', properties: { mode: { soft: true } } }, { role: 'owner' }),
      );
      expect(allowed).to.include({ decision: 'ALLOW', action: 'delete' });
      expect(allowed.granted_by).to.deep.equal([policy.id]);
      for (const [action, claims] of [
        [{ name: 'delete', properties: { mode: { soft: false } } }, { role: 'owner' }],
        [{ name: 'delete', properties: { mode: { soft: true } } }, { role: 'guest' }],
        [{ name: 'read', properties: { mode: { soft: true } } }, { role: 'owner' }],
        // The principal's stored role is admin, but only a claim counts.
        [{ name: 'delete', properties: { mode: { soft: true } } }, undefined],
        ['delete', { role: 'admin' }],
        [{ name: 'delete', properties: { mode: 'soft' } }, { role: 'admin' }],
      ] as const) {
        const answer = await evaluate(request(action, claims));
        expect(answer.decision, JSON.stringify([action, claims])).to.equal('DENY');
        expect(answer.action).to.equal(typeof action === 'string' ? action : action.name);
      }
      const record = await recorded(allowed.id);
      expect(record).to.include({ action: 'delete', decision: 'ALLOW' });
      expect(record.action_properties).to.deep.equal({ mode: { soft: true } });
      expect(record.subject_properties).to.deep.equal({ role: 'owner' });
      const plain = await evaluate(request('read'));
      const plainRecord = await recorded(plain.id);
      expect(plainRecord).to.not.have.any.keys('action_properties', 'subject_properties');
    });

    it('treats a missing claim as unknown: an allow does not apply, a deny does, $exists tests it, and explain names it', async () => {
      const p = await world.principal();
      const t = type();
      const allow = await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: '*' }],
        conditions: { 'subject.properties.clearance': { $gte: 2 } },
      });
      const deny = await world.policy({
        effect: 'deny',
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'secret' }],
        conditions: { 'action.properties.reason': { $ne: 'audit' } },
      });
      const unsigned = await world.policy({
        effect: 'deny',
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'signed' }],
        conditions: { 'action.properties.signature': { $exists: false } },
      });
      const ask = (identifier: string, actionProperties?: Record<string, unknown>, clearance?: unknown) =>
        evaluate({
          principal_id: p.id,
          action: actionProperties ? { name: 'read', properties: actionProperties } : 'read',
          resource: { type: t, identifier },
          ...(clearance === undefined ? {} : { subject_properties: { clearance } }),
          explain: true,
        });
      expect((await ask('open', undefined, 3)).decision).to.equal('ALLOW');
      expect((await ask('open', undefined, 1)).decision).to.equal('DENY');
      const noClaim = await ask('open');
      expect(noClaim.decision).to.equal('DENY');
      const allowTrace = noClaim.trace.candidates.find((c: any) => c.policy_id === allow.id);
      expect(allowTrace.conditions).to.deep.equal([
        {
          path: 'subject.properties.clearance',
          result: 'unknown',
          missing: ['subject.properties.clearance'],
        },
      ]);
      expect(allowTrace.applied).to.equal(false);
      // A wrong type is unknown too.
      expect((await ask('open', undefined, 'high')).decision).to.equal('DENY');

      expect((await ask('secret', { reason: 'audit' }, 3)).decision).to.equal('ALLOW');
      expect((await ask('secret', { reason: 'curious' }, 3)).decision).to.equal('DENY');
      const failClosed = await ask('secret', {}, 3);
      expect(failClosed.decision).to.equal('DENY');
      expect(failClosed.reasons).to.deep.equal([
        { code: 'POLICY_DENY', policy_id: deny.id, policy_version: 1 },
      ]);
      const denyTrace = failClosed.trace.candidates.find((c: any) => c.policy_id === deny.id);
      expect(denyTrace.conditions).to.deep.equal([
        { path: 'action.properties.reason', result: 'unknown', missing: ['action.properties.reason'] },
      ]);
      expect(denyTrace.applied).to.equal(true);

      expect((await ask('signed', { signature: 'abc' }, 3)).decision).to.equal('ALLOW');
      const unsignedAnswer = await ask('signed', undefined, 3);
      expect(unsignedAnswer.reasons).to.deep.equal([
        { code: 'POLICY_DENY', policy_id: unsigned.id, policy_version: 1 },
      ]);
    });

    it('compares claims with stored attributes and the resource through $ref', async () => {
      const p = await world.principal('SERVICE_ACCOUNT', { team: 'payments' });
      const t = type();
      await world.register(t, 'ledger', { team: 'payments' });
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: '*' }],
        conditions: {
          'subject.properties.team': { $ref: 'principal.attributes.team' },
          'resource.attributes.team': { $ref: 'action.properties.on_behalf_of_team' },
        },
      });
      const ask = (team: unknown, onBehalf: unknown) =>
        evaluate({
          principal_id: p.id,
          action: { name: 'read', properties: { on_behalf_of_team: onBehalf } },
          resource: { type: t, identifier: 'ledger' },
          subject_properties: { team },
        });
      expect((await ask('payments', 'payments')).decision).to.equal('ALLOW');
      expect((await ask('research', 'payments')).decision).to.equal('DENY');
      expect((await ask('payments', 'research')).decision).to.equal('DENY');
      expect((await ask('payments', null)).decision).to.equal('DENY');
    });

    it('takes claims in batches and simulations', async () => {
      const p = await world.principal();
      const t = type();
      const policy = await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'x' }],
        conditions: { 'subject.properties.mfa': true },
      });
      const request = (mfa?: boolean) => ({
        principal_id: p.id,
        action: { name: 'read' },
        resource: { type: t, identifier: 'x' },
        ...(mfa === undefined ? {} : { subject_properties: { mfa } }),
      });
      const batch = await fx.api.post('/v1/decisions/batch', {
        requests: [request(true), request(false), request()],
      });
      expect(batch.status, batch.text).to.equal(200);
      expect(batch.body.results.map((r: any) => [r.decision, r.action])).to.deep.equal([
        ['ALLOW', 'read'],
        ['DENY', 'read'],
        ['DENY', 'read'],
      ]);
      const simulated = await fx.api.post(`/v1/policies/${policy.id}/simulate`, {
        policy: {
          name: policy.name,
          effect: 'allow',
          subjects: { principals: [p.id] },
          actions: ['read'],
          resources: [{ type: t, identifier: 'x' }],
          conditions: { 'subject.properties.mfa': { $exists: true } },
        },
        requests: [request(true), request(false), request()],
      });
      expect(simulated.status, simulated.text).to.equal(200);
      expect(simulated.body.results.map((r: any) => [r.current, r.simulated, r.changed])).to.deep.equal([
        ['ALLOW', 'ALLOW', false],
        ['DENY', 'ALLOW', true],
        ['DENY', 'DENY', false],
      ]);
      expect(simulated.body.results[1].request.subject_properties).to.deep.equal({ mfa: false });
    });
  });

  describe('action names', () => {
    it('decides MCP method names, granted by name, by a `/*` or `:*` prefix, or by `*`', async () => {
      const p = await world.principal();
      const t = type();
      const mcp = await world.policy({
        subjects: { principals: [p.id] },
        actions: ['tools/*', 'resources/read', 'repo:*'],
        resources: [{ type: t, identifier: 'server' }],
      });
      const every = await world.policy({
        subjects: { principals: [p.id] },
        actions: ['*'],
        resources: [{ type: t, identifier: 'open' }],
      });
      const ask = (action: string, identifier = 'server') =>
        evaluate({ principal_id: p.id, action, resource: { type: t, identifier } });
      for (const [action, allowed] of [
        ['tools/call', true],
        ['tools/list', true],
        ['tools/call/nested', true],
        ['resources/read', true],
        ['resources/list', false],
        ['repo:push', true],
        ['repo', false],
        ['toolsx/call', false],
      ] as const) {
        const answer = await ask(action);
        expect(answer.decision, action).to.equal(allowed ? 'ALLOW' : 'DENY');
        expect(answer.action).to.equal(action);
        if (allowed) expect(answer.granted_by, action).to.deep.equal([mcp.id]);
      }
      expect((await ask('notifications/initialized', 'open')).granted_by).to.deep.equal([every.id]);
      const access = await fx.api.get(
        `/v1/principals/${p.id}/access?action=${encodeURIComponent('tools/call')}`,
      );
      expect(access.status, access.text).to.equal(200);
      expect(access.body.access.map((e: any) => e.resource.identifier).sort()).to.deep.equal([
        'open',
        'server',
      ]);
      const who = await fx.api.get(
        `/v1/resources/access?type=${t}&identifier=server&action=${encodeURIComponent('tools/list')}`,
      );
      expect(who.body.principals.map((r: any) => r.principal.id)).to.deep.equal([p.id]);
    });

    it('takes action names of up to 128 characters and refuses others', async () => {
      const p = await world.principal();
      const longest = `a${'/b'.repeat(63)}c`;
      expect(longest).to.have.length(128);
      const ok = await fx.api.post('/v1/decisions/evaluate', {
        principal_id: p.id,
        action: longest,
        resource: { type: 'db', identifier: 'x' },
      });
      expect(ok.status, ok.text).to.equal(200);
      for (const action of [`${longest}d`, 'Tools/call', '/tools', 'tools call', '*', 'tools/*']) {
        for (const shape of [action, { name: action }]) {
          const res = await fx.api.post('/v1/decisions/evaluate', {
            principal_id: p.id,
            action: shape,
            resource: { type: 'db', identifier: 'x' },
          });
          expect(res.status, `${JSON.stringify(shape)}: ${res.text}`).to.equal(400);
          expect(res.body.errors.map((e: any) => e.pointer)).to.include(
            typeof shape === 'string' ? '/action' : '/action/name',
          );
        }
      }
      const extra = await fx.api.post('/v1/decisions/evaluate', {
        principal_id: p.id,
        action: { name: 'read', verb: 'GET' },
        resource: { type: 'db', identifier: 'x' },
      });
      expect(extra.status).to.equal(400);
    });
  });

  describe('policies naming them', () => {
    const accepted: [string, Record<string, unknown>][] = [
      ['MCP method names and prefixes', { actions: ['tools/call', 'tools/*', 'repo:*', 'a:b/c-d_e.f'] }],
      [
        'conditions on claims',
        {
          conditions: {
            'action.name': { $in: ['read', 'tools/call'] },
            'action.properties.soft': true,
            'action.properties.scope.level': { $lte: 3 },
            'subject.properties.role': { $ref: 'principal.attributes.role' },
            'resource.attributes.owner': { $ref: 'subject.properties.user_id' },
            'context.ip': { $cidr: '10.0.0.0/8' },
          },
        },
      ],
    ];
    for (const [what, fields] of accepted) {
      it(`accepts ${what}`, async () => {
        const res = await fx.api.post('/v1/policies', policyBody(fields));
        expect(res.status, res.text).to.equal(201);
        const got = await fx.api.get(`/v1/policies/${res.body.id}`);
        for (const [key, value] of Object.entries(fields)) expect(got.body[key]).to.deep.equal(value);
      });
    }

    const refused: [string, Record<string, unknown>, string][] = [
      ['a wildcard not ending a prefix with : or /', { actions: ['re*'] }, '/actions/0'],
      ['a wildcard after a dash', { actions: ['tools-*'] }, '/actions/0'],
      ['an action of 129 characters', { actions: [`a${'b'.repeat(128)}`] }, '/actions/0'],
      ['an action with a space', { actions: ['tools call'] }, '/actions/0'],
      [
        'a claim path without a key',
        { conditions: { 'subject.properties': 'x' } },
        '/conditions/subject.properties',
      ],
      ['a stored field under subject', { conditions: { 'subject.name': 'x' } }, '/conditions/subject.name'],
      ['an action path of another kind', { conditions: { 'action.type': 'x' } }, '/conditions/action.type'],
      [
        'an empty segment in a claim path',
        { conditions: { 'action.properties.a..b': 1 } },
        '/conditions/action.properties.a..b',
      ],
      [
        'a $ref to an unknown claim path',
        { conditions: { 'resource.attributes.owner': { $ref: 'subject.id' } } },
        '/conditions/resource.attributes.owner/$ref',
      ],
      [
        'a $ref to a claim path of another root',
        { conditions: { 'resource.attributes.owner': { $ref: 'action.properties' } } },
        '/conditions/resource.attributes.owner/$ref',
      ],
      [
        'an action name no request can have',
        { conditions: { 'action.name': 'Read' } },
        '/conditions/action.name',
      ],
      [
        'an action name list with one no request can have',
        { conditions: { 'action.name': { $in: ['read', 'tools/*'] } } },
        '/conditions/action.name/$in/1',
      ],
    ];
    for (const [what, fields, pointer] of refused) {
      it(`refuses ${what}`, async () => {
        const res = await fx.api.post('/v1/policies', policyBody(fields));
        expect(res.status, res.text).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(res.body.errors.map((e: any) => e.pointer)).to.include(pointer);
      });
    }
  });
});
