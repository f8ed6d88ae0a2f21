import { expect } from 'chai';
import { SCOPES } from '../../src/vocabulary/scopes.js';
import { eventually } from '../helpers/wait.js';
import { cypher } from '../helpers/db.js';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { ADMIN, authed, basic, createClient, tokenFor, type TestClient } from '../helpers/auth.js';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

function form(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

describe('OAuth 2.0 tokens', () => {
  let app: TestApp;
  let reader: TestClient;
  const fx = useApp();
  before(async () => {
    app = fx.app;
    reader = await createClient(app, ['principals:read', 'audit:read']);
  });

  describe('with standard client libraries', () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    let as: oauth.AuthorizationServer;
    before(async () => {
      const issuer = new URL(app.config.publicBaseUrl);
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
    });

    it('discovers the server through RFC 8414 metadata', () => {
      expect(as.issuer).to.equal(app.config.publicBaseUrl);
      expect(as.token_endpoint).to.equal(`${app.config.publicBaseUrl}/v1/auth/token`);
      expect(as.jwks_uri).to.equal(`${app.config.publicBaseUrl}/v1/auth/jwks.json`);
      expect(as.revocation_endpoint).to.equal(`${app.config.publicBaseUrl}/v1/auth/revoke`);
      expect(as.grant_types_supported).to.include.members(['client_credentials', 'refresh_token']);
    });

    for (const [name, auth] of [
      ['client_secret_basic', (c: TestClient) => oauth.ClientSecretBasic(c.secret)],
      ['client_secret_post', (c: TestClient) => oauth.ClientSecretPost(c.secret)],
    ] as const) {
      it(`obtains, refreshes and revokes tokens (${name}), and jose verifies them through the JWKS`, async () => {
        const client: oauth.Client = { client_id: reader.id };
        const clientAuth = auth(reader);
        const granted = await oauth.processClientCredentialsResponse(
          as,
          client,
          await oauth.clientCredentialsGrantRequest(
            as,
            client,
            clientAuth,
            { scope: 'principals:read' },
            insecure,
          ),
        );
        expect(granted.token_type).to.equal('bearer');
        expect(granted.scope).to.equal('principals:read');
        expect(granted.expires_in).to.equal(900);

        const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
        const verified = await jwtVerify(granted.access_token, jwks, {
          issuer: as.issuer,
          audience: `${app.config.publicBaseUrl}/v1`,
          typ: 'at+jwt',
        });
        expect(verified.payload).to.include({
          sub: reader.id,
          client_id: reader.id,
          scope: 'principals:read',
        });
        expect(verified.payload.jti).to.be.a('string');
        expect(verified.protectedHeader.kid).to.be.a('string');
        expect(['ES256', 'RS256']).to.include(verified.protectedHeader.alg);

        // RFC 9068 validation as a resource server would do it.
        const claims = await oauth.validateJwtAccessToken(
          as,
          new Request(`${app.config.publicBaseUrl}/v1/audit/events`, {
            headers: { Authorization: `Bearer ${granted.access_token}` },
          }),
          `${app.config.publicBaseUrl}/v1`,
          insecure,
        );
        expect(claims.client_id).to.equal(reader.id);

        const refreshed = await oauth.processRefreshTokenResponse(
          as,
          client,
          await oauth.refreshTokenGrantRequest(as, client, clientAuth, granted.refresh_token!, insecure),
        );
        expect(refreshed.access_token).to.not.equal(granted.access_token);
        expect(refreshed.refresh_token).to.not.equal(granted.refresh_token);
        expect(refreshed.scope).to.equal('principals:read');

        const api = app.http.withToken(refreshed.access_token);
        expect((await api.get('/v1/audit/events?limit=1')).status).to.equal(403);
        await oauth.processRevocationResponse(
          await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token!, insecure),
        );
        expect((await api.get('/v1/audit/events?limit=1')).status).to.equal(401);
      });
    }
  });

  describe('token endpoint', () => {
    it('accepts JSON bodies as well as form bodies, and answers with no-store', async () => {
      const res = await app.http.post('/v1/auth/token', {
        grant_type: 'client_credentials',
        client_id: reader.id,
        client_secret: reader.secret,
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('pragma')).to.equal('no-cache');
      expect(res.body).to.have.keys(['access_token', 'token_type', 'expires_in', 'scope', 'refresh_token']);
      expect(res.body.scope.split(' ').sort()).to.deep.equal(['audit:read', 'principals:read']);
    });

    it('issues RFC 9068 access tokens: at+jwt, kid, asymmetric, all claims', async () => {
      const { access_token } = await tokenFor(app.http, reader);
      const header = decodeProtectedHeader(access_token);
      expect(header.typ).to.equal('at+jwt');
      expect(header.kid).to.be.a('string');
      expect(header.alg).to.equal('ES256');
      const payload = JSON.parse(Buffer.from(access_token.split('.')[1]!, 'base64url').toString());
      expect(payload).to.have.keys(['iss', 'sub', 'client_id', 'aud', 'scope', 'iat', 'exp', 'jti']);
      expect(payload.exp - payload.iat).to.equal(900);
    });

    const errors: [string, Record<string, string>, Record<string, string>, number, string][] = [
      ['no grant_type', {}, {}, 400, 'invalid_request'],
      ['an unknown grant type', { grant_type: 'password' }, {}, 400, 'unsupported_grant_type'],
      [
        'client_credentials without client authentication',
        { grant_type: 'client_credentials' },
        {},
        401,
        'invalid_client',
      ],
      [
        'a scope the client does not hold',
        { grant_type: 'client_credentials', scope: 'clients:admin' },
        {},
        400,
        'invalid_scope',
      ],
      [
        'an unknown scope',
        { grant_type: 'client_credentials', scope: 'everything' },
        {},
        400,
        'invalid_scope',
      ],
      ['refresh_token grant without a token', { grant_type: 'refresh_token' }, {}, 400, 'invalid_request'],
      [
        'an unknown refresh token',
        { grant_type: 'refresh_token', refresh_token: 'pas_rt_nope' },
        {},
        400,
        'invalid_grant',
      ],
    ];
    for (const [what, params, _extra, status, error] of errors) {
      it(`answers ${what} with ${status} ${error}`, async () => {
        const needsAuth = params['scope'] !== undefined;
        const res = await app.http.post('/v1/auth/token', undefined, {
          raw: form(params),
          headers: { ...FORM, ...(needsAuth ? { Authorization: basic(reader) } : {}) },
        });
        expect(res.status, res.text).to.equal(status);
        expect(res.body.error).to.equal(error);
        expect(res.body.error_description).to.be.a('string');
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.headers.get('cache-control')).to.equal('no-store');
      });
    }

    it('answers repeated parameters with invalid_request', async () => {
      const res = await app.http.post('/v1/auth/token', undefined, {
        raw: 'grant_type=client_credentials&grant_type=client_credentials',
        headers: { ...FORM, Authorization: basic(reader) },
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
    });

    it('answers two client authentication methods at once with invalid_request', async () => {
      const res = await app.http.post('/v1/auth/token', undefined, {
        raw: form({ grant_type: 'client_credentials', client_id: reader.id, client_secret: reader.secret }),
        headers: { ...FORM, Authorization: basic(reader) },
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
    });

    it('answers a wrong secret over Basic with 401 invalid_client and WWW-Authenticate: Basic', async () => {
      const res = await app.http.post('/v1/auth/token', undefined, {
        raw: form({ grant_type: 'client_credentials' }),
        headers: { ...FORM, Authorization: basic({ id: reader.id, secret: 'wrong' }) },
      });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
      expect(res.headers.get('www-authenticate')).to.match(/^Basic realm="/);
    });

    it('answers a wrong secret in the body with 401 invalid_client', async () => {
      const res = await app.http.post('/v1/auth/token', undefined, {
        raw: form({ grant_type: 'client_credentials', client_id: reader.id, client_secret: 'wrong' }),
        headers: FORM,
      });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.equal('invalid_client');
    });

    it('answers an unknown client exactly like a wrong secret', async () => {
      const res = await app.http.post('/v1/auth/token', undefined, {
        raw: form({
          grant_type: 'client_credentials',
          client_id: 'cli_01JD0000000000000000000000',
          client_secret: 'x',
        }),
        headers: FORM,
      });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({
        error: 'invalid_client',
        error_description: 'client authentication failed',
      });
    });

    it('answers malformed bodies in the OAuth error format', async () => {
      const res = await app.http.post('/v1/auth/token', undefined, {
        raw: '{"grant_type": ',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
      const plain = await app.http.post('/v1/auth/token', undefined, {
        raw: 'x',
        headers: { 'Content-Type': 'text/plain' },
      });
      expect(plain.status).to.equal(415);
      expect(plain.body.error).to.equal('invalid_request');
    });

    it('narrows the scope on request and keeps the narrowed scope on refresh', async () => {
      const narrow = await tokenFor(app.http, reader, 'audit:read');
      expect(narrow.scope).to.equal('audit:read');
      const res = await app.http.post('/v1/auth/refresh', { refresh_token: narrow.refresh_token });
      expect(res.status).to.equal(200);
      expect(res.body.scope).to.equal('audit:read');
      const wider = await app.http.post('/v1/auth/refresh', {
        refresh_token: res.body.refresh_token,
        scope: 'principals:read',
      });
      expect(wider.status).to.equal(400);
      expect(wider.body.error).to.equal('invalid_scope');
    });
  });

  describe('refresh rotation', () => {
    it('rotates on POST /auth/refresh and via the refresh_token grant', async () => {
      const first = await tokenFor(app.http, reader);
      const second = await app.http.post('/v1/auth/refresh', { refresh_token: first.refresh_token });
      expect(second.status).to.equal(200);
      expect(second.headers.get('cache-control')).to.equal('no-store');
      const third = await app.http.post('/v1/auth/token', undefined, {
        raw: form({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token }),
        headers: { ...FORM, Authorization: basic(reader) },
      });
      expect(third.status).to.equal(200);
      expect((await app.http.withToken(third.body.access_token).get('/v1/auth/jwks.json')).status).to.equal(
        200,
      );
    });

    it('revokes the whole family when a rotated refresh token is replayed', async () => {
      const first = await tokenFor(app.http, reader);
      const second = (await app.http.post('/v1/auth/refresh', { refresh_token: first.refresh_token })).body;
      const third = (await app.http.post('/v1/auth/refresh', { refresh_token: second.refresh_token })).body;
      const live = app.http.withToken(third.access_token);
      expect((await live.get('/v1/audit/events?limit=1')).status).to.equal(200);

      const replay = await app.http.post('/v1/auth/refresh', { refresh_token: first.refresh_token });
      expect(replay.status).to.equal(400);
      expect(replay.body.error).to.equal('invalid_grant');

      // Every token of the family is now dead: the newest access and refresh tokens included.
      expect((await live.get('/v1/audit/events?limit=1')).status).to.equal(401);
      expect((await app.http.withToken(first.access_token).get('/v1/audit/events?limit=1')).status).to.equal(
        401,
      );
      const next = await app.http.post('/v1/auth/refresh', { refresh_token: third.refresh_token });
      expect(next.body.error).to.equal('invalid_grant');

      const admin = await authed(app);
      const events = await admin.get(`/v1/audit/events?type=token.revoked&actor_id=system`);
      expect(events.body.data.some((e: any) => e.reason === 'refresh_token_reuse')).to.equal(true);
    });

    it('refuses a refresh token presented by another client', async () => {
      const other = await createClient(app, ['principals:read']);
      const first = await tokenFor(app.http, reader);
      const res = await app.http.post('/v1/auth/token', undefined, {
        raw: form({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
        headers: { ...FORM, Authorization: basic(other) },
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_grant');
    });

    it('refuses an expired refresh token', async () => {
      const first = await tokenFor(app.http, reader);
      await cypher(
        app.runtime.db,
        "MATCH (r:RefreshToken {status: 'active'}) SET r.expires_at = datetime() - duration('PT1S')",
      );
      const res = await app.http.post('/v1/auth/refresh', { refresh_token: first.refresh_token });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_grant');
    });
  });

  describe('revocation (RFC 7009)', () => {
    it('revokes an access token through DELETE; the next request is refused', async () => {
      const { access_token } = await tokenFor(app.http, reader);
      const api = app.http.withToken(access_token);
      expect((await api.get('/v1/audit/events?limit=1')).status).to.equal(200);
      const res = await api.delete('/v1/auth/revoke', { body: { token: access_token } });
      expect(res.status).to.equal(200);
      const after = await api.get('/v1/audit/events?limit=1');
      expect(after.status).to.equal(401);
      expect(after.headers.get('www-authenticate')).to.contain('error="invalid_token"');
      expect(after.body.detail).to.contain('revoked');
    });

    it('with no body revokes the bearer token of the request itself', async () => {
      const { access_token } = await tokenFor(app.http, reader);
      const api = app.http.withToken(access_token);
      expect((await api.delete('/v1/auth/revoke')).status).to.equal(200);
      expect((await api.get('/v1/audit/events?limit=1')).status).to.equal(401);
      // Revoking it again is harmless.
      expect((await api.delete('/v1/auth/revoke')).status).to.equal(200);
    });

    it('accepts form-encoded POST with client credentials and answers 200 for unknown tokens', async () => {
      const res = await app.http.post('/v1/auth/revoke', undefined, {
        raw: form({ token: 'not-a-token-we-issued', token_type_hint: 'access_token' }),
        headers: { ...FORM, Authorization: basic(reader) },
      });
      expect(res.status).to.equal(200);
    });

    it('revoking a refresh token revokes the access tokens of its family', async () => {
      const first = await tokenFor(app.http, reader);
      const api = app.http.withToken(first.access_token);
      const res = await api.post('/v1/auth/revoke', {
        token: first.refresh_token,
        token_type_hint: 'refresh_token',
      });
      expect(res.status).to.equal(200);
      expect((await api.get('/v1/audit/events?limit=1')).status).to.equal(401);
      expect(
        (await app.http.post('/v1/auth/refresh', { refresh_token: first.refresh_token })).body.error,
      ).to.equal('invalid_grant');
    });

    it("refuses to revoke another client's token unless the caller administers clients", async () => {
      const other = await createClient(app, ['audit:read']);
      const theirs = await tokenFor(app.http, other);
      const mine = app.http.withToken((await tokenFor(app.http, reader)).access_token);
      const refused = await mine.post('/v1/auth/revoke', { token: theirs.access_token });
      expect(refused.status).to.equal(400);
      expect(refused.body.error).to.equal('unauthorized_client');
      expect((await app.http.withToken(theirs.access_token).get('/v1/audit/events?limit=1')).status).to.equal(
        200,
      );

      const admin = await authed(app);
      expect((await admin.post('/v1/auth/revoke', { token: theirs.access_token })).status).to.equal(200);
      expect((await app.http.withToken(theirs.access_token).get('/v1/audit/events?limit=1')).status).to.equal(
        401,
      );
    });

    it('requires the caller to authenticate', async () => {
      const res = await app.http.post('/v1/auth/revoke', { token: 'whatever' });
      expect(res.status).to.equal(401);
      expect(res.body.error).to.equal('invalid_client');
    });
  });

  describe('signing keys', () => {
    it('publishes the verification keys as a JWK Set without private parts', async () => {
      const res = await app.http.get('/v1/auth/jwks.json');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/application\/jwk-set\+json/);
      expect(res.body.keys).to.have.length.greaterThan(0);
      for (const key of res.body.keys) {
        expect(key).to.include({ use: 'sig' });
        expect(key).to.have.property('kid');
        expect(key).not.to.have.property('d');
      }
    });

    it('keeps keys across restarts and shares them between instances', async () => {
      const before = await tokenFor(app.http, reader);
      // Instances behind one address share its issuer and audience.
      const second = await startTestApp({
        keepData: true,
        env: { PUBLIC_BASE_URL: app.config.publicBaseUrl },
      });
      try {
        const api = second.http.withToken(before.access_token);
        expect((await api.get('/v1/audit/events?limit=1')).status).to.equal(200);
        const fromSecond = await tokenFor(second.http, reader);
        expect(
          (await app.http.withToken(fromSecond.access_token).get('/v1/audit/events?limit=1')).status,
        ).to.equal(200);
        // A token revoked on one instance is refused there at once, and by the other within a second.
        await second.http.withToken(fromSecond.access_token).delete('/v1/auth/revoke');
        expect(
          (await second.http.withToken(fromSecond.access_token).get('/v1/audit/events?limit=1')).status,
        ).to.equal(401);
        await eventually(
          async () =>
            (await app.http.withToken(fromSecond.access_token).get('/v1/audit/events?limit=1')).status,
          (status) => status === 401,
          1_000,
        );
      } finally {
        await second.close();
      }
    });

    it('stores private keys encrypted, never in the clear', async () => {
      const rows = await cypher(app.runtime.db, 'MATCH (k:SigningKey) RETURN k.private_key AS sealed');
      expect(rows, 'signing keys in the store').to.not.be.empty;
      for (const row of rows) {
        expect(String(row['sealed'])).to.match(/^v1\./);
        expect(String(row['sealed'])).not.to.contain('PRIVATE KEY');
      }
    });
  });

  it('the admin client of the test store can reach every scope', async () => {
    const { scope } = await tokenFor(app.http, ADMIN);
    expect(scope.split(' ').sort()).to.deep.equal([...SCOPES].sort());
  });
});
