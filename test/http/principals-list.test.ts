import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { insertPrincipal } from '../helpers/principals.js';

describe('GET /principals (list)', () => {
  let fresh: TestApp;
  let listApi: HttpClient;
  const ids: Record<string, string> = {};
  const fx = useApp();
  before(async () => {
    fresh = fx.app;
    listApi = fx.api;
    const add = async (name: string, body: Record<string, unknown>) => {
      ids[name] = (await listApi.post('/v1/principals', { name, ...body })).body.id;
    };
    await add('sa-1', { type: 'SERVICE_ACCOUNT', attributes: { team: 'a' } });
    await add('agent-1', { type: 'AI_AGENT' });
    await add('key-1', { type: 'API_KEY' });
    await add('sa-2', { type: 'SERVICE_ACCOUNT' });
    ids['okta-user'] = (
      await insertPrincipal(fresh, {
        name: 'Okta User',
        connectorSource: 'okta',
        lastLogin: '2026-10-01T00:00:00Z',
      })
    ).id;
    ids['entra-user'] = (await insertPrincipal(fresh, { name: 'Entra User', connectorSource: 'entra' })).id;
    ids['gone-user'] = (await insertPrincipal(fresh, { name: 'Gone User', status: 'deprovisioned' })).id;
    await listApi.delete(`/v1/principals/${ids['sa-2']}`);
  });
  const list = async (query = '') => {
    const res = await listApi.get(`/v1/principals${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body as { data: any[]; pagination: any };
  };

  it('lists every principal but the deleted, newest first, with list item fields only', async () => {
    const body = await list();
    expect(body.data.map((p) => p.name)).to.deep.equal([
      'Gone User',
      'Entra User',
      'Okta User',
      'key-1',
      'agent-1',
      'sa-1',
    ]);
    expect(body.pagination).to.deep.equal({ total: 6, page: 1, per_page: 50, pages: 1 });
    const user = body.data.find((p) => p.name === 'Okta User');
    expect(Object.keys(user).sort()).to.deep.equal(
      [
        'attributes',
        'connector_source',
        'created_at',
        'email',
        'id',
        'last_login',
        'name',
        'risk_score',
        'status',
        'type',
      ].sort(),
    );
    expect(user.last_login).to.equal('2026-10-01T00:00:00.000Z');
    const sa = body.data.find((p) => p.name === 'sa-1');
    expect(sa).not.to.have.property('email');
    expect(sa).to.deep.include({ connector_source: null, last_login: null, attributes: { team: 'a' } });
  });

  it('filters by type, connector_source and status', async () => {
    expect((await list('?type=SERVICE_ACCOUNT')).data.map((p) => p.name)).to.deep.equal(['sa-1']);
    expect((await list('?type=USER')).pagination.total).to.equal(3);
    expect((await list('?connector_source=entra')).data.map((p) => p.name)).to.deep.equal(['Entra User']);
    expect((await list('?status=deleted')).data.map((p) => p.name)).to.deep.equal(['sa-2']);
    expect((await list('?status=deprovisioned&type=USER')).data.map((p) => p.name)).to.deep.equal([
      'Gone User',
    ]);
    expect((await list('?type=AI_AGENT&connector_source=okta')).data).to.deep.equal([]);
  });

  it('paginates with per_page echoing the limit, and past the end keeps the total', async () => {
    const first = await list('?limit=4');
    const second = await list('?limit=4&page=2');
    expect(first.pagination).to.deep.equal({ total: 6, page: 1, per_page: 4, pages: 2 });
    expect(second.data.map((p) => p.name)).to.deep.equal(['agent-1', 'sa-1']);
    const past = await list('?limit=4&page=3');
    expect(past.data).to.deep.equal([]);
    expect(past.pagination).to.deep.equal({ total: 6, page: 3, per_page: 4, pages: 2 });
  });

  it('rejects malformed query parameters with /query pointers', async () => {
    for (const [q, pointer] of [
      ['limit=101', '/query/limit'],
      ['limit=0', '/query/limit'],
      ['page=0', '/query/page'],
      ['page=x', '/query/page'],
      ['type=ROBOT', '/query/type'],
      ['status=gone', '/query/status'],
    ]) {
      const res = await listApi.get(`/v1/principals?${q}`);
      expect(res.status, q).to.equal(400);
      expect(
        res.body.errors.map((e: any) => e.pointer),
        q,
      ).to.include(pointer);
    }
    expect((await listApi.get('/v1/principals?unknown=1')).status).to.equal(200);
  });
});
