import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import type { Principal } from '../../src/principals/model.js';
import { useApp } from '../helpers/fixture.js';
import { insertPrincipal } from '../helpers/principals.js';
import { loadMigrations } from '../../src/db/migrations.js';
import { newId } from '../../src/ids.js';
import { principalRepository } from '../../src/principals/repository.js';
import { BulkLoader, type SeedPrincipal } from '../../src/seed/bulk.js';

const seedRow = (name: string): SeedPrincipal => ({
  id: newId('principal'),
  type: 'USER',
  name,
  email: `${name.toLowerCase().replace(/\W+/g, '.')}@example.com`,
  attributes: {},
  metadata: {},
  createdAt: new Date().toISOString(),
});

/**
 * Org chart used throughout:
 *   ceo ← vp ← mgr ← {zoe, adam, bob(deleted later)}
 *                  ← lead ← intern
 *   mgr also manages svc (a service account)
 */
describe('principal relationships', () => {
  const p: Record<string, Principal> = {};

  const fx = useApp();

  before(async () => {
    p['ceo'] = await insertPrincipal(fx.app, { name: 'Cora CEO' });
    p['vp'] = await insertPrincipal(fx.app, { name: 'Victor VP', attributes: { manager_id: p['ceo'].id } });
    p['mgr'] = await insertPrincipal(fx.app, { name: 'Mia Manager', attributes: { manager_id: p['vp'].id } });
    for (const name of ['Zoe', 'Adam', 'Bob', 'Lead']) {
      p[name.toLowerCase()] = await insertPrincipal(fx.app, {
        name,
        attributes: { manager_id: p['mgr'].id },
      });
    }
    p['intern'] = await insertPrincipal(fx.app, {
      name: 'Ivy Intern',
      attributes: { manager_id: p['lead']!.id },
    });
    const svc = await fx.api.post('/v1/principals', {
      type: 'SERVICE_ACCOUNT',
      name: 'Mia-sync',
      attributes: { manager_id: p['mgr'].id },
    });
    p['svc'] = svc.body;
    const bob = await fx.api.post('/v1/principals', {
      type: 'SERVICE_ACCOUNT',
      name: 'Bobby bot',
      attributes: { manager_id: p['mgr'].id },
    });
    p['bot'] = bob.body;
    await fx.api.delete(`/v1/principals/${bob.body.id}`);
  });

  const rel = async (id: string, query = '') => {
    const res = await fx.api.get(`/v1/principals/${id}/relationships${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body as { principal_id: string; relationships: any[] };
  };
  const names = (entry: any) => entry.principals.map((x: any) => x.name);

  it('depth 1 (default): direct manager, then direct reports sorted by name', async () => {
    const body = await rel(p['mgr']!.id);
    expect(body.principal_id).to.equal(p['mgr']!.id);
    expect(body.relationships.map((e) => [e.type, e.depth])).to.deep.equal([
      ['manager', 1],
      ['reports', 1],
    ]);
    expect(body.relationships[0].principal).to.deep.equal({
      id: p['vp']!.id,
      name: 'Victor VP',
      type: 'USER',
      email: p['vp']!.email,
    });
    expect(names(body.relationships[1])).to.deep.equal(['Adam', 'Bob', 'Lead', 'Mia-sync', 'Zoe']);
    expect(body.relationships[1].count).to.equal(5);
    expect(body.relationships[1]).not.to.have.property('truncated');
    const svcEntry = body.relationships[1].principals.find((x: any) => x.name === 'Mia-sync');
    expect(svcEntry).to.deep.equal({
      id: p['svc']!.id,
      name: 'Mia-sync',
      type: 'SERVICE_ACCOUNT',
      email: null,
      manager_id: p['mgr']!.id,
    });
  });

  it('depth 3: the manager chain in order, then reports level by level', async () => {
    const body = await rel(p['intern']!.id, '?depth=3');
    expect(body.relationships.map((e) => [e.type, e.depth, e.principal?.name])).to.deep.equal([
      ['manager', 1, 'Lead'],
      ['manager', 2, 'Mia Manager'],
      ['manager', 3, 'Victor VP'],
    ]);
    const top = await rel(p['vp']!.id, '?depth=3&type=reports');
    expect(top.relationships.map((e) => [e.type, e.depth, e.count])).to.deep.equal([
      ['reports', 1, 1],
      ['reports', 2, 5],
      ['reports', 3, 1],
    ]);
    expect(names(top.relationships[2])).to.deep.equal(['Ivy Intern']);
  });

  it('filters by type and omits empty levels', async () => {
    expect((await rel(p['ceo']!.id, '?type=manager&depth=3')).relationships).to.deep.equal([]);
    const reports = await rel(p['ceo']!.id, '?type=reports&depth=2');
    expect(reports.relationships.map((e) => e.depth)).to.deep.equal([1, 2]);
    expect((await rel(p['zoe']!.id, '?type=reports')).relationships).to.deep.equal([]);
    expect((await rel(p['zoe']!.id, '?type=group_member&depth=3')).relationships).to.deep.equal([]);
  });

  it('never shows deleted principals, and a deleted principal has no relationships left', async () => {
    const body = await rel(p['mgr']!.id, '?type=reports');
    expect(names(body.relationships[0])).not.to.include('Bobby bot');
    expect((await rel(p['bot']!.id, '?depth=3')).relationships).to.deep.equal([]);
  });

  it('breaks name ties on id', async () => {
    const boss = await insertPrincipal(fx.app, { name: 'Tie Boss' });
    const twins = [];
    for (let i = 0; i < 3; i += 1)
      twins.push(await insertPrincipal(fx.app, { name: 'Same Name', attributes: { manager_id: boss.id } }));
    const body = await rel(boss.id, '?type=reports');
    expect(body.relationships[0].principals.map((x: any) => x.id)).to.deep.equal(
      twins.map((t) => t.id).sort(),
    );
  });

  it('caps each entry at 1000 principals, keeping the true count and marking truncation', async () => {
    const boss = await insertPrincipal(fx.app, { name: 'Big Boss' });
    // Seeded in bulk: 1,001 direct reports.
    await cypher(
      fx.app.runtime.db,
      `MATCH (b:Principal {id: $boss})
       UNWIND range(1, 1001) AS i
       CREATE (r:Principal:User {id: 'prn_01JZ' + right('0000000000000000000000' + toString(i), 22),
         type: 'USER', name: 'Report ' + right('0000' + toString(i), 4), status: 'active',
         created_at: datetime(), updated_at: datetime(), created_by: 'test', version: 1, risk_score: 0})
       CREATE (r)-[:REPORTS_TO]->(b)`,
      { boss: boss.id },
    );
    const body = await rel(boss.id, '?type=reports');
    const entry = body.relationships[0];
    expect(entry.count).to.equal(1001);
    expect(entry.principals).to.have.length(1000);
    expect(entry.truncated).to.equal(true);
    expect(entry.principals[0].name).to.equal('Report 0001');
    expect(entry.principals[999].name).to.equal('Report 1000');
  });

  it('lists groups by nesting distance, each at its shortest distance, with type GROUP', async () => {
    const group = async (name: string) => (await fx.api.post('/v1/groups', { name })).body.id as string;
    const add = async (groupId: string, memberId: string) => {
      const res = await fx.api.put(`/v1/groups/${groupId}/members/${memberId}`);
      expect(res.status, res.text).to.equal(200);
    };
    const eng = await group('Engineering');
    const platform = await group('Platform');
    const allStaff = await group('All Staff');
    const company = await group('Company');
    const oncall = await group('Oncall');
    // zoe → platform → eng → allStaff → company; zoe → oncall → allStaff (a diamond).
    await add(platform, p['zoe']!.id);
    await add(oncall, p['zoe']!.id);
    await add(eng, platform);
    await add(allStaff, eng);
    await add(allStaff, oncall);
    await add(company, allStaff);

    const one = await rel(p['zoe']!.id, '?type=group_member');
    expect(one.relationships).to.deep.equal([
      {
        type: 'group_member',
        depth: 1,
        count: 2,
        principals: [
          { id: oncall, name: 'Oncall', type: 'GROUP', via: [p['zoe']!.id] },
          { id: platform, name: 'Platform', type: 'GROUP', via: [p['zoe']!.id] },
        ],
      },
    ]);
    const three = await rel(p['zoe']!.id, '?type=group_member&depth=3');
    expect(three.relationships.map((e) => [e.depth, e.principals.map((g: any) => g.name)])).to.deep.equal([
      [1, ['Oncall', 'Platform']],
      [2, ['All Staff', 'Engineering']],
      [3, ['Company']],
    ]);
    // All three kinds together, in the documented order.
    const all = await rel(p['lead']!.id, '?depth=2');
    await add(eng, p['lead']!.id);
    const withGroups = await rel(p['lead']!.id, '?depth=2');
    expect(withGroups.relationships.map((e) => `${e.type}:${e.depth}`)).to.deep.equal([
      ...all.relationships.map((e) => `${e.type}:${e.depth}`),
      'group_member:1',
      'group_member:2',
    ]);
    expect(withGroups.relationships.map((e) => e.type)).to.deep.equal([
      'manager',
      'manager',
      'reports',
      'group_member',
      'group_member',
    ]);
  });

  it('gives every report its direct manager, at every depth', async () => {
    const boss = await insertPrincipal(fx.app, { name: 'Chart Boss' });
    const under = (name: string, manager: Principal) =>
      insertPrincipal(fx.app, { name, attributes: { manager_id: manager.id } });
    const north = await under('Chart North', boss);
    const south = await under('Chart South', boss);
    const northLead = await under('Chart North Lead', north);
    await under('Chart South Lead', south);
    const northDev = await under('Chart North Dev', northLead);
    const edges = (entry: any) => entry.principals.map((x: any) => [x.name, x.manager_id]);

    const all = await rel(boss.id, '?type=reports&depth=3');
    expect(all.relationships.map((e) => [e.depth, edges(e)])).to.deep.equal([
      [
        1,
        [
          ['Chart North', boss.id],
          ['Chart South', boss.id],
        ],
      ],
      [
        2,
        [
          ['Chart North Lead', north.id],
          ['Chart South Lead', south.id],
        ],
      ],
      [3, [['Chart North Dev', northLead.id]]],
    ]);
    // Seen from the middle, depth 1 points at the subject and depth 2 at the one in between.
    const middle = await rel(north.id, '?type=reports&depth=2');
    expect(middle.relationships.map((e) => [e.depth, edges(e)])).to.deep.equal([
      [1, [['Chart North Lead', north.id]]],
      [2, [['Chart North Dev', northLead.id]]],
    ]);
    // The chain of managers is a line already: its entries stay as they were.
    const chain = await rel(northDev.id, '?type=manager&depth=3');
    expect(chain.relationships.map((e) => e.principal)).to.deep.equal(
      [northLead, north, boss].map((m) => ({ id: m.id, name: m.name, type: 'USER', email: m.email })),
    );
  });

  it('gives every group the members it is reached through at its shortest depth', async () => {
    const suffix = newId('group').slice(-8);
    const group = async (name: string) => {
      const res = await fx.api.post('/v1/groups', { name: `${name} ${suffix}` });
      expect(res.status, res.text).to.equal(201);
      return res.body.id as string;
    };
    const add = async (groupId: string, memberId: string) => {
      const res = await fx.api.put(`/v1/groups/${groupId}/members/${memberId}`);
      expect(res.status, res.text).to.equal(200);
    };
    const subject = await insertPrincipal(fx.app, { name: 'Via Subject' });
    const left = await group('A Left');
    const right = await group('B Right');
    const shortcut = await group('C Shortcut');
    const both = await group('D Both');
    const one = await group('E One');
    const top = await group('F Top');
    // subject → left, right, shortcut; left → both, one, shortcut; right → both; both, one → top.
    for (const g of [left, right, shortcut]) await add(g, subject.id);
    await add(both, left);
    await add(both, right);
    await add(one, left);
    await add(shortcut, left);
    await add(top, both);
    await add(top, one);

    const body = await rel(subject.id, '?type=group_member&depth=3');
    const byDepth = body.relationships.map((e) => [
      e.depth,
      e.principals.map((g: any) => [g.id, g.type, g.via]),
    ]);
    expect(byDepth).to.deep.equal([
      [
        1,
        [
          [left, 'GROUP', [subject.id]],
          [right, 'GROUP', [subject.id]],
          // Also reached through left, one step further: only the shortest way counts.
          [shortcut, 'GROUP', [subject.id]],
        ],
      ],
      [
        2,
        [
          [both, 'GROUP', [left, right].sort()],
          [one, 'GROUP', [left]],
        ],
      ],
      [3, [[top, 'GROUP', [both, one].sort()]]],
    ]);
    // Cut at depth 2, the levels kept are reached the same ways.
    const two = await rel(subject.id, '?type=group_member&depth=2');
    expect(two.relationships).to.deep.equal(body.relationships.slice(0, 2));
  });

  describe('cards', () => {
    const cardOf = async (id: string): Promise<unknown> =>
      (await cypher(fx.app.runtime.db, 'MATCH (p:Principal {id: $id}) RETURN p.card AS card', { id }))[0]![
        'card'
      ];

    it('stores [id, name, type, email] on every principal written, by the API or in bulk', async () => {
      const boss = await insertPrincipal(fx.app, { name: 'Card Boss', email: 'card.boss@example.com' });
      expect(await cardOf(boss.id)).to.deep.equal([boss.id, 'Card Boss', 'USER', 'card.boss@example.com']);
      const svc = (await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: 'card-svc' })).body;
      expect(await cardOf(svc.id)).to.deep.equal([svc.id, 'card-svc', 'SERVICE_ACCOUNT', '']);
      const bulk = { ...seedRow('Bulk Card'), attributes: { manager_id: boss.id } };
      await new BulkLoader(fx.app.runtime.db).principals([bulk]);
      expect(await cardOf(bulk.id)).to.deep.equal([bulk.id, 'Bulk Card', 'USER', 'bulk.card@example.com']);
      expect(names((await rel(boss.id, '?type=reports')).relationships[0])).to.deep.equal(['Bulk Card']);
    });

    it('follows a rename, in the card and in the order of reports', async () => {
      const boss = await insertPrincipal(fx.app, { name: 'Rename Boss' });
      const a = (
        await fx.api.post('/v1/principals', {
          type: 'AI_AGENT',
          name: 'agent-a',
          attributes: { manager_id: boss.id },
        })
      ).body;
      const b = (
        await fx.api.post('/v1/principals', {
          type: 'AI_AGENT',
          name: 'agent-b',
          attributes: { manager_id: boss.id },
        })
      ).body;
      expect(names((await rel(boss.id, '?type=reports')).relationships[0])).to.deep.equal([
        'agent-a',
        'agent-b',
      ]);
      const res = await fx.api.patch(`/v1/principals/${a.id}`, { name: 'zz-agent-a' });
      expect(res.status, res.text).to.equal(200);
      expect(await cardOf(a.id)).to.deep.equal([a.id, 'zz-agent-a', 'AI_AGENT', '']);
      const entry = (await rel(boss.id, '?type=reports')).relationships[0];
      expect(entry.principals).to.deep.equal([
        { id: b.id, name: 'agent-b', type: 'AI_AGENT', email: null, manager_id: boss.id },
        { id: a.id, name: 'zz-agent-a', type: 'AI_AGENT', email: null, manager_id: boss.id },
      ]);
    });

    it('follows an email change from the identity connector', async () => {
      const boss = await insertPrincipal(fx.app, { name: 'Mail Boss' });
      const user = await insertPrincipal(fx.app, { name: 'Mail User', attributes: { manager_id: boss.id } });
      await fx.app.runtime.db.write('test/email_change', async (tx) => {
        await principalRepository.update(
          tx,
          user,
          { email: 'new.address@example.com', risk: { score: user.risk_score, factors: user.risk_factors } },
          new Date().toISOString(),
        );
      });
      expect(await cardOf(user.id)).to.deep.equal([user.id, 'Mail User', 'USER', 'new.address@example.com']);
      const [entry] = (await rel(boss.id, '?type=reports')).relationships;
      expect(entry.principals[0]).to.deep.equal({
        id: user.id,
        name: 'Mail User',
        type: 'USER',
        email: 'new.address@example.com',
        manager_id: boss.id,
      });
    });

    it('goes when the principal is deleted', async () => {
      const boss = await insertPrincipal(fx.app, { name: 'Delete Boss' });
      const svc = (
        await fx.api.post('/v1/principals', {
          type: 'API_KEY',
          name: 'doomed-key',
          attributes: { manager_id: boss.id },
        })
      ).body;
      expect(await cardOf(svc.id)).to.be.an('array');
      expect((await fx.api.delete(`/v1/principals/${svc.id}`)).status).to.equal(200);
      expect(await cardOf(svc.id)).to.equal(null);
      expect((await rel(boss.id, '?type=reports')).relationships).to.deep.equal([]);
    });

    it('is backfilled by the migration for principals written without one, once', async () => {
      const [migration] = (await loadMigrations()).filter((m) => m.name === 'principal_cards');
      expect(migration).not.to.equal(undefined);
      const boss = await insertPrincipal(fx.app, { name: 'Old Boss' });
      const old = await insertPrincipal(fx.app, { name: 'Old Report', attributes: { manager_id: boss.id } });
      const gone = await insertPrincipal(fx.app, { name: 'Old Gone', status: 'deleted' });
      await cypher(fx.app.runtime.db, 'MATCH (p:Principal) WHERE p.id IN $ids REMOVE p.card', {
        ids: [old.id, gone.id],
      });
      // A card that is already there is left as it is.
      await cypher(
        fx.app.runtime.db,
        "MATCH (p:Principal {id: $id}) SET p.card = [p.id, 'Kept', p.type, '']",
        {
          id: boss.id,
        },
      );
      for (let run = 0; run < 2; run += 1) {
        for (const statement of migration!.statements) await fx.app.runtime.db.schema(statement);
        expect(await cardOf(old.id)).to.deep.equal([old.id, 'Old Report', 'USER', old.email]);
        expect(await cardOf(gone.id)).to.equal(null);
        expect(await cardOf(boss.id)).to.deep.equal([boss.id, 'Kept', 'USER', '']);
      }
    });
  });

  it('validates type and depth', async () => {
    for (const q of ['depth=0', 'depth=4', 'depth=two', 'depth=1.5', 'type=peers', 'type=MANAGER']) {
      const res = await fx.api.get(`/v1/principals/${p['mgr']!.id}/relationships?${q}`);
      expect(res.status, q).to.equal(400);
      expect(res.body.errors[0].pointer).to.match(/^\/query\/(depth|type)$/);
    }
  });
});
