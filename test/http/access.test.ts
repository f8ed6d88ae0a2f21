import { expect } from 'chai';
import { loadMigrations, migrate } from '../../src/db/migrations.js';
import { useApp } from '../helpers/fixture.js';
import { engineApi, namer } from '../helpers/engine.js';
import { clockPast } from '../helpers/wait.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('who can reach what', () => {
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp();

  before(async () => {
    world = engineApi(fx.api, uniq);
  });

  const principal = (type = 'SERVICE_ACCOUNT', attributes: Record<string, unknown> = {}): Promise<any> =>
    world.principal(type, attributes);
  const group = (): Promise<string> => world.group();
  const addMember = (groupId: string, memberId: string): Promise<void> => world.addMember(groupId, memberId);
  const policy = (fields: Record<string, unknown>): Promise<any> => world.policy(fields);
  const register = (
    rtype: string,
    identifier: string,
    attributes: Record<string, unknown> = {},
  ): Promise<void> => world.register(rtype, identifier, attributes);
  const accessOf = async (id: string, query = ''): Promise<any> => {
    const res = await fx.api.get(`/v1/principals/${id}/access${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  describe('the access of a principal', () => {
    it('lists each resource once with the union of its allowed actions, less what a deny removes', async () => {
      const p = await principal();
      const g = await group();
      await addMember(g, p.id);
      const t = type();
      const direct = await policy({
        subjects: { principals: [p.id] },
        actions: ['read', 'write'],
        resources: [{ type: t, identifier: 'ledger' }],
      });
      const viaGroup = await policy({
        subjects: { groups: [g] },
        actions: ['query'],
        resources: [
          { type: t, identifier: 'ledger' },
          { type: t, identifier: 'crm' },
        ],
      });
      await policy({
        effect: 'deny',
        subjects: { principals: [p.id] },
        actions: ['write'],
        resources: [{ type: t, identifier: 'ledger' }],
      });
      const body = await accessOf(p.id, `?resource_type=${t}`);
      expect(body.principal_id).to.equal(p.id);
      expect(body.total_resources).to.equal(2);
      expect(
        body.access.map((e: any) => [e.resource.identifier, e.actions, e.granted_by, e.conditional]),
      ).to.deep.equal([
        ['crm', ['query'], [viaGroup.id], false],
        ['ledger', ['query', 'read'], [direct.id, viaGroup.id].sort(), false],
      ]);
      for (const entry of body.access) expect(entry.granted_at).to.match(ISO);
    });

    it('lists a glob as its own pattern entry and every registered resource it matches', async () => {
      const p = await principal();
      const t = type();
      await register(t, 'payments-prod-1');
      await register(t, 'payments-dev-1');
      const glob = await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'payments-prod-*' }],
      });
      const body = await accessOf(p.id, `?resource_type=${t}`);
      expect(
        body.access.map((e: any) => [e.resource.identifier, e.pattern ?? false, e.granted_by]),
      ).to.deep.equal([
        ['payments-prod-*', true, [glob.id]],
        ['payments-prod-1', false, [glob.id]],
      ]);
    });

    it('marks entries that depend on the request as conditional, and filters by action', async () => {
      const p = await principal();
      const t = type();
      await policy({
        subjects: { principals: [p.id] },
        actions: ['read'],
        resources: [{ type: t, identifier: 'a' }],
      });
      await policy({
        subjects: { principals: [p.id] },
        actions: ['write'],
        resources: [{ type: t, identifier: 'b' }],
        conditions: { 'context.ip': { $cidr: '10.0.0.0/8' } },
      });
      const body = await accessOf(p.id, `?resource_type=${t}`);
      expect(body.access.map((e: any) => [e.resource.identifier, e.conditional])).to.deep.equal([
        ['a', false],
        ['b', true],
      ]);
      const writers = await accessOf(p.id, `?resource_type=${t}&action=write`);
      expect(writers.access.map((e: any) => e.resource.identifier)).to.deep.equal(['b']);
    });

    it('dates a group grant from the later of the policy activation and the membership', async () => {
      const p = await principal();
      const g = await group();
      const t = type();
      const allow = await policy({ subjects: { groups: [g] }, resources: [{ type: t, identifier: 'x' }] });
      // The membership comes later than the activation, by its timestamp too.
      await clockPast(allow.activated_at);
      await addMember(g, p.id);
      const [entry] = (await accessOf(p.id, `?resource_type=${t}`)).access;
      expect(entry.granted_by).to.deep.equal([allow.id]);
      expect(Date.parse(entry.granted_at)).to.be.greaterThan(Date.parse(allow.activated_at));
    });

    it('dates each grant from the index as the walk of the graph does, over nested memberships that began apart', async () => {
      // Each step is dated after the one before it: the clock moves past the moment it was done.
      const later = () => clockPast(new Date().toISOString());
      const t = type();
      const outer = await group();
      const inner = await group();
      const grantOuter = await policy({
        subjects: { groups: [outer] },
        resources: [{ type: t, identifier: 'a' }],
      });
      await later();
      await addMember(outer, inner);
      await later();
      const p = await principal();
      const other = await principal();
      await later();
      await addMember(inner, p.id);
      await later();
      // A second path to the outer group, which begins later than the first: the first dates it.
      await addMember(outer, p.id);
      await later();
      await addMember(outer, other.id);
      await later();
      // A principal named later, by a policy already through a group: the earlier way dates it.
      const both = await policy({ subjects: { groups: [inner] }, resources: [{ type: t, identifier: 'b' }] });
      await later();
      const res = await fx.api.put(`/v1/policies/${both.id}`, {
        name: both.name,
        effect: 'allow',
        subjects: { groups: [inner], principals: [p.id, other.id] },
        actions: ['read'],
        resources: [{ type: t, identifier: 'b' }],
      });
      expect(res.status, res.text).to.equal(200);
      const { access } = fx.app.runtime.services;
      for (const id of [p.id, other.id]) {
        const listed = (await accessOf(id)).access;
        const walked = (await access.walkedAccess(id))!.map((e) => ({
          ...e,
          granted_at: e.granted_at ?? '',
        }));
        expect(listed, id).to.deep.equal(walked);
      }
      const mine = (await accessOf(p.id, `?resource_type=${t}`)).access;
      const theirs = (await accessOf(other.id, `?resource_type=${t}`)).access;
      // Through the inner group: from when p joined it, after the policy and the nesting.
      const a = mine.find((e: any) => e.resource.identifier === 'a');
      expect(Date.parse(a.granted_at)).to.be.greaterThan(Date.parse(grantOuter.activated_at));
      expect(Date.parse(a.granted_at)).to.be.lessThan(
        Date.parse(theirs.find((e: any) => e.resource.identifier === 'a').granted_at),
      );
      // Through the group since the policy was made, not since the principal was named.
      const b = mine.find((e: any) => e.resource.identifier === 'b');
      expect(b.granted_at).to.equal(both.activated_at);
      expect(Date.parse(theirs.find((e: any) => e.resource.identifier === 'b').granted_at)).to.be.greaterThan(
        Date.parse(both.activated_at),
      );
    });

    it('paginates when asked, and gives nothing to a suspended principal', async () => {
      const p = await principal();
      const t = type();
      await policy({
        subjects: { principals: [p.id] },
        resources: ['a', 'b', 'c'].map((identifier) => ({ type: t, identifier })),
      });
      const page = await accessOf(p.id, `?resource_type=${t}&page=2&limit=2`);
      expect(page.access.map((e: any) => e.resource.identifier)).to.deep.equal(['c']);
      expect(page.pagination).to.deep.equal({ total: 3, page: 2, per_page: 2, pages: 2 });
      expect((await fx.api.patch(`/v1/principals/${p.id}`, { status: 'suspended' })).status).to.equal(200);
      const none = await accessOf(p.id);
      expect(none).to.deep.equal({ principal_id: p.id, access: [], total_resources: 0 });
    });

    it('answers 404 for an unknown principal', async () => {
      expect((await fx.api.get('/v1/principals/prn_01JD0000000000000000000000/access')).status).to.equal(404);
    });

    it('shows an agent limited to some tools the allowed tools a tool glob covers, not the glob', async () => {
      const agent = await principal('AI_AGENT', { allowed_tools: ['search', 'calc'] });
      const allow = await policy({
        subjects: { principals: [agent.id] },
        actions: ['invoke'],
        resources: [{ type: 'tool', identifier: 's*' }],
      });
      const body = await accessOf(agent.id, '?resource_type=tool');
      expect(
        body.access.map((e: any) => [e.resource.identifier, e.pattern ?? false, e.granted_by]),
      ).to.deep.equal([['search', false, [allow.id]]]);
    });

    it('decides conditions that read only the principal, so that only the request leaves an entry conditional', async () => {
      const p = await principal('SERVICE_ACCOUNT', { environment: 'prod' });
      const t = type();
      await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'holds' }],
        conditions: { 'principal.attributes.environment': 'prod' },
      });
      await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'fails' }],
        conditions: { 'principal.attributes.environment': 'dev' },
      });
      await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'depends' }],
        conditions: { 'principal.attributes.environment': 'prod', 'context.ip': { $cidr: '10.0.0.0/8' } },
      });
      const body = await accessOf(p.id, `?resource_type=${t}`);
      expect(body.access.map((e: any) => [e.resource.identifier, e.conditional])).to.deep.equal([
        ['depends', true],
        ['holds', false],
      ]);
    });

    it('dates a grant from when a replaced policy came to name the principal', async () => {
      const [a, b] = [await principal(), await principal()];
      const t = type();
      const allow = await policy({
        subjects: { principals: [a.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      // The replacement comes later than the activation, by its timestamp too.
      await clockPast(allow.activated_at);
      const replaced = await fx.api.put(`/v1/policies/${allow.id}`, {
        name: allow.name,
        effect: 'allow',
        subjects: { principals: [a.id, b.id] },
        actions: ['read'],
        resources: [{ type: t, identifier: 'x' }],
      });
      expect(replaced.status, replaced.text).to.equal(200);
      expect(Date.parse(replaced.body.updated_at)).to.be.greaterThan(Date.parse(allow.activated_at));
      const [forA] = (await accessOf(a.id, `?resource_type=${t}`)).access;
      const [forB] = (await accessOf(b.id, `?resource_type=${t}`)).access;
      expect(forA.granted_at).to.equal(allow.activated_at);
      expect(Date.parse(forB.granted_at)).to.be.at.least(Date.parse(replaced.body.updated_at));
    });

    it('includes what a match subject grants', async () => {
      const p = await principal('AI_AGENT', { team: uniq('team'), allowed_tools: ['*'] });
      const t = type();
      const byMatch = await policy({
        subjects: { match: { type: 'AI_AGENT', attributes: { team: p.attributes.team } } },
        resources: [{ type: t, identifier: 'x' }],
      });
      const body = await accessOf(p.id, `?resource_type=${t}`);
      expect(body.access.map((e: any) => e.granted_by)).to.deep.equal([[byMatch.id]]);
    });

    it('matches a glob built to make a regular expression backtrack, promptly and exactly', async function () {
      this.timeout(60_000);
      const p = await principal();
      const t = type();
      const hostile = '*a*a*a*a*a*a*a*a*a*a*b';
      const match = `${'a'.repeat(499)}b`;
      await register(t, 'a'.repeat(500));
      await register(t, match);
      await register(t, `b${'a'.repeat(499)}`);
      const glob = await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: hostile }],
      });
      const started = Date.now();
      const body = await accessOf(p.id, `?resource_type=${t}`);
      // A regular expression on this pattern and identifier would run for hours.
      expect(Date.now() - started, 'answered without backtracking').to.be.below(10_000);
      expect(
        body.access.map((e: any) => [e.resource.identifier, e.pattern ?? false, e.granted_by]),
      ).to.deep.equal([
        [hostile, true, [glob.id]],
        [match, false, [glob.id]],
      ]);
      for (const [identifier, decision] of [
        ['a'.repeat(500), 'DENY'],
        [match, 'ALLOW'],
      ]) {
        const decided = await fx.api.post('/v1/decisions/evaluate', {
          principal_id: p.id,
          action: 'read',
          resource: { type: t, identifier },
        });
        expect(decided.status, decided.text).to.equal(200);
        expect(decided.body.decision).to.equal(decision);
      }
      // Reading the access changed nothing: the policy is as written.
      const stored = await fx.api.get(`/v1/policies/${glob.id}`);
      expect(stored.body.resources).to.deep.equal([{ type: t, identifier: hostile }]);
      expect(stored.body.version).to.equal(1);
    });

    it('drops the regular expressions policies stored for their globs before', async () => {
      const p = await principal();
      const t = type();
      await register(t, 'm-1');
      const glob = await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'm-*' }],
      });
      const { db } = fx.app.runtime;
      const keys = async (): Promise<string[]> =>
        (await db.first<{ keys: string[] }>(
          { name: 'test/policy_keys', text: 'MATCH (pol:Policy {id: $id}) RETURN keys(pol) AS keys' },
          { id: glob.id },
        ))!.keys;
      expect(await keys()).to.not.include('glob_regexes');
      // A policy as an earlier release wrote it, on a store that has not yet seen the migration.
      await db.write('test/legacy_policy', async (tx) => {
        await tx.run(
          {
            name: 'test/legacy_policy',
            text: "MATCH (pol:Policy {id: $id}) SET pol.glob_regexes = ['(?s)m-.*']",
          },
          { id: glob.id },
        );
        await tx.run({
          name: 'test/forget_migration',
          text: 'MATCH (m:SchemaMigration {version: 11}) DELETE m',
        });
      });
      expect(await migrate(db, await loadMigrations())).to.deep.equal([11]);
      expect(await keys()).to.not.include('glob_regexes');
      expect(
        (await accessOf(p.id, `?resource_type=${t}`)).access.map((e: any) => e.resource.identifier),
      ).to.deep.equal(['m-*', 'm-1']);
      const stored = await fx.api.get(`/v1/policies/${glob.id}`);
      expect(stored.body.resources).to.deep.equal([{ type: t, identifier: 'm-*' }]);
    });

    it('keeps a glob’s literal runs in order and apart', async () => {
      const p = await principal();
      const t = type();
      // Each of these holds every run of the glob; only the first holds them in order, apart.
      for (const identifier of ['x-ab-ba-y', 'x-ba-ab-y', 'x-aba-y', 'x-ab-y', 'x-y']) {
        await register(t, identifier);
      }
      const glob = await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'x-*ab*ba*-y' }],
      });
      const body = await accessOf(p.id, `?resource_type=${t}`);
      expect(body.access.map((e: any) => [e.resource.identifier, e.pattern ?? false])).to.deep.equal([
        ['x-*ab*ba*-y', true],
        ['x-ab-ba-y', false],
      ]);
      expect(body.access[1].granted_by).to.deep.equal([glob.id]);
    });
  });

  describe('explained access', () => {
    const namedGroup = async (): Promise<{ id: string; name: string }> => {
      const name = uniq('g');
      const res = await fx.api.post('/v1/groups', { name });
      expect(res.status, res.text).to.equal(201);
      return { id: res.body.id as string, name };
    };

    it('says with explain=true how each policy reaches the principal, with the path of a group grant', async () => {
      const p = await principal('AI_AGENT', { team: uniq('team'), allowed_tools: ['*'] });
      const [outer, middle, inner] = [await namedGroup(), await namedGroup(), await namedGroup()];
      await addMember(outer.id, middle.id);
      await addMember(middle.id, inner.id);
      await addMember(inner.id, p.id);
      const t = type();
      const direct = await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      const nested = await policy({
        subjects: { groups: [outer.id] },
        resources: [
          { type: t, identifier: 'x' },
          { type: t, identifier: 'y' },
        ],
      });
      const byMatch = await policy({
        subjects: { match: { type: 'AI_AGENT', attributes: { team: p.attributes.team } } },
        resources: [{ type: t, identifier: 'z' }],
      });
      const path = [
        { id: p.id, name: p.name, type: 'AI_AGENT' },
        ...[inner, middle, outer].map((g) => ({ id: g.id, name: g.name, type: 'GROUP' })),
      ];
      const expected: Record<string, unknown> = {
        [direct.id]: { policy_id: direct.id, policy_name: direct.name, via: 'principal' },
        [nested.id]: { policy_id: nested.id, policy_name: nested.name, via: 'group', path },
        [byMatch.id]: { policy_id: byMatch.id, policy_name: byMatch.name, via: 'match' },
      };
      const body = await accessOf(p.id, `?resource_type=${t}&explain=true`);
      expect(body.access.map((e: any) => [e.resource.identifier, e.granted_by])).to.deep.equal([
        ['x', [direct.id, nested.id].sort()],
        ['y', [nested.id]],
        ['z', [byMatch.id]],
      ]);
      for (const entry of body.access) {
        expect(entry.grants, entry.resource.identifier).to.deep.equal(
          entry.granted_by.map((id: string) => expected[id]),
        );
      }
      // The same path as the decision trace names.
      const res = await fx.api.post('/v1/decisions/evaluate', {
        principal_id: p.id,
        action: 'read',
        resource: { type: t, identifier: 'y' },
        explain: true,
      });
      expect(res.status, res.text).to.equal(200);
      const candidate = res.body.trace.candidates.find((c: any) => c.policy_id === nested.id);
      expect(candidate.subject.path).to.deep.equal(path);
    });

    it('leaves grants out unless asked, and refuses a malformed explain', async () => {
      const p = await principal();
      const t = type();
      await policy({ subjects: { principals: [p.id] }, resources: [{ type: t, identifier: 'x' }] });
      const plain = await fx.api.get(`/v1/principals/${p.id}/access?resource_type=${t}`);
      expect(plain.status, plain.text).to.equal(200);
      expect(plain.body.access[0]).not.to.have.property('grants');
      const no = await fx.api.get(`/v1/principals/${p.id}/access?resource_type=${t}&explain=false`);
      expect(no.text).to.equal(plain.text);
      const paged = await accessOf(p.id, `?resource_type=${t}&explain=true&limit=1`);
      expect(paged.access[0].grants.map((g: any) => g.via)).to.deep.equal(['principal']);
      expect(paged.pagination.total).to.equal(1);
      for (const bad of ['banana', 'TRUE', '1', '']) {
        const res = await fx.api.get(`/v1/principals/${p.id}/access?explain=${bad}`);
        expect(res.status, bad).to.equal(400);
        expect(res.body.errors[0].pointer, bad).to.equal('/query/explain');
      }
    });

    it('still explains from the graph a grant the decision index has yet to learn of', async () => {
      const p = await principal();
      const g = await namedGroup();
      await addMember(g.id, p.id);
      const t = type();
      const direct = await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      const viaGroup = await policy({
        subjects: { groups: [g.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      // As on an instance that has not yet heard of the principal.
      const { index } = fx.app.runtime.engine;
      const known = index.principals.get(p.id)!;
      index.putPrincipal(p.id, undefined);
      try {
        const [entry] = (await accessOf(p.id, `?resource_type=${t}&explain=true`)).access;
        expect(entry.grants).to.deep.equal(
          entry.granted_by.map((id: string) =>
            id === direct.id
              ? { policy_id: direct.id, policy_name: direct.name, via: 'principal' }
              : { policy_id: viaGroup.id, policy_name: viaGroup.name, via: 'group' },
          ),
        );
      } finally {
        index.putPrincipal(p.id, known);
      }
    });
  });

  describe('who can access a resource', () => {
    it('lists every active principal with access, through which policies, by name', async () => {
      const a = await principal();
      const b = await principal();
      const c = await principal();
      const g = await group();
      await addMember(g, b.id);
      await addMember(g, c.id);
      const t = type();
      const direct = await policy({
        subjects: { principals: [a.id] },
        actions: ['read', 'write'],
        resources: [{ type: t, identifier: 'x' }],
      });
      const viaGroup = await policy({
        subjects: { groups: [g] },
        resources: [{ type: t, identifier: 'x*' }],
      });
      await policy({
        effect: 'deny',
        subjects: { principals: [c.id] },
        actions: ['*'],
        resources: [{ type: t, identifier: 'x' }],
      });
      const res = await fx.api.get(`/v1/resources/access?type=${t}&identifier=x`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.resource).to.deep.equal({ type: t, identifier: 'x', registered: false });
      const rows = res.body.principals.map((r: any) => [r.principal.id, r.actions, r.granted_by]);
      const expected = [
        [a.id, ['read', 'write'], [direct.id]],
        [b.id, ['read'], [viaGroup.id]],
      ].sort((x, y) => {
        const nx = x[0] === a.id ? a.name : b.name;
        const ny = y[0] === a.id ? a.name : b.name;
        return nx < ny ? -1 : 1;
      });
      expect(rows).to.deep.equal(expected);
      expect(res.body.pagination.total).to.equal(2);
      const writers = await fx.api.get(`/v1/resources/access?type=${t}&identifier=x&action=write`);
      expect(writers.body.principals.map((r: any) => r.principal.id)).to.deep.equal([a.id]);
    });

    it('refuses a request without type or identifier', async () => {
      const res = await fx.api.get('/v1/resources/access?type=db');
      expect(res.status).to.equal(400);
      expect(res.body.errors.map((e: any) => e.pointer)).to.include('/query/identifier');
    });
  });

  describe('simulation', () => {
    it('shows the blast radius of a change as access gained and lost per principal, writing nothing', async () => {
      const a = await principal();
      const b = await principal();
      const t = type();
      const current = await policy({
        subjects: { principals: [a.id] },
        actions: ['read'],
        resources: [{ type: t, identifier: 'x' }],
      });
      const proposed = {
        name: current.name,
        effect: 'allow',
        subjects: { principals: [b.id] },
        actions: ['read', 'write'],
        resources: [{ type: t, identifier: 'x' }],
      };
      const res = await fx.api.post(`/v1/policies/${current.id}/simulate`, { policy: proposed });
      expect(res.status, res.text).to.equal(200);
      const changes = res.body.access_changes.map((c: any) => [
        c.principal_id,
        c.resource.identifier,
        c.gained,
        c.lost,
      ]);
      expect(changes).to.have.deep.members([
        [a.id, 'x', [], ['read']],
        [b.id, 'x', ['read', 'write'], []],
      ]);
      expect(res.body.summary).to.deep.equal({
        evaluated: 2,
        changed: 2,
        newly_allowed: 1,
        newly_denied: 1,
        principals_affected: 2,
      });
      const after = await fx.api.get(`/v1/policies/${current.id}`);
      expect(after.body.version).to.equal(1);
      const still = await fx.api.post('/v1/decisions/evaluate', {
        principal_id: a.id,
        action: 'read',
        resource: { type: t, identifier: 'x' },
      });
      expect(still.body.decision).to.equal('ALLOW');
    });

    it('decides given requests with the policy as stored and as proposed', async () => {
      const a = await principal();
      const t = type();
      const current = await policy({
        subjects: { principals: [a.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      const requests = [
        { principal_id: a.id, action: 'read', resource: { type: t, identifier: 'x' } },
        { principal_id: a.id, action: 'read', resource: { type: t, identifier: 'y' } },
      ];
      const res = await fx.api.post(`/v1/policies/${current.id}/simulate`, { delete: true, requests });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.results.map((r: any) => [r.current, r.simulated, r.changed])).to.deep.equal([
        ['ALLOW', 'DENY', true],
        ['DENY', 'DENY', false],
      ]);
      expect(res.body.summary).to.deep.equal({
        evaluated: 2,
        changed: 1,
        newly_allowed: 0,
        newly_denied: 1,
        principals_affected: 1,
      });
    });

    it('shows what activating a draft would grant', async () => {
      const a = await principal();
      const t = type();
      const draft = await policy({
        status: 'draft',
        subjects: { principals: [a.id] },
        resources: [{ type: t, identifier: 'x' }],
      });
      const res = await fx.api.post(`/v1/policies/${draft.id}/simulate`, {});
      expect(res.status, res.text).to.equal(200);
      expect(res.body.access_changes.map((c: any) => [c.principal_id, c.gained])).to.deep.equal([
        [a.id, ['read']],
      ]);
    });

    it('shows what creating a policy would grant or take away, creating nothing', async () => {
      const a = await principal();
      const b = await principal();
      const t = type();
      await policy({ subjects: { principals: [a.id] }, resources: [{ type: t, identifier: 'x' }] });
      const name = uniq('not-yet');
      const allow = {
        name,
        effect: 'allow',
        subjects: { principals: [b.id] },
        actions: ['read', 'write'],
        resources: [{ type: t, identifier: 'x' }],
      };
      const res = await fx.api.post('/v1/policies/simulate', { policy: allow });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.not.have.property('policy_id');
      expect(res.body.access_changes.map((c: any) => [c.principal_id, c.gained, c.lost])).to.deep.equal([
        [b.id, ['read', 'write'], []],
      ]);
      const deny = { ...allow, effect: 'deny', subjects: { principals: [a.id, b.id] }, actions: ['read'] };
      const denied = await fx.api.post('/v1/policies/simulate', {
        policy: deny,
        requests: [{ principal_id: a.id, action: 'read', resource: { type: t, identifier: 'x' } }],
      });
      expect(denied.status, denied.text).to.equal(200);
      expect(denied.body.results.map((r: any) => [r.current, r.simulated])).to.deep.equal([
        ['ALLOW', 'DENY'],
      ]);
      const draft = await fx.api.post('/v1/policies/simulate', { policy: { ...allow, status: 'draft' } });
      expect(draft.body.summary.changed).to.equal(0);
      const stored = await fx.api.get('/v1/policies?status=draft&limit=100');
      expect(stored.body.data.map((p: any) => p.name)).to.not.include(name);
      const decided = await fx.api.post('/v1/decisions/evaluate', {
        principal_id: b.id,
        action: 'read',
        resource: { type: t, identifier: 'x' },
      });
      expect(decided.body.decision).to.equal('DENY');
      const bad = await fx.api.post('/v1/policies/simulate', { policy: { ...allow, actions: [] } });
      expect(bad.status).to.equal(400);
    });

    it('refuses a proposed policy that can never match, with a pointer into it', async () => {
      const a = await principal();
      const current = await policy({
        subjects: { principals: [a.id] },
        resources: [{ type: type(), identifier: 'x' }],
      });
      const res = await fx.api.post(`/v1/policies/${current.id}/simulate`, {
        policy: {
          name: 'x',
          effect: 'allow',
          subjects: { principals: [a.id] },
          actions: ['read'],
          resources: [{ type: 'db', identifier: 'x' }],
          conditions: { 'context.ip': { $cidr: 'nope' } },
        },
      });
      expect(res.status).to.equal(400);
      expect(res.body.errors.map((e: any) => e.pointer)).to.include('/policy/conditions/context.ip/$cidr');
      const both = await fx.api.post(`/v1/policies/${current.id}/simulate`, {
        delete: true,
        policy: {
          name: 'x',
          effect: 'allow',
          subjects: { principals: [a.id] },
          actions: ['read'],
          resources: [{ type: 'db', identifier: 'x' }],
        },
      });
      expect(both.status).to.equal(400);
      expect(both.headers.get('ratelimit-policy')).to.match(/^"bulk";/);
    });
  });

  describe('resources', () => {
    it('registers, reads, lists, re-registers and deletes a resource, with audit events', async () => {
      const t = type();
      const owner = await principal();
      const created = await fx.api.put(`/v1/resources/${t}/${encodeURIComponent('org/repo one')}`, {
        attributes: { environment: 'prod' },
        owner_id: owner.id,
      });
      expect(created.status, created.text).to.equal(201);
      expect(created.body).to.include({
        type: t,
        identifier: 'org/repo one',
        owner_id: owner.id,
        registered: true,
      });
      expect(created.body.attributes).to.deep.equal({ environment: 'prod' });
      const again = await fx.api.put(`/v1/resources/${t}/${encodeURIComponent('org/repo one')}`, {
        attributes: { environment: 'dev' },
      });
      expect(again.status).to.equal(200);
      expect(again.body).to.include({ owner_id: null });
      const got = await fx.api.get(`/v1/resources/${t}/${encodeURIComponent('org/repo one')}`);
      expect(got.body.attributes).to.deep.equal({ environment: 'dev' });
      const listed = await fx.api.get(`/v1/resources?type=${t}`);
      expect(listed.body.data.map((r: any) => r.identifier)).to.deep.equal(['org/repo one']);
      const deleted = await fx.api.delete(`/v1/resources/${t}/${encodeURIComponent('org/repo one')}`);
      expect(deleted.status).to.equal(200);
      expect(deleted.body).to.deep.equal({
        type: t,
        identifier: 'org/repo one',
        deleted: true,
        named_by_policies: 0,
      });
      expect((await fx.api.get(`/v1/resources/${t}/${encodeURIComponent('org/repo one')}`)).status).to.equal(
        404,
      );
      const events = await fx.api.get(
        `/v1/audit/events?target_id=${encodeURIComponent(`${t}:org/repo one`)}&limit=10`,
      );
      expect(events.body.data.map((e: any) => e.type).reverse()).to.deep.equal([
        'resource.created',
        'resource.updated',
        'resource.deleted',
      ]);
    });

    it('refuses an owner that does not exist with 422, and writes nothing', async () => {
      const t = type();
      const res = await fx.api.put(`/v1/resources/${t}/x`, { owner_id: 'prn_01JD0000000000000000000000' });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('REFERENCE_NOT_FOUND');
      expect((await fx.api.get(`/v1/resources/${t}/x`)).status).to.equal(404);
    });

    it('feeds resource.attributes conditions at once after registration', async () => {
      const p = await principal();
      const t = type();
      await policy({
        subjects: { principals: [p.id] },
        resources: [{ type: t, identifier: '*' }],
        conditions: { 'resource.attributes.environment': { $ne: 'restricted' } },
      });
      const ask = async () =>
        (
          await fx.api.post('/v1/decisions/evaluate', {
            principal_id: p.id,
            action: 'read',
            resource: { type: t, identifier: 'vault' },
          })
        ).body.decision;
      expect(await ask()).to.equal('DENY');
      await register(t, 'vault', { environment: 'prod' });
      expect(await ask()).to.equal('ALLOW');
      await register(t, 'vault', { environment: 'restricted' });
      expect(await ask()).to.equal('DENY');
    });

    it('keeps a resource a policy names when its registration is deleted', async () => {
      const t = type();
      await policy({
        subjects: { principals: [(await principal()).id] },
        resources: [{ type: t, identifier: 'kept' }],
      });
      await register(t, 'kept', { a: 'b' });
      const deleted = await fx.api.delete(`/v1/resources/${t}/kept`);
      expect(deleted.body.named_by_policies).to.equal(1);
      const got = await fx.api.get(`/v1/resources/${t}/kept`);
      expect(got.status).to.equal(200);
      expect(got.body).to.include({ registered: false });
      expect(got.body.attributes).to.deep.equal({});
    });

    it('treats a malformed type or an identifier with * as not found', async () => {
      expect((await fx.api.get('/v1/resources/Bad_Type/x')).status).to.equal(404);
      expect((await fx.api.put('/v1/resources/db/a*', {})).status).to.equal(404);
    });
  });
});
