import { expect } from 'chai';
import { createClient, authed } from '../helpers/auth.js';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient, HttpResponse } from '../helpers/http.js';

/**
 * Connector profiles (the SCIM dialect of each identity provider, where the vendors' own
 * reference tests disagree) and the discovery documents those tests read.
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SPC = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';

type Profile = 'generic' | 'okta' | 'entra';
type Json = Record<string, any>;

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

const patchOp = (...Operations: Json[]): Json => ({ schemas: [PATCH_OP], Operations });

describe('connector profiles', () => {
  const fx = useApp();

  interface Connector {
    id: string;
    scim: HttpClient;
    body: Json;
  }

  async function connector(profile?: Profile): Promise<Connector> {
    const res = await fx.api.post('/v1/connectors', {
      name: uniq('profile-'),
      ...(profile ? { profile } : {}),
    });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, scim: fx.http.withToken(res.body.token), body: res.body };
  }

  async function user(scim: HttpClient): Promise<Json> {
    const userName = `${uniq('ada')}@example.com`;
    const res = await scim.post('/scim/v2/Users', {
      schemas: [USER],
      userName,
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      emails: [{ value: userName, type: 'work', primary: true }],
    });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  async function group(scim: HttpClient, members: string[] = []): Promise<Json> {
    const res = await scim.post('/scim/v2/Groups', {
      schemas: [GROUP],
      displayName: uniq('Group '),
      members: members.map((value) => ({ value })),
    });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  const memberIds = (resource: Json): string[] =>
    ((resource['members'] ?? []) as Json[]).map((m) => m['value'] as string).sort();

  describe('/v1/connectors', () => {
    it('creates with a profile (generic unless given), shows it on every read, and changes it with PATCH', async () => {
      const plain = await connector();
      expect(plain.body).to.include({ profile: 'generic' });
      const okta = await connector('okta');
      expect(okta.body).to.include({ profile: 'okta' });
      expect((await fx.api.get(`/v1/connectors/${okta.id}`)).body).to.include({ profile: 'okta' });
      const listed = await fx.api.get('/v1/connectors?limit=100');
      const byId = new Map(listed.body.data.map((c: Json) => [c['id'], c['profile']]));
      expect([byId.get(plain.id), byId.get(okta.id)]).to.deep.equal(['generic', 'okta']);

      const changed = await fx.api.patch(`/v1/connectors/${okta.id}`, {
        profile: 'entra',
        description: 'Entra ID',
      });
      expect(changed.status, changed.text).to.equal(200);
      expect(changed.body).to.include({
        id: okta.id,
        profile: 'entra',
        description: 'Entra ID',
        status: 'active',
      });
      expect(changed.body).to.not.have.property('token');
      expect(changed.body.scim_base_url).to.equal(`${fx.app.config.publicBaseUrl}/scim/v2`);
      const cleared = await fx.api.patch(`/v1/connectors/${okta.id}`, { description: null });
      expect(cleared.status, cleared.text).to.equal(200);
      expect(cleared.body).to.include({ profile: 'entra', description: null });
      expect((await fx.api.get(`/v1/connectors/${okta.id}`)).body).to.include({
        profile: 'entra',
        description: null,
      });
      // A change to what the connector already is records nothing.
      expect((await fx.api.patch(`/v1/connectors/${okta.id}`, { profile: 'entra' })).status).to.equal(200);

      const events = await fx.api.get(`/v1/audit/events?target_id=${okta.id}&limit=10`);
      const trail = (events.body.data as Json[])
        .map((e) => ({ type: e['type'], changes: e['changes'], actor: e['actor'].type }))
        .reverse();
      expect(trail).to.deep.equal([
        {
          type: 'connector.created',
          changes: { name: { to: okta.body.name }, profile: { to: 'okta' } },
          actor: 'client',
        },
        {
          type: 'connector.updated',
          changes: { profile: { from: 'okta', to: 'entra' }, description: { from: null, to: 'Entra ID' } },
          actor: 'client',
        },
        {
          type: 'connector.updated',
          changes: { description: { from: 'Entra ID', to: null } },
          actor: 'client',
        },
      ]);
      const filtered = await fx.api.get(`/v1/audit/events?type=connector.updated&target_id=${okta.id}`);
      expect(filtered.status, filtered.text).to.equal(200);
      expect(filtered.body.data).to.have.length(2);
    });

    it('refuses an unknown profile or field (400), an unknown connector (404), a deleted one (409) and a caller without connectors:admin (403)', async () => {
      const { id } = await connector();
      const refused = async (res: Promise<HttpResponse>, status: number, code: string): Promise<void> => {
        const answer = await res;
        expect(answer.status, answer.text).to.equal(status);
        expect(answer.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(answer.body.code).to.equal(code);
      };
      await refused(
        fx.api.post('/v1/connectors', { name: uniq('x'), profile: 'azure' }),
        400,
        'VALIDATION_FAILED',
      );
      await refused(
        fx.api.post('/v1/connectors', { name: uniq('x'), profile: 'Entra' }),
        400,
        'VALIDATION_FAILED',
      );
      await refused(fx.api.patch(`/v1/connectors/${id}`, { profile: 'azure' }), 400, 'VALIDATION_FAILED');
      await refused(fx.api.patch(`/v1/connectors/${id}`, { profile: null }), 400, 'VALIDATION_FAILED');
      await refused(fx.api.patch(`/v1/connectors/${id}`, { name: 'renamed' }), 400, 'VALIDATION_FAILED');
      await refused(
        fx.api.patch(`/v1/connectors/${id}`, { profile: 'okta', status: 'deleted' }),
        400,
        'VALIDATION_FAILED',
      );
      await refused(fx.api.patch(`/v1/connectors/${id}`, {}), 400, 'VALIDATION_FAILED');
      await refused(
        fx.api.patch(`/v1/connectors/${id}`, { description: 'x'.repeat(1025) }),
        400,
        'VALIDATION_FAILED',
      );
      expect((await fx.api.get(`/v1/connectors/${id}`)).body).to.include({
        profile: 'generic',
        description: null,
      });

      await refused(
        fx.api.patch('/v1/connectors/con_01JD0000000000000000000000', { profile: 'okta' }),
        404,
        'NOT_FOUND',
      );
      await refused(fx.api.patch('/v1/connectors/not-an-id', { profile: 'okta' }), 404, 'NOT_FOUND');

      const reader = await authed(fx.app, await createClient(fx.app, ['principals:read', 'groups:write']));
      await refused(reader.patch(`/v1/connectors/${id}`, { profile: 'okta' }), 403, 'INSUFFICIENT_SCOPE');
      expect((await fx.http.patch(`/v1/connectors/${id}`, { profile: 'okta' })).status).to.equal(401);

      expect((await fx.api.delete(`/v1/connectors/${id}`)).status).to.equal(200);
      await refused(fx.api.patch(`/v1/connectors/${id}`, { profile: 'okta' }), 409, 'CONFLICT');
      const events = await fx.api.get(`/v1/audit/events?target_id=${id}&limit=10`);
      expect(events.body.data.map((e: Json) => e['type']).sort()).to.deep.equal([
        'connector.created',
        'connector.deleted',
      ]);
    });

    it('reads a connector stored without a profile as generic, until one is set', async () => {
      const { id, scim } = await connector();
      await cypher(fx.app.runtime.db, 'MATCH (c:Connector {id: $id}) REMOVE c.profile', { id });
      expect((await fx.api.get(`/v1/connectors/${id}`)).body).to.include({ profile: 'generic' });
      const { id: userId } = await user(scim);
      const patch = patchOp({ op: 'replace', path: 'displayName', value: 'Ada' });
      expect((await scim.patch(`/scim/v2/Users/${userId}`, patch)).status).to.equal(200);
      const changed = await fx.api.patch(`/v1/connectors/${id}`, { profile: 'entra' });
      expect(changed.body).to.include({ profile: 'entra' });
      const events = await fx.api.get(`/v1/audit/events?type=connector.updated&target_id=${id}`);
      expect(events.body.data[0].changes).to.deep.equal({ profile: { from: 'generic', to: 'entra' } });
    });
  });

  describe('the SCIM dialect of each profile', () => {
    it('answers a user PATCH with 204, no body and the new ETag for entra, and 200 with the user for okta and generic', async () => {
      for (const profile of ['generic', 'okta', 'entra'] as const) {
        const { scim } = await connector(profile);
        const created = await user(scim);
        const id = created['id'] as string;
        const res = await scim.patch(
          `/scim/v2/Users/${id}`,
          patchOp(
            { op: 'Replace', path: 'userName', value: `renamed-${id}` },
            { op: 'Replace', path: 'active', value: false },
          ),
        );
        const got = await scim.get(`/scim/v2/Users/${id}`);
        expect(got.body, profile).to.include({ userName: `renamed-${id}`, active: false });
        if (profile === 'entra') {
          expect(res.status, res.text).to.equal(204);
          expect(res.text, profile).to.equal('');
          expect(res.headers.get('content-type'), profile).to.equal(null);
        } else {
          expect(res.status, `${profile}: ${res.text}`).to.equal(200);
          expect(res.headers.get('content-type'), profile).to.match(/^application\/scim\+json/);
          expect(res.body, profile).to.deep.equal(got.body);
        }
        expect(res.headers.get('etag'), profile).to.equal(got.body.meta.version);
        expect(res.headers.get('etag'), profile).to.not.equal(created['meta'].version);
        // PUT answers the resource whatever the profile.
        const put = await scim.put(`/scim/v2/Users/${id}`, { ...got.body, displayName: 'Ada L.' });
        expect(put.status, `${profile}: ${put.text}`).to.equal(200);
        expect(put.body.displayName).to.equal('Ada L.');
      }
    });

    it('answers a group PATCH with 204 for entra and 200 with the group for okta and generic', async () => {
      for (const profile of ['generic', 'okta', 'entra'] as const) {
        const { scim } = await connector(profile);
        const member = await user(scim);
        const { id } = await group(scim);
        const res = await scim.patch(
          `/scim/v2/Groups/${id}`,
          patchOp({ op: 'add', path: 'members', value: [{ value: member['id'] }] }),
        );
        const got = await scim.get(`/scim/v2/Groups/${id}`);
        expect(memberIds(got.body), profile).to.deep.equal([member['id']]);
        expect(res.status, `${profile}: ${res.text}`).to.equal(profile === 'entra' ? 204 : 200);
        if (profile === 'entra') expect(res.text).to.equal('');
        else expect(res.body, profile).to.deep.equal(got.body);
        expect(res.headers.get('etag'), profile).to.equal(got.body.meta.version);
      }
    });

    it('follows a profile change on the next SCIM request', async () => {
      const { id: connectorId, scim } = await connector('okta');
      const { id } = await user(scim);
      const patch = patchOp({ op: 'replace', path: 'title', value: 'Analyst' });
      expect((await scim.patch(`/scim/v2/Users/${id}`, patch)).status).to.equal(200);
      expect((await fx.api.patch(`/v1/connectors/${connectorId}`, { profile: 'entra' })).status).to.equal(
        200,
      );
      expect((await scim.patch(`/scim/v2/Users/${id}`, patch)).status).to.equal(204);
      expect((await fx.api.patch(`/v1/connectors/${connectorId}`, { profile: 'generic' })).status).to.equal(
        200,
      );
      expect((await scim.patch(`/scim/v2/Users/${id}`, patch)).status).to.equal(200);
    });

    it('reads a member sent as a bare id in a group PATCH as one member, for every profile', async () => {
      for (const profile of ['generic', 'okta', 'entra'] as const) {
        const { scim } = await connector(profile);
        const [ann, bob, cid] = [await user(scim), await user(scim), await user(scim)];
        const { id } = await group(scim);
        const send = async (...ops: Json[]): Promise<string[]> => {
          const res = await scim.patch(`/scim/v2/Groups/${id}`, patchOp(...ops));
          expect(res.status, `${profile}: ${res.text}`).to.equal(profile === 'entra' ? 204 : 200);
          return memberIds((await scim.get(`/scim/v2/Groups/${id}`)).body);
        };
        expect(await send({ op: 'add', path: 'members', value: ann['id'] })).to.deep.equal([ann['id']]);
        expect(await send({ op: 'Add', path: 'members', value: [bob['id']] })).to.deep.equal(
          [ann['id'], bob['id']].sort(),
        );
        expect(await send({ op: 'replace', path: 'members', value: cid['id'] })).to.deep.equal([cid['id']]);
        expect(await send({ op: 'replace', value: { members: ann['id'] } })).to.deep.equal([ann['id']]);
        expect(await send({ op: 'remove', path: 'members', value: ann['id'] })).to.deep.equal([]);
      }
    });

    it('skips member ids that name nothing for entra, and refuses them with 400 invalidValue otherwise', async () => {
      for (const profile of ['generic', 'okta', 'entra'] as const) {
        const { scim } = await connector(profile);
        const ann = await user(scim);
        const { id } = await group(scim, [ann['id'] as string]);
        const res = await scim.patch(
          `/scim/v2/Groups/${id}`,
          patchOp({ op: 'add', path: 'members', value: 'string id 1' }),
        );
        if (profile === 'entra') {
          expect(res.status, res.text).to.equal(204);
        } else {
          expect(res.status, `${profile}: ${res.text}`).to.equal(400);
          expect(res.body, profile).to.deep.include({ status: '400', scimType: 'invalidValue' });
        }
        const got = await scim.get(`/scim/v2/Groups/${id}`);
        expect(got.status).to.equal(200);
        expect(memberIds(got.body), profile).to.deep.equal([ann['id']]);
        // Another connector's user names nothing in this one either.
        const other = await user((await connector()).scim);
        const created = await scim.post('/scim/v2/Groups', {
          schemas: [GROUP],
          displayName: uniq('Mixed '),
          members: [{ value: ann['id'] }, { value: other['id'] }],
        });
        expect(created.status, `${profile}: ${created.text}`).to.equal(profile === 'entra' ? 201 : 400);
        if (profile === 'entra') expect(memberIds(created.body)).to.deep.equal([ann['id']]);
      }
    });
  });

  describe('discovery', () => {
    it('answers serviceConfiguration, in any case, exactly as ServiceProviderConfig', async () => {
      const { scim } = await connector('entra');
      const config = await scim.get('/scim/v2/ServiceProviderConfig');
      expect(config.status).to.equal(200);
      expect(config.body.schemas).to.deep.equal([SPC]);
      expect(config.body.patch).to.deep.equal({ supported: true });
      for (const path of [
        '/scim/v2/serviceConfiguration',
        '/scim/v2/ServiceConfiguration',
        '/SCIM/V2/SERVICECONFIGURATION',
      ]) {
        const alias = await scim.get(path);
        expect(alias.status, path).to.equal(200);
        expect(alias.headers.get('content-type'), path).to.match(/^application\/scim\+json/);
        expect(alias.body, path).to.deep.equal(config.body);
      }
      const unauthenticated = await fx.http.get('/scim/v2/serviceConfiguration');
      expect(unauthenticated.status).to.equal(401);
      expect(unauthenticated.body).to.deep.include({ status: '401' });
      // The discovery documents are read-only.
      for (const path of [
        '/scim/v2/serviceConfiguration',
        '/scim/v2/ServiceProviderConfig',
        '/scim/v2/Schemas',
      ]) {
        const post = await scim.post(path, { schemas: [SPC] });
        expect(post.status, path).to.equal(405);
        expect(post.headers.get('content-type'), path).to.match(/^application\/scim\+json/);
        expect(post.body, path).to.deep.include({ status: '405' });
      }
    });

    it('names and describes the schemas as RFC 7643 §8.7 does', async () => {
      const { scim } = await connector();
      const schemas = await scim.get('/scim/v2/Schemas');
      expect(schemas.status).to.equal(200);
      const named = (schemas.body.Resources as Json[]).map(({ id, name, description }) => ({
        id,
        name,
        description,
      }));
      expect(named).to.deep.equal([
        { id: USER, name: 'User', description: 'User Account' },
        { id: ENTERPRISE, name: 'EnterpriseUser', description: 'Enterprise User' },
        { id: GROUP, name: 'Group', description: 'Group' },
      ]);
      expect(schemas.text).to.include('User Account');
      for (const schema of schemas.body.Resources as Json[]) {
        const one = await scim.get(`/scim/v2/Schemas/${schema['id'] as string}`);
        expect(one.body, schema['id']).to.deep.equal(schema);
      }
      const types = await scim.get('/scim/v2/ResourceTypes');
      expect(types.body.Resources[0]).to.include({ id: 'User', endpoint: '/Users', schema: USER });
      expect(types.body.Resources[1]).to.include({ id: 'Group', endpoint: '/Groups', schema: GROUP });
    });

    it("gives the service's OpenAPI document, absolute, as documentationUri", async () => {
      const { scim } = await connector();
      const config = await scim.get('/scim/v2/ServiceProviderConfig');
      const uri = config.body.documentationUri as string;
      expect(uri).to.equal(`${fx.app.config.publicBaseUrl}/v1/openapi.json`);
      expect(config.body.meta.location).to.equal(
        `${fx.app.config.connectors.scimBaseUrl}/ServiceProviderConfig`,
      );
      const document = await fx.http.get(new URL(uri).pathname);
      expect(document.status).to.equal(200);
      expect(document.body.paths).to.have.property('/v1/connectors/{id}');
      expect(document.body.paths['/v1/connectors/{id}']).to.have.property('patch');
      expect(document.body.paths).to.have.property('/scim/v2/serviceConfiguration');
    });
  });
});
