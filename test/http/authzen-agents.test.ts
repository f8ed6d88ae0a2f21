import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import type { HttpClient } from '../helpers/http.js';
import { insertPrincipal } from '../helpers/principals.js';

const EVALUATION = '/access/v1/evaluation';
const EVALUATIONS = '/access/v1/evaluations';

/**
 * AuthZEN `context.agent` (docs/api.md §5.8, §10): the agent an MCP gateway names from the token's
 * `client_id` decides, on behalf of the subject, under a delegation from the subject.
 */
describe('AuthZEN evaluations with an agent acting for the subject', () => {
  let app: TestApp;
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp({ env: { RATE_LIMIT_BULK: '100000' } });

  before(async () => {
    app = fx.app;
    api = fx.api;
    world = engineApi(api, uniq);
  });

  const evaluate = async (body: Record<string, unknown>): Promise<any> => {
    const res = await api.post(EVALUATION, body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const recorded = (id: string): Promise<any> => recordedDecision(api, id);
  const codes = (answer: any): string[] => answer.context.reasons.map((r: any) => r.code);
  const delegate = (delegatorId: string, delegateId: string): Promise<any> =>
    world.delegation(delegatorId, delegateId);

  /**
   * A person and an AI agent that may act for them, both allowed `read` on a resource type of
   * their own; the agent is known by its OAuth client id too.
   */
  async function people(): Promise<{ user: any; agent: any; clientId: string; t: string }> {
    const user = await insertPrincipal(app, { name: uniq('Ada') });
    const clientId = uniq('agent-client');
    const agent = await world.principal('AI_AGENT', { client_id: clientId, allowed_tools: ['search'] });
    const t = type();
    await world.policy({
      subjects: { principals: [user.id, agent.id] },
      resources: [{ type: t, identifier: '*' }],
    });
    await delegate(user.id, agent.id);
    return { user, agent, clientId, t };
  }

  const asked = (subject: string, t: string, context?: Record<string, unknown>) => ({
    subject: { type: 'identity', id: subject },
    action: { name: 'read' },
    resource: { type: t, id: 'x' },
    ...(context !== undefined ? { context } : {}),
  });

  it('decides as the agent named by principal id, connector id or client_id, on behalf of the subject', async () => {
    const { user, agent, clientId, t } = await people();
    const connectorId = uniq('agent-ext');
    const connected = await insertPrincipal(app, { type: 'AI_AGENT', name: uniq('bot'), connectorId });
    await world.policy({
      subjects: { principals: [connected.id] },
      resources: [{ type: t, identifier: '*' }],
    });
    await delegate(user.id, connected.id);
    for (const [ref, principalId] of [
      [agent.id, agent.id],
      [clientId, agent.id],
      [connectorId, connected.id],
    ] as const) {
      // The subject by email, as a token's `sub` often names a person.
      const answer = await evaluate(asked(user.email, t, { agent: ref }));
      expect(answer.decision, ref).to.equal(true);
      const record = await recorded(answer.context.id);
      expect(record, ref).to.include({ decision: 'ALLOW', principal_id: principalId });
      expect(record.on_behalf_of, ref).to.deep.equal([user.id]);
      expect(record.context).to.deep.equal({ agent: ref });
    }
  });

  it('denies an agent without a delegation from the subject, and once the delegation is revoked', async () => {
    const { user, t } = await people();
    const stranger = await world.principal('AI_AGENT', { client_id: uniq('stranger') });
    await world.policy({
      subjects: { principals: [stranger.id] },
      resources: [{ type: t, identifier: '*' }],
    });
    const answer = await evaluate(asked(user.id, t, { agent: stranger.attributes.client_id }));
    expect(answer.decision).to.equal(false);
    expect(codes(answer)).to.include('NO_DELEGATION');
    const record = await recorded(answer.context.id);
    expect(record).to.include({ decision: 'DENY', principal_id: stranger.id });
    expect(record.on_behalf_of).to.deep.equal([user.id]);

    const granted = await delegate(user.id, stranger.id);
    expect((await evaluate(asked(user.id, t, { agent: stranger.id }))).decision).to.equal(true);
    const revoked = await api.delete(`/v1/delegations/${granted.id}`);
    expect(revoked.status, revoked.text).to.be.within(200, 204);
    const after = await evaluate(asked(user.id, t, { agent: stranger.id }));
    expect(after.decision).to.equal(false);
    expect(codes(after)).to.include('NO_DELEGATION');
  });

  it("needs the subject's policies as well as the agent's, and keeps the agent to its allowed tools", async () => {
    const { user, agent, clientId } = await people();
    const t = type();
    // Only the agent may read this type: the subject it acts for may not.
    await world.policy({ subjects: { principals: [agent.id] }, resources: [{ type: t, identifier: '*' }] });
    const theirs = await evaluate(asked(user.id, t, { agent: clientId }));
    expect(theirs.decision).to.equal(false);
    expect(codes(theirs)).to.include('DELEGATOR_DENIED');

    await world.policy({
      subjects: { principals: [user.id, agent.id] },
      actions: ['tools/call'],
      resources: [{ type: 'tool', identifier: '*' }],
    });
    const call = (tool: string) =>
      evaluate({
        subject: { type: 'identity', id: user.id },
        action: { name: 'tools/call' },
        resource: { type: 'tool', id: tool },
        context: { agent: clientId },
      });
    expect((await call('search')).decision).to.equal(true);
    const outside = await call('delete_repo');
    expect(outside.decision).to.equal(false);
    expect(codes(outside)).to.include('TOOL_NOT_ALLOWED');
    const record = await recorded(outside.context.id);
    expect(record).to.include({ principal_id: agent.id });
    expect(record.on_behalf_of).to.deep.equal([user.id]);
  });

  it('denies an agent that names no principal, as not found, naming it', async () => {
    const { user, t } = await people();
    const ref = uniq('no-such-agent');
    const answer = await evaluate(asked(user.id, t, { agent: ref }));
    expect(answer.decision).to.equal(false);
    expect(codes(answer)).to.deep.equal(['PRINCIPAL_NOT_FOUND']);
    expect(answer.context.reasons[0].message).to.include(ref);
    const record = await recorded(answer.context.id);
    expect(record).to.include({ decision: 'DENY', principal_id: ref });
    expect(record.on_behalf_of).to.deep.equal([user.id]);
  });

  it('denies a client_id two agents hold as ambiguous', async () => {
    const { user, clientId, t } = await people();
    await world.principal('AI_AGENT', { client_id: clientId });
    const answer = await evaluate(asked(user.id, t, { agent: clientId }));
    expect(answer.decision).to.equal(false);
    expect(codes(answer)).to.deep.equal(['AMBIGUOUS_SUBJECT']);
  });

  it('decides for the subject alone when the agent is the subject, or context.agent is not a string', async () => {
    const { user, agent, t } = await people();
    for (const context of [{ agent: user.id }, { agent: user.connector_id }, { agent: { id: agent.id } }]) {
      const answer = await evaluate(asked(user.id, t, context));
      expect(answer.decision, JSON.stringify(context)).to.equal(true);
      const record = await recorded(answer.context.id);
      expect(record.principal_id).to.equal(user.id);
      expect(record).not.to.have.property('on_behalf_of');
    }
  });

  it('applies context.agent to each evaluation of a batch, an item context replacing the default', async () => {
    const { user, agent, clientId, t } = await people();
    const stranger = await world.principal('AI_AGENT', { client_id: uniq('stranger') });
    await world.policy({
      subjects: { principals: [stranger.id] },
      resources: [{ type: t, identifier: '*' }],
    });
    const res = await api.post(EVALUATIONS, {
      subject: { type: 'identity', id: user.id },
      action: { name: 'read' },
      resource: { type: t, id: 'x' },
      context: { agent: clientId },
      evaluations: [{}, { context: {} }, { context: { agent: stranger.id } }],
    });
    expect(res.status, res.text).to.equal(200);
    const [byAgent, alone, withoutDelegation] = res.body.evaluations;
    expect([byAgent.decision, alone.decision, withoutDelegation.decision]).to.deep.equal([true, true, false]);
    expect(codes(withoutDelegation)).to.include('NO_DELEGATION');
    const records = await Promise.all(res.body.evaluations.map((e: any) => recorded(e.context.id)));
    expect(records.map((r) => [r.principal_id, r.on_behalf_of])).to.deep.equal([
      [agent.id, [user.id]],
      [user.id, undefined],
      [stranger.id, [user.id]],
    ]);
  });
});
