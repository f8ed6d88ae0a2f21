import { expect } from 'chai';
import { applyChanges, nothing, type Fetched } from '../../src/decisions/apply.js';
import { DecisionThreads } from '../../src/decisions/decision-thread.js';
import { PolicyIndex } from '../../src/decisions/policy-index.js';
import { decisionOf } from '../../src/decisions/service.js';
import { createLogger } from '../../src/logging/logger.js';
import { checkPolicyBody, type Policy } from '../../src/policies/model.js';
import type { DecisionRequest } from '../../src/schemas/decisions.js';
import { LogCapture } from '../helpers/app.js';

const AT = '2026-01-01T00:00:00.000Z';
const id = (n: number): string => `prn_01JD${String(n).padStart(22, '0')}`;

/** A stored policy allowing `read` on `doc:*` to the principals whose `team` is `team`. */
function teamPolicy(policyId: string, team: string): Policy {
  const body = checkPolicyBody(
    {
      name: policyId,
      effect: 'allow',
      subjects: { match: { attributes: { team } } },
      actions: ['read'],
      resources: [{ type: 'doc', identifier: '*' }],
    },
    '',
    Date.parse(AT),
  );
  return {
    id: policyId,
    name: body.name,
    description: null,
    effect: body.effect,
    subjects: { principals: [], groups: [], ...(body.subjects.match ? { match: body.subjects.match } : {}) },
    actions: body.actions,
    resources: body.resources,
    conditions: {},
    status: 'active',
    version: 1,
    activated_at: AT,
    valid_from: null,
    valid_until: null,
    created_at: AT,
    created_by: 'cli_test',
    updated_at: AT,
    updated_by: 'cli_test',
  };
}

const rows = (from: number, count: number, team: string): Fetched['principals'] =>
  Array.from({ length: count }, (_, i) => ({
    p: {
      id: id(from + i),
      type: 'SERVICE_ACCOUNT',
      status: 'active',
      name: `p${from + i}`,
      'attr.team': team,
    },
    groups: [],
  }));

const emptyFetched = (): Fetched => ({
  policies: [],
  groups: [],
  principals: [],
  memberships: [],
  resources: [],
  delegations: [],
});

/**
 * A replica on a decision thread follows the index it was seeded from through the batches of
 * changes that index applies, large ones (sent ahead in slices) included.
 */
describe('decision thread replicas', function () {
  this.timeout(30_000);
  let threads: DecisionThreads;
  const index = new PolicyIndex();
  /** Applies a batch to the index in use, then sends it to the replicas, as IndexSync does. */
  const change = async (
    fetched: Fetched,
    keys: Partial<Record<keyof ReturnType<typeof nothing>, string[]>>,
  ) => {
    const work = nothing();
    for (const [key, values] of Object.entries(keys))
      for (const v of values) work[key as keyof typeof work].add(v);
    await applyChanges(index, work, fetched, null);
    await threads.apply(work, fetched, index.version);
  };
  const requests = (ids: number[]): DecisionRequest[] =>
    ids.map((n) => ({ principal_id: id(n), action: 'read', resource: { type: 'doc', identifier: `d${n}` } }));
  const onThread = async (list: DecisionRequest[]): Promise<string[]> => {
    const decided = await threads.decide({ items: list.map((request) => ({ request })), shape: 'batch' })!;
    expect(decided.records.ids).to.have.length(list.length);
    return JSON.parse(decided.body!).results.map((r: { decision: string }) => r.decision);
  };
  const inPlace = (list: DecisionRequest[]): string[] =>
    list.map((r) => decisionOf(index, r).decision.decision);

  before(async () => {
    threads = new DecisionThreads(1, createLogger('info', new LogCapture()));
    await change(
      {
        ...emptyFetched(),
        policies: [{ policy: teamPolicy('pol_a', 'red'), since: [] }],
        principals: rows(0, 10, 'red'),
      },
      {
        policies: ['pol_a'],
        principals: Array.from({ length: 10 }, (_, i) => id(i)),
      },
    );
    threads.seed(index, (work) => work());
  });
  after(() => threads.close());

  it('starts from the index as it was seeded', async () => {
    const list = requests([0, 5, 9, 10]);
    expect(await onThread(list)).to.deep.equal(['ALLOW', 'ALLOW', 'ALLOW', 'DENY']);
    expect(await onThread(list)).to.deep.equal(inPlace(list));
  });

  it('applies a change of 2,500 principals sent ahead in slices, and removals named by the change', async () => {
    // 2,500 new principals, half of them red; principal 3 removed (named, not read back).
    const added = [...rows(10, 1_250, 'red'), ...rows(1_260, 1_250, 'blue')];
    await change(
      { ...emptyFetched(), principals: added },
      {
        principals: [...added.map((r) => r.p['id'] as string), id(3)],
      },
    );
    const list = requests([0, 3, 10, 1_259, 1_260, 2_509, 2_510]);
    expect(inPlace(list)).to.deep.equal(['ALLOW', 'DENY', 'ALLOW', 'ALLOW', 'DENY', 'DENY', 'DENY']);
    expect(await onThread(list)).to.deep.equal(inPlace(list));
    const all = requests(Array.from({ length: 1_000 }, (_, i) => i * 2 + 1));
    expect(await onThread(all)).to.deep.equal(inPlace(all));
  });

  it('takes a new version of a policy as the index does', async () => {
    await change(
      {
        ...emptyFetched(),
        policies: [{ policy: { ...teamPolicy('pol_a', 'blue'), version: 2 }, since: [] }],
      },
      {
        policies: ['pol_a'],
      },
    );
    const list = requests([0, 10, 1_260, 2_000]);
    expect(inPlace(list)).to.deep.equal(['DENY', 'DENY', 'ALLOW', 'ALLOW']);
    expect(await onThread(list)).to.deep.equal(inPlace(list));
  });
});
