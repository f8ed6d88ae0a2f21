import { expect } from 'chai';
import { decide, type AccessRequest } from '../../src/decisions/engine.js';
import type { PolicyIndex } from '../../src/decisions/policy-index.js';
import { decisionOf } from '../../src/decisions/service.js';
import { MAX_REMEDIES, whyNot, type WhyNot } from '../../src/decisions/why-not.js';
import type { Remedy } from '../../src/schemas/decisions.js';
import { buildIndex, resolveTime, type PolicySpec, type World } from '../helpers/engine-cases.js';

/**
 * "Why not" on a denied decision (docs/api.md §5.2): each kind of near miss on a world made for
 * it, and remedies that, applied to the world and decided again, let the request through.
 */

const NOW = Date.now();
const at = (relative: string): string => resolveTime(relative, NOW);

/** alice is in eng (nested in staff); bob in sales; carol in ops; dave in nothing; bot acts for others. */
function world(policies: PolicySpec[], extra: Partial<World> = {}): World {
  return {
    groups: [{ id: 'staff' }, { id: 'eng', parents: ['staff'] }, { id: 'sales' }, { id: 'admins' }],
    principals: [
      { id: 'alice', type: 'USER', name: 'Alice', groups: ['eng'], attributes: { team: 'eng' } },
      { id: 'bob', type: 'USER', name: 'Bob', groups: ['sales'] },
      { id: 'carol', type: 'USER', name: 'Carol', attributes: { team: 'ops' } },
      { id: 'dave', type: 'USER', name: 'Dave' },
      { id: 'bot', type: 'SERVICE_ACCOUNT', name: 'Bot' },
    ],
    resources: ['doc:a', 'doc:b', 'doc:c'].map((resource) => ({ resource, attributes: {} })),
    policies,
    delegations: [],
    ...extra,
  };
}

const read = (identifier: string, more: Partial<AccessRequest> = {}): AccessRequest => ({
  principal_id: 'alice',
  action: 'read',
  resource: { type: 'doc', identifier },
  ...more,
});

function explain(index: PolicyIndex, request: AccessRequest): WhyNot {
  const verdict = decide(index, request, { explain: true });
  expect(verdict.allowed, 'the request is denied').to.equal(false);
  return whyNot(index, request, verdict, NOW);
}

/** The world with a remedy applied as a client would apply it. */
function applied(w: World, remedy: Remedy): World {
  const next: World = structuredClone(w);
  switch (remedy.kind) {
    case 'add_to_group': {
      const p = next.principals.find((x) => x.id === remedy.change.member_id)!;
      p.groups = [...(p.groups ?? []), remedy.target.id];
      break;
    }
    case 'add_to_policy': {
      const policy = next.policies.find((x) => x.id === remedy.target.id)!;
      policy.principals = remedy.change.subjects.principals;
      break;
    }
    case 'extend_window': {
      const policy = next.policies.find((x) => x.id === remedy.target.id)!;
      if (remedy.change.valid_from === null) delete policy.valid_from;
      else policy.valid_from = remedy.change.valid_from;
      if (remedy.change.valid_until === null) delete policy.valid_until;
      else policy.valid_until = remedy.change.valid_until;
      break;
    }
    default:
      throw new Error(`a ${remedy.kind} remedy is not applied to a world here`);
  }
  return next;
}

describe('why not: near misses and remedies of a denied decision', () => {
  // Five allow policies name doc:a for read, and none lets alice through.
  const policies: PolicySpec[] = [
    { id: 'p-admins', effect: 'allow', groups: ['admins'], resources: ['doc:a'] },
    { id: 'p-admins-wide', effect: 'allow', groups: ['admins'], resources: ['doc:*'] },
    {
      id: 'p-office',
      effect: 'allow',
      principals: ['alice'],
      resources: ['doc:a'],
      conditions: { 'context.ip': { $cidr: '10.0.0.0/8' } },
    },
    {
      id: 'p-lapsed',
      effect: 'allow',
      principals: ['alice', 'dave'],
      resources: ['doc:a'],
      valid_from: at('now-2d'),
      valid_until: at('now-1h'),
    },
    { id: 'p-ops', effect: 'allow', match: { attributes: { team: 'ops' } }, resources: ['doc:a'] },
    {
      id: 'p-sales-office',
      effect: 'allow',
      groups: ['sales'],
      resources: ['doc:a'],
      conditions: { 'context.ip': { $cidr: '10.0.0.0/8' } },
    },
    // Another action, and another resource: neither is a near miss.
    { id: 'p-write', effect: 'allow', groups: ['admins'], actions: ['write'], resources: ['doc:a'] },
    { id: 'p-other', effect: 'allow', principals: ['bob'], resources: ['doc:b'] },
  ];
  const w = world(policies);
  let index: PolicyIndex;
  let answer: WhyNot;
  const request = read('a', { context: { ip: '192.168.1.7' } });

  before(() => {
    index = buildIndex(w, NOW);
    answer = explain(index, request);
  });

  it('lists every allow policy naming the resource and the action, each with what stopped it first', () => {
    expect(answer.near_misses.map((m) => [m.policy_id, m.failed.kind])).to.deep.equal([
      ['p-admins', 'not_subject'],
      ['p-admins-wide', 'not_subject'],
      ['p-lapsed', 'window'],
      ['p-office', 'condition'],
      ['p-ops', 'not_subject'],
      ['p-sales-office', 'not_subject'],
    ]);
    for (const m of answer.near_misses) expect(m.principal_id).to.equal('alice');
  });

  it('not_subject names the groups the principal lacks', () => {
    const miss = answer.near_misses.find((m) => m.policy_id === 'p-admins')!;
    expect(miss.failed.kind).to.equal('not_subject');
    if (miss.failed.kind !== 'not_subject') return;
    expect(miss.failed.detail.groups).to.deep.equal([{ id: 'admins', name: 'admins' }]);
    expect(miss.failed.detail.named).to.equal(false);
    expect(miss.failed.detail.message).to.contain('admins');
  });

  it('not_subject names the match test that fails, with the principal’s value', () => {
    const miss = answer.near_misses.find((m) => m.policy_id === 'p-ops')!;
    if (miss.failed.kind !== 'not_subject') expect.fail(miss.failed.kind);
    expect(miss.failed.detail.match).to.deep.equal({
      target: 'attributes.team',
      op: '$eq',
      operand: 'ops',
      value: 'eng',
    });
    expect(miss.failed.detail.message).to.contain('"eng"');
  });

  it('condition names the path, the operator, the operand and the value the request had', () => {
    const miss = answer.near_misses.find((m) => m.policy_id === 'p-office')!;
    if (miss.failed.kind !== 'condition') expect.fail(miss.failed.kind);
    expect(miss.failed.detail).to.include({
      path: 'context.ip',
      op: '$cidr',
      operand: '10.0.0.0/8',
      result: 'false',
      value: '192.168.1.7',
    });
  });

  it('condition says which path was missing when the outcome is unknown', () => {
    const unknown = explain(index, read('a'));
    const miss = unknown.near_misses.find((m) => m.policy_id === 'p-office')!;
    if (miss.failed.kind !== 'condition') expect.fail(miss.failed.kind);
    expect(miss.failed.detail).to.deep.include({ result: 'unknown', value: null, missing: ['context.ip'] });
  });

  it('window says since when it is closed', () => {
    const miss = answer.near_misses.find((m) => m.policy_id === 'p-lapsed')!;
    if (miss.failed.kind !== 'window') expect.fail(miss.failed.kind);
    expect(miss.failed.detail.state).to.equal('closed');
    expect(Date.parse(miss.failed.detail.at)).to.equal(Date.parse(at('now-1h')));
  });

  it('offers at most five remedies, fewest other grants first', () => {
    expect(answer.remedies).to.have.length(MAX_REMEDIES);
    expect(
      answer.remedies.map((r) => [
        r.kind,
        r.target.type === 'delegation' ? '' : r.target.id,
        r.blast_radius.principals,
        r.blast_radius.resources,
      ]),
    ).to.deep.equal([
      ['add_to_policy', 'p-admins', 0, 0],
      ['add_to_policy', 'p-ops', 0, 0],
      // doc:b, doc:c and the glob doc:* itself.
      ['add_to_policy', 'p-admins-wide', 0, 3],
      // admins also brings p-write's write on doc:a, which is the requested resource.
      ['add_to_group', 'admins', 0, 3],
      // dave is selected by the lapsed policy too (bob would gain nothing: p-sales-office
      // already lets him read doc:a, depending on the request).
      ['extend_window', 'p-lapsed', 1, 0],
    ]);
  });

  it('offers no change that would not let the request through', () => {
    // sales would select alice for p-sales-office, whose condition still fails.
    expect(
      answer.remedies.map((r) => (r.target.type === 'delegation' ? '' : r.target.id)),
    ).to.not.include.members(['sales', 'p-sales-office']);
  });

  it('every remedy, applied to the world, lets the request through', () => {
    for (const remedy of answer.remedies) {
      const verdict = decide(buildIndex(applied(w, remedy), NOW), request);
      expect(verdict.allowed, JSON.stringify(remedy)).to.equal(true);
    }
  });

  it('a window not yet open is a near miss whose remedy opens it now', () => {
    const w2 = world([
      {
        id: 'p-soon',
        effect: 'allow',
        principals: ['alice'],
        resources: ['doc:a'],
        valid_from: at('now+1d'),
      },
    ]);
    const got = explain(buildIndex(w2, NOW), read('a'));
    const miss = got.near_misses[0]!;
    if (miss.failed.kind !== 'window') expect.fail(miss.failed.kind);
    expect(miss.failed.detail.state).to.equal('not_yet_open');
    expect(got.remedies).to.have.length(1);
    const remedy = got.remedies[0]!;
    if (remedy.kind !== 'extend_window') expect.fail(remedy.kind);
    expect(remedy.change.valid_from).to.equal(new Date(NOW).toISOString());
    expect(decide(buildIndex(applied(w2, remedy), NOW), read('a')).allowed).to.equal(true);
  });

  it('an allow overridden by a deny is denied_by, and the only remedy is none, naming the deny', () => {
    const w2 = world([
      { id: 'p-eng', effect: 'allow', groups: ['eng'], resources: ['doc:b'] },
      { id: 'p-admins', effect: 'allow', groups: ['admins'], resources: ['doc:b'] },
      { id: 'd-block', effect: 'deny', principals: ['alice'], resources: ['doc:*'] },
    ]);
    const got = explain(buildIndex(w2, NOW), read('b'));
    const miss = got.near_misses.find((m) => m.policy_id === 'p-eng')!;
    if (miss.failed.kind !== 'denied_by') expect.fail(miss.failed.kind);
    expect(miss.failed.detail.denies).to.deep.equal([{ policy_id: 'd-block', policy_name: 'd-block' }]);
    expect(
      got.remedies.map((r) => [r.kind, r.target.type === 'policy' && r.target.id, r.change]),
    ).to.deep.equal([['none', 'd-block', null]]);
  });

  describe('acting for someone else', () => {
    const w2 = world([{ id: 'p-c', effect: 'allow', principals: ['alice', 'bot'], resources: ['doc:c'] }]);
    const onBehalf = read('c', { principal_id: 'bot', on_behalf_of: 'alice' });

    it('an allow stopped by a missing delegation is a delegation near miss, remedied by delegating', () => {
      const index2 = buildIndex(w2, NOW);
      const got = explain(index2, onBehalf);
      expect(got.near_misses.map((m) => [m.policy_id, m.principal_id, m.failed.kind])).to.deep.equal([
        ['p-c', 'bot', 'delegation'],
      ]);
      const miss = got.near_misses[0]!;
      if (miss.failed.kind !== 'delegation') expect.fail(miss.failed.kind);
      expect(miss.failed.detail).to.include({ delegator_id: 'alice', delegate_id: 'bot', expired: false });
      expect(got.remedies).to.have.length(1);
      const remedy = got.remedies[0]!;
      if (remedy.kind !== 'delegate') expect.fail(remedy.kind);
      expect(remedy.change).to.deep.include({
        delegator_id: 'alice',
        delegate_id: 'bot',
        actions: ['read'],
        resources: [{ type: 'doc', identifier: 'c' }],
      });
      expect(remedy.blast_radius).to.deep.equal({ principals: 0, resources: 0 });
      // Made as proposed, the delegation lets the request through.
      index2.putDelegation('dlg_made', {
        id: 'dlg_made',
        delegatorId: 'alice',
        delegateId: 'bot',
        actions: remedy.change.actions,
        resources: [{ type: 'doc', identifier: 'c', glob: null }],
        expiresAt: Date.parse(remedy.change.expires_at),
      });
      expect(decide(index2, onBehalf).allowed).to.equal(true);
    });

    it('where the delegate is not allowed either, offers its grant and the delegation together', () => {
      // Only alice reads doc:c; bot, acting for her, lacks both its own grant and a delegation.
      const w4 = world([{ id: 'p-c', effect: 'allow', principals: ['alice'], resources: ['doc:c'] }]);
      const index4 = buildIndex(w4, NOW);
      const got = explain(index4, onBehalf);
      expect(got.remedies.length).to.be.greaterThan(0);
      for (const remedy of got.remedies) {
        if (remedy.kind === 'none' || remedy.kind === 'delegate') expect.fail(remedy.kind);
        expect(remedy.principal_id).to.equal('bot');
        expect(remedy.also?.map((step) => step.kind)).to.deep.equal(['delegate']);
        // Applied as proposed, every change of it: the request goes through.
        const next = buildIndex(applied(w4, remedy), NOW);
        const step = remedy.also![0]!;
        if (step.kind !== 'delegate') expect.fail(step.kind);
        next.putDelegation('dlg_made', {
          id: 'dlg_made',
          delegatorId: step.change.delegator_id,
          delegateId: step.change.delegate_id,
          actions: step.change.actions,
          resources: [{ type: 'doc', identifier: 'c', glob: null }],
          expiresAt: Date.parse(step.change.expires_at),
        });
        expect(decide(next, onBehalf).allowed, remedy.message).to.equal(true);
        // Neither change alone does.
        expect(decide(buildIndex(applied(w4, remedy), NOW), onBehalf).allowed).to.equal(false);
      }
      expect(got.remedies.map((r) => r.kind)).to.include('add_to_policy');
    });

    it('says when the delegation has expired', () => {
      const index2 = buildIndex(w2, NOW);
      index2.putDelegation('dlg_old', {
        id: 'dlg_old',
        delegatorId: 'alice',
        delegateId: 'bot',
        actions: ['*'],
        resources: null,
        expiresAt: NOW - 60_000,
      });
      const miss = explain(index2, onBehalf).near_misses[0]!;
      if (miss.failed.kind !== 'delegation') expect.fail(miss.failed.kind);
      expect(miss.failed.detail.expired).to.equal(true);
      expect(miss.failed.detail.message).to.contain('expired');
    });

    it('a delegator that is not allowed has its own near misses', () => {
      const w3 = world(
        [
          { id: 'p-bot', effect: 'allow', principals: ['bot'], resources: ['doc:c'] },
          { id: 'p-staff', effect: 'allow', groups: ['admins'], resources: ['doc:c'] },
        ],
        { delegations: [{ delegator: 'alice', delegate: 'bot' }] },
      );
      const got = explain(buildIndex(w3, NOW), onBehalf);
      expect(got.near_misses.map((m) => [m.policy_id, m.principal_id, m.failed.kind])).to.deep.equal([
        ['p-bot', 'alice', 'not_subject'],
        ['p-staff', 'alice', 'not_subject'],
      ]);
      expect(got.remedies.map((r) => [r.kind, r.principal_id])).to.deep.equal([
        ['add_to_policy', 'alice'],
        ['add_to_policy', 'alice'],
        ['add_to_group', 'alice'],
      ]);
    });
  });

  describe('in the answer', () => {
    const base = { principal_id: 'alice', action: 'read', resource: { type: 'doc', identifier: 'a' } };

    it('a denied decision with explain carries near_misses and remedies', () => {
      const { decision } = decisionOf(index, { ...base, explain: true });
      expect(decision.decision).to.equal('DENY');
      expect(decision.near_misses).to.have.length(6);
      expect(decision.remedies).to.have.length(MAX_REMEDIES);
    });

    it('neither a denial without explain nor an allowed decision carries them', () => {
      expect(decisionOf(index, base).decision).to.not.have.any.keys('near_misses', 'remedies');
      const allowed = decisionOf(index, {
        ...base,
        principal_id: 'bob',
        resource: { type: 'doc', identifier: 'b' },
        explain: true,
      }).decision;
      expect(allowed.decision).to.equal('ALLOW');
      expect(allowed).to.not.have.any.keys('near_misses', 'remedies');
    });

    it('an unknown principal has neither near misses nor remedies', () => {
      const { decision } = decisionOf(index, { ...base, principal_id: 'nobody', explain: true });
      expect(decision.near_misses).to.deep.equal([]);
      expect(decision.remedies).to.deep.equal([]);
    });
  });
});
