import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { NDJSON, snapshotLines, syncSnapshot } from '../helpers/sync.js';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

describe('connectors and SCIM users', () => {
  const fx = useApp();

  async function connector(): Promise<{ id: string; name: string; scim: HttpClient }> {
    const res = await fx.api.post('/v1/connectors', { name: uniq('okta-'), description: 'test' });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, name: res.body.name, scim: fx.app.http.withToken(res.body.token) };
  }

  const user = (userName: string, extra: Record<string, unknown> = {}): Record<string, any> => ({
    schemas: [USER, ENTERPRISE],
    userName,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ value: userName, type: 'work', primary: true }],
    active: true,
    ...extra,
  });

  describe('connectors', () => {
    it('shows the token once, stores it hashed, rotates it and stops it on delete', async () => {
      const name = uniq('entra-');
      const created = await fx.api.post('/v1/connectors', { name });
      expect(created.status, created.text).to.equal(201);
      expect(created.headers.get('location')).to.equal(`/v1/connectors/${created.body.id}`);
      expect(created.body).to.include({ name, status: 'active', description: null, profile: 'generic' });
      expect(created.body.scim_base_url).to.match(/\/scim\/v2$/);
      expect(created.body.token).to.match(/^pas_scim_/);
      const got = await fx.api.get(`/v1/connectors/${created.body.id}`);
      expect(got.body).to.not.have.property('token');
      const listed = await fx.api.get('/v1/connectors?limit=100');
      expect(listed.body.data.map((c: { id: string }) => c.id)).to.include(created.body.id);
      expect(JSON.stringify(listed.body)).to.not.include(created.body.token);

      const old = fx.app.http.withToken(created.body.token);
      expect((await old.get('/scim/v2/Users')).status).to.equal(200);
      const rotated = await fx.api.post(`/v1/connectors/${created.body.id}/token`);
      expect(rotated.status, rotated.text).to.equal(200);
      const denied = await old.get('/scim/v2/Users');
      expect(denied.status).to.equal(401);
      expect(denied.headers.get('content-type')).to.match(/application\/scim\+json/);
      expect(denied.body).to.deep.include({ status: '401' });
      const fresh = fx.app.http.withToken(rotated.body.token);
      expect((await fresh.get('/scim/v2/Users')).status).to.equal(200);

      const deleted = await fx.api.delete(`/v1/connectors/${created.body.id}`);
      expect(deleted.status, deleted.text).to.equal(200);
      expect((await fresh.get('/scim/v2/Users')).status).to.equal(401);
      const events = await fx.api.get(`/v1/audit/events?target_id=${created.body.id}&limit=10`);
      expect(events.body.data.map((e: { type: string }) => e.type).sort()).to.deep.equal([
        'connector.created',
        'connector.deleted',
        'connector.token_rotated',
      ]);
      expect(JSON.stringify(events.body)).to.not.include(rotated.body.token);
    });

    it('refuses bad names and duplicates', async () => {
      expect((await fx.api.post('/v1/connectors', { name: 'Okta' })).status).to.equal(400);
      expect((await fx.api.post('/v1/connectors', { name: 'ok', token: 'x' })).status).to.equal(400);
      const name = uniq('dup-');
      expect((await fx.api.post('/v1/connectors', { name })).status).to.equal(201);
      const again = await fx.api.post('/v1/connectors', { name });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('CONFLICT');
    });
  });

  describe('/scim/v2', () => {
    it('publishes what it supports', async () => {
      const { scim } = await connector();
      const config = await scim.get('/scim/v2/ServiceProviderConfig');
      expect(config.status).to.equal(200);
      expect(config.headers.get('content-type')).to.match(/application\/scim\+json/);
      expect(config.body.patch).to.deep.equal({ supported: true });
      expect(config.body.filter).to.deep.equal({ supported: true, maxResults: 200 });
      expect(config.body.bulk.supported).to.equal(false);
      const types = await scim.get('/scim/v2/resourcetypes');
      expect(types.body.Resources.map((r: { id: string }) => r.id)).to.include('User');
      const schemas = await scim.get('/scim/v2/Schemas');
      const ids = schemas.body.Resources.map((r: { id: string }) => r.id);
      expect(ids).to.include.members([USER, ENTERPRISE]);
    });

    it('provisions a user as a USER principal mapped as the contract says, and keeps every attribute', async () => {
      const { scim, name: source, id: connectorId } = await connector();
      const userName = `${uniq('ada')}@example.com`;
      const body = user(userName, {
        externalId: uniq('ext-'),
        displayName: 'Ada L.',
        title: 'Engineer',
        phoneNumbers: [{ value: '+44 20 0000', type: 'work' }],
        preferredLanguage: 'en-GB',
        addresses: [{ locality: 'London', country: 'GB', type: 'work' }],
        password: 'never-kept',
        customThing: { nested: [1, 2] },
        meta: { resourceType: 'User', created: '2001-01-01T00:00:00Z' },
        [ENTERPRISE]: { department: 'R&D', employeeNumber: '42', costCenter: 'CC-7' },
      });
      const created = await scim.post('/scim/v2/Users', body, {
        headers: { 'Content-Type': 'application/scim+json' },
      });
      expect(created.status, created.text).to.equal(201);
      const id = created.body.id as string;
      expect(id).to.match(/^prn_/);
      expect(created.headers.get('location')).to.match(new RegExp(`/scim/v2/Users/${id}$`));
      expect(created.headers.get('etag')).to.equal('W/"1"');
      expect(created.body).to.not.have.property('password');
      expect(created.body.meta.created).to.not.equal('2001-01-01T00:00:00Z');

      const got = await scim.get(`/scim/v2/Users/${id}`);
      for (const key of [
        'userName',
        'externalId',
        'displayName',
        'title',
        'phoneNumbers',
        'preferredLanguage',
        'addresses',
        'customThing',
        'emails',
        'name',
      ])
        expect(got.body[key], key).to.deep.equal(body[key]);
      expect(got.body[ENTERPRISE]).to.deep.equal(body[ENTERPRISE]);

      const principal = await fx.api.get(`/v1/principals/${id}`);
      expect(principal.body).to.deep.include({
        type: 'USER',
        name: 'Ada L.',
        email: userName,
        status: 'active',
        connector_source: source,
        connector_id: body.externalId,
        created_by: connectorId,
      });
      expect(principal.body.attributes).to.deep.include({ role: 'Engineer', department: 'R&D' });
      expect(principal.body.metadata).to.deep.include({ employee_number: '42', cost_center: 'CC-7' });
      const events = await fx.api.get(`/v1/audit/events?target_id=${id}`);
      expect(events.body.data[0]).to.deep.include({
        type: 'principal.created',
        actor: { type: 'connector', id: connectorId },
      });
    });

    it('answers a duplicate userName, in any case, with 409 uniqueness', async () => {
      const { scim } = await connector();
      const userName = `${uniq('dup')}@example.com`;
      expect((await scim.post('/scim/v2/Users', user(userName))).status).to.equal(201);
      const again = await scim.post('/scim/v2/Users', user(userName.toUpperCase()));
      expect(again.status).to.equal(409);
      expect(again.body).to.deep.include({ status: '409', scimType: 'uniqueness' });
      expect(again.body.schemas).to.deep.equal(['urn:ietf:params:scim:api:messages:2.0:Error']);
      // Renaming another user to the taken userName is refused the same way, by PUT and by PATCH.
      const other = await scim.post('/scim/v2/Users', user(`${uniq('other')}@example.com`));
      const put = await scim.put(`/scim/v2/Users/${other.body.id}`, user(userName.toUpperCase()));
      expect(put.status).to.equal(409);
      expect(put.body).to.deep.include({ status: '409', scimType: 'uniqueness' });
      const patch = await scim.patch(`/scim/v2/Users/${other.body.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'replace', path: 'userName', value: userName }],
      });
      expect(patch.status).to.equal(409);
      expect((await scim.get(`/scim/v2/Users/${other.body.id}`)).body.userName).to.equal(other.body.userName);
    });

    it('keeps each connector to its own users', async () => {
      const a = await connector();
      const b = await connector();
      const created = await a.scim.post('/scim/v2/Users', user(`${uniq('own')}@example.com`));
      const id = created.body.id as string;
      expect((await b.scim.get(`/scim/v2/Users/${id}`)).status).to.equal(404);
      expect((await b.scim.put(`/scim/v2/Users/${id}`, user('x@example.com'))).status).to.equal(404);
      expect(
        (
          await b.scim.patch(`/scim/v2/Users/${id}`, {
            schemas: [PATCH],
            Operations: [{ op: 'replace', path: 'active', value: false }],
          })
        ).status,
      ).to.equal(404);
      expect((await b.scim.delete(`/scim/v2/Users/${id}`)).status).to.equal(404);
      const list = await b.scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`id eq "${id}"`)}`);
      expect(list.body.totalResults).to.equal(0);
      expect((await a.scim.get(`/scim/v2/Users/${id}`)).status).to.equal(200);
      // The same userName is free in another connector.
      expect((await b.scim.post('/scim/v2/Users', user(created.body.userName))).status).to.equal(201);
    });

    it('filters with the RFC grammar, pages and projects', async () => {
      const { scim } = await connector();
      const names = ['ann', 'bob', 'cat', 'dan'].map((n) => `${n}.${uniq('')}@example.com`);
      const ids: string[] = [];
      for (const [i, n] of names.entries()) {
        const res = await scim.post(
          '/scim/v2/Users',
          user(n, {
            externalId: `ext-${i}-${n}`,
            title: i % 2 === 0 ? 'Engineer' : 'Manager',
            name: { givenName: n.slice(0, 3), familyName: i < 2 ? 'Smith' : 'Jones' },
            emails: [{ value: n, type: i === 3 ? 'home' : 'work', primary: true }],
          }),
        );
        expect(res.status, res.text).to.equal(201);
        ids.push(res.body.id);
      }
      const find = async (filter: string): Promise<string[]> => {
        const res = await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(filter)}&count=200`);
        expect(res.status, `${filter}: ${res.text}`).to.equal(200);
        expect(res.body.schemas).to.deep.equal(['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
        return res.body.Resources.map((r: { id: string }) => r.id);
      };
      expect(await find(`userName eq "${names[1]!.toUpperCase()}"`)).to.deep.equal([ids[1]]);
      expect(await find(`USERNAME Eq "${names[2]}"`)).to.deep.equal([ids[2]]);
      expect(await find(`externalId eq "ext-0-${names[0]}"`)).to.deep.equal([ids[0]]);
      expect(await find(`externalId eq "EXT-0-${names[0]}"`)).to.deep.equal([]);
      expect(await find(`id eq "${ids[3]}"`)).to.deep.equal([ids[3]]);
      expect(await find('name.familyName eq "smith"')).to.deep.equal([ids[0], ids[1]]);
      expect(await find('emails[type eq "work" and value sw "ann."]')).to.deep.equal([ids[0]]);
      expect(await find('emails[type eq "home"]')).to.deep.equal([ids[3]]);
      expect(await find('title eq "engineer" and not (name.familyName eq "Jones")')).to.deep.equal([ids[0]]);
      expect(await find('(title eq "Manager" or userName sw "cat.") and active eq true')).to.deep.equal([
        ids[1],
        ids[2],
        ids[3],
      ]);
      expect(
        await find('userName co "@example.com" and meta.created gt "2000-01-01T00:00:00Z"'),
      ).to.have.length(4);
      expect(await find(`userName eq ${names[0]}`)).to.deep.equal([ids[0]]);
      expect(
        await find(`userName sw "${names[0]!.slice(0, 6).toUpperCase()}" and active eq true`),
      ).to.deep.equal([ids[0]]);
      expect(await find('title pr and not (title eq "Manager")')).to.deep.equal([ids[0], ids[2]]);

      const page = await scim.get('/scim/v2/Users?startIndex=2&count=2&attributes=userName');
      expect(page.body).to.include({ totalResults: 4, startIndex: 2, itemsPerPage: 2 });
      expect(page.body.Resources.map((r: { id: string }) => r.id)).to.deep.equal([ids[1], ids[2]]);
      expect(Object.keys(page.body.Resources[0]).sort()).to.deep.equal(['id', 'schemas', 'userName']);
      const excluded = await scim.get(`/scim/v2/Users/${ids[0]}?excludedAttributes=emails,name.givenName`);
      expect(excluded.body).to.not.have.property('emails');
      expect(excluded.body.name).to.deep.equal({ familyName: 'Smith' });
      const counted = await scim.get('/scim/v2/Users?count=0');
      expect(counted.body).to.include({ totalResults: 4, itemsPerPage: 0 });

      const bad = await scim.get(`/scim/v2/Users?filter=${encodeURIComponent('userName eq "x" and')}`);
      expect(bad.status).to.equal(400);
      expect(bad.body).to.deep.include({ status: '400', scimType: 'invalidFilter' });
    });

    it('suspends on active false (the engine denies at once), replaces, and deprovisions on DELETE', async () => {
      const { scim } = await connector();
      const created = await scim.post(
        '/scim/v2/Users',
        user(`${uniq('sus')}@example.com`, { externalId: uniq('e') }),
      );
      const id = created.body.id as string;
      const patched = await scim.patch(`/scim/v2/Users/${id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'Replace', value: { active: 'False' } }],
      });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body.active).to.equal(false);
      expect((await fx.api.get(`/v1/principals/${id}`)).body.status).to.equal('suspended');
      const decision = await fx.api.post('/v1/decisions/evaluate', {
        principal_id: id,
        action: 'read',
        resource: { type: 'document', identifier: 'x' },
      });
      expect(decision.body.reasons[0].code).to.equal('PRINCIPAL_INACTIVE');

      const stale = await scim.put(`/scim/v2/Users/${id}`, user(created.body.userName), {
        headers: { 'If-Match': 'W/"1"' },
      });
      expect(stale.status).to.equal(412);
      const replaced = await scim.put(
        `/scim/v2/Users/${id}`,
        user(created.body.userName, { displayName: 'Renamed' }),
      );
      expect(replaced.status, replaced.text).to.equal(200);
      expect(replaced.body.active).to.equal(true);
      expect(replaced.body).to.not.have.property('externalId');
      const principal = (await fx.api.get(`/v1/principals/${id}`)).body;
      expect(principal).to.include({ name: 'Renamed', status: 'active', connector_id: null });

      const removed = await scim.delete(`/scim/v2/Users/${id}`);
      expect(removed.status).to.equal(204);
      expect((await scim.get(`/scim/v2/Users/${id}`)).status).to.equal(404);
      expect((await fx.api.get(`/v1/principals/${id}`)).body.status).to.equal('deprovisioned');
      // The userName is free again.
      expect((await scim.post('/scim/v2/Users', user(created.body.userName))).status).to.equal(201);
    });

    it('links a manager by SCIM id or externalId, also when the manager arrives after its report', async () => {
      const { scim } = await connector();
      const bossExt = uniq('boss-');
      const report = await scim.post(
        '/scim/v2/Users',
        user(`${uniq('r')}@example.com`, { [ENTERPRISE]: { manager: { value: bossExt } } }),
      );
      expect(report.status, report.text).to.equal(201);
      expect((await fx.api.get(`/v1/principals/${report.body.id}`)).body.attributes).to.not.have.property(
        'manager_id',
      );
      const boss = await scim.post(
        '/scim/v2/Users',
        user(`${uniq('b')}@example.com`, { externalId: bossExt }),
      );
      expect(boss.status).to.equal(201);
      const linked = await fx.api.get(`/v1/principals/${report.body.id}`);
      expect(linked.body.attributes.manager_id).to.equal(boss.body.id);
      const rel = await fx.api.get(`/v1/principals/${report.body.id}/relationships?type=manager`);
      expect(rel.body.relationships[0].principal.id).to.equal(boss.body.id);

      const other = await scim.post(
        '/scim/v2/Users',
        user(`${uniq('o')}@example.com`, { [ENTERPRISE]: { manager: { value: boss.body.id } } }),
      );
      expect((await fx.api.get(`/v1/principals/${other.body.id}`)).body.attributes.manager_id).to.equal(
        boss.body.id,
      );
      const viaScim = await scim.get(`/scim/v2/Users/${other.body.id}`);
      expect(viaScim.body[ENTERPRISE].manager.value).to.equal(boss.body.id);
    });

    it('refuses through /v1 what the connector owns', async () => {
      const { scim } = await connector();
      const created = await scim.post('/scim/v2/Users', user(`${uniq('own')}@example.com`, { title: 'Eng' }));
      const id = created.body.id as string;
      const role = await fx.api.patch(`/v1/principals/${id}`, { attributes: { role: 'admin' } });
      expect(role.status).to.equal(403);
      expect(role.body.code).to.equal('PRINCIPAL_MANAGED_BY_CONNECTOR');
      const ok = await fx.api.patch(`/v1/principals/${id}`, { attributes: { team: 'core' } });
      expect(ok.status, ok.text).to.equal(200);
      expect((await fx.api.delete(`/v1/principals/${id}`)).status).to.equal(403);
    });

    it('answers bad input with SCIM errors and changes nothing', async () => {
      const { scim } = await connector();
      const missing = await scim.post('/scim/v2/Users', { schemas: [USER], emails: [] });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.deep.include({ status: '400', scimType: 'invalidValue' });
      const malformed = await scim.post('/scim/v2/Users', undefined, {
        raw: '{"userName":',
        headers: { 'Content-Type': 'application/scim+json' },
      });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.scimType).to.equal('invalidSyntax');
      const unknown = await scim.get('/scim/v2/Users/prn_01JD0000000000000000000000');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.status).to.equal('404');
      const noRoute = await scim.get('/scim/v2/Nothing');
      expect(noRoute.status).to.equal(404);
      expect(noRoute.headers.get('content-type')).to.match(/scim\+json/);
      const list = await scim.get('/scim/v2/Users');
      expect(list.body.totalResults).to.equal(0);
    });
  });

  describe('/scim/v2/Groups', () => {
    const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

    it('provisions groups with members that the decision engine follows, and patches them as Entra does', async () => {
      const { scim, name: source } = await connector();
      const ann = (await scim.post('/scim/v2/Users', user(`${uniq('ann')}@example.com`))).body.id as string;
      const bob = (await scim.post('/scim/v2/Users', user(`${uniq('bob')}@example.com`))).body.id as string;
      const displayName = uniq('Engineering ');
      const created = await scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName,
        externalId: uniq('g-'),
        members: [{ value: ann }],
        description: 'kept as sent',
      });
      expect(created.status, created.text).to.equal(201);
      const id = created.body.id as string;
      expect(id).to.match(/^grp_/);
      expect(created.body.members.map((m: { value: string }) => m.value)).to.deep.equal([ann]);
      expect(created.body.description).to.equal('kept as sent');

      const v1 = await fx.api.get(`/v1/groups/${id}`);
      expect(v1.body).to.include({
        name: displayName,
        source: 'connector',
        connector_source: source,
        member_count: 1,
      });
      expect((await fx.api.patch(`/v1/groups/${id}`, { name: 'x' })).status).to.equal(403);
      const asUser = await scim.get(`/scim/v2/Users/${ann}`);
      expect(asUser.body.groups).to.deep.equal([
        {
          value: id,
          $ref: `${fx.app.config.publicBaseUrl}/scim/v2/Groups/${id}`,
          display: displayName,
          type: 'direct',
        },
      ]);

      const policy = await fx.api.post('/v1/policies', {
        name: uniq('scim-group-'),
        effect: 'allow',
        subjects: { groups: [id] },
        actions: ['read'],
        resources: [{ type: 'document', identifier: displayName }],
      });
      expect(policy.status, policy.text).to.equal(201);
      const decide = async (principal: string): Promise<string> =>
        (
          await fx.api.post('/v1/decisions/evaluate', {
            principal_id: principal,
            action: 'read',
            resource: { type: 'document', identifier: displayName },
          })
        ).body.decision;
      expect(await decide(ann)).to.equal('ALLOW');
      expect(await decide(bob)).to.equal('DENY');

      const added = await scim.patch(`/scim/v2/Groups/${id}`, {
        schemas: [PATCH],
        Operations: [
          { op: 'Add', path: 'members', value: [{ value: bob }] },
          { op: 'Replace', path: 'displayName', value: `${displayName} 2` },
        ],
      });
      expect(added.status, added.text).to.equal(200);
      expect(added.body.members.map((m: { value: string }) => m.value).sort()).to.deep.equal(
        [ann, bob].sort(),
      );
      expect(await decide(bob)).to.equal('ALLOW');
      const removed = await scim.patch(`/scim/v2/Groups/${id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'Remove', path: `members[value eq "${ann}"]` }],
      });
      expect(removed.status, removed.text).to.equal(200);
      expect(removed.body.members.map((m: { value: string }) => m.value)).to.deep.equal([bob]);
      expect(await decide(ann)).to.equal('DENY');

      const events = await fx.api.get(`/v1/audit/events?target_id=${id}&limit=20`);
      expect(events.body.data.map((e: { type: string }) => e.type).sort()).to.deep.equal([
        'group.created',
        'group.member_added',
        'group.member_added',
        'group.member_removed',
        'group.updated',
      ]);

      const put = await scim.put(`/scim/v2/Groups/${id}`, {
        schemas: [GROUP],
        displayName,
        members: [{ value: ann }],
      });
      expect(put.status, put.text).to.equal(200);
      expect(put.body.members.map((m: { value: string }) => m.value)).to.deep.equal([ann]);
      expect(put.body).to.not.have.property('description');

      const deleted = await scim.delete(`/scim/v2/Groups/${id}`);
      expect(deleted.status).to.equal(204);
      expect((await scim.get(`/scim/v2/Groups/${id}`)).status).to.equal(404);
      expect((await fx.api.get(`/v1/groups/${id}`)).status).to.equal(404);
      expect(await decide(ann)).to.equal('DENY');
    });

    it('filters, pages, leaves members out when asked, and keeps names unique per connector', async () => {
      const a = await connector();
      const b = await connector();
      const member = (await a.scim.post('/scim/v2/Users', user(`${uniq('m')}@example.com`))).body
        .id as string;
      const names = ['Alpha', 'Beta', 'Gamma'].map((n) => uniq(`${n} `));
      const ids: string[] = [];
      for (const [i, displayName] of names.entries()) {
        const res = await a.scim.post('/scim/v2/Groups', {
          schemas: [GROUP],
          displayName,
          members: i === 1 ? [{ value: member }] : [],
        });
        expect(res.status, res.text).to.equal(201);
        ids.push(res.body.id);
      }
      const find = async (filter: string, scim = a.scim): Promise<string[]> => {
        const res = await scim.get(`/scim/v2/Groups?filter=${encodeURIComponent(filter)}`);
        expect(res.status, res.text).to.equal(200);
        return res.body.Resources.map((r: { id: string }) => r.id);
      };
      expect(await find(`displayName eq "${names[0]!.toUpperCase()}"`)).to.deep.equal([ids[0]]);
      expect(await find(`members[value eq "${member}"]`)).to.deep.equal([ids[1]]);
      expect(await find(`displayName sw "gamma" or displayName sw "alpha"`)).to.deep.equal([ids[0], ids[2]]);
      expect(await find(`displayName eq "${names[0]}"`, b.scim)).to.deep.equal([]);
      const lean = await a.scim.get('/scim/v2/Groups?excludedAttributes=members&count=2');
      expect(lean.body).to.include({ totalResults: 3, itemsPerPage: 2 });
      expect(lean.body.Resources[1]).to.not.have.property('members');

      const dup = await a.scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName: names[0]!.toLowerCase(),
      });
      expect(dup.status).to.equal(409);
      expect(dup.body.scimType).to.equal('uniqueness');
      expect(
        (await b.scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: names[0] })).status,
      ).to.equal(201);
      const foreign = await b.scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName: uniq('x'),
        members: [{ value: member }],
      });
      expect(foreign.status).to.equal(400);
      expect(foreign.body.scimType).to.equal('invalidValue');
      expect((await b.scim.get(`/scim/v2/Groups/${ids[0]}`)).status).to.equal(404);
    });
  });

  describe('POST /v1/connectors/{id}/sync', () => {
    const lines = snapshotLines;
    const sync = (connectorId: string, body: string): Promise<any> => syncSnapshot(fx.api, connectorId, body);

    it('creates, updates, leaves alone and deprovisions, links managers and group members', async () => {
      const { id, scim, name } = await connector();
      const [boss, ann, bob] = ['boss', 'ann', 'bob'].map((n) => ({
        userName: `${n}.${uniq('')}@example.com`,
        externalId: uniq(`${n}-`),
      }));
      const snapshot = (annTitle: string, withBob: boolean, members: string[]) =>
        lines([
          user(ann!.userName, {
            externalId: ann!.externalId,
            title: annTitle,
            [ENTERPRISE]: { manager: { value: boss!.externalId } },
          }),
          ...(withBob ? [user(bob!.userName, { externalId: bob!.externalId })] : []),
          user(boss!.userName, { externalId: boss!.externalId, title: 'Director' }),
          {
            schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
            displayName: `Team ${name}`,
            externalId: `g-${name}`,
            members: members.map((value) => ({ value })),
          },
        ]);
      const first = await sync(id, snapshot('Engineer', true, [ann!.externalId, bob!.externalId]));
      expect(first.counts).to.include({
        lines: 4,
        invalid: 0,
        users_created: 3,
        users_updated: 0,
        groups_created: 1,
      });
      expect(first.progress.phase).to.equal('done');

      const found = await scim.get(
        `/scim/v2/Users?filter=${encodeURIComponent(`externalId eq "${ann!.externalId}"`)}`,
      );
      const annId = found.body.Resources[0].id as string;
      const annPrincipal = (await fx.api.get(`/v1/principals/${annId}`)).body;
      expect(annPrincipal).to.include({ connector_source: name, status: 'active' });
      expect(annPrincipal.attributes.role).to.equal('Engineer');
      const bossId = (
        await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${boss!.userName}"`)}`)
      ).body.Resources[0].id as string;
      expect(annPrincipal.attributes.manager_id).to.equal(bossId);
      const group = (
        await scim.get(`/scim/v2/Groups?filter=${encodeURIComponent(`externalId eq "g-${name}"`)}`)
      ).body.Resources[0];
      expect(group.members).to.have.length(2);
      const created = await fx.api.get(`/v1/audit/events?target_id=${annId}`);
      expect(created.body.data.at(-1)).to.deep.include({
        type: 'principal.created',
        actor: { type: 'connector', id },
      });

      const again = await sync(id, snapshot('Engineer', true, [ann!.externalId, bob!.externalId]));
      expect(again.counts).to.include({
        users_created: 0,
        users_updated: 0,
        users_unchanged: 3,
        users_deprovisioned: 0,
        groups_unchanged: 1,
      });

      const second = await sync(id, snapshot('Staff engineer', false, [ann!.externalId]));
      expect(second.counts).to.include({
        users_created: 0,
        users_updated: 1,
        users_unchanged: 1,
        users_deprovisioned: 1,
        groups_unchanged: 1,
      });
      expect((await fx.api.get(`/v1/principals/${annId}`)).body.attributes.role).to.equal('Staff engineer');
      const gone = await scim.get(
        `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${bob!.userName}"`)}`,
      );
      expect(gone.body.totalResults).to.equal(0);
      const after = (await scim.get(`/scim/v2/Groups/${group.id}`)).body;
      expect(after.members.map((m: { value: string }) => m.value)).to.deep.equal([annId]);
    });

    it('reports lines it cannot read and then deprovisions nobody', async () => {
      const { id, scim } = await connector();
      const kept = `${uniq('kept')}@example.com`;
      expect((await scim.post('/scim/v2/Users', user(kept))).status).to.equal(201);
      const result = await sync(
        id,
        lines([
          '{"userName":',
          user(`${uniq('new')}@example.com`),
          { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'] },
        ]),
      );
      expect(result.counts).to.include({ lines: 3, invalid: 2, users_created: 1, users_deprovisioned: 0 });
      expect(result.errors.map((e: { line: number }) => e.line)).to.deep.equal([1, 3]);
      const still = await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${kept}"`)}`);
      expect(still.body.totalResults).to.equal(1);
    });

    it('refuses other media types, unknown and deleted connectors', async () => {
      const { id } = await connector();
      const json = await fx.api.post(`/v1/connectors/${id}/sync`, { userName: 'x' });
      expect(json.status).to.equal(415);
      expect(
        (
          await fx.api.post('/v1/connectors/con_01JD0000000000000000000000/sync', undefined, {
            raw: '{}',
            headers: NDJSON,
          })
        ).status,
      ).to.equal(404);
      expect((await fx.api.delete(`/v1/connectors/${id}`)).status).to.equal(200);
      expect(
        (await fx.api.post(`/v1/connectors/${id}/sync`, undefined, { raw: '{}', headers: NDJSON })).status,
      ).to.equal(409);
      expect((await fx.api.get(`/v1/connectors/${id}/sync/job_01JD0000000000000000000000`)).status).to.equal(
        404,
      );
    });
  });
});
