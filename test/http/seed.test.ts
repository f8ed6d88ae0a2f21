import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { newId } from '../../src/ids.js';
import { BulkLoader, type SeedPrincipal } from '../../src/seed/bulk.js';
import { useApp } from '../helpers/fixture.js';

describe('bulk loader (benchmarks and trusted imports)', () => {
  const fx = useApp();

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
    const loader = new BulkLoader(fx.app.runtime.db);
    // The bot's manager is written in the same batch, so it is linked there and nothing is left over.
    expect(await loader.principals([boss, bot])).to.deep.equal([]);
    // Linking again is harmless: no second edge.
    await loader.managers([boss, bot]);
    const group = { id: newId('group'), name: 'Seeded', createdAt: '2025-01-01T00:00:00.000Z' };
    await loader.groups([group]);
    await loader.memberships([{ groupId: group.id, memberId: bot.id }], '2025-03-01T00:00:00.000Z');

    const read = (await fx.api.get(`/v1/principals/${boss.id}`)).body;
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
    const agent = (await fx.api.get(`/v1/principals/${bot.id}`)).body;
    expect(agent.risk_factors).to.deep.equal([
      { code: 'NO_OWNER', points: 30 },
      { code: 'BROAD_TOOL_ACCESS', points: 40 },
    ]);
    const rel = (await fx.api.get(`/v1/principals/${bot.id}/relationships`)).body.relationships;
    expect(rel.map((e: any) => e.type)).to.deep.equal(['manager', 'group_member']);
    const found = await fx.api.post('/v1/principals/search', {
      query: { attributes: { team: 'core', tags: 'b' } },
    });
    expect(found.body.data.map((p: any) => p.id)).to.deep.equal([boss.id]);
    const labels = await cypher(fx.app.runtime.db, 'MATCH (p:Principal {id: $id}) RETURN labels(p) AS l', {
      id: bot.id,
    });
    expect((labels[0]!['l'] as string[]).sort()).to.deep.equal(['Active', 'AiAgent', 'Principal']);
  });

  it('writes policies and registered resources exactly as the API does, for the index and the access walk', async () => {
    const loader = new BulkLoader(fx.app.runtime.db);
    const at = '2025-04-01T00:00:00.000Z';
    const owner: SeedPrincipal = {
      id: newId('principal'),
      type: 'USER',
      name: 'Resource Owner',
      attributes: { team: 'orders' },
      metadata: {},
      createdAt: at,
    };
    const member: SeedPrincipal = {
      id: newId('principal'),
      type: 'SERVICE_ACCOUNT',
      name: 'svc-orders',
      attributes: { team: 'orders' },
      metadata: { owner: owner.id },
      createdAt: at,
    };
    await loader.principals([owner, member]);
    const group = { id: newId('group'), name: 'Orders readers', createdAt: at };
    await loader.groups([group]);
    await loader.memberships([{ groupId: group.id, memberId: member.id }], at);

    const attributes = { environment: 'prod', tags: ['pci', 'eu'] };
    expect(
      (await fx.api.put('/v1/resources/db/orders-prod-1', { attributes, owner_id: owner.id })).status,
    ).to.equal(201);
    await loader.resources([
      { type: 'db', identifier: 'orders-prod-2', attributes, ownerId: owner.id, createdAt: at },
    ]);

    const body = (name: string) => ({
      name,
      description: 'orders databases',
      effect: 'allow' as const,
      subjects: {
        principals: [owner.id],
        groups: [group.id],
        match: { type: 'AI_AGENT' as const, attributes: { team: 'orders' } },
      },
      actions: ['read', 'repo:*'],
      resources: [
        { type: 'db', identifier: 'orders-prod-1' },
        { type: 'db', identifier: 'orders-*' },
        { type: 'db', identifier: 'named-only' },
      ],
      conditions: { 'context.ip': { $cidr: '10.0.0.0/8' } },
    });
    const created = await fx.api.post('/v1/policies', body('made by the API'));
    expect(created.status, created.text).to.equal(201);
    const viaApi = created.body.id as string;
    const viaBulk = newId('policy');
    await loader.policies([{ id: viaBulk, body: body('made in bulk'), createdAt: at }]);

    // The same node, version and edges, but for the name, the actor and the times.
    const shape = async (id: string) => {
      const [row] = await cypher(
        fx.app.runtime.db,
        `MATCH (pol:Policy {id: $id})-[:HAS_VERSION]->(v:PolicyVersion)
         RETURN properties(pol) AS props, properties(v) AS version,
           [(pol)-[e]->(x) WHERE NOT x:PolicyVersion |
             [type(e), properties(e), labels(x), coalesce(x.id, x.type + ':' + x.identifier)]] AS edges`,
        { id },
      );
      const props = { ...(row!['props'] as Record<string, unknown>) };
      for (const k of ['id', 'name', 'name_key', 'created_at', 'updated_at', 'activated_at']) delete props[k];
      for (const k of ['created_by', 'updated_by']) props[k] = typeof props[k];
      const version = { ...(row!['version'] as Record<string, unknown>) };
      const versionBody = JSON.parse(version['body'] as string);
      delete versionBody.name;
      return {
        props,
        version: { ...version, policy_id: null, created_at: null, created_by: null, body: versionBody },
        // An edge's `since` is a time like the others: it must be there, whatever its value.
        edges: (row!['edges'] as [string, Record<string, unknown>, ...unknown[]][])
          .map(([type, props, ...rest]) => {
            const { since, ...others } = props;
            return JSON.stringify([
              type,
              { ...others, ...(since === undefined ? {} : { since: typeof since }) },
              ...rest,
            ]);
          })
          .sort(),
      };
    };
    expect(await shape(viaBulk)).to.deep.equal(await shape(viaApi));
    const resource = async (identifier: string) => {
      const [row] = await cypher(
        fx.app.runtime.db,
        `MATCH (r:Resource {type: 'db', identifier: $identifier})
         RETURN properties(r) AS props, labels(r) AS labels, [(r)-[:OWNED_BY]->(o) | o.id] AS owners`,
        { identifier },
      );
      const props = { ...(row!['props'] as Record<string, unknown>) };
      for (const k of ['identifier', 'created_at', 'updated_at']) delete props[k];
      return { ...row, props };
    };
    expect(await resource('orders-prod-2')).to.deep.equal(await resource('orders-prod-1'));

    // Read back through the API, the index and the graph walk, the two policies agree.
    await fx.app.runtime.engine.sync.load();
    const [a, b] = await Promise.all([
      fx.api.get(`/v1/policies/${viaApi}`),
      fx.api.get(`/v1/policies/${viaBulk}`),
    ]);
    const comparable = (p: any) => ({
      ...p,
      id: null,
      name: null,
      created_at: null,
      updated_at: null,
      activated_at: typeof p.activated_at,
      created_by: null,
      updated_by: null,
    });
    expect(comparable(b.body)).to.deep.equal(comparable(a.body));
    expect((await fx.api.get(`/v1/policies/${viaBulk}/versions`)).body.data).to.have.length(1);
    const decided = await fx.api.post('/v1/decisions/evaluate', {
      principal_id: member.id,
      action: 'repo:read',
      resource: { type: 'db', identifier: 'orders-prod-2' },
      context: { ip: '10.1.2.3' },
    });
    expect(decided.body.granted_by).to.deep.equal([viaApi, viaBulk].sort());
    const access = (await fx.api.get(`/v1/principals/${member.id}/access`)).body.access;
    const both = [viaApi, viaBulk].sort();
    expect(access.map((e: any) => [e.resource.identifier, e.pattern ?? false, e.granted_by])).to.deep.equal([
      ['named-only', false, both],
      ['orders-*', true, both],
      ['orders-prod-1', false, both],
      ['orders-prod-2', false, both],
    ]);
  });
});
