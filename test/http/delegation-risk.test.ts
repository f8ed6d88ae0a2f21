import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import { namer } from '../helpers/engine.js';
import { createConnector } from '../helpers/identities.js';
import { insertPrincipal } from '../helpers/principals.js';
import { eventually } from '../helpers/wait.js';

const DAY = 24 * 60 * 60 * 1000;
const ahead = (ms: number): string => new Date(Date.now() + ms).toISOString();

describe('risk of agents acting for someone who is gone (DELEGATION_ORPHANED)', () => {
  const { uniq } = namer();

  const fx = useApp({ env: { DELEGATION_EXPIRY_INTERVAL_S: '1' } });

  before(async () => {
    // The owner the test agents name, so that ownership adds nothing to their risk.
    await insertPrincipal(fx.app, { name: 'Keeper', email: 'keeper@example.com' });
  });

  const create = async (type: string, owner = 'keeper@example.com'): Promise<string> => {
    const res = await fx.api.post('/v1/principals', {
      type,
      name: uniq(type.toLowerCase()),
      metadata: { owner },
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  };
  const agent = (owner?: string) => create('AI_AGENT', owner);
  /** A delegator the API can suspend and delete: a service account (a user's status is its connector's). */
  const delegator = () => create('SERVICE_ACCOUNT');
  const delegate = async (delegatorId: string, delegateId: string, expiresInMs = DAY): Promise<string> => {
    const res = await fx.api.post('/v1/delegations', {
      delegator_id: delegatorId,
      delegate_id: delegateId,
      expires_at: ahead(expiresInMs),
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  };
  const setStatus = async (id: string, status: string): Promise<void> => {
    const res = await fx.api.patch(`/v1/principals/${id}`, { status });
    expect(res.status, res.text).to.equal(200);
  };
  const risk = async (id: string): Promise<{ score: number; codes: string[] }> => {
    const res = await fx.api.get(`/v1/principals/${id}`);
    expect(res.status, res.text).to.equal(200);
    return { score: res.body.risk_score, codes: res.body.risk_factors.map((f: any) => f.code) };
  };
  const flagged = (id: string) =>
    eventually(
      () => risk(id),
      (r) => r.codes.includes('DELEGATION_ORPHANED'),
      10_000,
    );
  const cleared = (id: string) =>
    eventually(
      () => risk(id),
      (r) => !r.codes.includes('DELEGATION_ORPHANED'),
      10_000,
    );

  it('flags an agent acting for a delegator who is suspended, keeps the flag through other writes, and clears it when the delegator is back', async () => {
    const [boss, acting, bystanderBoss, bystander] = [
      await delegator(),
      await agent(),
      await delegator(),
      await agent(),
    ];
    await delegate(bystanderBoss, bystander);
    await delegate(boss, acting);
    expect(await risk(acting)).to.deep.equal({ score: 0, codes: [] });

    await setStatus(boss, 'suspended');
    const raised = await flagged(acting);
    expect(raised.value).to.deep.equal({ score: 30, codes: ['DELEGATION_ORPHANED'] });
    // Its delegation no longer applies, and says why.
    const held = await fx.api.get(`/v1/principals/${acting}/delegations`);
    expect(held.body.received[0]).to.include({
      status: 'active',
      applies: false,
      delegator_status: 'suspended',
    });
    // The check that flagged it had seen the delegation created before: an agent acting for an
    // active delegator is not flagged.
    expect((await risk(bystander)).codes).to.not.include('DELEGATION_ORPHANED');

    // A write to the agent itself keeps what it does not change.
    const patched = await fx.api.patch(`/v1/principals/${acting}`, { attributes: { team: 'ops' } });
    expect(patched.status, patched.text).to.equal(200);
    expect(await risk(acting)).to.deep.equal({ score: 30, codes: ['DELEGATION_ORPHANED'] });

    await setStatus(boss, 'active');
    const back = await cleared(acting);
    expect(back.value).to.deep.equal({ score: 0, codes: [] });
  });

  /**
   * Waits until the risk check has caught up with every change made before: an agent flagged
   * now was flagged by a check that saw them all (the feed brings changes in order).
   */
  const settled = async (): Promise<void> => {
    const [gone, sentinel] = [await delegator(), await agent()];
    await delegate(gone, sentinel);
    await setStatus(gone, 'suspended');
    await flagged(sentinel);
  };

  it('clears the flag when the orphaned delegation is revoked, and keeps it while another one still is', async () => {
    const [gone, alsoGone, acting] = [await delegator(), await delegator(), await agent()];
    const first = await delegate(gone, acting);
    const second = await delegate(alsoGone, acting);
    await setStatus(gone, 'suspended');
    await setStatus(alsoGone, 'suspended');
    await flagged(acting);

    expect((await fx.api.delete(`/v1/delegations/${first}`)).status).to.equal(200);
    await settled();
    // The other delegation still comes from a suspended delegator.
    expect(await risk(acting)).to.deep.equal({ score: 30, codes: ['DELEGATION_ORPHANED'] });
    expect((await fx.api.delete(`/v1/delegations/${second}`)).status).to.equal(200);
    expect((await cleared(acting)).value).to.deep.equal({ score: 0, codes: [] });
  });

  it('flags an agent whose delegator left (deprovisioned by its connector) or was deleted', async () => {
    const connector = await createConnector(fx.app, fx.api, uniq('okta'));
    const person = await connector.provision({ userName: `${uniq('ada')}@example.com` });
    const [forPerson, forService, service] = [await agent(), await agent(), await delegator()];
    await delegate(person, forPerson);
    await delegate(service, forService);

    expect((await connector.scim.delete(`/scim/v2/Users/${person}`)).status).to.equal(204);
    expect((await fx.api.get(`/v1/principals/${person}`)).body.status).to.equal('deprovisioned');
    await flagged(forPerson);

    expect((await fx.api.delete(`/v1/principals/${service}`)).status).to.equal(200);
    await flagged(forService);
  });

  it('flags an agent that still holds delegations once its owner is gone, on top of ORPHANED', async () => {
    const owner = await create('SERVICE_ACCOUNT');
    const person = (await insertPrincipal(fx.app, { name: uniq('Person') })).id;
    const [holding, idle] = [await agent(owner), await agent(owner)];
    const d = await delegate(person, holding);

    expect((await fx.api.delete(`/v1/principals/${owner}`)).status).to.equal(200);
    const orphan = await eventually(
      () => risk(holding),
      (r) => r.codes.includes('ORPHANED') && r.codes.includes('DELEGATION_ORPHANED'),
      10_000,
    );
    expect(orphan.value).to.deep.equal({ score: 60, codes: ['ORPHANED', 'DELEGATION_ORPHANED'] });
    // Without a delegation, a lost owner is ORPHANED alone.
    const alone = await eventually(
      () => risk(idle),
      (r) => r.codes.includes('ORPHANED'),
      10_000,
    );
    expect(alone.value).to.deep.equal({ score: 30, codes: ['ORPHANED'] });

    // Once it holds no delegation any more, what is left is the owner.
    expect((await fx.api.delete(`/v1/delegations/${d}`)).status).to.equal(200);
    const left = await cleared(holding);
    expect(left.value).to.deep.equal({ score: 30, codes: ['ORPHANED'] });
  });

  it('clears the flag when the delegation expires', async () => {
    const [gone, acting] = [await delegator(), await agent()];
    const d = await delegate(gone, acting, 3_000);
    await setStatus(gone, 'suspended');
    await flagged(acting);
    await cleared(acting);
    const expired = await fx.api.get(`/v1/delegations/${d}`);
    expect(expired.body.status).to.equal('expired');
  });
});
