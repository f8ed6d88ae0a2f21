import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import { namer } from '../helpers/engine.js';
import { insertPrincipal } from '../helpers/principals.js';
import { eventually } from '../helpers/wait.js';

describe('risk from privileges', () => {
  const { uniq } = namer();

  const fx = useApp({ env: { PRIVILEGE_RISK_INTERVAL_S: '1' } });

  before(async () => {
    // The owner the test principals name, so that ownership adds nothing to their risk.
    await insertPrincipal(fx.app, { name: 'Someone', email: 'someone@example.com' });
  });

  const principal = async (): Promise<any> => {
    const res = await fx.api.post('/v1/principals', {
      type: 'SERVICE_ACCOUNT',
      name: uniq('svc'),
      metadata: { owner: 'someone@example.com' },
    });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const factors = async (id: string): Promise<{ score: number; codes: string[] }> => {
    const res = await fx.api.get(`/v1/principals/${id}`);
    expect(res.status, res.text).to.equal(200);
    return { score: res.body.risk_score, codes: res.body.risk_factors.map((f: any) => f.code) };
  };

  it('raises the score of a principal a wildcard allow reaches, through a group, and lowers it when the policy goes', async () => {
    const p = await principal();
    const group = await fx.api.post('/v1/groups', { name: uniq('admins') });
    expect((await fx.api.put(`/v1/groups/${group.body.id}/members/${p.id}`)).status).to.equal(200);
    expect(await factors(p.id)).to.deep.equal({ score: 0, codes: [] });
    const policy = await fx.api.post('/v1/policies', {
      name: uniq('everything'),
      effect: 'allow',
      subjects: { groups: [group.body.id] },
      actions: ['*'],
      resources: [{ type: 'database', identifier: 'ledger' }],
    });
    expect(policy.status, policy.text).to.equal(201);
    const raised = await eventually(
      () => factors(p.id),
      (f) => f.codes.includes('PRIVILEGED_ACCESS'),
      5_000,
    );
    expect(raised.value).to.deep.equal({ score: 30, codes: ['PRIVILEGED_ACCESS'] });
    // Other writes keep the factor.
    expect((await fx.api.patch(`/v1/principals/${p.id}`, { attributes: { team: 'ops' } })).status).to.equal(
      200,
    );
    expect((await factors(p.id)).codes).to.deep.equal(['PRIVILEGED_ACCESS']);
    expect((await fx.api.delete(`/v1/policies/${policy.body.id}`)).status).to.equal(200);
    await eventually(
      () => factors(p.id),
      (f) => f.codes.length === 0 && f.score === 0,
      5_000,
    );
  });

  it('lowers it again when a wildcard allow selecting by attributes goes, whose selection no other policy keeps', async () => {
    const team = uniq('team');
    const p = await principal();
    expect((await fx.api.patch(`/v1/principals/${p.id}`, { attributes: { team } })).status).to.equal(200);
    const policy = await fx.api.post('/v1/policies', {
      name: uniq('everything'),
      effect: 'allow',
      subjects: { match: { attributes: { team } } },
      actions: ['*'],
      resources: [{ type: 'database', identifier: 'ledger' }],
    });
    expect(policy.status, policy.text).to.equal(201);
    await eventually(
      () => factors(p.id),
      (f) => f.codes.includes('PRIVILEGED_ACCESS'),
      5_000,
    );
    // The deleted version's selection is kept by no active policy: everyone is looked at again.
    expect((await fx.api.delete(`/v1/policies/${policy.body.id}`)).status).to.equal(200);
    await eventually(
      () => factors(p.id),
      (f) => f.codes.length === 0 && f.score === 0,
      5_000,
    );
  });

  it('counts the resources allow policies name for BROAD_ACCESS, and leaves denies and others alone', async () => {
    const p = await principal();
    const bystander = await principal();
    const resources = Array.from({ length: 50 }, (_, i) => ({
      type: 'bucket',
      identifier: `${uniq('b')}-${i}`,
    }));
    const broad = await fx.api.post('/v1/policies', {
      name: uniq('broad'),
      effect: 'allow',
      subjects: { principals: [p.id] },
      actions: ['read'],
      resources,
    });
    expect(broad.status, broad.text).to.equal(201);
    const deny = await fx.api.post('/v1/policies', {
      name: uniq('deny-all'),
      effect: 'deny',
      subjects: { principals: [bystander.id] },
      actions: ['*'],
      resources: [{ type: 'bucket', identifier: '*' }],
    });
    expect(deny.status, deny.text).to.equal(201);
    const got = await eventually(
      () => factors(p.id),
      (f) => f.codes.length > 0,
      5_000,
    );
    expect(got.value).to.deep.equal({ score: 15, codes: ['BROAD_ACCESS'] });
    expect(await factors(bystander.id)).to.deep.equal({ score: 0, codes: [] });
  });
});
