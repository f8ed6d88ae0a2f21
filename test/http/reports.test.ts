import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { useApp } from '../helpers/fixture.js';
import { reportRuns } from '../helpers/report-runs.js';
import { authed, createClient } from '../helpers/auth.js';
import { cypher } from '../helpers/db.js';
import { insertPrincipal } from '../helpers/principals.js';
import { eventually } from '../helpers/wait.js';

describe('audit reports', () => {
  const ids: Record<string, string> = {};

  const fx = useApp({ env: { JOB_POLL_INTERVAL_MS: '50' } });

  before(async () => {
    const old = new Date(Date.now() - 200 * 86_400_000).toISOString();
    const recent = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const ada = await insertPrincipal(fx.app, {
      name: 'Ada Owner',
      email: 'ada@example.com',
      lastLogin: recent,
    });
    const gone = await insertPrincipal(fx.app, {
      name: 'Gone Owner',
      email: 'gone@example.com',
      status: 'deprovisioned',
      lastLogin: old,
    });
    const sleepy = await insertPrincipal(fx.app, { name: 'Sleepy User', lastLogin: old });
    Object.assign(ids, { ada: ada.id, gone: gone.id, sleepy: sleepy.id });
    const create = async (key: string, body: Record<string, unknown>) => {
      const res = await fx.api.post('/v1/principals', body);
      expect(res.status, res.text).to.equal(201);
      ids[key] = res.body.id;
    };
    await create('byId', { type: 'SERVICE_ACCOUNT', name: 'owned-by-id', metadata: { owner: ada.id } });
    await create('byEmail', {
      type: 'AI_AGENT',
      name: 'owned-by-email',
      metadata: { owner: 'ada@example.com' },
    });
    await create('unset', { type: 'SERVICE_ACCOUNT', name: 'nobody-owns-me' });
    await create('missing', {
      type: 'API_KEY',
      name: 'owner-vanished',
      metadata: { owner: 'prn_01JAAAAAAAAAAAAAAAAAAAAAAA' },
    });
    await create('deprovisionedOwner', {
      type: 'AI_AGENT',
      name: 'owner-left',
      metadata: { owner: 'gone@example.com' },
    });
    await create('formula', {
      type: 'SERVICE_ACCOUNT',
      name: '=HYPERLINK("http://evil.example","x")',
      metadata: { owner: ada.id },
    });
    await create('deletedOwner', { type: 'SERVICE_ACCOUNT', name: 'soon-deleted' });
    await create('ownedByDeleted', {
      type: 'SERVICE_ACCOUNT',
      name: 'owner-deleted',
      metadata: { owner: ids['deletedOwner']! },
    });
    expect((await fx.api.delete(`/v1/principals/${ids['deletedOwner']}`)).status).to.equal(200);
    const policy = await fx.api.post('/v1/policies', {
      name: 'report-readers',
      effect: 'allow',
      subjects: { principals: [ids['byId'], ada.id] },
      actions: ['read', 'write'],
      resources: [{ type: 'database', identifier: 'payments-prod' }],
    });
    expect(policy.status, policy.text).to.equal(201);
    ids['policy'] = policy.body.id;
  });

  async function generate(
    body: Record<string, unknown>,
  ): Promise<{ report: Record<string, any>; content: string; type: string }> {
    const res = await fx.api.post('/v1/audit/reports', body);
    expect(res.status, res.text).to.equal(202);
    expect(res.headers.get('location')).to.equal(`/v1/audit/reports/${res.body.id}`);
    expect(res.body).to.include({
      status: 'pending',
      type: body['type'],
      format: body['format'],
      download_url: null,
    });
    const { value } = await eventually(
      async () => (await fx.api.get(`/v1/audit/reports/${res.body.id}`)).body,
      (r) => r.status === 'completed' || r.status === 'failed',
      20_000,
    );
    expect(value.status, JSON.stringify(value)).to.equal('completed');
    expect(value.progress).to.equal(100);
    expect(value.download_url).to.equal(
      `${fx.app.config.publicBaseUrl}/v1/audit/reports/${value.id}/content`,
    );
    const content = await fx.api.get(`/v1/audit/reports/${value.id}/content`);
    expect(content.status).to.equal(200);
    return { report: value, content: content.text, type: content.headers.get('content-type') ?? '' };
  }

  const csvRows = (text: string): Record<string, string>[] =>
    parse<Record<string, string>>(text, { columns: true });

  it('lists the non-USER principals without a living owner, whichever way the owner is named', async () => {
    const { report, content, type } = await generate({ type: 'orphaned_principals', format: 'json' });
    expect(type).to.match(/^application\/json/);
    const doc = JSON.parse(content) as {
      report: { id: string };
      data: { id: string; owner_state: string }[];
      row_count: number;
    };
    expect(doc.report.id).to.equal(report.id);
    const states = Object.fromEntries(doc.data.map((r) => [r.id, r.owner_state]));
    expect(states).to.deep.equal({
      [ids['unset']!]: 'unset',
      [ids['missing']!]: 'missing',
      [ids['deprovisionedOwner']!]: 'deprovisioned',
      [ids['ownedByDeleted']!]: 'deleted',
    });
    expect(doc.row_count).to.equal(4).and.equal(report.row_count);
  });

  it('counts an orphan in its risk, and follows its owner going and a new owner arriving', async () => {
    const factors = async (id: string): Promise<string[]> =>
      ((await fx.api.get(`/v1/principals/${id}`)).body.risk_factors as { code: string }[]).map((f) => f.code);
    for (const key of ['missing', 'deprovisionedOwner', 'ownedByDeleted']) {
      await eventually(
        () => factors(ids[key]!),
        (f) => f.includes('ORPHANED'),
        10_000,
      );
    }
    expect(await factors(ids['byId']!)).to.not.include('ORPHANED');
    expect(await factors(ids['byEmail']!)).to.not.include('ORPHANED');
    expect(await factors(ids['unset']!))
      .to.include('NO_OWNER')
      .and.not.include('ORPHANED');

    const owner = (await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: 'temporary-owner' }))
      .body.id as string;
    const owned = (
      await fx.api.post('/v1/principals', { type: 'AI_AGENT', name: 'ward', metadata: { owner } })
    ).body.id as string;
    // A principal created after the ward, whose owner is missing: once the ownership check has
    // orphaned it, it has also looked at the ward (it follows the change feed in order).
    const sentinel = (
      await fx.api.post('/v1/principals', {
        type: 'AI_AGENT',
        name: 'ownership-sentinel',
        metadata: { owner: 'prn_01JAAAAAAAAAAAAAAAAAAAAAAA' },
      })
    ).body.id as string;
    await eventually(
      () => factors(sentinel),
      (f) => f.includes('ORPHANED'),
      10_000,
    );
    expect(await factors(owned)).to.not.include('ORPHANED');
    expect((await fx.api.delete(`/v1/principals/${sentinel}`)).status).to.equal(200);
    const before = (await fx.api.get(`/v1/principals/${owned}`)).body.risk_score as number;
    expect((await fx.api.delete(`/v1/principals/${owner}`)).status).to.equal(200);
    const { value } = await eventually(
      () => fx.api.get(`/v1/principals/${owned}`),
      (r) => r.body.risk_factors.some((f: { code: string }) => f.code === 'ORPHANED'),
      10_000,
    );
    expect(value.body.risk_score).to.equal(before + 30);
    await fx.api.patch(`/v1/principals/${owned}`, { metadata: { owner: 'ada@example.com' } });
    await eventually(
      () => factors(owned),
      (f) => !f.includes('ORPHANED'),
      10_000,
    );
  });

  it('writes RFC 4180 CSV with spreadsheet formulas defused', async () => {
    const { content, type } = await generate({ type: 'principal_inventory', format: 'csv' });
    expect(type).to.match(/^text\/csv/);
    expect(content).to.match(/^id,type,name,email,status,/);
    expect(content.split('\r\n').length).to.be.greaterThan(5);
    const rows = csvRows(content);
    const formula = rows.find((r) => r['id'] === ids['formula']);
    expect(formula!['name']).to.equal(`'=HYPERLINK("http://evil.example","x")`);
    expect(content).to.include(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(rows.find((r) => r['id'] === ids['deletedOwner'])!['status']).to.equal('deleted');
    expect(rows.map((r) => r['id'])).to.deep.equal([...rows.map((r) => r['id'])].sort());
  });

  it('lists dormant principals for the number of days asked', async () => {
    const { content } = await generate({
      type: 'dormant_principals',
      format: 'csv',
      parameters: { days: 30 },
    });
    const rows = csvRows(content);
    const dormant = rows.map((r) => r['id']);
    expect(dormant).to.include(ids['sleepy']);
    expect(dormant).to.not.include(ids['ada']).and.not.include(ids['gone']);
    expect(Number(rows.find((r) => r['id'] === ids['sleepy'])!['days_inactive'])).to.be.within(199, 201);
  });

  it('reviews access: principal × resource × actions × granted_by', async () => {
    const { content } = await generate({ type: 'access_review', format: 'json' });
    const rows = (JSON.parse(content) as { data: Record<string, unknown>[] }).data;
    const mine = rows.filter((r) => r['resource_identifier'] === 'payments-prod');
    expect(mine.map((r) => r['principal_id']).sort()).to.deep.equal([ids['ada'], ids['byId']].sort());
    for (const row of mine) {
      expect(row).to.include({ resource_type: 'database', conditional: false });
      expect(row['actions']).to.deep.equal(['read', 'write']);
      expect(row['granted_by']).to.deep.equal([ids['policy']]);
    }
    // The review agrees with each principal's access endpoint.
    const access = await fx.api.get(`/v1/principals/${ids['byId']}/access`);
    expect(
      access.body.access.map((a: { resource: { identifier: string } }) => a.resource.identifier),
    ).to.deep.equal(
      rows.filter((r) => r['principal_id'] === ids['byId']).map((r) => r['resource_identifier']),
    );
  });

  it('exports the audit log of a time range, and announces each completed report as an audit event', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const { report, content } = await generate({ type: 'audit_log', format: 'csv', parameters: { since } });
    expect(report.parameters).to.include({ since });
    const rows = csvRows(content);
    expect(rows.some((r) => r['type'] === 'principal.created' && r['target_id'] === ids['byId'])).to.equal(
      true,
    );
    const times = rows.map((r) => r['occurred_at']!);
    expect(times).to.deep.equal([...times].sort());
    const events = await fx.api.get(`/v1/audit/events?type=report.completed&target_id=${report.id}`);
    expect(events.body.data).to.have.length(1);
  });

  it('refuses bad requests with 400 and answers 409 for the file of an unfinished report', async () => {
    const bad: [unknown, string][] = [
      [{ type: 'everything', format: 'csv' }, '/type'],
      [{ type: 'audit_log', format: 'xlsx' }, '/format'],
      [{ type: 'dormant_principals', format: 'csv', parameters: { days: 'ninety' } }, '/parameters/days'],
      [{ type: 'dormant_principals', format: 'csv', parameters: { days: 0 } }, '/parameters/days'],
      [{ type: 'principal_inventory', format: 'csv', parameters: { days: 3 } }, '/parameters/days'],
      [{ type: 'audit_log', format: 'csv', parameters: { since: 'yesterday' } }, '/parameters/since'],
      [
        {
          type: 'audit_log',
          format: 'csv',
          parameters: { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
        },
        '/parameters/until',
      ],
    ];
    const before = (await fx.api.get('/v1/audit/reports')).body.pagination.total;
    for (const [body, pointer] of bad) {
      const res = await fx.api.post('/v1/audit/reports', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(
        res.body.errors.map((e: { pointer: string }) => e.pointer),
        JSON.stringify(body),
      ).to.include(pointer);
    }
    expect((await fx.api.get('/v1/audit/reports')).body.pagination.total).to.equal(before);

    const res = await fx.api.post('/v1/audit/reports', { type: 'principal_inventory', format: 'json' });
    await cypher(fx.app.runtime.db, "MATCH (r:Report {id: $id}) SET r.status = 'running'", {
      id: res.body.id,
    });
    const early = await fx.api.get(`/v1/audit/reports/${res.body.id}/content`);
    expect(early.status).to.equal(409);
    expect(early.body.code).to.equal('CONFLICT');
    expect((await fx.api.get('/v1/audit/reports/rpt_01JAAAAAAAAAAAAAAAAAAAAAAA')).status).to.equal(404);
    expect((await fx.api.get('/v1/audit/reports/rpt_01JAAAAAAAAAAAAAAAAAAAAAAA/content')).status).to.equal(
      404,
    );
  });

  it('needs audit:reports', async () => {
    const reader = await authed(fx.app, await createClient(fx.app, ['audit:read']));
    expect((await reader.post('/v1/audit/reports', { type: 'audit_log', format: 'csv' })).status).to.equal(
      403,
    );
    expect((await reader.get('/v1/audit/reports')).status).to.equal(403);
  });

  it('lists reports newest first', async () => {
    // Two of its own, one after the other, whatever the tests before it made.
    const { report: older } = await generate({ type: 'principal_inventory', format: 'json' });
    const { report: newer } = await generate({ type: 'orphaned_principals', format: 'json' });
    const list = await fx.api.get('/v1/audit/reports?limit=100');
    const listed = list.body.data as { id: string; requested_at: string }[];
    const times = listed.map((r) => r.requested_at);
    expect(times).to.deep.equal([...times].sort().reverse());
    const order = listed.map((r) => r.id);
    expect(order).to.include.members([older.id, newer.id]);
    expect(order.indexOf(older.id), 'the older after the newer').to.be.greaterThan(order.indexOf(newer.id));
    const inventories = await fx.api.get('/v1/audit/reports?type=principal_inventory&limit=100');
    const kept = (inventories.body.data as { id: string; type: string }[]).map((r) => r.id);
    expect(kept).to.include(older.id).and.not.include(newer.id);
    for (const r of inventories.body.data) expect(r.type).to.equal('principal_inventory');
  });

  it('resumes an interrupted report after the last page it stored, and writes the same file', async () => {
    const runs = reportRuns(fx.app, { principals: 3, review: 2 });
    const whole = await runs.make('principal_inventory');
    await runs.run(whole);
    const interrupted = await runs.make('principal_inventory');
    // Stopped (as a shutdown would stop it) once it has stored two pages.
    const stopped = await runs.runUntil(interrupted, 2);
    expect(stopped, 'the run stopped').to.be.instanceOf(Error);
    const midway = await fx.api.get(`/v1/audit/reports/${interrupted}`);
    expect(midway.body.status).to.equal('running');
    expect(midway.body.row_count).to.equal(6);
    await runs.run(interrupted, 2);
    const a = await fx.api.get(`/v1/audit/reports/${whole}/content`);
    const b = await fx.api.get(`/v1/audit/reports/${interrupted}/content`);
    expect(b.status).to.equal(200);
    expect(b.text).to.equal(a.text);
    expect(csvRows(b.text).length).to.equal((await fx.api.get(`/v1/audit/reports/${whole}`)).body.row_count);
  });
});
