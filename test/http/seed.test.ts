import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { newId } from '../../src/ids.js';
import { BulkLoader, type SeedPrincipal } from '../../src/seed/bulk.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { authed } from '../helpers/auth.js';
import type { HttpClient } from '../helpers/http.js';

describe('bulk loader (benchmarks and trusted imports)', () => {
  let app: TestApp;
  let api: HttpClient;
  before(async () => {
    app = await startTestApp();
    api = await authed(app);
  });
  after(async () => {
    await app.close();
  });

  it('writes principals, manager edges, groups and memberships exactly as the API reads them', async () => {
    const boss: SeedPrincipal = {
      id: newId('principal'),
      type: 'USER',
      name: 'Seed Boss',
      email: 'boss@example.com',
      attributes: { team: 'core', tags: ['a', 'b'] },
      metadata: { cost_center: 'cc1' },
      connectorSource: 'okta',
      connectorId: '00u-boss',
      createdAt: '2025-01-02T03:04:05.678Z',
      lastLogin: '2026-11-01T00:00:00.000Z',
    };
    const bot: SeedPrincipal = {
      id: newId('principal'),
      type: 'AI_AGENT',
      name: 'Seed Bot',
      attributes: { manager_id: boss.id, allowed_tools: ['*'], team: 'core' },
      metadata: {},
      createdAt: '2025-02-02T00:00:00.000Z',
    };
    const loader = new BulkLoader(app.runtime.db);
    // The bot's manager is written in the same batch, so it is linked there and nothing is left over.
    expect(await loader.principals([boss, bot])).to.deep.equal([]);
    // Linking again is harmless: no second edge.
    await loader.managers([boss, bot]);
    const group = { id: newId('group'), name: 'Seeded', createdAt: '2025-01-01T00:00:00.000Z' };
    await loader.groups([group]);
    await loader.memberships([{ groupId: group.id, memberId: bot.id }], '2025-03-01T00:00:00.000Z');

    const read = (await api.get(`/v1/principals/${boss.id}`)).body;
    expect(read).to.deep.include({
      type: 'USER',
      name: 'Seed Boss',
      email: 'boss@example.com',
      attributes: { tags: ['a', 'b'], team: 'core' },
      metadata: { cost_center: 'cc1' },
      connector_source: 'okta',
      connector_id: '00u-boss',
      created_at: '2025-01-02T03:04:05.678Z',
      updated_at: '2025-01-02T03:04:05.678Z',
      last_login: '2026-11-01T00:00:00.000Z',
      status: 'active',
    });
    const agent = (await api.get(`/v1/principals/${bot.id}`)).body;
    expect(agent.risk_factors).to.deep.equal([
      { code: 'NO_OWNER', points: 30 },
      { code: 'BROAD_TOOL_ACCESS', points: 40 },
    ]);
    const rel = (await api.get(`/v1/principals/${bot.id}/relationships`)).body.relationships;
    expect(rel.map((e: any) => e.type)).to.deep.equal(['manager', 'group_member']);
    const found = await api.post('/v1/principals/search', {
      query: { attributes: { team: 'core', tags: 'b' } },
    });
    expect(found.body.data.map((p: any) => p.id)).to.deep.equal([boss.id]);
    const labels = await cypher(app.runtime.db, 'MATCH (p:Principal {id: $id}) RETURN labels(p) AS l', {
      id: bot.id,
    });
    expect((labels[0]!['l'] as string[]).sort()).to.deep.equal(['Active', 'AiAgent', 'Principal']);
  });
});
