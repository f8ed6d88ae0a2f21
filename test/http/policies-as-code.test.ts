import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createPasClient } from '../../clients/typescript/src/index.js';
import { policyApi, type PolicyApi } from '../../cli/policies/api.js';
import { applyPlan } from '../../cli/policies/apply.js';
import { loadPolicyFolder } from '../../cli/policies/folder.js';
import { makePlan } from '../../cli/policies/plan.js';
import { loadFolderTests } from '../../cli/policies/tests.js';
import { GroupWrites } from '../../src/groups/writes.js';
import { projectRoot } from '../../src/paths.js';
import type { World } from '../../src/policy-cases/format.js';
import { resourceOf } from '../../src/policies/model.js';
import { ADMIN_CLIENT_ID, type TestApp } from '../helpers/app.js';
import { ADMIN, createClient, type TestClient } from '../helpers/auth.js';
import { useApp } from '../helpers/fixture.js';
import { insertPrincipal } from '../helpers/principals.js';

/**
 * `pas policies` against the real service: the command line run as its own process over
 * examples/policies (docs/policies-as-code.md). Planned on an empty service every policy is a
 * creation with its blast radius, and the plan writes nothing (a client that may only read plans
 * as well); applied, the plan is empty; a file changed is one update; a
 * change made by someone else between the plan and the apply makes the apply refuse; `--prune`
 * proposes deleting a live policy the folder lacks; the example's tests pass in memory and,
 * once its world and policies are live, against the service.
 */

const EXAMPLE = path.join('examples', 'policies');
const CLI = path.join(projectRoot(), 'bin', 'pas.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('policies as code (pas policies)', function () {
  // Each run of the command line compiles its sources as it starts.
  this.timeout(120_000);
  const fx = useApp();
  let configHome: string;
  let copy: string;

  /** The command line run as the admin client. */
  const pas = (...args: string[]): Promise<Run> => pasAs(ADMIN, ...args);
  const pasAs = (client: TestClient, ...args: string[]): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        cwd: projectRoot(),
        env: {
          ...process.env,
          PAS_URL: fx.app.http.baseUrl,
          PAS_CLIENT_ID: client.id,
          PAS_CLIENT_SECRET: client.secret,
          // No stored login of whoever runs the tests is read.
          XDG_CONFIG_HOME: configHome,
        },
        // Not a terminal: apply cannot ask.
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdin.end();
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const json = (run: Run): any[] => {
    expect(run.code, `${run.stderr}\n${run.stdout}`).to.equal(0);
    return JSON.parse(run.stdout);
  };
  const api = (): PolicyApi => policyApi(createPasClient({ baseUrl: fx.app.http.baseUrl, token: fx.token }));
  const livePolicies = async (): Promise<any[]> => {
    const res = await fx.api.get('/v1/policies?limit=100');
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };
  const livePolicy = async (name: string): Promise<any> =>
    (await livePolicies()).find((p: any) => p.name === name);

  before(async () => {
    configHome = mkdtempSync(path.join(os.tmpdir(), 'pas-config-'));
    copy = mkdtempSync(path.join(os.tmpdir(), 'pas-policies-'));
    cpSync(EXAMPLE, copy, { recursive: true });
    // The principals, groups and resources the example's tests describe, under their ids.
    const folder = loadPolicyFolder(EXAMPLE);
    for (const suite of loadFolderTests(folder)) await seedWorld(fx.app, suite.world);
    for (const r of loadFolderTests(folder).flatMap((s) => s.world.resources)) {
      const { type, identifier } = resourceOf(r.resource);
      const res = await fx.api.put(`/v1/resources/${type}/${encodeURIComponent(identifier)}`, {
        attributes: r.attributes,
      });
      expect(res.status, res.text).to.be.oneOf([200, 201]);
    }
  });
  after(() => {
    rmSync(configHome, { recursive: true, force: true });
    rmSync(copy, { recursive: true, force: true });
  });

  it('passes the example’s tests in memory, with no service', async () => {
    const run = await pas('policies', 'test', EXAMPLE);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/\d+ passed, 0 failed, 0 skipped/);
  });

  it('plans every policy of the example as a creation, with its blast radius, writing nothing', async () => {
    const plan = json(await pas('policies', 'plan', EXAMPLE, '--json'));
    expect(plan.map((c) => [c.action, c.name, c.policy_id])).to.deep.equal([
      ['create', 'billing-assistant-searches-invoices', null],
      ['create', 'finance-reads-invoices', null],
      ['create', 'invoice-exporter-reads-invoices', null],
      ['create', 'no-export-of-invoices-on-legal-hold', null],
    ]);
    const radius = Object.fromEntries(plan.map((c) => [c.name, c.blast_radius]));
    expect(radius['finance-reads-invoices'].gaining).to.deep.equal(['prn_01JEXAMP1E000000000000ANA0']);
    expect(radius['finance-reads-invoices'].access_changes).to.deep.include({
      principal_id: 'prn_01JEXAMP1E000000000000ANA0',
      principal: {
        id: 'prn_01JEXAMP1E000000000000ANA0',
        name: 'Ana Lima',
        type: 'USER',
        email: 'ana.lima@example.com',
      },
      resource: { type: 'invoice', identifier: '*', pattern: true },
      gained: ['read'],
      lost: [],
    });
    expect(radius['billing-assistant-searches-invoices'].gaining).to.deep.equal([
      'prn_01JEXAMP1E00000000000AGENT',
    ]);
    expect(radius['invoice-exporter-reads-invoices'].gaining).to.deep.equal([
      'prn_01JEXAMP1E0000000000EXP0RT',
    ]);
    // A deny of what nobody holds yet takes nothing away.
    expect(radius['no-export-of-invoices-on-legal-hold'].losing).to.deep.equal([]);
    // New policies are simulated as new: no policy (no draft to simulate them in) was made.
    expect(await livePolicies()).to.deep.equal([]);

    const text = await pas('policies', 'plan', EXAMPLE);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.contain('4 to create, 0 to update, 0 to delete');
    expect(text.stdout).to.contain('+ create finance-reads-invoices');
    expect(text.stdout).to.contain(
      'Ana Lima (prn_01JEXAMP1E000000000000ANA0) gains read on invoice:* (pattern)',
    );
  });

  it('plans as a client with policies:read only, writing nothing', async () => {
    const reader = await createClient(fx.app, ['policies:read']);
    const before = await livePolicies();
    const plan = json(await pasAs(reader, 'policies', 'plan', EXAMPLE, '--json', '--prune'));
    expect(plan.map((c) => c.action)).to.deep.equal(['create', 'create', 'create', 'create']);
    const finance = plan.find((c) => c.name === 'finance-reads-invoices');
    expect(finance.blast_radius.gaining).to.deep.equal(['prn_01JEXAMP1E000000000000ANA0']);
    expect(await livePolicies()).to.deep.equal(before);
    const events = await fx.api.get(`/v1/audit/events?actor_id=${reader.id}&limit=100`);
    expect(events.status, events.text).to.equal(200);
    expect(events.body.data.filter((e: any) => /^policy\./.test(e.type))).to.deep.equal([]);

    // It may plan, not apply.
    const run = await pasAs(reader, 'policies', 'apply', EXAMPLE, '--yes');
    expect(run.code, run.stderr).to.equal(2);
    expect(run.stderr).to.contain('the service refused the create');
    expect(await livePolicies()).to.deep.equal(before);
  });

  it('refuses to apply without --yes where there is no terminal to ask on, applying nothing', async () => {
    const run = await pas('policies', 'apply', EXAMPLE);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.contain('no terminal to confirm on; run with --yes');
    expect(await livePolicy('finance-reads-invoices')).to.equal(undefined);
  });

  it('applies with --yes, recorded as the client’s, and then plans nothing', async () => {
    const run = await pas('policies', 'apply', EXAMPLE, '--yes');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain(
      `4 changes applied by ${ADMIN_CLIENT_ID}; audit events: request ids policies-apply.`,
    );
    const policy = await livePolicy('invoice-exporter-reads-invoices');
    expect(policy).to.include({ version: 1, created_by: ADMIN_CLIENT_ID, status: 'active' });

    const events = await fx.api.get(
      `/v1/audit/events?type=policy.created&actor_id=${ADMIN_CLIENT_ID}&limit=100`,
    );
    expect(events.status, events.text).to.equal(200);
    const applied = events.body.data.filter((e: any) =>
      /^policies-apply\.[0-9A-Z]{26}\.\d+$/.test(e.request_id ?? ''),
    );
    expect(applied.map((e: any) => e.target.id).sort()).to.include(policy.id);
    expect(applied).to.have.length(4);
    expect(new Set(applied.map((e: any) => e.request_id.split('.')[1])).size).to.equal(1);

    expect(json(await pas('policies', 'plan', EXAMPLE, '--json'))).to.deep.equal([]);
    const again = await pas('policies', 'apply', EXAMPLE);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.contain('no changes');
  });

  it('passes the example’s tests against the live service once applied', async () => {
    const run = await pas('policies', 'test', EXAMPLE, '--live');
    expect(run.code, `${run.stderr}\n${run.stdout}`).to.equal(0);
    expect(run.stdout).to.match(/\d+ passed, 0 failed/);
    expect(run.stderr).to.not.contain('differ');
  });

  it('plans one update for one file changed, with who loses what', async () => {
    const file = path.join(copy, 'invoice-exporter-reads-invoices.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('actions: [read, export]', 'actions: [read]'));
    const live = await livePolicy('invoice-exporter-reads-invoices');
    const plan = json(await pas('policies', 'plan', copy, '--json'));
    expect(plan).to.have.length(1);
    expect(plan[0]).to.deep.include({
      action: 'update',
      name: 'invoice-exporter-reads-invoices',
      file,
      policy_id: live.id,
      version: live.version,
      fields: [{ field: 'actions', from: ['read', 'export'], to: ['read'] }],
    });
    expect(plan[0].blast_radius.losing).to.deep.equal(['prn_01JEXAMP1E0000000000EXP0RT']);
    expect(plan[0].blast_radius.gaining).to.deep.equal([]);
    expect(
      json(await pas('policies', 'plan', copy, '--json', '--only', 'finance-reads-invoices')),
    ).to.deep.equal([]);
  });

  it('refuses to apply when the live policy changed between the plan and the apply', async () => {
    const folder = loadPolicyFolder(copy);
    const plan = await makePlan(folder, api());
    expect(plan.changes.map((c) => c.action)).to.deep.equal(['update']);
    // Someone else replaces the policy meanwhile.
    const live = await livePolicy('invoice-exporter-reads-invoices');
    const {
      id,
      version: _v,
      activated_at: _a,
      created_at: _c,
      created_by: _cb,
      updated_at: _u,
      updated_by: _ub,
      valid_from: _f,
      valid_until: _t,
      ...rest
    } = live;
    const other = await fx.api.put(`/v1/policies/${id}`, { ...rest, description: 'changed by hand' });
    expect(other.status, other.text).to.equal(200);

    const result = await applyPlan(plan, api());
    expect(result.applied).to.deep.equal([]);
    expect(result.stopped).to.deep.include({ reason: 'stale', name: 'invoice-exporter-reads-invoices' });
    expect(await livePolicy('invoice-exporter-reads-invoices')).to.include({
      description: 'changed by hand',
      version: live.version + 1,
    });

    // A change that lands after the check, just before the write, is refused by the service.
    const fresh = await makePlan(folder, api());
    const racing: PolicyApi = {
      ...api(),
      replace: async (pid, version, body, tag) => {
        const now = await livePolicy('invoice-exporter-reads-invoices');
        const {
          id: _i,
          version: _v2,
          activated_at: _a2,
          created_at: _c2,
          created_by: _cb2,
          updated_at: _u2,
          updated_by: _ub2,
          valid_from: _f2,
          valid_until: _t2,
          ...body2
        } = now;
        expect(
          (await fx.api.put(`/v1/policies/${pid}`, { ...body2, description: 'changed again' })).status,
        ).to.equal(200);
        return api().replace(pid, version, body, tag);
      },
    };
    const raced = await applyPlan(fresh, racing);
    expect(raced.applied).to.deep.equal([]);
    expect(raced.stopped?.reason).to.equal('stale');
    expect(raced.stopped?.message).to.contain('(412)');
    expect(await livePolicy('invoice-exporter-reads-invoices')).to.include({ description: 'changed again' });
  });

  it('shows a live policy the folder lacks as a deletion with --prune only', async () => {
    const legacy = await fx.api.post('/v1/policies', {
      name: 'legacy-invoice-access',
      effect: 'allow',
      subjects: { principals: ['prn_01JEXAMP1E000000000000BEN0'] },
      actions: ['read'],
      resources: [{ type: 'invoice', identifier: '*' }],
    });
    expect(legacy.status, legacy.text).to.equal(201);
    // The example's exporter was changed by hand above: that is an update either way.
    const plain = json(await pas('policies', 'plan', EXAMPLE, '--json'));
    expect(plain.map((c) => [c.action, c.name])).to.deep.equal([
      ['update', 'invoice-exporter-reads-invoices'],
    ]);
    const plan = json(await pas('policies', 'plan', EXAMPLE, '--json', '--prune'));
    expect(plan.map((c) => [c.action, c.name])).to.deep.equal([
      ['update', 'invoice-exporter-reads-invoices'],
      ['delete', 'legacy-invoice-access'],
    ]);
    expect(plan[1]).to.deep.include({ policy_id: legacy.body.id, version: 1 });
    expect(plan[1].blast_radius.losing).to.deep.equal(['prn_01JEXAMP1E000000000000BEN0']);

    const run = await pas('policies', 'apply', EXAMPLE, '--prune', '--yes', '--json');
    expect(run.code, run.stderr).to.equal(0);
    const out = JSON.parse(run.stdout);
    expect(out.applied.map((a: any) => [a.action, a.name])).to.deep.equal([
      ['update', 'invoice-exporter-reads-invoices'],
      ['delete', 'legacy-invoice-access'],
    ]);
    expect(json(await pas('policies', 'plan', EXAMPLE, '--json', '--prune'))).to.deep.equal([]);
  });
});

/**
 * A world of policy cases made live under its own ids: principals written as a connector writes
 * them, groups and memberships through the group writes, each with its event, so that the
 * decision index learns of them as it would of any change.
 */
async function seedWorld(app: TestApp, world: World): Promise<void> {
  const writes = new GroupWrites(app.runtime.events);
  const op = {
    actor: { type: 'connector' as const, id: 'con_test' },
    meta: { requestId: null, sourceIp: null, userAgent: null },
  };
  await app.runtime.db.write('test/seed_groups', async (tx) => {
    for (const g of world.groups) {
      await writes.create(
        tx,
        {
          id: g.id,
          name: g.id,
          description: null,
          source: 'api',
          connectorSource: null,
          connectorRef: null,
          connectorId: null,
          createdBy: 'con_test',
        },
        op,
        {},
      );
    }
    for (const g of world.groups) {
      for (const parent of g.parents ?? []) await writes.addMember(tx, parent, g.id, 'con_test', op);
    }
  });
  for (const p of world.principals) {
    await insertPrincipal(app, {
      id: p.id,
      type: p.type,
      name: p.name,
      ...(p.attributes ? { attributes: p.attributes } : {}),
      ...(p.status ? { status: p.status } : {}),
    });
  }
  await app.runtime.db.write('test/seed_memberships', async (tx) => {
    for (const p of world.principals) {
      for (const g of p.groups ?? []) await writes.addMember(tx, g, p.id, 'con_test', op);
    }
  });
}
