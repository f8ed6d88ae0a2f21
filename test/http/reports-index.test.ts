import { expect } from 'chai';
import { principalRepository } from '../../src/principals/repository.js';
import { createEncoder } from '../../src/reports/encoding.js';
import { nowIso } from '../../src/time.js';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import { reportRuns } from '../helpers/report-runs.js';
import { insertPrincipal, type InsertPrincipal } from '../helpers/principals.js';
import {
  dormantReference,
  inventoryReference,
  orphanedReference,
  type ReferenceRows,
} from '../helpers/report-reference.js';
import { eventually, instanceRuns, until } from '../helpers/wait.js';

const DAY = 86_400_000;

/** The columns of each report, in their order (docs/api.md §6.2). */
const COLUMNS = {
  principal_inventory: [
    'id',
    'type',
    'name',
    'email',
    'status',
    'connector_source',
    'owner',
    'manager_id',
    'groups',
    'risk_score',
    'risk_factors',
    'last_login',
    'created_at',
    'updated_at',
  ],
  dormant_principals: [
    'id',
    'type',
    'name',
    'email',
    'status',
    'connector_source',
    'owner',
    'last_login',
    'created_at',
    'days_inactive',
    'risk_score',
  ],
  orphaned_principals: [
    'id',
    'type',
    'name',
    'status',
    'owner',
    'owner_state',
    'owner_id',
    'owner_name',
    'risk_score',
    'created_at',
    'delegation_orphaned',
    'acts_for',
  ],
} as const;

type PrincipalReport = keyof typeof COLUMNS;

/** The CSV file a report of these rows is: its header and its rows, as the encoder writes them. */
function csvOf(type: PrincipalReport, rows: Record<string, unknown>[]): string {
  const encoder = createEncoder('csv', COLUMNS[type]);
  return encoder.start({}) + encoder.rows(rows, true) + encoder.end(rows.length);
}

/**
 * The reports about principals, made from the decision index, against the rows the graph gives
 * (test/helpers/report-reference.ts, the statements that made them before): a world with every
 * type and status of principal, owners named by id and by email (exactly, shared by two users,
 * deleted, suspended, deprovisioned, in another case), managers kept, suspended, removed and
 * deleted, groups, delegations active, expired and revoked, and risk rewritten in the background.
 */
describe('audit reports about principals, from the decision index', () => {
  const ids: Record<string, string> = {};
  const fx = useApp({ env: { JOB_POLL_INTERVAL_MS: '50', PRIVILEGE_RISK_INTERVAL_S: '1' } });

  const user = async (key: string, input: InsertPrincipal): Promise<void> => {
    ids[key] = (await insertPrincipal(fx.app, input)).id;
  };
  const create = async (key: string, body: Record<string, unknown>): Promise<void> => {
    const res = await fx.api.post('/v1/principals', body);
    expect(res.status, res.text).to.equal(201);
    ids[key] = res.body.id as string;
  };
  const ok = async (request: Promise<{ status: number; text: string }>): Promise<void> => {
    const res = await request;
    expect(res.status, res.text).to.be.within(200, 204);
  };
  /** Deletes a USER as its connector would (the API leaves USERs to their connectors). */
  const deleteUser = async (key: string): Promise<void> => {
    await fx.app.runtime.db.write('test/delete_user', async (tx) => {
      await principalRepository.delete(tx, ids[key]!, 'con_test', nowIso());
      fx.app.runtime.events.record(
        tx,
        {
          actor: { type: 'connector', id: 'con_test' },
          meta: { requestId: null, sourceIp: null, userAgent: null },
        },
        { type: 'principal.deleted', target: { type: 'principal', id: ids[key]! } },
      );
    });
  };
  const riskCodesOf = async (key: string): Promise<string[]> =>
    ((await fx.api.get(`/v1/principals/${ids[key]}`)).body.risk_factors as { code: string }[]).map(
      (f) => f.code,
    );

  before(async function () {
    this.timeout(90_000);
    const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();
    await user('ada', { name: 'Ada Active', email: 'shared@example.com', lastLogin: ago(2) });
    await user('adaTwin', {
      name: 'Ada Twin',
      email: 'shared@example.com',
      status: 'suspended',
      lastLogin: ago(200),
    });
    await user('sue', { name: 'Sue Suspended', email: 'sue@example.com', status: 'suspended' });
    await user('sueLeft', { name: 'Sue Left', email: 'sue@example.com', status: 'deprovisioned' });
    await user('deeLeft', { name: 'Dee Left', email: 'dee@example.com', status: 'deprovisioned' });
    await user('deeGone', { name: 'Dee Gone', email: 'dee@example.com' });
    await user('solo', { name: 'Solo Gone', email: 'solo@example.com', lastLogin: ago(300) });
    await user('casey', { name: 'Casey Case', email: 'Case@Example.com', lastLogin: ago(1) });
    await user('sleepy', {
      name: 'Sleepy User',
      lastLogin: ago(200),
      attributes: { manager_id: ids['ada']! },
    });
    await user('dozy', { name: 'Dozy User', status: 'suspended', lastLogin: ago(100) });
    await user('gone', { name: 'Gone User', status: 'deprovisioned', lastLogin: ago(200) });
    await user('fresh', { name: 'Fresh User', lastLogin: ago(29) });
    // Created last with the first id of all: the index gives it its last row, a full build its first.
    await user('early', { id: 'prn_00000000000000000000000000', name: 'Early Bird', lastLogin: ago(31) });

    await create('mgrGone', {
      type: 'SERVICE_ACCOUNT',
      name: 'manager-deleted',
      metadata: { owner: ids['ada']! },
    });
    await create('mgrSuspended', {
      type: 'SERVICE_ACCOUNT',
      name: 'manager-suspended',
      metadata: { owner: ids['ada']! },
    });
    await create('mgrReplaced', { type: 'SERVICE_ACCOUNT', name: 'manager-replaced' });
    await create('reportsToGone', {
      type: 'SERVICE_ACCOUNT',
      name: 'reports-to-deleted',
      attributes: { manager_id: ids['mgrGone']! },
      metadata: { owner: ids['ada']! },
    });
    await create('reportsToSuspended', {
      type: 'SERVICE_ACCOUNT',
      name: 'reports-to-suspended',
      attributes: { manager_id: ids['mgrSuspended']! },
      metadata: { owner: 'shared@example.com' },
    });
    await create('managerRemoved', {
      type: 'API_KEY',
      name: 'manager-removed',
      attributes: { manager_id: ids['mgrReplaced']! },
      metadata: { owner: 'Case@Example.com' },
    });
    await ok(fx.api.patch(`/v1/principals/${ids['managerRemoved']}`, { attributes: { manager_id: null } }));

    await create('delegator', {
      type: 'SERVICE_ACCOUNT',
      name: 'delegator-suspended',
      metadata: { owner: ids['ada']! },
    });
    await create('agentShared', {
      type: 'AI_AGENT',
      name: 'agent-shared-owner',
      metadata: { owner: 'shared@example.com' },
    });
    await create('agentSue', {
      type: 'AI_AGENT',
      name: 'agent-suspended-owner',
      metadata: { owner: 'sue@example.com' },
    });
    await create('agentDee', { type: 'AI_AGENT', name: 'agent-dee', metadata: { owner: 'dee@example.com' } });
    await create('agentFine', { type: 'AI_AGENT', name: 'agent-fine', metadata: { owner: ids['ada']! } });
    await create('keySolo', { type: 'API_KEY', name: 'key-solo', metadata: { owner: 'solo@example.com' } });
    await create('keyCase', { type: 'API_KEY', name: 'key-case', metadata: { owner: 'case@example.com' } });
    await create('unset', { type: 'SERVICE_ACCOUNT', name: 'nobody-owns-me' });
    await create('unsetSuspended', { type: 'SERVICE_ACCOUNT', name: 'suspended-unowned' });
    await create('unsetDeleted', { type: 'SERVICE_ACCOUNT', name: 'deleted-unowned' });
    await create('missingId', {
      type: 'SERVICE_ACCOUNT',
      name: 'owner-vanished',
      metadata: { owner: 'prn_01JAAAAAAAAAAAAAAAAAAAAAAA' },
    });
    await create('ownerSa', { type: 'SERVICE_ACCOUNT', name: 'owner-deleted-soon' });
    await create('ownedByGoneSa', {
      type: 'SERVICE_ACCOUNT',
      name: 'owned-by-deleted',
      metadata: { owner: ids['ownerSa']! },
    });
    await create('ownedBySuspended', {
      type: 'SERVICE_ACCOUNT',
      name: 'owned-by-suspended',
      metadata: { owner: ids['delegator']! },
    });

    for (const name of ['readers', 'writers']) {
      const res = await fx.api.post('/v1/groups', { name });
      expect(res.status, res.text).to.equal(201);
      ids[name] = res.body.id as string;
    }
    const member = (group: string, key: string) =>
      ok(fx.api.put(`/v1/groups/${ids[group]}/members/${ids[key]}`, {}));
    for (const key of ['ada', 'sleepy', 'reportsToGone', 'mgrGone', 'writers']) await member('readers', key);
    for (const key of ['reportsToGone', 'agentShared', 'deeGone']) await member('writers', key);

    const delegate = async (key: string, body: Record<string, unknown>, expiresAt?: string) => {
      const res = await fx.api.post('/v1/delegations', {
        expires_at: expiresAt ?? new Date(Date.now() + 7 * DAY).toISOString(),
        ...body,
      });
      expect(res.status, res.text).to.equal(201);
      ids[key] = res.body.id as string;
    };
    const expiresSoon = new Date(Date.now() + 3_000).toISOString();
    await delegate(
      'delegation:soon',
      { delegator_id: ids['delegator'], delegate_id: ids['agentFine'] },
      expiresSoon,
    );
    await delegate('delegation:fine', {
      delegator_id: ids['ada'],
      delegate_id: ids['agentFine'],
      actions: ['read'],
      resources: [
        { type: 'database', identifier: 'ledger-*' },
        { type: 'bucket', identifier: 'reports' },
      ],
    });
    await delegate('delegation:revoked', {
      delegator_id: ids['mgrSuspended'],
      delegate_id: ids['agentFine'],
    });
    await ok(fx.api.delete(`/v1/delegations/${ids['delegation:revoked']}`));
    await delegate(
      'delegation:shared',
      { delegator_id: ids['delegator'], delegate_id: ids['agentShared'] },
      undefined,
    );
    await delegate('delegation:sue', {
      delegator_id: ids['delegator'],
      delegate_id: ids['agentSue'],
      actions: ['read'],
    });
    await delegate('delegation:dee1', { delegator_id: ids['ada'], delegate_id: ids['agentDee'] });
    await delegate('delegation:dee2', {
      delegator_id: ids['casey'],
      delegate_id: ids['agentDee'],
      expires_at: new Date(Date.now() + 2 * DAY).toISOString(),
    });
    await delegate('delegation:toService', { delegator_id: ids['ada'], delegate_id: ids['unsetSuspended'] });

    const policy = await fx.api.post('/v1/policies', {
      name: 'agent-everything',
      effect: 'allow',
      subjects: { principals: [ids['agentFine']] },
      actions: ['*'],
      resources: [{ type: 'database', identifier: 'payments' }],
    });
    expect(policy.status, policy.text).to.equal(201);

    for (const key of ['delegator', 'mgrSuspended', 'unsetSuspended']) {
      await ok(fx.api.patch(`/v1/principals/${ids[key]}`, { status: 'suspended' }));
    }
    for (const key of ['mgrGone', 'unsetDeleted', 'ownerSa'])
      await ok(fx.api.delete(`/v1/principals/${ids[key]}`));
    await deleteUser('deeGone');
    await deleteUser('solo');

    // The risk upkeep rewrites risk in the background, with no change event: its factors arrive.
    const expected: [string, string][] = [
      ['ownedByGoneSa', 'ORPHANED'],
      ['keyCase', 'ORPHANED'],
      ['missingId', 'ORPHANED'],
      ['agentShared', 'DELEGATION_ORPHANED'],
      ['agentSue', 'DELEGATION_ORPHANED'],
      ['agentFine', 'PRIVILEGED_ACCESS'],
    ];
    for (const [key, code] of expected) {
      await eventually(
        () => riskCodesOf(key),
        (codes) => codes.includes(code),
        20_000,
      );
    }
    // Then nothing moves any more, and the delegation about to expire has.
    const risks = async () =>
      JSON.stringify(
        await cypher(
          fx.app.runtime.db,
          'MATCH (p:Principal) RETURN p.id AS id, p.risk_score AS score, p.risk_factors AS factors ORDER BY id',
        ),
      );
    let last = await risks();
    await until(
      'the stored risk to settle',
      async () => {
        // Each risk updater runs again, all of it after the last reading: whatever it had left to
        // write, it has written by the next one.
        await Promise.all(
          ['risk.ownership', 'risk.delegations', 'risk.privileges'].map((task) =>
            instanceRuns([fx.http], task, 1),
          ),
        );
        const now = await risks();
        const settled = now === last;
        last = now;
        return settled && Date.now() > Date.parse(expiresSoon) + 500;
      },
      30_000,
    );
  });

  async function generate(
    type: PrincipalReport,
    format: 'json' | 'csv',
    parameters?: Record<string, unknown>,
  ): Promise<{ report: Record<string, any>; content: string }> {
    const res = await fx.api.post('/v1/audit/reports', {
      type,
      format,
      ...(parameters ? { parameters } : {}),
    });
    expect(res.status, res.text).to.equal(202);
    const { value } = await eventually(
      async () => (await fx.api.get(`/v1/audit/reports/${res.body.id}`)).body,
      (r) => r.status === 'completed' || r.status === 'failed',
      20_000,
    );
    expect(value.status, JSON.stringify(value)).to.equal('completed');
    const content = await fx.api.get(`/v1/audit/reports/${value.id}/content`);
    expect(content.status).to.equal(200);
    return { report: value, content: content.text };
  }

  /** What a report stored of its progress: the total it measured against and what it read. */
  async function progressOf(id: string): Promise<{ total: number; scanned: number }> {
    const [row] = await cypher(
      fx.app.runtime.db,
      'MATCH (r:Report {id: $id}) RETURN r.total AS total, r.scanned AS scanned',
      { id },
    );
    return row as { total: number; scanned: number };
  }

  /** The report in JSON and in CSV, each against the rows the graph gives. */
  async function compare(
    type: PrincipalReport,
    reference: (report: Record<string, any>) => Promise<ReferenceRows>,
    parameters?: Record<string, unknown>,
  ): Promise<ReferenceRows> {
    const { report, content } = await generate(type, 'json', parameters);
    const expected = await reference(report);
    const doc = JSON.parse(content) as { data: Record<string, unknown>[]; row_count: number };
    expect(doc.data).to.deep.equal(JSON.parse(JSON.stringify(expected.rows)));
    expect(doc.row_count).to.equal(expected.rows.length).and.equal(report.row_count);
    expect(await progressOf(report.id)).to.deep.equal({ total: expected.scanned, scanned: expected.scanned });

    const csv = await generate(type, 'csv', parameters);
    expect(csv.content).to.equal(csvOf(type, (await reference(csv.report)).rows));
    return expected;
  }

  it('principal_inventory: every principal, as the graph has it, in id order', async () => {
    const { rows } = await compare('principal_inventory', () => inventoryReference(fx.app.runtime.db));
    const byId = Object.fromEntries(rows.map((r) => [r['id'], r]));
    // The world is what the test means it to be, so that the comparison looks at each case.
    expect(byId[ids['reportsToGone']!]).to.include({ manager_id: null, groups: 2 });
    expect(byId[ids['reportsToSuspended']!]).to.include({ manager_id: ids['mgrSuspended'] });
    expect(byId[ids['managerRemoved']!]).to.include({ manager_id: null });
    expect(byId[ids['sleepy']!]).to.include({ manager_id: ids['ada'], groups: 1 });
    expect(byId[ids['mgrGone']!]).to.include({ status: 'deleted', groups: 0 });
    expect(byId[ids['agentFine']!]!['risk_factors']).to.include('PRIVILEGED_ACCESS');
    const attributes = (await fx.api.get(`/v1/principals/${ids['reportsToGone']}`)).body.attributes;
    expect(attributes, 'the attribute stays as history').to.deep.equal({ manager_id: ids['mgrGone'] });
  });

  it('dormant_principals: living principals not seen for the days asked', async () => {
    const { rows } = await compare(
      'dormant_principals',
      (report) => dormantReference(fx.app.runtime.db, report.parameters),
      { days: 30 },
    );
    expect(rows.map((r) => r['id'])).to.include.members([ids['sleepy'], ids['dozy'], ids['adaTwin']]);
    expect(rows.map((r) => r['id'])).to.not.include.members([ids['gone'], ids['fresh'], ids['sue']]);
  });

  it('orphaned_principals: owners by id and by exact email, a living one first, and agents acting for someone gone', async () => {
    const { rows } = await compare('orphaned_principals', () =>
      orphanedReference(fx.app.runtime.db, nowIso()),
    );
    const byId = Object.fromEntries(rows.map((r) => [r['id'], r]));
    expect(byId[ids['agentShared']!]).to.include({ owner_id: ids['ada'], owner_state: 'active' });
    expect(byId[ids['agentSue']!]).to.include({ owner_id: ids['sue'], owner_state: 'suspended' });
    const dee = [ids['deeLeft']!, ids['deeGone']!].sort()[0];
    expect(byId[ids['agentDee']!]).to.include({ owner_id: dee, delegation_orphaned: true });
    expect(byId[ids['keySolo']!]).to.include({ owner_id: ids['solo'], owner_state: 'deleted' });
    expect(byId[ids['keyCase']!]).to.include({ owner_id: null, owner_state: 'missing' });
    expect(byId[ids['unsetSuspended']!]!['acts_for']).to.have.length(1);
    expect(byId).to.not.have.property(ids['agentFine']!);
    expect(byId).to.not.have.property(ids['ownedBySuspended']!);
    expect(byId).to.not.have.property(ids['unsetDeleted']!);
    expect(byId).to.not.have.property(ids['managerRemoved']!);
  });

  it('pages in id order, and resumes after the last id stored once the index has been rebuilt', async () => {
    const db = fx.app.runtime.db;
    const runs = reportRuns(fx.app, { principals: 2, review: 2 });
    const cases: [
      PrincipalReport,
      Record<string, unknown>,
      (p: Record<string, any>) => Promise<ReferenceRows>,
    ][] = [
      ['principal_inventory', {}, () => inventoryReference(db)],
      [
        'dormant_principals',
        { days: 30, as_of: nowIso() },
        (p) => dormantReference(db, p as { as_of: string; days: number }),
      ],
      ['orphaned_principals', {}, () => orphanedReference(db, nowIso())],
    ];
    const earlyRow = fx.app.runtime.engine.index.table.rowOf(ids['early']!);
    for (const [type, parameters, reference] of cases) {
      const id = await runs.make(type, parameters);
      // Stopped (as a shutdown would stop it) once it has stored three pages.
      const stopped = await runs.runUntil(id, 3);
      expect(stopped, `${type}: the run stopped`).to.be.instanceOf(Error);
      // A full build numbers the principals' rows anew; the cursor is an id, so the run resumes.
      const table = fx.app.runtime.engine.index.table;
      await fx.app.runtime.engine.sync.load();
      expect(fx.app.runtime.engine.index.table).to.not.equal(table);
      expect(fx.app.runtime.engine.index.table.rowOf(ids['early']!)).to.equal(0).and.not.equal(earlyRow);
      await runs.run(id, 2);
      const report = (await fx.api.get(`/v1/audit/reports/${id}`)).body;
      expect(report.status, type).to.equal('completed');
      const content = await fx.api.get(`/v1/audit/reports/${id}/content`);
      const expected = await reference(parameters);
      expect(content.text, type).to.equal(csvOf(type, expected.rows));
      expect(await progressOf(id)).to.deep.equal({ total: expected.scanned, scanned: expected.scanned });
    }
  });
});
