import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import { namer } from '../helpers/engine.js';

const POLICY_ID = /^pol_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const UNKNOWN_POLICY = 'pol_01JD0000000000000000000000';

describe('policies', () => {
  const { uniq } = namer();

  const fx = useApp();

  const body = (overrides: Record<string, unknown> = {}) => ({
    name: uniq('policy'),
    effect: 'allow',
    subjects: { principals: ['prn_01JD0000000000000000000001'] },
    actions: ['read'],
    resources: [{ type: 'database', identifier: 'payments-prod-1' }],
    ...overrides,
  });
  const create = async (overrides: Record<string, unknown> = {}): Promise<any> => {
    const res = await fx.api.post('/v1/policies', body(overrides));
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const policyCount = async (): Promise<number> => {
    const res = await fx.api.get('/v1/policies?status=active&limit=1');
    expect(res.status, res.text).to.equal(200);
    return res.body.pagination.total;
  };

  describe('lifecycle', () => {
    it('creates a policy: 201, Location, ETag "1", defaults, and GET returns it', async () => {
      const res = await fx.api.post(
        '/v1/policies',
        body({
          description: 'payments agents read the prod databases',
          subjects: { groups: ['grp_01JD0000000000000000000001'], match: { type: ['AI_AGENT'] } },
          resources: [{ type: 'database', identifier: 'payments-prod-*' }],
          conditions: { 'context.ip': { $cidr: '10.0.0.0/8' } },
        }),
      );
      expect(res.status, res.text).to.equal(201);
      expect(res.body.id).to.match(POLICY_ID);
      expect(res.headers.get('location')).to.equal(`/v1/policies/${res.body.id}`);
      expect(res.headers.get('etag')).to.equal('"1"');
      expect(res.body).to.include({ status: 'active', version: 1, effect: 'allow' });
      expect(res.body.subjects).to.deep.equal({
        principals: [],
        groups: ['grp_01JD0000000000000000000001'],
        match: { type: ['AI_AGENT'] },
      });
      expect(res.body.activated_at).to.equal(res.body.created_at);
      const got = await fx.api.get(`/v1/policies/${res.body.id}`);
      expect(got.status).to.equal(200);
      expect(got.body).to.deep.equal(res.body);
      expect(got.headers.get('etag')).to.equal('"1"');
    });

    it('replaces a policy with PUT: the version goes up, and the old one is kept', async () => {
      const policy = await create();
      const res = await fx.api.put(`/v1/policies/${policy.id}`, {
        ...body({ name: policy.name }),
        actions: ['read', 'write'],
      });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.version).to.equal(2);
      expect(res.body.actions).to.deep.equal(['read', 'write']);
      expect(res.headers.get('etag')).to.equal('"2"');
      const versions = await fx.api.get(`/v1/policies/${policy.id}/versions`);
      expect(versions.status).to.equal(200);
      expect(versions.body.data.map((v: any) => [v.version, v.policy.actions])).to.deep.equal([
        [2, ['read', 'write']],
        [1, ['read']],
      ]);
    });

    it('honours If-Match on PUT and DELETE: a stale version answers 412 and changes nothing', async () => {
      const policy = await create();
      const stale = await fx.api.put(
        `/v1/policies/${policy.id}`,
        body({ name: policy.name, actions: ['write'] }),
        {
          headers: { 'If-Match': '"7"' },
        },
      );
      expect(stale.status).to.equal(412);
      expect(stale.body.code).to.equal('PRECONDITION_FAILED');
      const fresh = await fx.api.put(
        `/v1/policies/${policy.id}`,
        body({ name: policy.name, actions: ['write'] }),
        {
          headers: { 'If-Match': '"1"' },
        },
      );
      expect(fresh.status, fresh.text).to.equal(200);
      const staleDelete = await fx.api.delete(`/v1/policies/${policy.id}`, {
        headers: { 'If-Match': '"1"' },
      });
      expect(staleDelete.status).to.equal(412);
      expect((await fx.api.get(`/v1/policies/${policy.id}`)).body).to.include({
        version: 2,
        status: 'active',
      });
    });

    it('deletes a policy: it stays readable, leaves lists, frees its name, and a second delete is 409', async () => {
      const policy = await create();
      const res = await fx.api.delete(`/v1/policies/${policy.id}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: policy.id, status: 'deleted' });
      const got = await fx.api.get(`/v1/policies/${policy.id}`);
      expect(got.body).to.include({ status: 'deleted', deleted_by: res.body.deleted_by });
      const listed = await fx.api.get('/v1/policies?limit=100');
      expect(listed.body.data.map((p: any) => p.id)).not.to.include(policy.id);
      const deletedList = await fx.api.get('/v1/policies?status=deleted&limit=100');
      expect(deletedList.body.data.map((p: any) => p.id)).to.include(policy.id);
      expect((await fx.api.post('/v1/policies', body({ name: policy.name }))).status).to.equal(201);
      const again = await fx.api.delete(`/v1/policies/${policy.id}`);
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('CONFLICT');
    });

    it('refuses a name already used, regardless of case: 409 CONFLICT', async () => {
      const policy = await create();
      const res = await fx.api.post('/v1/policies', body({ name: `  ${policy.name.toUpperCase()} ` }));
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('CONFLICT');
    });

    it('lists newest first, filtered by status and effect', async () => {
      const draft = await create({ status: 'draft', effect: 'deny' });
      const active = await create();
      const drafts = await fx.api.get('/v1/policies?status=draft&effect=deny&limit=100');
      expect(drafts.status).to.equal(200);
      const ids = drafts.body.data.map((p: any) => p.id);
      expect(ids).to.include(draft.id);
      expect(ids).not.to.include(active.id);
      const all = await fx.api.get('/v1/policies?limit=100');
      const order = all.body.data.map((p: any) => p.id);
      expect(order.indexOf(active.id)).to.be.lessThan(order.indexOf(draft.id));
    });

    it('answers 404 for an unknown policy and for an id of another kind', async () => {
      expect((await fx.api.get(`/v1/policies/${UNKNOWN_POLICY}`)).status).to.equal(404);
      expect((await fx.api.get('/v1/policies/prn_01JD0000000000000000000000')).status).to.equal(404);
      expect((await fx.api.put(`/v1/policies/${UNKNOWN_POLICY}`, body())).status).to.equal(404);
    });

    it('records policy.created, policy.updated and policy.deleted with the changes', async () => {
      const policy = await create();
      await fx.api.put(`/v1/policies/${policy.id}`, body({ name: policy.name, effect: 'deny' }));
      await fx.api.delete(`/v1/policies/${policy.id}`);
      const res = await fx.api.get(`/v1/audit/events?target_id=${policy.id}&limit=10`);
      const events = (res.body.data as any[]).reverse();
      expect(events.map((e) => e.type)).to.deep.equal(['policy.created', 'policy.updated', 'policy.deleted']);
      expect(events[1].changes.effect).to.deep.equal({ from: 'allow', to: 'deny' });
      expect(events[1].changes.version).to.deep.equal({ from: 1, to: 2 });
    });
  });

  describe('policies that can never match are refused with a pointer, and nothing is written', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'an unknown condition operator',
        { conditions: { 'context.ip': { $near: 'x' } } },
        '/conditions/context.ip/$near',
      ],
      ['an unknown condition path', { conditions: { 'subject.team': 'a' } }, '/conditions/subject.team'],
      [
        'a malformed CIDR',
        { conditions: { 'context.ip': { $cidr: '10.0.0.0/33' } } },
        '/conditions/context.ip/$cidr',
      ],
      [
        'a $ref to an unknown path',
        { conditions: { 'resource.attributes.team': { $ref: 'principal.team' } } },
        '/conditions/resource.attributes.team/$ref',
      ],
      [
        'a malformed glob',
        { resources: [{ type: 'database', identifier: 'payments-**' }] },
        '/resources/0/identifier',
      ],
      ['subjects that select nobody', { subjects: { principals: [] } }, '/subjects'],
      [
        'an unknown principal type in principal.type',
        { conditions: { 'principal.type': 'ROBOT' } },
        '/conditions/principal.type',
      ],
      [
        'a match of inactive principals only',
        { subjects: { match: { status: 'suspended' } } },
        '/subjects/match/status',
      ],
      [
        'a match with an unknown operator',
        { subjects: { match: { name: { $near: 'x' } } } },
        '/subjects/match/name',
      ],
      ['an unknown field', { priority: 3 }, '/priority'],
      ['a server-owned field', { version: 3 }, '/version'],
      [
        'a principal id of another kind',
        { subjects: { principals: ['grp_01JD0000000000000000000001'] } },
        '/subjects/principals/0',
      ],
      ['a wildcard in the middle of an action', { actions: ['re*d'] }, '/actions/0'],
      ['an action with capitals', { actions: ['Read'] }, '/actions/0'],
    ];
    for (const [what, overrides, pointer] of cases) {
      it(`refuses ${what}`, async () => {
        const before = await policyCount();
        const res = await fx.api.post('/v1/policies', body(overrides));
        expect(res.status, res.text).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(res.body.errors.map((e: any) => e.pointer)).to.include(pointer);
        expect(await policyCount()).to.equal(before);
      });
    }
  });

  describe('the graph', () => {
    it('links the policy to its subjects and to the resources it names exactly, as a reader in Neo4j Browser sees', async () => {
      const principal = await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('svc') });
      const group = await fx.api.post('/v1/groups', { name: uniq('group') });
      const policy = await create({
        subjects: { principals: [principal.body.id], groups: [group.body.id] },
        resources: [
          { type: 'database', identifier: 'orders-1' },
          { type: 'database', identifier: 'orders-*' },
        ],
      });
      const rows = await fx.app.runtime.db.run<{ rel: string; target: string }>(
        {
          name: 'test/policy_edges',
          text: 'MATCH (:Policy {id: $id})-[r]->(t) RETURN type(r) AS rel, coalesce(t.id, t.type + ":" + t.identifier) AS target ORDER BY rel, target',
        },
        { id: policy.id },
      );
      expect(rows.filter((r) => r.rel === 'ALLOWS').map((r) => r.target)).to.deep.equal([
        'database:orders-1',
      ]);
      expect(
        rows
          .filter((r) => r.rel === 'APPLIES_TO')
          .map((r) => r.target)
          .sort(),
      ).to.deep.equal([group.body.id, principal.body.id].sort());
      expect(rows.filter((r) => r.rel === 'HAS_VERSION')).to.have.length(1);
      const resource = await fx.api.get('/v1/resources/database/orders-1');
      expect(resource.status, resource.text).to.equal(200);
      expect(resource.body).to.include({ type: 'database', identifier: 'orders-1', registered: false });
    });
  });
});
