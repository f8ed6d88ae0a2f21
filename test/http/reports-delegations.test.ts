import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { useApp } from '../helpers/fixture.js';
import { insertPrincipal } from '../helpers/principals.js';
import { eventually } from '../helpers/wait.js';

const DAY = 24 * 60 * 60 * 1000;

describe('audit reports: agents and their delegations', () => {
  const ids: Record<string, string> = {};
  const delegations: Record<string, string> = {};
  const expiry = new Date(Date.now() + 7 * DAY).toISOString();

  const fx = useApp({ env: { JOB_POLL_INTERVAL_MS: '50' } });

  before(async () => {
    const person = await insertPrincipal(fx.app, { name: 'Pat Person', email: 'pat@example.com' });
    ids['person'] = person.id;
    const create = async (key: string, body: Record<string, unknown>) => {
      const res = await fx.api.post('/v1/principals', body);
      expect(res.status, res.text).to.equal(201);
      ids[key] = res.body.id;
    };
    const owned = { owner: 'pat@example.com' };
    // Delegators the API can suspend: service accounts (a user's status is its connector's).
    await create('boss', { type: 'SERVICE_ACCOUNT', name: 'release-manager', metadata: owned });
    await create('leaver', { type: 'SERVICE_ACCOUNT', name: 'old-pipeline', metadata: owned });
    await create('trusted', { type: 'AI_AGENT', name: 'trusted-agent', metadata: owned });
    await create('stranded', { type: 'AI_AGENT', name: 'stranded-agent', metadata: owned });
    await create('ownerGone', { type: 'SERVICE_ACCOUNT', name: 'departed-owner' });
    await create('ward', { type: 'AI_AGENT', name: 'ward-agent', metadata: { owner: ids['ownerGone']! } });
    const delegate = async (key: string, body: Record<string, unknown>) => {
      const res = await fx.api.post('/v1/delegations', { expires_at: expiry, ...body });
      expect(res.status, res.text).to.equal(201);
      delegations[key] = res.body.id;
    };
    await delegate('trusted', {
      delegator_id: ids['person'],
      delegate_id: ids['trusted'],
      actions: ['read'],
      resources: [{ type: 'database', identifier: 'ledger-*' }],
    });
    await delegate('revoked', { delegator_id: ids['boss'], delegate_id: ids['trusted'] });
    expect((await fx.api.delete(`/v1/delegations/${delegations['revoked']}`)).status).to.equal(200);
    await delegate('stranded', { delegator_id: ids['leaver'], delegate_id: ids['stranded'] });
    await delegate('ward', { delegator_id: ids['person'], delegate_id: ids['ward'], actions: ['read'] });
    expect((await fx.api.patch(`/v1/principals/${ids['leaver']}`, { status: 'suspended' })).status).to.equal(
      200,
    );
    expect((await fx.api.delete(`/v1/principals/${ids['ownerGone']}`)).status).to.equal(200);
    const policy = await fx.api.post('/v1/policies', {
      name: 'agents-read-ledger',
      effect: 'allow',
      subjects: { principals: [ids['trusted'], ids['person']] },
      actions: ['read'],
      resources: [{ type: 'database', identifier: 'ledger-prod' }],
    });
    expect(policy.status, policy.text).to.equal(201);
  });

  async function generate(type: string, format: 'json' | 'csv'): Promise<string> {
    const res = await fx.api.post('/v1/audit/reports', { type, format });
    expect(res.status, res.text).to.equal(202);
    const { value } = await eventually(
      async () => (await fx.api.get(`/v1/audit/reports/${res.body.id}`)).body,
      (r) => r.status === 'completed' || r.status === 'failed',
      20_000,
    );
    expect(value.status, JSON.stringify(value)).to.equal('completed');
    const content = await fx.api.get(`/v1/audit/reports/${value.id}/content`);
    expect(content.status).to.equal(200);
    return content.text;
  }

  const csvRows = (text: string): Record<string, string>[] =>
    parse<Record<string, string>>(text, { columns: true });

  it('lists agents acting for someone who is gone in orphaned_principals, with the delegations they hold', async () => {
    const doc = JSON.parse(await generate('orphaned_principals', 'json')) as {
      data: Record<string, any>[];
      row_count: number;
    };
    const rows = Object.fromEntries(doc.data.map((r) => [r['id'], r]));
    // The stranded agent's owner lives: it is there for the delegator who is not active any more.
    expect(rows[ids['stranded']!]).to.include({
      name: 'stranded-agent',
      owner_state: 'active',
      delegation_orphaned: true,
    });
    expect(rows[ids['stranded']!]!['acts_for']).to.deep.equal([
      {
        delegation_id: delegations['stranded'],
        delegator_id: ids['leaver'],
        delegator_name: 'old-pipeline',
        delegator_status: 'suspended',
        actions: ['*'],
        resources: null,
        expires_at: expiry,
      },
    ]);
    // The ward's delegator lives, but its owner does not.
    expect(rows[ids['ward']!]).to.include({ owner_state: 'deleted', delegation_orphaned: true });
    expect(
      rows[ids['ward']!]!['acts_for'].map((d: any) => [d.delegation_id, d.delegator_status]),
    ).to.deep.equal([[delegations['ward'], 'active']]);
    // An agent acting for an active delegator, with a living owner, is not there.
    expect(rows).to.not.have.property(ids['trusted']!);
    expect(doc.row_count).to.equal(doc.data.length);

    // The same agents carry the factor in their risk.
    for (const key of ['stranded', 'ward']) {
      await eventually(
        async () =>
          (await fx.api.get(`/v1/principals/${ids[key]}`)).body.risk_factors.map((f: any) => f.code),
        (codes: string[]) => codes.includes('DELEGATION_ORPHANED'),
        10_000,
      );
    }

    // In CSV the delegations are one cell of JSON, and the other cells read as before.
    const csv = csvRows(await generate('orphaned_principals', 'csv'));
    const stranded = csv.find((r) => r['id'] === ids['stranded'])!;
    expect(stranded['delegation_orphaned']).to.equal('true');
    expect(JSON.parse(stranded['acts_for']!)).to.deep.equal(rows[ids['stranded']!]!['acts_for']);
    expect(csv.find((r) => r['id'] === ids['ownerGone'])).to.equal(undefined);
  });

  it("carries an agent's active delegations on its access_review rows: whom it acts for, with what, until when", async () => {
    const doc = JSON.parse(await generate('access_review', 'json')) as { data: Record<string, any>[] };
    const ledger = doc.data.filter((r) => r['resource_identifier'] === 'ledger-prod');
    const agentRow = ledger.find((r) => r['principal_id'] === ids['trusted'])!;
    expect(agentRow).to.include({ principal_type: 'AI_AGENT', resource_type: 'database' });
    // The revoked delegation is not among them.
    expect(agentRow['acts_for']).to.deep.equal([
      {
        delegation_id: delegations['trusted'],
        delegator_id: ids['person'],
        delegator_name: 'Pat Person',
        delegator_status: 'active',
        actions: ['read'],
        resources: [{ type: 'database', identifier: 'ledger-*' }],
        expires_at: expiry,
      },
    ]);
    const personRow = ledger.find((r) => r['principal_id'] === ids['person'])!;
    expect(personRow['acts_for']).to.deep.equal([]);

    const csv = csvRows(await generate('access_review', 'csv'));
    const agentCsv = csv.find(
      (r) => r['principal_id'] === ids['trusted'] && r['resource_identifier'] === 'ledger-prod',
    )!;
    expect(JSON.parse(agentCsv['acts_for']!)).to.deep.equal(agentRow['acts_for']);
    expect(csv.find((r) => r['principal_id'] === ids['person'])!['acts_for']).to.equal('');
  });
});
