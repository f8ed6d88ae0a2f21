import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { ADMIN, basic, createClient, tokenFor, type TestClient } from '../helpers/auth.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('bearer token attacks and scope enforcement', () => {
  let app: TestApp;
  let reader: TestClient;
  let valid: string;
  let claims: Record<string, unknown>;
  let header: Record<string, unknown>;

  /** Signs arbitrary claims with the service's own current key. */
  function forge(overrides: Record<string, unknown>, headerOverrides: Record<string, unknown> = {}): string {
    const { kid, alg, privateKey } = app.runtime.services.keys.current();
    const payload = { ...claims, ...overrides };
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
    return jwt.sign(payload, privateKey, {
      algorithm: alg,
      header: { alg, kid, typ: 'at+jwt', ...headerOverrides },
    });
  }

  const fx = useApp();
  before(async () => {
    app = fx.app;
    reader = await createClient(app, ['audit:read']);
    valid = (await tokenFor(app.http, reader)).access_token;
    const [h, p] = valid.split('.');
    header = JSON.parse(Buffer.from(h!, 'base64url').toString());
    claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
  });

  async function expect401(token: string | undefined, detail: RegExp, authorization?: string): Promise<void> {
    const res = await app.http.get('/v1/audit/events?limit=1', {
      headers: { Authorization: authorization ?? `Bearer ${token}` },
    });
    expect(res.status, res.text).to.equal(401);
    expect(res.body.code).to.equal('UNAUTHENTICATED');
    expect(res.body.detail).to.match(detail);
    expect(res.headers.get('content-type')).to.match(/application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).to.match(/^Bearer realm="[^"]+", error="invalid_token"/);
    // 401s still count against the caller's bucket and say so.
    expect(res.headers.get('ratelimit-policy')).to.match(/^"standard";q=\d+;w=60$/);
  }

  it('the genuine token works (control)', async () => {
    expect((await app.http.withToken(valid).get('/v1/audit/events?limit=1')).status).to.equal(200);
  });

  it('rejects a missing token', async () => {
    const res = await app.http.get('/v1/audit/events');
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.match(/^Bearer realm=/);
    expect(res.body.detail).to.match(/bearer access token is required/);
  });

  it('rejects other authorization schemes and malformed bearer values', async () => {
    await expect401(undefined, /not hold a Bearer token/, `Token ${valid}`);
    await expect401(undefined, /not hold a Bearer token/, 'Bearer');
    await expect401('not.a.jwt!', /not hold a Bearer token|malformed/);
    await expect401('abc', /malformed/);
    await expect401('a.b.c', /malformed/);
  });

  it('rejects an expired token', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect401(forge({ iat: now - 3600, exp: now - 600 }), /expired/);
  });

  it('rejects a token that is not valid yet (nbf or iat in the future)', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect401(forge({ nbf: now + 600 }), /not valid yet/);
    await expect401(forge({ iat: now + 600, exp: now + 1500 }), /not valid yet/);
  });

  it('rejects a wrong audience and a wrong issuer', async () => {
    await expect401(forge({ aud: 'https://elsewhere.example/v1' }), /audience/);
    await expect401(forge({ iss: 'https://evil.example' }), /issuer/);
  });

  it('rejects a token whose typ is not at+jwt (an ID token, say)', async () => {
    await expect401(forge({}, { typ: 'JWT' }), /typ must be at\+jwt/);
  });

  it('rejects alg none', async () => {
    const token = `${b64({ ...header, alg: 'none' })}.${b64(claims)}.`;
    await expect401(token, /invalid/);
  });

  it('rejects HS256 signed with the public key as the secret', async () => {
    const jwks = (await app.http.get('/v1/auth/jwks.json')).body.keys;
    const pem = createPublicKey({ key: jwks[0], format: 'jwk' })
      .export({ format: 'pem', type: 'spki' })
      .toString();
    const token = jwt.sign(claims, pem, {
      algorithm: 'HS256',
      header: { alg: 'HS256', kid: header['kid'] as string, typ: 'at+jwt' },
    });
    await expect401(token, /invalid/);
  });

  it('rejects a token signed by a foreign key, under our kid or its own', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const underOurKid = jwt.sign(claims, privateKey, {
      algorithm: 'ES256',
      header: { alg: 'ES256', kid: header['kid'] as string, typ: 'at+jwt' },
    });
    await expect401(underOurKid, /signature/);
    const ownKid = jwt.sign(claims, privateKey, {
      algorithm: 'ES256',
      header: { alg: 'ES256', kid: 'attacker', typ: 'at+jwt' },
    });
    await expect401(ownKid, /unknown key/);
  });

  it('rejects a tampered payload', async () => {
    const [h, , s] = valid.split('.');
    await expect401(`${h}.${b64({ ...claims, scope: 'clients:admin audit:read' })}.${s}`, /signature/);
  });

  it('rejects a revoked token', async () => {
    const token = (await tokenFor(app.http, reader)).access_token;
    await app.http.withToken(token).delete('/v1/auth/revoke');
    await expect401(token, /revoked/);
  });

  it('rejects the tokens of a deleted client', async () => {
    const doomed = await createClient(app, ['audit:read']);
    const token = (await tokenFor(app.http, doomed)).access_token;
    const admin = app.http.withToken((await tokenFor(app.http, ADMIN)).access_token);
    expect((await admin.delete(`/v1/clients/${doomed.id}`)).status).to.equal(200);
    await expect401(token, /revoked/);
    const again = await app.http.post('/v1/auth/token', undefined, {
      raw: 'grant_type=client_credentials',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic(doomed) },
    });
    expect(again.status).to.equal(401);
  });

  it('answers a read-only token on a write route with 403 and the needed scope', async () => {
    const readOnly = await createClient(app, ['audit:read', 'principals:read']);
    const api = app.http.withToken((await tokenFor(app.http, readOnly)).access_token);
    const res = await api.post('/v1/clients', { name: 'x', scopes: ['audit:read'] });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('INSUFFICIENT_SCOPE');
    expect(res.headers.get('www-authenticate')).to.equal(
      'Bearer realm="principals-access-service", error="insufficient_scope", scope="clients:admin"',
    );
    const list = await api.get('/v1/clients');
    expect(list.status).to.equal(403);
  });

  it('scopes narrowed at issuance are enforced', async () => {
    const token = (await tokenFor(app.http, ADMIN, 'audit:read')).access_token;
    expect((await app.http.withToken(token).get('/v1/clients')).status).to.equal(403);
    expect((await app.http.withToken(token).get('/v1/audit/events')).status).to.equal(200);
  });

  describe('brute force on client authentication', () => {
    let guarded: TestApp;
    const fx2 = useApp({
      keepData: true,
      // One proxy in front: the right-most X-Forwarded-For entry is the caller's address.
      env: { AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_IP_LIMIT: '1000', TRUST_PROXY: '1' },
    });
    before(async () => {
      guarded = fx2.app;
    });

    const attempt = (client: TestClient, secret: string, forwardedFor?: string) =>
      guarded.http.post('/v1/auth/token', undefined, {
        raw: 'grant_type=client_credentials',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: basic({ id: client.id, secret }),
          ...(forwardedFor ? { 'X-Forwarded-For': forwardedFor } : {}),
        },
      });

    const expectThrottled = (res: Awaited<ReturnType<typeof attempt>>): void => {
      expect(res.status, res.text).to.equal(429);
      expect(res.body.error).to.equal('temporarily_unavailable');
      expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
    };

    it('throttles a client id after repeated failures, even with the right secret', async () => {
      const victim = await createClient(guarded, ['audit:read']);
      for (let i = 0; i < 3; i += 1) expect((await attempt(victim, 'guess-' + i)).status).to.equal(401);
      expectThrottled(await attempt(victim, victim.secret));
    });

    it('blocks only the address the failures come from: the client still gets a token elsewhere', async () => {
      const victim = await createClient(guarded, ['audit:read']);
      const [attacker, owner] = ['198.51.100.7', '198.51.100.8'];
      for (let i = 0; i < 5; i += 1) {
        const res = await attempt(victim, `guess-${i}`, attacker);
        expect(res.status).to.be.oneOf([401, 429]);
      }
      expectThrottled(await attempt(victim, victim.secret, attacker));
      const fromOwner = await attempt(victim, victim.secret, owner);
      expect(fromOwner.status, fromOwner.text).to.equal(200);
      expect(fromOwner.body.access_token).to.be.a('string');
      // The bootstrap admin cannot be locked out from elsewhere either.
      for (let i = 0; i < 4; i += 1) await attempt(ADMIN, `guess-${i}`, attacker);
      expectThrottled(await attempt(ADMIN, ADMIN.secret, attacker));
      expect((await attempt(ADMIN, ADMIN.secret, owner)).status).to.equal(200);
      // Still blocked where the failures came from.
      expectThrottled(await attempt(victim, victim.secret, attacker));
    });

    it('takes the address from the trusted hop, so a forged left-most entry neither escapes nor misleads', async () => {
      const victim = await createClient(guarded, ['audit:read']);
      const real = '10.1.1.1';
      for (let i = 0; i < 3; i += 1) {
        const res = await attempt(victim, `guess-${i}`, `6.6.6.${i}, ${real}`);
        expect(res.status).to.equal(401);
      }
      expectThrottled(await attempt(victim, victim.secret, `6.6.6.99, ${real}`));
      expectThrottled(await attempt(victim, victim.secret, real));
      expect((await attempt(victim, victim.secret, `${real}, 10.1.1.2`)).status).to.equal(200);

      const admin = guarded.http.withToken((await tokenFor(guarded.http, ADMIN)).access_token);
      const events = await admin.get(
        `/v1/audit/events?type=auth.failed&target_id=${encodeURIComponent(victim.id)}&limit=100`,
      );
      expect(events.status, events.text).to.equal(200);
      expect(events.body.data).to.have.length(3);
      for (const event of events.body.data) expect(event.source_ip).to.equal(real);
    });
  });
});
