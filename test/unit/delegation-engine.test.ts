import { expect } from 'chai';
import { decide, type AccessRequest } from '../../src/decisions/engine.js';
import { compilePolicy, toIxDelegation, toIxPrincipal } from '../../src/decisions/model.js';
import { PolicyIndex } from '../../src/decisions/policy-index.js';
import { checkPolicyBody, type Policy } from '../../src/policies/model.js';

/**
 * Decisions along delegation chains (docs/api.md §10) on an index built by hand: which
 * delegation covers a link, and what a request is answered when one does not.
 */

const HOUR = 3_600_000;
const at = '2026-01-01T00:00:00Z';

function principal(index: PolicyIndex, id: string, type: string, status = 'active'): void {
  index.putPrincipal(
    id,
    toIxPrincipal({
      id,
      type,
      status,
      name: id,
      email: null,
      connector_source: null,
      connector_id: null,
      created_at: at,
      updated_at: at,
      last_login: null,
      risk_score: 0,
      privileges: null,
      fields: [],
      groups: [],
    }),
  );
}

function allowAll(index: PolicyIndex, id: string, principals: string[]): void {
  const body = checkPolicyBody({
    name: id,
    effect: 'allow',
    subjects: { principals },
    actions: ['*'],
    resources: [{ type: 'doc', identifier: '*' }],
  });
  const policy: Policy = {
    id,
    name: body.name,
    description: null,
    effect: body.effect,
    subjects: { principals: body.subjects.principals ?? [], groups: [] },
    actions: body.actions,
    resources: body.resources,
    conditions: {},
    status: 'active',
    version: 1,
    activated_at: at,
    valid_from: null,
    valid_until: null,
    created_at: at,
    created_by: 'test',
    updated_at: at,
    updated_by: 'test',
  };
  index.putPolicy(compilePolicy(policy));
}

let seq = 0;
function delegation(
  index: PolicyIndex,
  from: string,
  to: string,
  fields: { actions?: string[]; resources?: string[] | null; expiresInMs?: number; status?: string } = {},
): string {
  const id = `dlg_${(seq += 1)}`;
  const d = toIxDelegation({
    id,
    delegator_id: from,
    delegate_id: to,
    actions: fields.actions ?? ['*'],
    resources: fields.resources ?? null,
    expires_at: new Date(Date.now() + (fields.expiresInMs ?? HOUR)).toISOString(),
    status: fields.status ?? 'active',
  });
  index.putDelegation(id, d);
  return id;
}

const read = (
  principal_id: string,
  on_behalf_of: string | string[],
  identifier = 'a',
  action = 'read',
): AccessRequest => ({
  principal_id,
  action,
  resource: { type: 'doc', identifier },
  on_behalf_of,
});

describe('decision engine: delegation links', () => {
  let index: PolicyIndex;
  beforeEach(() => {
    index = new PolicyIndex();
    principal(index, 'prn_u', 'USER');
    principal(index, 'prn_a', 'AI_AGENT');
    principal(index, 'prn_b', 'AI_AGENT');
    principal(index, 'prn_off', 'AI_AGENT', 'suspended');
    allowAll(index, 'pol_all', ['prn_u', 'prn_a', 'prn_b', 'prn_off']);
  });

  it('allows along a delegation covering every action and resource', () => {
    delegation(index, 'prn_u', 'prn_a');
    const v = decide(index, read('prn_a', 'prn_u'));
    expect(v.allowed).to.equal(true);
    expect(v.reasons.map((r) => [r.code, r.principal_id])).to.deep.equal([
      ['POLICY_ALLOW', undefined],
      ['POLICY_ALLOW', 'prn_u'],
    ]);
  });

  it('refuses past expires_at, whatever the status still says', () => {
    delegation(index, 'prn_u', 'prn_a', { expiresInMs: -1 });
    const v = decide(index, read('prn_a', 'prn_u'));
    expect(v.allowed).to.equal(false);
    expect(v.reasons).to.have.length(1);
    expect(v.reasons[0]).to.include({ code: 'NO_DELEGATION', principal_id: 'prn_u', delegate_id: 'prn_a' });
    expect(v.reasons[0]!.message).to.contain('expired');
  });

  it('narrows by actions (prefix wildcards included) and by resources (globs included)', () => {
    delegation(index, 'prn_u', 'prn_a', {
      actions: ['tools/*', 'read'],
      resources: ['doc:public-*', 'doc:x'],
    });
    expect(decide(index, read('prn_a', 'prn_u', 'public-1')).allowed).to.equal(true);
    expect(decide(index, read('prn_a', 'prn_u', 'x')).allowed).to.equal(true);
    expect(decide(index, read('prn_a', 'prn_u', 'public-1', 'tools/call')).allowed).to.equal(true);
    const write = decide(index, read('prn_a', 'prn_u', 'public-1', 'write'));
    expect(write.reasons.map((r) => r.code)).to.deep.equal(['NO_DELEGATION']);
    expect(write.reasons[0]!.message).to.contain('covers');
    const other = decide(index, read('prn_a', 'prn_u', 'private'));
    expect(other.reasons.map((r) => r.code)).to.deep.equal(['NO_DELEGATION']);
  });

  it('takes any of several delegations between the same principals', () => {
    delegation(index, 'prn_u', 'prn_a', { resources: ['doc:one'] });
    delegation(index, 'prn_u', 'prn_a', { resources: ['doc:two'] });
    expect(decide(index, read('prn_a', 'prn_u', 'one')).allowed).to.equal(true);
    expect(decide(index, read('prn_a', 'prn_u', 'two')).allowed).to.equal(true);
    expect(decide(index, read('prn_a', 'prn_u', 'three')).allowed).to.equal(false);
  });

  it('forgets a delegation taken out of the index (revoked or expired)', () => {
    const id = delegation(index, 'prn_u', 'prn_a');
    index.putDelegation(id, undefined);
    expect(decide(index, read('prn_a', 'prn_u')).reasons[0]!.code).to.equal('NO_DELEGATION');
    expect(index.delegations.size).to.equal(0);
    expect([...index.delegationsGiven('prn_u')]).to.deep.equal([]);
  });

  it('names the link of a chain that does not hold', () => {
    delegation(index, 'prn_u', 'prn_a');
    const v = decide(index, read('prn_b', ['prn_u', 'prn_a']));
    expect(v.reasons).to.have.length(1);
    expect(v.reasons[0]).to.include({ code: 'NO_DELEGATION', principal_id: 'prn_a', delegate_id: 'prn_b' });
    delegation(index, 'prn_a', 'prn_b');
    expect(decide(index, read('prn_b', ['prn_u', 'prn_a'])).allowed).to.equal(true);
    // The same principals in another order are another chain.
    expect(decide(index, read('prn_b', ['prn_a', 'prn_u'])).allowed).to.equal(false);
  });

  it('stops a delegation while its delegate is not active', () => {
    delegation(index, 'prn_u', 'prn_off');
    delegation(index, 'prn_off', 'prn_b');
    const v = decide(index, read('prn_b', ['prn_u', 'prn_off']));
    expect(v.allowed).to.equal(false);
    expect(v.reasons[0]).to.include({ code: 'DELEGATOR_DENIED', principal_id: 'prn_off' });
    expect(v.reasons[1]).to.include({ code: 'PRINCIPAL_INACTIVE', principal_id: 'prn_off' });
  });

  it('explains every link and every principal, refused or not', () => {
    const ua = delegation(index, 'prn_u', 'prn_a');
    const v = decide(index, read('prn_b', ['prn_u', 'prn_a']), { explain: true });
    expect(v.allowed).to.equal(false);
    expect(
      v.trace!.links!.map((l) => [l.delegator_id, l.delegate_id, l.delegation_id, l.covered]),
    ).to.deep.equal([
      ['prn_u', 'prn_a', ua, true],
      ['prn_a', 'prn_b', undefined, false],
    ]);
    expect(v.trace!.verdicts!.map((x) => [x.principal_id, x.allowed])).to.deep.equal([
      ['prn_b', true],
      ['prn_a', true],
      ['prn_u', true],
    ]);
    expect(v.trace!.principals.map((p) => p.id)).to.deep.equal(['prn_b', 'prn_a', 'prn_u']);
  });

  it('decides a request on behalf of oneself as one without on_behalf_of', () => {
    const v = decide(index, read('prn_a', ['prn_a']));
    expect(v.allowed).to.equal(true);
    expect(v.reasons).to.have.length(1);
  });
});
