import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { ADMIN, authed, createClient } from '../helpers/auth.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import type { HttpClient, HttpResponse } from '../helpers/http.js';
import { insertPrincipal } from '../helpers/principals.js';

const EVALUATION = '/access/v1/evaluation';
const EVALUATIONS = '/access/v1/evaluations';
const SEARCH_SUBJECT = '/access/v1/search/subject';
const SEARCH_RESOURCE = '/access/v1/search/resource';
const SEARCH_ACTION = '/access/v1/search/action';

describe('AuthZEN Authorization API', () => {
  let app: TestApp;
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp({ env: { RATE_LIMIT_BULK: '100000' } });

  before(async () => {
    // Searches and batches count against `bulk`; room for every request of this file.
    app = fx.app;
    api = fx.api;
    world = engineApi(api, uniq);
  });

  const post = async (path: string, body: unknown, status = 200): Promise<HttpResponse> => {
    const res = await api.post(path, body);
    expect(res.status, res.text).to.equal(status);
    return res;
  };
  const evaluate = async (body: Record<string, unknown>): Promise<any> => (await post(EVALUATION, body)).body;
  const ask = (subject: Record<string, unknown>, action: string, rtype: string, id: string, extra = {}) =>
    evaluate({ subject, action: { name: action }, resource: { type: rtype, id }, ...extra });
  const service = (id: string) => ({ type: 'service_account', id });
  const recorded = (id: string): Promise<any> => recordedDecision(api, id);
  const decisionsOf = (body: any): boolean[] => body.evaluations.map((e: any) => e.decision);

  describe('Access Evaluation', () => {
    it('answers the decision a policy makes, with the recorded decision and its reasons', async () => {
      const p = await world.principal();
      const t = type();
      const allow = await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'a' }],
      });
      const yes = await post(EVALUATION, {
        subject: service(p.id),
        action: { name: 'read' },
        resource: { type: t, id: 'a' },
      });
      expect(yes.headers.get('content-type')).to.match(/^application\/json/);
      expect(yes.headers.get('cache-control')).to.equal('no-store');
      expect(yes.body.decision).to.equal(true);
      expect(yes.body.context.id).to.match(/^dec_/);
      expect(yes.body.context.reasons).to.deep.equal([
        { code: 'POLICY_ALLOW', policy_id: allow.id, policy_version: 1 },
      ]);
      const no = await ask(service(p.id), 'read', t, 'b');
      expect(no.decision).to.equal(false);
      expect(no.context.reasons.map((r: any) => r.code)).to.deep.equal(['NO_MATCHING_POLICY']);
      const otherAction = await ask(service(p.id), 'write', t, 'a');
      expect(otherAction.decision).to.equal(false);

      const record = await recorded(yes.body.context.id);
      expect(record).to.include({
        id: yes.body.context.id,
        decision: 'ALLOW',
        principal_id: p.id,
        action: 'read',
      });
      expect(record.resource).to.deep.equal({ type: t, identifier: 'a' });
      expect((await recorded(no.context.id)).decision).to.equal('DENY');
    });

    it('names a principal by id, by connector id, or by email in any case, of a type in any case', async () => {
      const connectorId = uniq('00u').replace(/-/g, '');
      const user = await insertPrincipal(app, { name: uniq('Ada'), connectorId });
      const t = type();
      await world.policy({ subjects: { principals: [user.id] }, resources: [{ type: t, identifier: 'x' }] });
      const subjects = [
        { type: 'user', id: user.id },
        { type: 'USER', id: connectorId },
        { type: 'User', id: user.email!.toUpperCase() },
        { type: 'principal', id: user.email! },
        { type: 'Principal', id: connectorId },
      ];
      for (const subject of subjects) {
        const answer = await ask(subject, 'read', t, 'x');
        expect(answer.decision, JSON.stringify(subject)).to.equal(true);
      }
      const viaEmail = await ask({ type: 'user', id: user.email!.toUpperCase() }, 'read', t, 'x');
      expect((await recorded(viaEmail.context.id)).principal_id).to.equal(user.id);
    });

    it('denies a subject whose type does not fit the principal it names, as not found', async () => {
      const user = await insertPrincipal(app, { name: uniq('Bob') });
      const t = type();
      await world.policy({ subjects: { principals: [user.id] }, resources: [{ type: t, identifier: 'x' }] });
      for (const subjectType of ['ai_agent', 'SERVICE_ACCOUNT', 'spaceship', 'uſer', '']) {
        const answer = await ask({ type: subjectType, id: user.id }, 'read', t, 'x');
        expect(answer.decision, subjectType).to.equal(false);
        expect(
          answer.context.reasons.map((r: any) => r.code),
          subjectType,
        ).to.deep.equal(['PRINCIPAL_NOT_FOUND']);
      }
      const record = await recorded(
        (await ask({ type: 'ai_agent', id: user.id }, 'read', t, 'x')).context.id,
      );
      expect(record).to.include({ decision: 'DENY', principal_id: user.id });
    });

    it('denies an unknown subject (fail closed) and records the decision', async () => {
      const t = type();
      for (const id of ['nobody@example.com', 'prn_01JD0000000000000000000000', '']) {
        const answer = await ask({ type: 'user', id }, 'read', t, 'x');
        expect(answer.decision, id).to.equal(false);
        expect(answer.context.reasons[0].code).to.equal('PRINCIPAL_NOT_FOUND');
      }
      const answer = await ask({ type: 'user', id: 'nobody@example.com' }, 'read', t, 'x');
      const record = await recorded(answer.context.id);
      expect(record).to.include({ decision: 'DENY', principal_id: 'nobody@example.com' });
      expect(record.reasons[0].code).to.equal('PRINCIPAL_NOT_FOUND');
    });

    it('denies resource types, identifiers and actions no policy can name, even under wildcards', async () => {
      const p = await world.principal();
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        actions: ['*'],
        resources: [{ type: t, identifier: '*' }],
      });
      expect((await ask(service(p.id), 'read', t, 'x')).decision).to.equal(true);
      for (const [action, rtype, id] of [
        ['READ', t, 'x'],
        ['GET /x', t, 'x'],
        ['read', t.toUpperCase(), 'x'],
        ['read', t, ''],
        ['read', t, 'x'.repeat(513)],
      ] as const) {
        const answer = await ask(service(p.id), action, rtype, id);
        expect(answer.decision, `${action} ${rtype} ${id.length}`).to.equal(false);
        expect(answer.context.reasons[0].code).to.equal('NO_MATCHING_POLICY');
      }
    });

    it('gives resource properties and the context to conditions', async () => {
      const p = await world.principal();
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: '*' }],
        conditions: { 'resource.attributes.env': 'prod', 'context.ip': { $cidr: '10.0.0.0/8' } },
      });
      const resource = (env: string) => ({ type: t, id: 'db', properties: { env } });
      const request = (env: string, ip: string) => ({
        subject: service(p.id),
        action: { name: 'read' },
        resource: resource(env),
        context: { ip },
      });
      expect((await evaluate(request('prod', '10.1.2.3'))).decision).to.equal(true);
      expect((await evaluate(request('dev', '10.1.2.3'))).decision).to.equal(false);
      expect((await evaluate(request('prod', '192.168.1.1'))).decision).to.equal(false);
      const answer = await evaluate(request('prod', '10.1.2.3'));
      const record = await recorded(answer.context.id);
      expect(record.context).to.deep.equal({ ip: '10.1.2.3' });
      expect(record.resource_attributes).to.deep.equal({ env: 'prod' });
    });

    it('takes identity, in any case, as a subject of any principal type', async () => {
      const p = await world.principal('AI_AGENT');
      const t = type();
      await world.policy({ subjects: { principals: [p.id] }, resources: [{ type: t, identifier: 'x' }] });
      for (const subjectType of ['identity', 'IDENTITY', 'Identity', 'ai_agent', 'principal']) {
        const answer = await ask({ type: subjectType, id: p.id }, 'read', t, 'x');
        expect(answer.decision, subjectType).to.equal(true);
      }
      for (const subjectType of ['identities', 'ident', 'user']) {
        const answer = await ask({ type: subjectType, id: p.id }, 'read', t, 'x');
        expect(answer.decision, subjectType).to.equal(false);
        expect(answer.context.reasons[0].code).to.equal('PRINCIPAL_NOT_FOUND');
      }
    });

    it('takes MCP method names as actions, granted by name or by a `tools/*` prefix', async () => {
      const p = await world.principal();
      const t = type();
      const tools = await world.policy({
        subjects: { principals: [p.id] },
        actions: ['tools/*', 'prompts/get'],
        resources: [{ type: t, identifier: 'server' }],
      });
      for (const [action, allowed] of [
        ['tools/call', true],
        ['tools/list', true],
        ['prompts/get', true],
        ['prompts/list', false],
        ['resources/read', false],
        ['tools', false],
      ] as const) {
        const answer = await ask(service(p.id), action, t, 'server');
        expect(answer.decision, action).to.equal(allowed);
        if (allowed)
          expect(answer.context.reasons).to.deep.equal([
            { code: 'POLICY_ALLOW', policy_id: tools.id, policy_version: 1 },
          ]);
      }
      const answer = await ask(service(p.id), 'tools/call', t, 'server');
      expect((await recorded(answer.context.id)).action).to.equal('tools/call');
      // 128 characters at most, as policies name them.
      const long = `tools/${'x'.repeat(122)}`;
      expect((await ask(service(p.id), long, t, 'server')).decision).to.equal(true);
      const tooLong = await ask(service(p.id), `${long}x`, t, 'server');
      expect(tooLong.decision).to.equal(false);
      expect(tooLong.context.reasons[0].code).to.equal('NO_MATCHING_POLICY');
    });

    it('gives action and subject properties to conditions as claims, and records them', async () => {
      const p = await world.principal('SERVICE_ACCOUNT', { role: 'reader' });
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        actions: ['delete'],
        resources: [{ type: t, identifier: '*' }],
        conditions: { 'action.properties.soft': true, 'subject.properties.role': 'admin' },
      });
      const request = (soft: unknown, role: unknown) => ({
        subject: { ...service(p.id), ...(role === undefined ? {} : { properties: { role } }) },
        action: { name: 'delete', ...(soft === undefined ? {} : { properties: { soft } }) },
        resource: { type: t, id: 'r' },
      });
      expect((await evaluate(request(true, 'admin'))).decision).to.equal(true);
      expect((await evaluate(request(false, 'admin'))).decision).to.equal(false);
      expect((await evaluate(request('true', 'admin'))).decision).to.equal(false);
      expect((await evaluate(request(true, 'reader'))).decision).to.equal(false);
      // The stored attribute is not a claim: without the claim the condition is unknown.
      expect((await evaluate(request(true, undefined))).decision).to.equal(false);
      expect((await evaluate(request(undefined, 'admin'))).decision).to.equal(false);
      const answer = await evaluate(request(true, 'admin'));
      const record = await recorded(answer.context.id);
      expect(record).to.include({ action: 'delete', decision: 'ALLOW', principal_id: p.id });
      expect(record.action_properties).to.deep.equal({ soft: true });
      expect(record.subject_properties).to.deep.equal({ role: 'admin' });
    });

    it('ignores members it does not know, and properties no condition reads', async () => {
      const p = await world.principal();
      const t = type();
      await world.policy({ subjects: { principals: [p.id] }, resources: [{ type: t, identifier: 'x' }] });
      const answer = await evaluate({
        subject: { ...service(p.id), properties: { role: 'admin' }, extra: true },
        action: { name: 'read', properties: { method: 'GET' }, more: [1] },
        resource: { type: t, id: 'x', properties: { nested: { deep: true } }, other: null },
        foo: 'bar',
        futureField: { nested: true },
      });
      expect(answer.decision).to.equal(true);
    });
  });

  describe('Access Evaluations', () => {
    /** A principal allowed `read` on `a` and `c` of a type of its own. */
    const readsAandC = async (): Promise<{ p: string; t: string }> => {
      const p = await world.principal();
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [
          { type: t, identifier: 'a' },
          { type: t, identifier: 'c' },
        ],
      });
      return { p: p.id, t };
    };
    const batch = (p: string, t: string, ids: string[], semantic?: string) => ({
      subject: service(p),
      action: { name: 'read' },
      ...(semantic ? { options: { evaluations_semantic: semantic } } : {}),
      evaluations: ids.map((id) => ({ resource: { type: t, id } })),
    });

    it('answers every evaluation in order by default, the top-level members as defaults, each recorded', async () => {
      const { p, t } = await readsAandC();
      const res = await post(EVALUATIONS, {
        subject: service(p),
        action: { name: 'read' },
        evaluations: [
          { resource: { type: t, id: 'a' } },
          { resource: { type: t, id: 'b' } },
          { resource: { type: t, id: 'c' }, action: { name: 'write' } },
          { resource: { type: t, id: 'c' } },
        ],
      });
      expect(res.body).to.have.all.keys('evaluations');
      expect(decisionsOf(res.body)).to.deep.equal([true, false, false, true]);
      const ids = res.body.evaluations.map((e: any) => e.context.id as string);
      expect(new Set(ids).size).to.equal(4);
      const third = await recorded(ids[2]);
      expect(third).to.include({ principal_id: p, action: 'write', decision: 'DENY' });
      expect(third.resource).to.deep.equal({ type: t, identifier: 'c' });
      const explicit = await post(EVALUATIONS, batch(p, t, ['a', 'b', 'c'], 'execute_all'));
      expect(decisionsOf(explicit.body)).to.deep.equal([true, false, true]);
    });

    it('stops after the first deny with deny_on_first_deny', async () => {
      const { p, t } = await readsAandC();
      const res = await post(EVALUATIONS, batch(p, t, ['a', 'b', 'c'], 'deny_on_first_deny'));
      expect(decisionsOf(res.body)).to.deep.equal([true, false]);
      const allAllowed = await post(EVALUATIONS, batch(p, t, ['a', 'c', 'a'], 'deny_on_first_deny'));
      expect(decisionsOf(allAllowed.body)).to.deep.equal([true, true, true]);
      const firstDenied = await post(EVALUATIONS, batch(p, t, ['b', 'a'], 'deny_on_first_deny'));
      expect(decisionsOf(firstDenied.body)).to.deep.equal([false]);
    });

    it('stops after the first permit with permit_on_first_permit', async () => {
      const { p, t } = await readsAandC();
      const res = await post(EVALUATIONS, batch(p, t, ['b', 'd', 'c', 'a'], 'permit_on_first_permit'));
      expect(decisionsOf(res.body)).to.deep.equal([false, false, true]);
      const noneAllowed = await post(EVALUATIONS, batch(p, t, ['b', 'd'], 'permit_on_first_permit'));
      expect(decisionsOf(noneAllowed.body)).to.deep.equal([false, false]);
      const firstAllowed = await post(EVALUATIONS, batch(p, t, ['a', 'b'], 'permit_on_first_permit'));
      expect(decisionsOf(firstAllowed.body)).to.deep.equal([true]);
    });

    it('merges defaults per member: a given member replaces the default, its missing type or id comes from it', async () => {
      const p = await world.principal();
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: '*' }],
        conditions: { 'resource.attributes.env': 'prod', 'context.zone': 'eu' },
      });
      const res = await post(EVALUATIONS, {
        subject: service(p.id),
        action: { name: 'read' },
        resource: { type: t, properties: { env: 'prod' } },
        context: { zone: 'eu' },
        evaluations: [
          { resource: { id: 'x' } },
          { resource: { id: 'x', properties: { env: 'prod' } } },
          { resource: { id: 'x', properties: { env: 'prod' } }, context: { other: 1 } },
          { resource: { type: t, id: 'y', properties: { env: 'prod' } } },
          { resource: { type: 'elsewhere', id: 'y', properties: { env: 'prod' } } },
        ],
      });
      // 1: the default's properties do not carry over; 3: the context is replaced as a whole.
      expect(decisionsOf(res.body)).to.deep.equal([false, true, false, true, false]);
      const second = await recorded(res.body.evaluations[1].context.id);
      expect(second.resource).to.deep.equal({ type: t, identifier: 'x' });
      expect(second.context).to.deep.equal({ zone: 'eu' });
    });

    it('answers a single decision without evaluations, or with an empty list', async () => {
      const { p, t } = await readsAandC();
      const single = { subject: service(p), action: { name: 'read' }, resource: { type: t, id: 'a' } };
      for (const body of [single, { ...single, evaluations: [] }]) {
        const res = await post(EVALUATIONS, body);
        expect(res.body).to.have.all.keys('decision', 'context');
        expect(res.body.decision).to.equal(true);
        expect(res.body.context.id).to.match(/^dec_/);
      }
    });

    it('denies an evaluation still missing a required member, with an error, and answers the others', async () => {
      const { p, t } = await readsAandC();
      const res = await post(EVALUATIONS, {
        subject: service(p),
        action: { name: 'read' },
        evaluations: [{ resource: { type: t, id: 'a' } }, {}, { resource: { type: t } }],
      });
      expect(decisionsOf(res.body)).to.deep.equal([true, false, false]);
      expect(res.body.evaluations[1].context).to.deep.equal({
        error: { status: 400, message: 'resource is required' },
      });
      expect(res.body.evaluations[2].context.error).to.deep.equal({
        status: 400,
        message: 'resource.id is required',
      });
      // Missing members count as denials for the short-circuiting semantics.
      const stopped = await post(EVALUATIONS, {
        subject: service(p),
        action: { name: 'read' },
        options: { evaluations_semantic: 'deny_on_first_deny' },
        evaluations: [{}, { resource: { type: t, id: 'a' } }],
      });
      expect(decisionsOf(stopped.body)).to.deep.equal([false]);
    });

    it('refuses a single evaluation missing a member, an unknown semantic and too many evaluations (400)', async () => {
      const { p, t } = await readsAandC();
      const noSubject = await post(
        EVALUATIONS,
        { action: { name: 'read' }, resource: { type: t, id: 'a' } },
        400,
      );
      expect(noSubject.headers.get('content-type')).to.match(/^text\/plain/);
      expect(noSubject.text).to.contain('subject');
      const semantic = await post(
        EVALUATIONS,
        { ...batch(p, t, ['a']), options: { evaluations_semantic: 'first_wins' } },
        400,
      );
      expect(semantic.text).to.contain('/options/evaluations_semantic');
      await post(
        EVALUATIONS,
        batch(
          p,
          t,
          Array.from({ length: 1001 }, (_, i) => `r${i}`),
        ),
        400,
      );
    });
  });

  describe('Search APIs', () => {
    /** Three principals of two types allowed `read` on t/x (one through a group), one denied. */
    const readersOfX = async () => {
      const t = type();
      const sa = await world.principal('SERVICE_ACCOUNT');
      const agent = await world.principal('AI_AGENT');
      const member = await world.principal('SERVICE_ACCOUNT');
      const denied = await world.principal('SERVICE_ACCOUNT');
      const g = await world.group();
      await world.addMember(g, member.id);
      await world.policy({
        subjects: { principals: [sa.id, agent.id, denied.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      await world.policy({ subjects: { groups: [g] }, resources: [{ type: t, identifier: '*' }] });
      await world.policy({
        effect: 'deny',
        subjects: { principals: [denied.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      const byName = (a: any, b: any) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1);
      return { t, sa, agent, member, all: [sa, agent, member].sort(byName) };
    };
    const subjectSearch = (subjectType: string, t: string, extra: Record<string, unknown> = {}) =>
      post(SEARCH_SUBJECT, {
        subject: { type: subjectType },
        action: { name: 'read' },
        resource: { type: t, id: 'x' },
        ...extra,
      });

    it('finds the subjects of a type allowed the action on the resource, by name', async () => {
      const { t, all, sa, member } = await readersOfX();
      const everyone = await subjectSearch('principal', t);
      // Principals made through the API have no connector id: their AuthZEN id is their id.
      expect(everyone.body.results).to.deep.equal(all.map((p) => ({ type: 'principal', id: p.id })));
      const identities = await subjectSearch('identity', t);
      expect(identities.body.results).to.deep.equal(all.map((p) => ({ type: 'identity', id: p.id })));
      expect(everyone.body.page).to.deep.equal({ next_token: '', count: 3, total: 3 });
      const accounts = await subjectSearch('service_account', t);
      expect(accounts.body.results.map((r: any) => r.id).sort()).to.deep.equal([sa.id, member.id].sort());
      expect(accounts.body.results.every((r: any) => r.type === 'service_account')).to.equal(true);
      const withId = await subjectSearch('SERVICE_ACCOUNT', t, {
        subject: { type: 'SERVICE_ACCOUNT', id: 'ignored' },
      });
      expect(withId.body.results).to.have.length(2);
      expect((await subjectSearch('spaceship', t)).body.results).to.deep.equal([]);
      expect((await subjectSearch('principal', type())).body.results).to.deep.equal([]);
    });

    it('decides grants that depend on the request with its context', async () => {
      const t = type();
      const always = await world.principal();
      const inEu = await world.principal();
      await world.policy({
        subjects: { principals: [always.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      await world.policy({
        subjects: { principals: [inEu.id] },
        resources: [{ type: t, identifier: 'x' }],
        conditions: { 'context.zone': 'eu' },
      });
      const ids = async (context?: Record<string, unknown>) =>
        (await subjectSearch('principal', t, context ? { context } : {})).body.results
          .map((r: any) => r.id)
          .sort();
      expect(await ids()).to.deep.equal([always.id]);
      expect(await ids({ zone: 'us' })).to.deep.equal([always.id]);
      expect(await ids({ zone: 'eu' })).to.deep.equal([always.id, inEu.id].sort());
    });

    it('pages with opaque tokens, and refuses a token sent with another search', async () => {
      const { t, all } = await readersOfX();
      const first = await subjectSearch('principal', t, { page: { limit: 2 } });
      expect(first.body.results.map((r: any) => r.id)).to.deep.equal(all.slice(0, 2).map((p) => p.id));
      expect(first.body.page.count).to.equal(2);
      expect(first.body.page.total).to.equal(3);
      const token = first.body.page.next_token as string;
      expect(token).to.be.a('string').and.not.equal('');
      const second = await subjectSearch('principal', t, { page: { limit: 2, token } });
      expect(second.body.results.map((r: any) => r.id)).to.deep.equal([all[2]!.id]);
      expect(second.body.page).to.deep.equal({ next_token: '', count: 1, total: 3 });

      const changed = await post(
        SEARCH_SUBJECT,
        {
          subject: { type: 'principal' },
          action: { name: 'write' },
          resource: { type: t, id: 'x' },
          page: { limit: 2, token },
        },
        400,
      );
      expect(changed.text).to.contain('another search');
      // The token carries the page size: it may come alone, and only it may change.
      const alone = await subjectSearch('principal', t, { page: { token } });
      expect(alone.body).to.deep.equal(second.body);
      const otherLimit = await api.post(SEARCH_SUBJECT, {
        subject: { type: 'principal' },
        action: { name: 'read' },
        resource: { type: t, id: 'x' },
        page: { token, limit: 1 },
      });
      expect(otherLimit.status).to.equal(400);
      expect(otherLimit.text).to.contain('/page/limit');
      for (const bad of ['garbage', 'MTIz', `${token}x`]) {
        const res = await api.post(SEARCH_SUBJECT, {
          subject: { type: 'principal' },
          action: { name: 'read' },
          resource: { type: t, id: 'x' },
          page: { limit: 2, token: bad },
        });
        expect(res.status, bad).to.equal(400);
      }
      const countOnly = await subjectSearch('principal', t, { page: { limit: 0 } });
      expect(countOnly.body).to.deep.equal({ page: { next_token: '', count: 0, total: 3 }, results: [] });

      // Page by page, one at a time, each follow-up sending the token alone.
      const seen: string[] = [];
      let page = await subjectSearch('principal', t, { page: { limit: 1 } });
      for (;;) {
        expect(page.body.page.count).to.equal(1);
        seen.push(...page.body.results.map((r: any) => r.id as string));
        const next = page.body.page.next_token as string;
        if (next === '') break;
        page = await subjectSearch('principal', t, { page: { token: next } });
      }
      expect(seen).to.deep.equal(all.map((p) => p.id));
    });

    it('finds the resources of a type the subject may act on, a glob as a pattern', async () => {
      const p = await world.principal();
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        resources: [
          { type: t, identifier: 'r1' },
          { type: t, identifier: 'r2' },
          { type: t, identifier: 'g-*' },
        ],
      });
      await world.policy({
        effect: 'deny',
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'r2' }],
      });
      await world.register(t, 'g-1');
      const res = await post(SEARCH_RESOURCE, {
        subject: service(p.id),
        action: { name: 'read' },
        resource: { type: t },
      });
      expect(res.body.results).to.deep.equal([
        { type: t, id: 'g-*', properties: { pattern: true } },
        { type: t, id: 'g-1' },
        { type: t, id: 'r1' },
      ]);
      const paged = await post(SEARCH_RESOURCE, {
        subject: service(p.id),
        action: { name: 'read' },
        resource: { type: t, id: 'ignored' },
        page: { limit: 1 },
      });
      expect(paged.body.results).to.deep.equal([{ type: t, id: 'g-*', properties: { pattern: true } }]);
      expect(paged.body.page.total).to.equal(3);
      for (const subject of [
        { type: 'user', id: p.id },
        service('nobody'),
        { type: 'spaceship', id: p.id },
      ]) {
        const none = await post(SEARCH_RESOURCE, {
          subject,
          action: { name: 'read' },
          resource: { type: t },
        });
        expect(none.body.results, JSON.stringify(subject)).to.deep.equal([]);
      }
      const write = await post(SEARCH_RESOURCE, {
        subject: service(p.id),
        action: { name: 'write' },
        resource: { type: t },
      });
      expect(write.body.results).to.deep.equal([]);
    });

    it('finds the actions the subject may take on the resource: names, wildcards as patterns', async () => {
      const p = await world.principal();
      const t = type();
      await world.policy({
        subjects: { principals: [p.id] },
        actions: ['read', 'write', 'delete', 'repo:*'],
        resources: [{ type: t, identifier: 'x' }],
      });
      await world.policy({
        effect: 'deny',
        subjects: { principals: [p.id] },
        actions: ['delete', 'repo:purge'],
        resources: [{ type: t, identifier: 'x' }],
      });
      await world.policy({
        subjects: { principals: [p.id] },
        actions: ['admin', 'ops:*'],
        resources: [{ type: t, identifier: 'x' }],
        conditions: { 'context.zone': 'eu' },
      });
      const search = (context?: Record<string, unknown>) =>
        post(SEARCH_ACTION, {
          subject: service(p.id),
          resource: { type: t, id: 'x' },
          ...(context ? { context } : {}),
        });
      const res = await search();
      // `admin` is granted only in the EU; a wildcard depending on the request says so.
      expect(res.body.results).to.deep.equal([
        { name: 'ops:*', properties: { pattern: true, conditional: true } },
        { name: 'read' },
        { name: 'repo:*', properties: { pattern: true, except: ['repo:purge'] } },
        { name: 'write' },
      ]);
      const inEu = await search({ zone: 'eu' });
      expect(inEu.body.results.map((r: any) => r.name)).to.deep.equal([
        'admin',
        'ops:*',
        'read',
        'repo:*',
        'write',
      ]);
      const none = await post(SEARCH_ACTION, { subject: service(p.id), resource: { type: t, id: 'y' } });
      expect(none.body).to.deep.equal({ page: { next_token: '', count: 0, total: 0 }, results: [] });
    });

    it('keeps an AI agent to its allowed tools', async () => {
      const agent = await world.principal('AI_AGENT', { allowed_tools: ['search'] });
      await world.policy({
        subjects: { principals: [agent.id] },
        actions: ['invoke'],
        resources: [{ type: 'tool', identifier: '*' }],
      });
      await world.register('tool', 'search');
      await world.register('tool', 'shell');
      const actionsOn = async (tool: string) =>
        (
          await post(SEARCH_ACTION, {
            subject: { type: 'ai_agent', id: agent.id },
            resource: { type: 'tool', id: tool },
          })
        ).body.results;
      expect(await actionsOn('search')).to.deep.equal([{ name: 'invoke' }]);
      expect(await actionsOn('shell')).to.deep.equal([]);
      const tools = await post(SEARCH_RESOURCE, {
        subject: { type: 'ai_agent', id: agent.id },
        action: { name: 'invoke' },
        resource: { type: 'tool' },
      });
      expect(tools.body.results).to.deep.equal([{ type: 'tool', id: 'search' }]);
    });

    it('refuses a search missing a required member (400)', async () => {
      const t = type();
      const cases: [string, Record<string, unknown>][] = [
        [SEARCH_SUBJECT, { subject: { type: 'user' }, resource: { type: t, id: 'x' } }],
        [SEARCH_SUBJECT, { subject: { type: 'user' }, action: { name: 'read' }, resource: { type: t } }],
        [SEARCH_RESOURCE, { action: { name: 'read' }, resource: { type: t } }],
        [SEARCH_RESOURCE, { subject: { type: 'user' }, action: { name: 'read' }, resource: { type: t } }],
        [SEARCH_ACTION, { subject: { type: 'user', id: 'alice' } }],
        [
          SEARCH_ACTION,
          { subject: { type: 'user', id: 'alice' }, resource: { type: t, id: 'x' }, page: { limit: -1 } },
        ],
      ];
      for (const [path, body] of cases) {
        const res = await api.post(path, body);
        expect(res.status, `${path} ${JSON.stringify(body)}`).to.equal(400);
        expect(res.headers.get('content-type')).to.match(/^text\/plain/);
      }
    });
  });

  describe('Policy Decision Point metadata', () => {
    it('names every endpoint under the public base URL, without a token', async () => {
      const res = await app.http.get('/.well-known/authzen-configuration');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.headers.get('ratelimit-policy')).to.equal(null);
      const base = app.config.publicBaseUrl;
      expect(res.body).to.deep.equal({
        policy_decision_point: base,
        access_evaluation_endpoint: `${base}/access/v1/evaluation`,
        access_evaluations_endpoint: `${base}/access/v1/evaluations`,
        search_subject_endpoint: `${base}/access/v1/search/subject`,
        search_resource_endpoint: `${base}/access/v1/search/resource`,
        search_action_endpoint: `${base}/access/v1/search/action`,
      });
    });
  });

  describe('the HTTPS binding', () => {
    const valid = {
      subject: { type: 'user', id: 'alice' },
      action: { name: 'read' },
      resource: { type: 'db', id: 'x' },
    };

    it('answers a body it cannot read with 400 and an error message', async () => {
      const cases: [string, string, string][] = [
        ['malformed JSON', '{"subject":', 'application/json'],
        ['an empty body', '', 'application/json'],
        ['another media type', JSON.stringify(valid), 'text/plain'],
        ['a JSON array', '[]', 'application/json'],
        [
          'a missing subject',
          JSON.stringify({ action: valid.action, resource: valid.resource }),
          'application/json',
        ],
        ['a subject without id', JSON.stringify({ ...valid, subject: { type: 'user' } }), 'application/json'],
        ['a subject that is a string', JSON.stringify({ ...valid, subject: 'alice' }), 'application/json'],
        [
          'an action name that is a number',
          JSON.stringify({ ...valid, action: { name: 123 } }),
          'application/json',
        ],
        ['a resource without type', JSON.stringify({ ...valid, resource: { id: 'x' } }), 'application/json'],
      ];
      for (const [what, raw, contentType] of cases) {
        const res = await api.post(EVALUATION, undefined, { raw, headers: { 'Content-Type': contentType } });
        expect(res.status, what).to.equal(400);
        expect(res.headers.get('content-type'), what).to.match(/^text\/plain/);
        expect(res.text, what).to.be.a('string').and.not.equal('');
        expect(res.text, what).not.to.match(/^\s*\{/);
      }
      const missing = await api.post(EVALUATION, { action: valid.action, resource: valid.resource });
      expect(missing.text).to.contain('/subject is required');
    });

    it('answers 401 without a valid token and 403 without the scope, with a challenge and a message', async () => {
      for (const path of [EVALUATION, EVALUATIONS, SEARCH_SUBJECT, SEARCH_RESOURCE, SEARCH_ACTION]) {
        const anonymous = await app.http.post(path, valid);
        expect(anonymous.status, path).to.equal(401);
        expect(anonymous.headers.get('www-authenticate'), path).to.match(/^Bearer /);
        expect(anonymous.headers.get('content-type')).to.match(/^text\/plain/);
        expect(anonymous.text).to.not.equal('');
        const forged = await app.http.post(path, valid, { token: 'not-a-token' });
        expect(forged.status, path).to.equal(401);
      }
      const reader = await authed(app, await createClient(app, ['principals:read']));
      const refused = await reader.post(EVALUATION, valid);
      expect(refused.status).to.equal(403);
      expect(refused.headers.get('www-authenticate')).to.contain('scope="decisions:evaluate"');
      expect(refused.headers.get('content-type')).to.match(/^text\/plain/);
      expect(refused.text).to.contain('decisions:evaluate');
      const evaluator = await authed(app, ADMIN, 'decisions:evaluate');
      expect((await evaluator.post(EVALUATION, valid)).status).to.equal(200);
    });

    it('echoes the X-Request-ID the caller sends, whatever its form', async () => {
      for (const id of ['bfe9eb29-ab87-4ca3-be83-a1d5d8305716', 'req 42/ab+c==', '#1']) {
        const ok = await api.post(EVALUATION, valid, { headers: { 'X-Request-ID': id } });
        expect(ok.status).to.equal(200);
        expect(ok.headers.get('x-request-id'), id).to.equal(id);
        const refused = await app.http.post(EVALUATION, valid, { headers: { 'X-Request-ID': id } });
        expect(refused.status).to.equal(401);
        expect(refused.headers.get('x-request-id'), id).to.equal(id);
        const search = await api.post(SEARCH_ACTION, valid, { headers: { 'X-Request-ID': id } });
        expect(search.headers.get('x-request-id'), id).to.equal(id);
      }
      const generated = await api.post(EVALUATION, valid);
      expect(generated.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('counts evaluation against the decisions bucket and the other operations against bulk', async () => {
      const single = await api.post(EVALUATION, valid);
      expect(single.headers.get('ratelimit-policy')).to.match(/^"decisions";q=10000;w=60$/);
      expect(single.headers.get('ratelimit')).to.match(/^"decisions";r=\d+;t=\d+$/);
      for (const path of [EVALUATIONS, SEARCH_SUBJECT, SEARCH_RESOURCE, SEARCH_ACTION]) {
        const res = await api.post(path, { ...valid, subject: { type: 'user', id: 'alice' } });
        expect(res.headers.get('ratelimit-policy'), path).to.match(/^"bulk";q=\d+;w=60$/);
      }
      const refused = await app.http.post(EVALUATION, valid);
      expect(refused.headers.get('ratelimit-policy')).to.match(/^"decisions";/);
    });

    it('documents the operations with plain-text errors', () => {
      const doc = app.server.app.openapi as any;
      const evaluation = doc.paths[EVALUATION].post;
      expect(evaluation['x-required-scope']).to.equal('decisions:evaluate');
      expect(evaluation['x-rate-limit-bucket']).to.equal('decisions');
      for (const status of ['400', '401', '403', '429', '500']) {
        expect(Object.keys(evaluation.responses[status].content), status).to.deep.equal(['text/plain']);
      }
      expect(evaluation.responses).not.to.have.property('415');
      expect(doc.paths['/.well-known/authzen-configuration'].get['x-required-scope']).to.equal(null);
    });
  });
});
