import path from 'node:path';
import { expect } from 'chai';
import { PasApiError } from '../../clients/typescript/src/index.js';
import type {
  LivePolicyRecord,
  NewSimulationInput,
  PolicyApi,
  PolicyBodyInput,
  SimulationInput,
  SimulationOutput,
} from '../../cli/policies/api.js';
import { bodyFields } from '../../src/policies/model.js';
import { applyPlan, applyText } from '../../cli/policies/apply.js';
import { loadPolicyFolder } from '../../cli/policies/folder.js';
import { makePlan, planJson, planText } from '../../cli/policies/plan.js';

/**
 * Plan and apply over a stand-in of the service that keeps policies in a map and answers every
 * simulation with one principal gaining `read`: what is simulated where, what is written with
 * which precondition, and where a run stops. test/http/policies-as-code.test.ts does the same
 * against the real service.
 */

const EXAMPLE = path.join('examples', 'policies');

interface Call {
  op: string;
  id?: string;
  version?: number;
  name?: string;
  requestId?: string;
  simulated?: SimulationInput;
}

/** The calls that change the service. */
const WRITES = new Set(['create', 'replace', 'remove']);

class FakeService implements PolicyApi {
  readonly policies = new Map<string, LivePolicyRecord>();
  readonly calls: Call[] = [];
  /** Runs before each write, as another writer might. */
  beforeWrite: (() => void) | undefined;
  private next = 1;

  put(body: PolicyBodyInput, version = 1): LivePolicyRecord {
    const at = '2026-01-01T00:00:00.000Z';
    const id = `pol_${String(this.next++).padStart(26, '0')}`;
    const record: LivePolicyRecord = {
      ...bodyFields(body),
      id,
      version,
      activated_at: null,
      created_at: at,
      created_by: 'cli_fake',
      updated_at: at,
      updated_by: 'cli_fake',
    };
    this.policies.set(id, record);
    return record;
  }

  async list() {
    return [...this.policies.values()];
  }
  async create(body: PolicyBodyInput, tag: { requestId: string }) {
    this.calls.push({ op: 'create', name: body.name, requestId: tag.requestId });
    this.beforeWrite?.();
    if ([...this.policies.values()].some((p) => p.name.toLowerCase() === body.name.toLowerCase())) {
      throw new PasApiError(409, { code: 'CONFLICT', title: 'Conflict' });
    }
    return this.put(body);
  }
  async replace(id: string, version: number, body: PolicyBodyInput, tag: { requestId: string }) {
    this.calls.push({ op: 'replace', id, version, requestId: tag.requestId });
    this.beforeWrite?.();
    const current = this.policies.get(id)!;
    if (current.version !== version)
      throw new PasApiError(412, { code: 'PRECONDITION_FAILED', title: 'Precondition Failed' });
    const replaced = { ...this.put(body, version + 1), id };
    this.policies.delete(replaced.id);
    this.policies.set(id, replaced);
    return replaced;
  }
  async remove(id: string, version: number, tag: { requestId: string }) {
    this.calls.push({ op: 'remove', id, version, requestId: tag.requestId });
    this.beforeWrite?.();
    if (this.policies.get(id)!.version !== version) {
      throw new PasApiError(412, { code: 'PRECONDITION_FAILED', title: 'Precondition Failed' });
    }
    this.policies.delete(id);
    return { deleted_by: 'cli_fake' };
  }
  async simulate(id: string, body: SimulationInput): Promise<SimulationOutput> {
    this.calls.push({ op: 'simulate', id, simulated: body });
    return { policy_id: id, ...anaReads(body.delete === true) };
  }
  async simulateNew(body: NewSimulationInput): Promise<SimulationOutput> {
    this.calls.push({ op: 'simulateNew', simulated: body });
    return anaReads(false);
  }
  async decide(): Promise<never[]> {
    return [];
  }
}

/** Every simulation's answer: Ana Lima gains `read` on every invoice, or loses it for a deletion. */
function anaReads(deleted: boolean): SimulationOutput {
  return {
    access_changes: [
      {
        principal_id: 'prn_01JEXAMP1E000000000000ANA0',
        principal: { id: 'prn_01JEXAMP1E000000000000ANA0', name: 'Ana Lima', type: 'USER', email: null },
        resource: { type: 'invoice', identifier: '*', pattern: true },
        gained: deleted ? [] : ['read'],
        lost: deleted ? ['read'] : [],
      },
    ],
    summary: {
      evaluated: 1,
      changed: 1,
      newly_allowed: deleted ? 0 : 1,
      newly_denied: deleted ? 1 : 0,
      principals_affected: 1,
    },
  };
}

describe('policies as code: plan and apply', () => {
  const folder = loadPolicyFolder(EXAMPLE);
  const bodyOf = (name: string): PolicyBodyInput => {
    const p = folder.policies.find((x) => x.name === name)!;
    return { ...p.body, status: p.body.status ?? 'active' } as PolicyBodyInput;
  };

  it('simulates each new policy as one, with the new-policy simulation', async () => {
    const service = new FakeService();
    const plan = await makePlan(folder, service);
    expect(plan.changes.map((c) => c.action)).to.deep.equal(['create', 'create', 'create', 'create']);
    expect(service.calls.map((c) => [c.op, c.simulated?.policy?.name])).to.deep.equal(
      plan.changes.map((c) => ['simulateNew', c.name]),
    );
    expect(service.calls[0]!.simulated).to.deep.equal({
      policy: bodyOf('billing-assistant-searches-invoices'),
    });
    expect(plan.changes[0]!.blast_radius).to.deep.include({
      gaining: ['prn_01JEXAMP1E000000000000ANA0'],
      losing: [],
    });
    expect(planText(plan)).to.contain(
      'Ana Lima (prn_01JEXAMP1E000000000000ANA0) gains read on invoice:* (pattern)',
    );
    expect(service.policies.size).to.equal(0);
  });

  it('writes nothing while planning, whatever the changes', async () => {
    const service = new FakeService();
    // A draft of the service's own is no stand-in for a new policy: it is pruned like any other.
    const draft = service.put({ ...bodyOf('finance-reads-invoices'), name: 'someday', status: 'draft' });
    const exporter = service.put(bodyOf('invoice-exporter-reads-invoices'));
    exporter.actions = ['read'];
    const before = JSON.stringify([...service.policies.values()]);
    const plan = await makePlan(folder, service, { prune: true });
    expect(plan.changes.map((c) => [c.action, c.name])).to.deep.equal([
      ['create', 'billing-assistant-searches-invoices'],
      ['create', 'finance-reads-invoices'],
      ['update', 'invoice-exporter-reads-invoices'],
      ['create', 'no-export-of-invoices-on-legal-hold'],
      ['delete', 'someday'],
    ]);
    expect(service.calls.filter((c) => WRITES.has(c.op))).to.deep.equal([]);
    expect(service.calls.map((c) => [c.op, c.id])).to.deep.equal([
      ['simulateNew', undefined],
      ['simulateNew', undefined],
      ['simulate', exporter.id],
      ['simulateNew', undefined],
      ['simulate', draft.id],
    ]);
    expect(JSON.stringify([...service.policies.values()])).to.equal(before);
  });

  it('plans an update and a prune against the versions read, as text and as JSON', async () => {
    const service = new FakeService();
    for (const p of folder.policies) service.put(bodyOf(p.name), 2);
    const exporter = [...service.policies.values()].find(
      (p) => p.name === 'invoice-exporter-reads-invoices',
    )!;
    exporter.actions = ['read'];
    const legacy = service.put({ ...bodyOf('finance-reads-invoices'), name: 'legacy-access' }, 5);

    const plan = await makePlan(folder, service, { prune: true });
    expect(planJson(plan)).to.have.length(2);
    const [update, prune] = planJson(plan) as Record<string, unknown>[];
    expect(update).to.deep.include({
      action: 'update',
      name: 'invoice-exporter-reads-invoices',
      policy_id: exporter.id,
      version: 2,
    });
    expect(update!['fields']).to.deep.equal([{ field: 'actions', from: ['read'], to: ['read', 'export'] }]);
    expect(prune).to.deep.include({
      action: 'delete',
      name: 'legacy-access',
      policy_id: legacy.id,
      version: 5,
    });
    expect(
      service.calls.filter((c) => c.op === 'simulate').map((c) => [c.id, c.simulated!.delete ?? false]),
    ).to.deep.equal([
      [exporter.id, false],
      [legacy.id, true],
    ]);
    const text = planText(plan);
    expect(text).to.contain('0 to create, 1 to update, 1 to delete');
    expect(text).to.contain(`~ update invoice-exporter-reads-invoices (${exporter.id}, version 2,`);
    expect(text).to.contain('actions: ["read"] → ["read","export"]');
    expect(text).to.contain(`- delete legacy-access (${legacy.id}, version 5: not in the folder)`);
    expect(text).to.contain('Ana Lima (prn_01JEXAMP1E000000000000ANA0) loses read on invoice:* (pattern)');
    expect(await makePlan(folder, service, { only: 'finance-reads-invoices' })).to.deep.equal({
      dir: EXAMPLE,
      changes: [],
    });
    await makePlan(folder, service, { only: 'no-such-policy' }).then(
      () => expect.fail('planned a policy the folder does not hold'),
      (err: Error) => expect(err.message).to.contain('--only no-such-policy: no policy of that name'),
    );
  });

  it('applies with If-Match at the planned versions, each write tagged with the run', async () => {
    const service = new FakeService();
    for (const p of folder.policies) service.put(bodyOf(p.name), 2);
    const exporter = [...service.policies.values()].find(
      (p) => p.name === 'invoice-exporter-reads-invoices',
    )!;
    exporter.actions = ['read'];
    const legacy = service.put({ ...bodyOf('finance-reads-invoices'), name: 'legacy-access' }, 5);
    const plan = await makePlan(folder, service, { prune: true });
    const result = await applyPlan(plan, service, 'RUN1');
    expect(result.stopped).to.equal(undefined);
    expect(service.calls.filter((c) => WRITES.has(c.op))).to.deep.equal([
      { op: 'replace', id: exporter.id, version: 2, requestId: 'policies-apply.RUN1.1' },
      { op: 'remove', id: legacy.id, version: 5, requestId: 'policies-apply.RUN1.2' },
    ]);
    expect(result.applied.map((a) => [a.action, a.name, a.version, a.by])).to.deep.equal([
      ['update', 'invoice-exporter-reads-invoices', 3, 'cli_fake'],
      ['delete', 'legacy-access', 5, 'cli_fake'],
    ]);
    expect(applyText(result, 2)).to.contain(
      '2 changes applied by cli_fake; audit events: request ids policies-apply.RUN1.*',
    );
    expect((await makePlan(folder, service, { prune: true })).changes).to.deep.equal([]);
  });

  it('refuses a plan the live policies moved away from before writing anything', async () => {
    const service = new FakeService();
    const plan = await makePlan(folder, service);
    // Someone creates one of the planned policies meanwhile.
    service.put(bodyOf('finance-reads-invoices'));
    const written = service.calls.length;
    const result = await applyPlan(plan, service, 'RUN2');
    expect(result.applied).to.deep.equal([]);
    expect(result.stopped).to.deep.include({ reason: 'stale', name: 'finance-reads-invoices' });
    expect(service.calls.slice(written)).to.deep.equal([]);
  });

  it('stops at a 412 between the check and a write, and applies nothing after it', async () => {
    const service = new FakeService();
    for (const p of folder.policies) service.put(bodyOf(p.name));
    for (const p of service.policies.values()) p.actions = ['write'];
    const plan = await makePlan(folder, service);
    expect(plan.changes).to.have.length(4);
    let writes = 0;
    service.beforeWrite = () => {
      // Another writer replaces the second policy just before it is written.
      if (++writes === 2) {
        const target = [...service.policies.values()].find((p) => p.name === plan.changes[1]!.name)!;
        target.version += 1;
      }
    };
    const result = await applyPlan(plan, service, 'RUN3');
    expect(result.applied.map((a) => a.name)).to.deep.equal([plan.changes[0]!.name]);
    expect(result.stopped).to.deep.include({ reason: 'stale', name: plan.changes[1]!.name });
    expect(service.calls.filter((c) => c.op === 'replace')).to.have.length(2);
    const text = applyText(result, 4);
    expect(text).to.contain(`refused: ${plan.changes[1]!.name} changed on the service since the plan (412)`);
    expect(text).to.contain('1 of 4 changes applied; 3 not applied. Make a new plan and apply it again.');
  });
});
