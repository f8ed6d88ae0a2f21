import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SCOPES } from '../../src/vocabulary/scopes.js';
import { ADMIN_CLIENT_ID, startTestApp } from '../helpers/app.js';
import { cypher, resetDatabaseAt } from '../helpers/db.js';
import { authed, basic, tokenFor } from '../helpers/auth.js';
import { useApp } from '../helpers/fixture.js';

describe('API clients', () => {
  const fx = useApp();

  it('creates a client, returns its secret once, and the secret works', async () => {
    const res = await fx.api.post('/v1/clients', {
      name: 'billing-sync',
      scopes: ['principals:read', 'audit:read'],
    });
    expect(res.status).to.equal(201);
    expect(res.headers.get('location')).to.equal(`/v1/clients/${res.body.id}`);
    expect(res.body).to.include({ name: 'billing-sync', status: 'active', created_by: ADMIN_CLIENT_ID });
    expect(res.body.id).to.match(/^cli_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(res.body.scopes).to.deep.equal(['audit:read', 'principals:read']);
    expect(res.body.client_secret).to.match(/^pas_cs_[A-Za-z0-9_-]{43}$/);
    expect(res.body.created_at).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const fetched = await fx.api.get(`/v1/clients/${res.body.id}`);
    expect(fetched.status).to.equal(200);
    expect(fetched.body).not.to.have.property('client_secret');
    expect(JSON.stringify(fetched.body)).not.to.match(/scrypt|secret_hash/);

    const token = await tokenFor(fx.app.http, { id: res.body.id, secret: res.body.client_secret });
    expect(token.scope.split(' ').sort()).to.deep.equal(['audit:read', 'principals:read']);
  });

  it('keeps only a slow salted hash of the secret', async () => {
    const res = await fx.api.post('/v1/clients', { name: 'hash-check', scopes: ['audit:read'] });
    const rows = await cypher(fx.app.runtime.db, 'MATCH (c:Client {id: $id}) RETURN properties(c) AS p', {
      id: res.body.id,
    });
    const stored = JSON.stringify(rows[0]!['p']);
    expect(stored).not.to.contain(res.body.client_secret);
    expect(stored).to.match(/"secret_hash":"scrypt\$\d+\$8\$1\$/);
  });

  it('refuses bad bodies with pointers and creates nothing', async () => {
    const before = (await fx.api.get('/v1/clients?limit=100')).body.pagination.total;
    const cases: [unknown, string][] = [
      [{ name: 'x' }, '/scopes'],
      [{ name: 'x', scopes: [] }, '/scopes'],
      [{ name: 'x', scopes: ['root'] }, '/scopes/0'],
      [{ name: 'x', scopes: ['audit:read', 'audit:read'] }, '/scopes'],
      [{ name: '', scopes: ['audit:read'] }, '/name'],
      [{ name: '   ', scopes: ['audit:read'] }, '/name'],
      [{ name: 'x', scopes: ['audit:read'], id: 'cli_01JD0000000000000000000000' }, '/id'],
      [{ name: 'x', scopes: ['audit:read'], status: 'active' }, '/status'],
      [{ name: 'x', scopes: ['audit:read'], secret_hash: 'scrypt$...' }, '/secret_hash'],
      [{ name: 42, scopes: ['audit:read'] }, '/name'],
    ];
    for (const [body, pointer] of cases) {
      const res = await fx.api.post('/v1/clients', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(
        res.body.errors.map((e: { pointer: string }) => e.pointer),
        JSON.stringify(body),
      ).to.include(pointer);
    }
    expect((await fx.api.get('/v1/clients?limit=100')).body.pagination.total).to.equal(before);
  });

  it('refuses a second active client with the same name (any case) with 409', async () => {
    expect(
      (await fx.api.post('/v1/clients', { name: 'unique-name', scopes: ['audit:read'] })).status,
    ).to.equal(201);
    const dup = await fx.api.post('/v1/clients', { name: 'Unique-Name', scopes: ['audit:read'] });
    expect(dup.status).to.equal(409);
    expect(dup.body.code).to.equal('CONFLICT');
  });

  it('lists clients newest first with pagination', async () => {
    for (let i = 0; i < 3; i += 1)
      await fx.api.post('/v1/clients', { name: `page-${i}`, scopes: ['audit:read'] });
    const page1 = await fx.api.get('/v1/clients?limit=2&page=1');
    expect(page1.status).to.equal(200);
    expect(page1.body.data).to.have.length(2);
    expect(page1.body.pagination.per_page).to.equal(2);
    expect(page1.body.pagination.pages).to.equal(Math.ceil(page1.body.pagination.total / 2));
    const all = (await fx.api.get('/v1/clients?limit=100')).body.data as { created_at: string; id: string }[];
    const sorted = [...all].sort((a, b) =>
      b.created_at === a.created_at ? (b.id > a.id ? 1 : -1) : b.created_at > a.created_at ? 1 : -1,
    );
    expect(all.map((c) => c.id)).to.deep.equal(sorted.map((c) => c.id));
    const past = await fx.api.get('/v1/clients?page=999');
    expect(past.body.data).to.deep.equal([]);
    expect(past.body.pagination.total).to.equal(page1.body.pagination.total);
    for (const bad of ['limit=0', 'limit=101', 'page=0', 'limit=abc', 'status=gone']) {
      const res = await fx.api.get(`/v1/clients?${bad}`);
      expect(res.status, bad).to.equal(400);
      expect(res.body.errors[0].pointer).to.match(/^\/query\//);
    }
  });

  it('deletes a client: tokens revoked, secret refused, shown as deleted, second delete 409', async () => {
    const created = (await fx.api.post('/v1/clients', { name: 'to-delete', scopes: ['audit:read'] })).body;
    const token = (await tokenFor(fx.app.http, { id: created.id, secret: created.client_secret }))
      .access_token;
    const res = await fx.api.delete(`/v1/clients/${created.id}`);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id: created.id, status: 'deleted', deleted_by: ADMIN_CLIENT_ID });
    expect((await fx.app.http.withToken(token).get('/v1/audit/events')).status).to.equal(401);
    const login = await fx.app.http.post('/v1/auth/token', undefined, {
      raw: 'grant_type=client_credentials',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basic({ id: created.id, secret: created.client_secret }),
      },
    });
    expect(login.status).to.equal(401);
    expect((await fx.api.get(`/v1/clients/${created.id}`)).body.status).to.equal('deleted');
    const active = (await fx.api.get('/v1/clients?limit=100')).body.data.map((c: { id: string }) => c.id);
    expect(active).not.to.include(created.id);
    const deleted = (await fx.api.get('/v1/clients?status=deleted&limit=100')).body.data.map(
      (c: { id: string }) => c.id,
    );
    expect(deleted).to.include(created.id);
    const again = await fx.api.delete(`/v1/clients/${created.id}`);
    expect(again.status).to.equal(409);
    // The name is free again.
    expect((await fx.api.post('/v1/clients', { name: 'to-delete', scopes: ['audit:read'] })).status).to.equal(
      201,
    );
  });

  it('answers unknown and malformed ids with 404', async () => {
    for (const id of [
      'cli_01JD0000000000000000000000',
      'prn_01JD0000000000000000000000',
      'nope',
      'cli_%27%20OR%201%3D1',
    ]) {
      expect((await fx.api.get(`/v1/clients/${id}`)).status, id).to.equal(404);
      expect((await fx.api.delete(`/v1/clients/${id}`)).status, id).to.equal(404);
    }
  });

  // Last of the block: it deletes the bootstrap admin client whose token the others use.
  it('refuses to delete the last client that can administer clients', async () => {
    const res = await fx.api.delete(`/v1/clients/${ADMIN_CLIENT_ID}`);
    expect(res.status).to.equal(409);
    expect(res.body.detail).to.contain('last active client with clients:admin');
    const second = (await fx.api.post('/v1/clients', { name: 'second-admin', scopes: ['clients:admin'] }))
      .body;
    const other = fx.app.http.withToken(
      (await tokenFor(fx.app.http, { id: second.id, secret: second.client_secret })).access_token,
    );
    expect((await other.delete(`/v1/clients/${ADMIN_CLIENT_ID}`)).status).to.equal(200);
    expect((await other.delete(`/v1/clients/${second.id}`)).status).to.equal(409);
  });
});

describe('bootstrap admin client', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pas-bootstrap-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The credentials a start wrote to its bootstrap secret file. */
  async function written(file: string): Promise<{ id: string; secret: string }> {
    const { client_id: id, client_secret: secret } = JSON.parse(await readFile(file, 'utf8')) as {
      client_id: string;
      client_secret: string;
    };
    return { id, secret };
  }

  it('is created with every scope on an empty store, its generated secret written to a file of mode 0600 and never logged', async () => {
    const file = path.join(dir, 'data', 'bootstrap-admin.json');
    const env = {
      BOOTSTRAP_CLIENT_ID: '',
      BOOTSTRAP_CLIENT_SECRET: '',
      NEO4J_DATA_DIR: path.join(dir, 'data'),
    };
    const app = await startTestApp({ env });
    let id: string;
    let secret: string;
    try {
      ({ id, secret } = await written(file));
      expect(id).to.match(/^cli_[0-9A-Z]{26}$/);
      expect(secret).to.match(/^pas_cs_[A-Za-z0-9_-]+$/);
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      expect(app.logs.text).not.to.contain(secret);
      const line = app.logs
        .entries()
        .find((e) => String(e['msg']).includes('created the bootstrap admin client'));
      expect(line, 'the log says where the secret is').to.include({ client_id: id, file });
      const token = await tokenFor(app.http, { id, secret });
      expect(token.scope.split(' ').sort()).to.deep.equal([...SCOPES].sort());
    } finally {
      await app.close();
    }
    // A restart on the same store creates nothing, leaves the file as it is and logs no secret.
    const again = await startTestApp({ keepData: true, env });
    try {
      expect(again.logs.text).not.to.contain('created the bootstrap admin client');
      expect(again.logs.text).not.to.contain(secret);
      expect(await written(file)).to.deep.equal({ id, secret });
      expect((await tokenFor(again.http, { id, secret })).access_token).to.be.a('string');
    } finally {
      await again.close();
    }
  });

  it('never overwrites the file: on an empty store beside a file of an earlier one, the start fails saying so', async () => {
    const file = path.join(dir, 'bootstrap-admin.json');
    const env = { BOOTSTRAP_CLIENT_ID: '', BOOTSTRAP_CLIENT_SECRET: '', BOOTSTRAP_SECRET_FILE: file };
    const first = await startTestApp({ env });
    await first.close();
    const before = await readFile(file, 'utf8');
    const err = await startTestApp({ env }).then(
      async (app) => {
        await app.close();
        throw new Error('a start beside an earlier bootstrap file succeeded');
      },
      (e: unknown) => e as Error,
    );
    expect(err.message).to.contain(file).and.to.contain('never overwritten');
    expect(await readFile(file, 'utf8')).to.equal(before);
    // Nothing was created: the store still has no client.
    const check = await startTestApp({ keepData: true });
    try {
      const rows = await cypher(check.runtime.db, 'MATCH (c:Client) RETURN c.id AS id');
      expect(rows.map((r) => r['id'])).to.deep.equal([ADMIN_CLIENT_ID]);
    } finally {
      await check.close();
    }
  });

  it('takes its id and secret from BOOTSTRAP_CLIENT_ID / BOOTSTRAP_CLIENT_SECRET without printing the secret', async () => {
    const app = await startTestApp();
    try {
      expect(app.logs.text).not.to.contain('test-admin-secret');
      const res = await (await authed(app)).get(`/v1/clients/${ADMIN_CLIENT_ID}`);
      expect(res.body).to.include({ name: 'bootstrap-admin', created_by: 'system' });
    } finally {
      await app.close();
    }
  });

  it('two instances starting together on an empty store create exactly one admin client', async () => {
    await resetDatabaseAt({
      uri: process.env['NEO4J_URI']!,
      user: process.env['NEO4J_USER'] ?? 'neo4j',
      password: process.env['NEO4J_PASSWORD'] ?? '',
    });
    const file = path.join(dir, 'bootstrap-admin.json');
    const env = {
      BOOTSTRAP_CLIENT_ID: '',
      BOOTSTRAP_CLIENT_SECRET: '',
      BOOTSTRAP_SECRET_FILE: file,
      PUBLIC_BASE_URL: 'http://pas.internal',
    };
    const [a, b] = await Promise.all([
      startTestApp({ keepData: true, env }),
      startTestApp({ keepData: true, env }),
    ]);
    try {
      const rows = await cypher(a.runtime.db, 'MATCH (c:Client) RETURN count(c) AS n');
      expect(rows[0]!['n']).to.equal(1);
      const keys = await cypher(a.runtime.db, "MATCH (k:SigningKey {status: 'active'}) RETURN count(k) AS n");
      expect(keys[0]!['n']).to.equal(1);
      const told = [...a.logs.lines, ...b.logs.lines].filter((l) =>
        l.includes('created the bootstrap admin client'),
      );
      expect(told).to.have.length(1);
      // Each instance accepts the tokens of the other: one signing key, shared.
      const token = await tokenFor(a.http, await written(file));
      expect((await b.http.withToken(token.access_token).get('/v1/clients')).status).to.equal(200);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
