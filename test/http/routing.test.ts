import { expect } from 'chai';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';

/**
 * The service on a routing URI (`neo4j://`), as it runs against a cluster: the local Neo4j
 * serves the routing protocol too, naming itself as reader and writer. Reads run in read-mode
 * sessions and writes in write-mode ones; Neo4j refuses a write in a read-mode session, so a
 * write sent the wrong way would fail here rather than reach a follower of a cluster.
 */
describe('on a routing URI (neo4j://)', () => {
  const { uniq, type } = namer();
  // The suite's Neo4j, by the routing scheme: its address is known once the run's setup is done.
  const fx = useApp({
    neo4jUri: () => {
      const direct = process.env['NEO4J_URI']!;
      const routing = direct.replace(
        /^bolt(\+s|\+ssc)?:\/\//,
        (_m, tls: string | undefined) => `neo4j${tls ?? ''}://`,
      );
      expect(routing, 'the test Neo4j is reached with a bolt:// URI').to.match(/^neo4j/);
      return routing;
    },
  });
  let world: ReturnType<typeof engineApi>;

  before(() => {
    world = engineApi(fx.api, uniq);
  });

  it('writes, reads its own writes at once, and decides, through the routing driver', async () => {
    const agent = await world.principal('AI_AGENT', { allowed_tools: ['search'] });
    const owner = await world.principal('SERVICE_ACCOUNT');
    const got = await fx.api.get(`/v1/principals/${agent.id}`);
    expect(got.status, got.text).to.equal(200);
    const group = await world.group();
    await world.addMember(group, agent.id);
    const members = await fx.api.get(`/v1/groups/${group}/members`);
    expect(members.body.data.map((m: any) => m.id)).to.deep.equal([agent.id]);
    const t = type();
    await world.policy({ subjects: { groups: [group] }, resources: [{ type: t, identifier: '*' }] });
    await world.policy({ subjects: { principals: [owner.id] }, resources: [{ type: t, identifier: '*' }] });
    await world.delegation(owner.id, agent.id);
    const decision = await fx.api.post('/v1/decisions/evaluate', {
      principal_id: agent.id,
      action: 'read',
      resource: { type: t, identifier: 'x' },
      on_behalf_of: owner.id,
    });
    expect(decision.body.decision, JSON.stringify(decision.body.reasons)).to.equal('ALLOW');
    expect((await recordedDecision(fx.api, decision.body.id)).on_behalf_of).to.deep.equal([owner.id]);
    const access = await fx.api.get(`/v1/principals/${agent.id}/access?resource_type=${t}`);
    expect(access.body.access.map((e: any) => e.resource.identifier)).to.deep.equal(['*']);
    const audit = await fx.api.get(`/v1/audit/events?target_id=${agent.id}`);
    expect(audit.body.data.map((e: any) => e.type)).to.include('principal.created');
  });

  it('runs single statements in read mode: a write sent that way is refused, and nothing is written', async () => {
    const marker = uniq('probe');
    let refused: unknown;
    try {
      await fx.app.runtime.db.run(
        { name: 'test/write_in_read_mode', text: 'CREATE (:RoutingProbe {name: $marker})' },
        { marker },
      );
    } catch (err) {
      refused = err;
    }
    expect(refused, 'a write through a read-mode statement').to.be.an('error');
    expect((refused as { code?: string }).code).to.equal('Neo.ClientError.Statement.AccessMode');
    const found = await fx.app.runtime.db.write('test/probe_count', (tx) =>
      tx.run<{ n: number }>(
        { name: 'test/probe_count', text: 'MATCH (p:RoutingProbe {name: $marker}) RETURN count(p) AS n' },
        { marker },
      ),
    );
    expect(found[0]!.n).to.equal(0);
  });
});
