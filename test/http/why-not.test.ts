import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import { eventually } from '../helpers/wait.js';

/**
 * "Why not" through POST /v1/decisions/evaluate (docs/api.md §5.2): an explained DENY names the
 * policies that came close and the changes that would let it through, and a client applying one
 * as offered gets an ALLOW. Every answer is checked against the OpenAPI document.
 */
describe('decisions: why not', () => {
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp();
  before(() => {
    api = fx.api;
    world = engineApi(api, uniq);
  });

  const evaluate = async (request: Record<string, unknown>): Promise<any> => {
    const res = await api.post('/v1/decisions/evaluate', request);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  it('an explained DENY carries near misses and remedies, and applying a remedy lets the request through', async () => {
    const p = (await world.principal()).id as string;
    const other = (await world.principal()).id as string;
    const g = await world.group();
    const t = type();
    const viaGroup = await world.policy({
      subjects: { groups: [g] },
      resources: [{ type: t, identifier: 'a' }],
    });
    const office = await world.policy({
      subjects: { principals: [p] },
      resources: [{ type: t, identifier: 'a' }],
      conditions: { 'context.ip': { $cidr: '10.0.0.0/8' } },
    });
    await world.policy({ subjects: { principals: [other] }, resources: [{ type: t, identifier: 'b' }] });
    const request = {
      principal_id: p,
      action: 'read',
      resource: { type: t, identifier: 'a' },
      context: { ip: '192.168.0.1' },
      explain: true,
    };

    const denied = await evaluate(request);
    expect(denied.decision).to.equal('DENY');
    expect(denied.near_misses.map((m: any) => [m.policy_id, m.failed.kind]).sort()).to.deep.equal(
      [
        [viaGroup.id, 'not_subject'],
        [office.id, 'condition'],
      ].sort(),
    );
    const notSubject = denied.near_misses.find((m: any) => m.policy_id === viaGroup.id);
    expect(notSubject.failed.detail.groups.map((x: any) => x.id)).to.deep.equal([g]);
    const condition = denied.near_misses.find((m: any) => m.policy_id === office.id);
    expect(condition.failed.detail).to.include({ path: 'context.ip', op: '$cidr', value: '192.168.0.1' });

    expect(denied.remedies.map((r: any) => [r.kind, r.target.id, r.blast_radius])).to.deep.equal([
      ['add_to_policy', viaGroup.id, { principals: 0, resources: 0 }],
      ['add_to_group', g, { principals: 0, resources: 0 }],
    ]);

    // The decision is recorded with them.
    const recorded = await recordedDecision(api, denied.id);
    expect(recorded.remedies).to.deep.equal(denied.remedies);

    // Applied as offered, the group remedy turns the request into ALLOW.
    const remedy = denied.remedies.find((r: any) => r.kind === 'add_to_group');
    await world.addMember(remedy.target.id, remedy.change.member_id);
    const { value: allowed } = await eventually(
      () => evaluate(request),
      (d) => d.decision === 'ALLOW',
      5_000,
    );
    expect(allowed.granted_by).to.deep.equal([viaGroup.id]);
    expect(allowed).to.not.have.any.keys('near_misses', 'remedies');
  });

  it('a denial by an explicit deny has the remedy none, naming the deny', async () => {
    const p = (await world.principal()).id as string;
    const t = type();
    const allow = await world.policy({
      subjects: { principals: [p] },
      resources: [{ type: t, identifier: 'a' }],
    });
    const deny = await world.policy({
      effect: 'deny',
      subjects: { principals: [p] },
      resources: [{ type: t, identifier: '*' }],
    });
    const denied = await evaluate({
      principal_id: p,
      action: 'read',
      resource: { type: t, identifier: 'a' },
      explain: true,
    });
    expect(denied.decision).to.equal('DENY');
    expect(denied.near_misses).to.deep.equal([
      {
        policy_id: allow.id,
        policy_name: allow.name,
        principal_id: p,
        failed: {
          kind: 'denied_by',
          detail: {
            message: `policy ${allow.name} applies, but deny ${deny.name} overrides it`,
            denies: [{ policy_id: deny.id, policy_name: deny.name }],
          },
        },
      },
    ]);
    expect(denied.remedies).to.have.length(1);
    expect(denied.remedies[0]).to.deep.include({
      kind: 'none',
      target: { type: 'policy', id: deny.id, name: deny.name, version: 1 },
      change: null,
    });
  });

  it('a denial without explain carries neither', async () => {
    const p = (await world.principal()).id as string;
    const denied = await evaluate({
      principal_id: p,
      action: 'read',
      resource: { type: type(), identifier: 'a' },
    });
    expect(denied.decision).to.equal('DENY');
    expect(denied).to.not.have.any.keys('near_misses', 'remedies', 'trace');
  });
});
