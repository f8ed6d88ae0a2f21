import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { ADMIN_CLIENT_ID } from '../helpers/app.js';
import { createClient, tokenFor } from '../helpers/auth.js';
import { insertPrincipal } from '../helpers/principals.js';
import { useApp } from '../helpers/fixture.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MISSING = 'prn_01JD0000000000000000000000';

describe('principals', () => {
  const fx = useApp();

  const count = async (): Promise<number> =>
    (await cypher(fx.app.runtime.db, 'MATCH (p:Principal) RETURN count(p) AS n'))[0]!['n'] as number;

  const snapshot = async (id: string): Promise<string> =>
    JSON.stringify(
      (await cypher(fx.app.runtime.db, 'MATCH (p:Principal {id: $id}) RETURN properties(p) AS p', { id }))[0],
    );

  const create = async (body: Record<string, unknown>) => {
    const res = await fx.api.post('/v1/principals', body);
    expect(res.status, res.text).to.equal(201);
    return res.body as Record<string, any>;
  };

  describe('POST /principals', () => {
    it('creates a service account with exactly the documented fields', async () => {
      const res = await fx.api.post('/v1/principals', {
        type: 'SERVICE_ACCOUNT',
        name: 'payments-batch',
        description: 'Nightly settlement job',
        attributes: { environment: 'prod', team: 'payments', service_type: 'batch' },
        metadata: { owner: 'alice@example.com', repository: 'git@example.com:pay/batch.git' },
      });
      expect(res.status).to.equal(201);
      expect(res.headers.get('location')).to.equal(`/v1/principals/${res.body.id}`);
      expect(res.headers.get('etag')).to.equal('"v1"');
      expect(Object.keys(res.body).sort()).to.deep.equal(
        [
          'attributes',
          'created_at',
          'created_by',
          'description',
          'id',
          'metadata',
          'name',
          'status',
          'type',
        ].sort(),
      );
      expect(res.body).to.deep.include({
        type: 'SERVICE_ACCOUNT',
        name: 'payments-batch',
        description: 'Nightly settlement job',
        status: 'active',
        created_by: ADMIN_CLIENT_ID,
        attributes: { environment: 'prod', service_type: 'batch', team: 'payments' },
      });
      expect(res.body.id).to.match(/^prn_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(res.body.created_at).to.match(ISO_MS);
    });

    it('creates AI agents (arrays required for capabilities and allowed_tools) and API keys', async () => {
      const agent = await create({
        type: 'AI_AGENT',
        name: 'support-copilot',
        attributes: {
          model: 'gpt-x',
          capabilities: ['read_tickets'],
          allowed_tools: ['search', 'summarise'],
        },
      });
      expect(agent['attributes']['allowed_tools']).to.deep.equal(['search', 'summarise']);
      const key = await create({ type: 'API_KEY', name: 'ci-deploy-key' });
      expect(key['type']).to.equal('API_KEY');

      const bad = await fx.api.post('/v1/principals', {
        type: 'AI_AGENT',
        name: 'bad-agent',
        attributes: { capabilities: 'code_execution', allowed_tools: 'shell' },
      });
      expect(bad.status).to.equal(400);
      expect(bad.body.errors.map((e: any) => e.pointer).sort()).to.deep.equal([
        '/attributes/allowed_tools',
        '/attributes/capabilities',
      ]);
    });

    it('refuses USER principals with 403 PRINCIPAL_MANAGED_BY_CONNECTOR whatever the body holds, creating nothing', async () => {
      const before = await count();
      for (const body of [
        { type: 'USER', name: 'mallory' },
        { type: 'USER', name: 'mallory', email: 'mallory@example.com' },
        { type: 'USER', name: 'mallory', connector_source: 'okta', last_login: 'yesterday' },
        { type: 'USER', name: '', attributes: { 'bad key': 1 } },
        { type: 'USER' },
      ]) {
        const res = await fx.api.post('/v1/principals', body);
        expect(res.status, JSON.stringify(body)).to.equal(403);
        expect(res.body.code).to.equal('PRINCIPAL_MANAGED_BY_CONNECTOR');
      }
      expect(await count()).to.equal(before);
    });

    it('rejects server-owned and unknown fields (mass assignment) with pointers, creating nothing', async () => {
      const before = await count();
      for (const field of [
        'id',
        'status',
        'created_at',
        'created_by',
        'connector_source',
        'connector_id',
        'risk_score',
        'email',
        'deleted_at',
        'role',
      ]) {
        const res = await fx.api.post('/v1/principals', {
          type: 'SERVICE_ACCOUNT',
          name: 'x',
          [field]: 'prn_01JD0000000000000000000000',
        });
        expect(res.status, field).to.equal(400);
        expect(
          res.body.errors.map((e: any) => e.pointer),
          field,
        ).to.include(`/${field}`);
      }
      expect(await count()).to.equal(before);
    });

    it('rejects wrong types, bad keys and oversized values with pointers', async () => {
      const before = await count();
      const long = 'x'.repeat(1025);
      const manyKeys = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
      const cases: [Record<string, unknown>, string][] = [
        [{ type: 'ROBOT', name: 'x' }, '/type'],
        [{ type: 'SERVICE_ACCOUNT' }, '/name'],
        [{ type: 'SERVICE_ACCOUNT', name: '' }, '/name'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x'.repeat(257) }, '/name'],
        [{ type: 'SERVICE_ACCOUNT', name: 42 }, '/name'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', description: 'd'.repeat(4097) }, '/description'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: { team: 5 } }, '/attributes/team'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: { team: { nested: 'no' } } }, '/attributes/team'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: { tags: ['a', 1] } }, '/attributes/tags'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: { team: long } }, '/attributes/team'],
        [
          { type: 'SERVICE_ACCOUNT', name: 'x', attributes: { tags: Array(101).fill('a') } },
          '/attributes/tags',
        ],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: manyKeys }, '/attributes'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: { 'bad key': 'v' } }, '/attributes/bad key'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: { '1abc': 'v' } }, '/attributes/1abc'],
        [
          { type: 'SERVICE_ACCOUNT', name: 'x', attributes: { 'a`}) DETACH DELETE p //': 'v' } },
          '/attributes/a`}) DETACH DELETE p ~1~1',
        ],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: { "x' OR 1=1": 'v' } }, "/attributes/x' OR 1=1"],
        [
          { type: 'SERVICE_ACCOUNT', name: 'x', attributes: { ['k'.repeat(65)]: 'v' } },
          `/attributes/${'k'.repeat(65)}`,
        ],
        [
          { type: 'SERVICE_ACCOUNT', name: 'x', attributes: { manager_id: 'not-an-id' } },
          '/attributes/manager_id',
        ],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', metadata: { owner: ['a'] } }, '/metadata/owner'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', metadata: { 'bad key': 'v' } }, '/metadata/bad key'],
        [{ type: 'SERVICE_ACCOUNT', name: 'x', attributes: ['team'] }, '/attributes'],
      ];
      for (const [body, pointer] of cases) {
        const res = await fx.api.post('/v1/principals', body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(
          res.body.errors.map((e: any) => e.pointer),
          JSON.stringify(body).slice(0, 80),
        ).to.include(pointer);
      }
      expect(await count()).to.equal(before);
    });

    it('checks manager_id: unknown or deleted managers are 422 REFERENCE_NOT_FOUND', async () => {
      const before = await count();
      const res = await fx.api.post('/v1/principals', {
        type: 'SERVICE_ACCOUNT',
        name: 'x',
        attributes: { manager_id: MISSING },
      });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('REFERENCE_NOT_FOUND');
      expect(res.body.errors[0].pointer).to.equal('/attributes/manager_id');
      const gone = await create({ type: 'SERVICE_ACCOUNT', name: 'gone' });
      await fx.api.delete(`/v1/principals/${gone['id']}`);
      const toDeleted = await fx.api.post('/v1/principals', {
        type: 'SERVICE_ACCOUNT',
        name: 'x',
        attributes: { manager_id: gone['id'] },
      });
      expect(toDeleted.status).to.equal(422);
      expect(await count()).to.equal(before + 1);
    });

    it('needs principals:write', async () => {
      const reader = await createClient(fx.app, ['principals:read']);
      const readOnly = fx.app.http.withToken((await tokenFor(fx.app.http, reader)).access_token);
      expect((await readOnly.post('/v1/principals', { type: 'API_KEY', name: 'k' })).status).to.equal(403);
      expect((await readOnly.get(`/v1/principals/${MISSING}`)).status).to.equal(404);
    });
  });

  describe('GET /principals/{id}', () => {
    it('returns the full record with ETag and risk factors', async () => {
      const created = await create({
        type: 'API_KEY',
        name: 'reporting-key',
        attributes: { environment: 'prod' },
      });
      const res = await fx.api.get(`/v1/principals/${created['id']}`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('etag')).to.equal('"v1"');
      expect(res.body).to.deep.include({
        id: created['id'],
        type: 'API_KEY',
        name: 'reporting-key',
        description: null,
        connector_source: null,
        connector_id: null,
        last_login: null,
        status: 'active',
        risk_score: 30,
        risk_factors: [{ code: 'NO_OWNER', points: 30 }],
      });
      expect(res.body).not.to.have.property('email');
      expect(res.body.updated_at).to.match(ISO_MS);
    });

    it('returns USER principals with email, connector fields and last_login', async () => {
      const user = await insertPrincipal(fx.app, {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        lastLogin: new Date().toISOString(),
      });
      const res = await fx.api.get(`/v1/principals/${user.id}`);
      expect(res.body).to.include({ type: 'USER', email: 'ada@example.com', connector_source: 'okta' });
      expect(res.body.connector_id).to.be.a('string');
      expect(res.body.last_login).to.match(ISO_MS);
    });

    it('answers 404 for unknown ids and ids of other shapes', async () => {
      for (const id of [
        MISSING,
        'grp_01JD0000000000000000000000',
        'garbage',
        'prn_01JD',
        "prn_'})%20RETURN%201%20//",
      ]) {
        for (const path of [`/v1/principals/${id}`, `/v1/principals/${id}/relationships`]) {
          const res = await fx.api.get(path);
          expect(res.status, path).to.equal(404);
          expect(res.body.code).to.equal('NOT_FOUND');
        }
        expect((await fx.api.patch(`/v1/principals/${id}`, { name: 'x' })).status).to.equal(404);
        expect((await fx.api.delete(`/v1/principals/${id}`)).status).to.equal(404);
      }
    });
  });

  describe('PATCH /principals/{id}', () => {
    it('merges attributes and metadata: supplied keys set, null removes, others stay', async () => {
      const p = await create({
        type: 'SERVICE_ACCOUNT',
        name: 'merge-me',
        attributes: { team: 'a', environment: 'prod', tags: ['x', 'y'] },
        metadata: { owner: 'o', cost_center: 'cc1' },
      });
      const res = await fx.api.patch(`/v1/principals/${p['id']}`, {
        attributes: { team: 'b', environment: null, location: 'eu-west' },
        metadata: { cost_center: null, repository: 'r' },
      });
      expect(res.status).to.equal(200);
      expect(Object.keys(res.body).sort()).to.deep.equal(
        ['attributes', 'id', 'metadata', 'name', 'status', 'type', 'updated_at'].sort(),
      );
      expect(res.body.attributes).to.deep.equal({ location: 'eu-west', tags: ['x', 'y'], team: 'b' });
      expect(res.body.metadata).to.deep.equal({ owner: 'o', repository: 'r' });
      expect(res.headers.get('etag')).to.equal('"v2"');
      const fetched = (await fx.api.get(`/v1/principals/${p['id']}`)).body;
      expect(fetched.attributes).to.deep.equal(res.body.attributes);
      expect(fetched.updated_at > p['created_at'] || fetched.updated_at === p['created_at']).to.equal(true);
      // The attribute vocabulary follows: the old value no longer selects the principal.
      const links = await cypher(
        fx.app.runtime.db,
        'MATCH (:Principal {id: $id})-[r:HAS_ATTRIBUTE]->(a:Attribute) RETURN a.key + "=" + a.value AS kv ORDER BY kv',
        { id: p['id'] },
      );
      expect(links.map((r) => r['kv'])).to.deep.equal(['location=eu-west', 'tags=x', 'tags=y', 'team=b']);
    });

    it('changes name and description, and treats a no-op patch as a no-op', async () => {
      const p = await create({ type: 'SERVICE_ACCOUNT', name: 'old-name', description: 'd' });
      const renamed = await fx.api.patch(`/v1/principals/${p['id']}`, {
        name: 'new-name',
        description: null,
      });
      expect(renamed.body.name).to.equal('new-name');
      expect((await fx.api.get(`/v1/principals/${p['id']}`)).body.description).to.equal(null);
      const again = await fx.api.patch(`/v1/principals/${p['id']}`, { name: 'new-name' });
      expect(again.status).to.equal(200);
      expect(again.headers.get('etag')).to.equal(renamed.headers.get('etag'));
    });

    it('suspends and reactivates (the kill switch) and refuses other statuses', async () => {
      const p = await create({ type: 'AI_AGENT', name: 'rogue-bot', metadata: { owner: 'sec' } });
      const suspended = await fx.api.patch(`/v1/principals/${p['id']}`, { status: 'suspended' });
      expect(suspended.body.status).to.equal('suspended');
      const record = (await fx.api.get(`/v1/principals/${p['id']}`)).body;
      expect(record.risk_factors).to.deep.include({ code: 'SUSPENDED', points: 10 });
      expect((await fx.api.patch(`/v1/principals/${p['id']}`, { status: 'active' })).body.status).to.equal(
        'active',
      );
      for (const status of ['deleted', 'deprovisioned', 'disabled']) {
        const res = await fx.api.patch(`/v1/principals/${p['id']}`, { status });
        expect(res.status, status).to.equal(400);
        expect(res.body.errors[0].pointer).to.equal('/status');
      }
    });

    it('lets USER principals change only attributes and metadata', async () => {
      const user = await insertPrincipal(fx.app, { name: 'Grace Hopper', attributes: { department: 'eng' } });
      const before = await snapshot(user.id);
      for (const body of [
        { name: 'G' },
        { description: 'x' },
        { status: 'suspended' },
        { email: 'g@example.com' },
        { name: 'G', attributes: { a: 'b' } },
      ]) {
        const res = await fx.api.patch(`/v1/principals/${user.id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(403);
        expect(res.body.code).to.equal('PRINCIPAL_MANAGED_BY_CONNECTOR');
      }
      expect(await snapshot(user.id)).to.equal(before);
      const ok = await fx.api.patch(`/v1/principals/${user.id}`, {
        attributes: { location: 'nyc' },
        metadata: { note: 'vip' },
      });
      expect(ok.status).to.equal(200);
      expect(ok.body).to.include({ email: user.email, type: 'USER' });
      expect(ok.body.attributes).to.deep.equal({ department: 'eng', location: 'nyc' });
    });

    it('rejects bad patches with pointers and leaves the principal unchanged', async () => {
      const p = await create({ type: 'SERVICE_ACCOUNT', name: 'stable', attributes: { team: 't' } });
      const before = await snapshot(p['id']);
      const cases: [unknown, number, string][] = [
        [{}, 400, ''],
        [{ id: MISSING }, 400, '/id'],
        [{ type: 'AI_AGENT' }, 400, '/type'],
        [{ connector_source: 'okta' }, 400, '/connector_source'],
        [{ risk_score: 0 }, 400, '/risk_score'],
        [{ created_at: '2020-01-01T00:00:00Z' }, 400, '/created_at'],
        [{ email: 'x@example.com' }, 400, '/email'],
        [{ attributes: { 'a b': 'c' } }, 400, '/attributes/a b'],
        [{ attributes: { team: 3 } }, 400, '/attributes/team'],
        [{ attributes: { manager_id: 'prn_bad' } }, 400, '/attributes/manager_id'],
        [{ metadata: { owner: 1 } }, 400, '/metadata/owner'],
        [{ name: '' }, 400, '/name'],
        [
          { attributes: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, 'v'])) },
          400,
          '/attributes',
        ],
      ];
      for (const [body, status, pointer] of cases) {
        const res = await fx.api.patch(`/v1/principals/${p['id']}`, body);
        expect(res.status, JSON.stringify(body).slice(0, 60)).to.equal(status);
        expect(
          res.body.errors.map((e: any) => e.pointer),
          JSON.stringify(body).slice(0, 60),
        ).to.include(pointer);
      }
      expect(await snapshot(p['id'])).to.equal(before);
      const malformed = await fx.api.patch(`/v1/principals/${p['id']}`, undefined, {
        raw: '{"name":',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(malformed.body.code).to.equal('MALFORMED_JSON');
      const wrongType = await fx.api.patch(`/v1/principals/${p['id']}`, undefined, {
        raw: 'name=x',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(wrongType.status).to.equal(415);
      expect(await snapshot(p['id'])).to.equal(before);
    });

    it('honours If-Match: 412 on a stale tag, success on the current one or *', async () => {
      const p = await create({ type: 'SERVICE_ACCOUNT', name: 'etagged' });
      const stale = await fx.api.patch(
        `/v1/principals/${p['id']}`,
        { name: 'a' },
        { headers: { 'If-Match': '"v9"' } },
      );
      expect(stale.status).to.equal(412);
      expect(stale.body.code).to.equal('PRECONDITION_FAILED');
      const ok = await fx.api.patch(
        `/v1/principals/${p['id']}`,
        { name: 'a' },
        { headers: { 'If-Match': '"v1"' } },
      );
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('etag')).to.equal('"v2"');
      expect(
        (await fx.api.patch(`/v1/principals/${p['id']}`, { name: 'b' }, { headers: { 'If-Match': '"v1"' } }))
          .status,
      ).to.equal(412);
      expect(
        (await fx.api.patch(`/v1/principals/${p['id']}`, { name: 'b' }, { headers: { 'If-Match': '*' } }))
          .status,
      ).to.equal(200);
      expect(
        (await fx.api.delete(`/v1/principals/${p['id']}`, { headers: { 'If-Match': '"v2"' } })).status,
      ).to.equal(412);
      expect(
        (await fx.api.delete(`/v1/principals/${p['id']}`, { headers: { 'If-Match': '"v1", "v3"' } })).status,
      ).to.equal(200);
    });
  });

  describe('DELETE /principals/{id}', () => {
    it('soft-deletes: the record stays readable, a second delete is 409, updates are 409', async () => {
      const p = await create({ type: 'AI_AGENT', name: 'retired-agent' });
      const res = await fx.api.delete(`/v1/principals/${p['id']}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({
        id: p['id'],
        status: 'deleted',
        deleted_at: res.body.deleted_at,
        deleted_by: ADMIN_CLIENT_ID,
      });
      expect(res.body.deleted_at).to.match(ISO_MS);
      const fetched = (await fx.api.get(`/v1/principals/${p['id']}`)).body;
      expect(fetched).to.include({
        status: 'deleted',
        deleted_at: res.body.deleted_at,
        deleted_by: ADMIN_CLIENT_ID,
      });
      const again = await fx.api.delete(`/v1/principals/${p['id']}`);
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('PRINCIPAL_DELETED');
      const patch = await fx.api.patch(`/v1/principals/${p['id']}`, { name: 'zombie' });
      expect(patch.status).to.equal(409);
      expect(patch.body.code).to.equal('PRINCIPAL_DELETED');
    });

    it('refuses to delete USER principals', async () => {
      const user = await insertPrincipal(fx.app, { name: 'Linus' });
      const res = await fx.api.delete(`/v1/principals/${user.id}`);
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('PRINCIPAL_MANAGED_BY_CONNECTOR');
      expect((await fx.api.get(`/v1/principals/${user.id}`)).body.status).to.equal('active');
    });
  });

  describe('manager graph', () => {
    it('keeps manager_id as a REPORTS_TO edge, moves it on change and drops it on removal', async () => {
      const boss = await insertPrincipal(fx.app, { name: 'Boss' });
      const other = await insertPrincipal(fx.app, { name: 'Other Boss' });
      const svc = await create({ type: 'SERVICE_ACCOUNT', name: 'svc', attributes: { manager_id: boss.id } });
      const managerOf = async (id: string) =>
        (
          await cypher(
            fx.app.runtime.db,
            'MATCH (:Principal {id: $id})-[:REPORTS_TO]->(m) RETURN m.id AS m',
            {
              id,
            },
          )
        ).map((r) => r['m']);
      expect(await managerOf(svc['id'])).to.deep.equal([boss.id]);
      await fx.api.patch(`/v1/principals/${svc['id']}`, { attributes: { manager_id: other.id } });
      expect(await managerOf(svc['id'])).to.deep.equal([other.id]);
      const removed = await fx.api.patch(`/v1/principals/${svc['id']}`, { attributes: { manager_id: null } });
      expect(removed.body.attributes).not.to.have.property('manager_id');
      expect(await managerOf(svc['id'])).to.deep.equal([]);
    });

    it('refuses cycles with 422 CYCLE_DETECTED and changes nothing', async () => {
      const a = await create({ type: 'SERVICE_ACCOUNT', name: 'a' });
      const b = await create({ type: 'SERVICE_ACCOUNT', name: 'b', attributes: { manager_id: a['id'] } });
      const c = await create({ type: 'SERVICE_ACCOUNT', name: 'c', attributes: { manager_id: b['id'] } });
      const before = await snapshot(a['id']);
      for (const [who, manager] of [
        [a['id'], c['id']],
        [a['id'], b['id']],
        [a['id'], a['id']],
        [b['id'], c['id']],
      ]) {
        const res = await fx.api.patch(`/v1/principals/${who}`, { attributes: { manager_id: manager } });
        expect(res.status, `${who} -> ${manager}`).to.equal(422);
        expect(res.body.code).to.equal('CYCLE_DETECTED');
        expect(res.body.errors[0].pointer).to.equal('/attributes/manager_id');
      }
      expect(await snapshot(a['id'])).to.equal(before);
    });
  });

  describe('risk score', () => {
    it('reflects ownership, tool breadth, capabilities and login history, recomputed on change', async () => {
      const agent = await create({
        type: 'AI_AGENT',
        name: 'wildcard-agent',
        attributes: { allowed_tools: ['*'], capabilities: ['code_execution'] },
      });
      let record = (await fx.api.get(`/v1/principals/${agent['id']}`)).body;
      expect(record.risk_factors).to.deep.equal([
        { code: 'NO_OWNER', points: 30 },
        { code: 'BROAD_TOOL_ACCESS', points: 40 },
        { code: 'HIGH_RISK_CAPABILITY', points: 15 },
      ]);
      expect(record.risk_score).to.equal(85);
      // An owner that exists: one that names no principal would orphan the agent (ORPHANED).
      const owner = await create({ type: 'SERVICE_ACCOUNT', name: 'team-ai' });
      await fx.api.patch(`/v1/principals/${agent['id']}`, {
        metadata: { owner: owner['id'] },
        attributes: { allowed_tools: Array.from({ length: 25 }, (_, i) => `tool${i}`) },
      });
      record = (await fx.api.get(`/v1/principals/${agent['id']}`)).body;
      expect(record.risk_factors).to.deep.equal([
        { code: 'BROAD_TOOL_ACCESS', points: 25 },
        { code: 'HIGH_RISK_CAPABILITY', points: 15 },
      ]);
      expect(record.risk_score).to.equal(40);

      const dormant = await insertPrincipal(fx.app, { name: 'Dormant', lastLogin: '2020-01-01T00:00:00Z' });
      expect((await fx.api.get(`/v1/principals/${dormant.id}`)).body.risk_factors).to.deep.equal([
        { code: 'DORMANT', points: 25 },
      ]);
      const never = await insertPrincipal(fx.app, { name: 'Never' });
      expect((await fx.api.get(`/v1/principals/${never.id}`)).body.risk_score).to.equal(10);
    });

    it('turns DORMANT when time passes the threshold, without any write to the principal', async () => {
      const recent = await insertPrincipal(fx.app, {
        name: 'Almost Dormant',
        lastLogin: new Date(Date.now() - 89 * 86_400_000).toISOString(),
      });
      const before = await fx.api.get(`/v1/principals/${recent.id}`);
      expect(before.body.risk_factors).to.deep.equal([]);
      expect(await fx.app.runtime.risk.dormancy.refresh(Date.now())).to.equal(0);
      const updated = await fx.app.runtime.risk.dormancy.refresh(Date.now() + 2 * 86_400_000);
      expect(updated).to.be.greaterThan(0);
      const after = await fx.api.get(`/v1/principals/${recent.id}`);
      expect(after.body.risk_factors).to.deep.equal([{ code: 'DORMANT', points: 25 }]);
      expect(after.headers.get('etag')).to.not.equal(before.headers.get('etag'));
      // Already marked: the next pass has nothing left to do for this principal.
      expect(await fx.app.runtime.risk.dormancy.refresh(Date.now() + 2 * 86_400_000)).to.equal(0);
    });
  });

  describe('audit', () => {
    it('records created, updated, status_changed and deleted events with field changes', async () => {
      const p = await create({ type: 'SERVICE_ACCOUNT', name: 'audited-sa', attributes: { team: 'x' } });
      await fx.api.patch(`/v1/principals/${p['id']}`, { attributes: { team: 'y' }, status: 'suspended' });
      await fx.api.delete(`/v1/principals/${p['id']}`);
      const events = (await fx.api.get(`/v1/audit/events?target_id=${p['id']}&limit=10`)).body.data.reverse();
      expect(events.map((e: any) => e.type)).to.deep.equal([
        'principal.created',
        'principal.updated',
        'principal.status_changed',
        'principal.deleted',
      ]);
      expect(events[0].changes).to.deep.include({
        name: { to: 'audited-sa' },
        'attributes.team': { to: 'x' },
      });
      expect(events[1].changes).to.deep.equal({ 'attributes.team': { from: 'x', to: 'y' } });
      expect(events[2].changes).to.deep.equal({ status: { from: 'active', to: 'suspended' } });
      expect(events[3].changes).to.deep.equal({ status: { from: 'suspended', to: 'deleted' } });
      expect(events.map((e: any) => e.actor.id)).to.deep.equal(Array(4).fill(ADMIN_CLIENT_ID));
    });
  });
});
