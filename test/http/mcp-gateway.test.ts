import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import {
  jwtVerifier,
  startGateway,
  type DecisionEvent,
  type Gateway,
} from '../../examples/mcp-gateway/gateway.js';
import { startDemoServer, type DemoServer } from '../../examples/mcp-gateway/demo-server.js';
import { clientCredentials } from '../../examples/mcp-gateway/pdp.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { createClient } from '../helpers/auth.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import type { HttpClient } from '../helpers/http.js';
import { createConnector, type Connector } from '../helpers/identities.js';
import { eventually, until } from '../helpers/wait.js';

/** What the gateway verifies callers' tokens with, and the MCP server they are issued for. */
const TOKEN_SECRET = 'mcp-gateway-test-secret-0123456789abcdef';
const SERVER_ID = 'https://mcp.example.test/repo-tools';
const HOUR = 60 * 60 * 1000;

/**
 * The example MCP gateway (examples/mcp-gateway) end to end: a client and a server of the
 * official MCP SDK over Streamable HTTP, the gateway between them deciding every request with
 * the service's AuthZEN API under the COAZ-MCP binding's default mappings, for a person and the
 * AI agent acting for them.
 */
describe('MCP gateway: agents acting for people', () => {
  let app: TestApp;
  let api: HttpClient;
  let idp: Connector;
  let upstream: DemoServer;
  let gateway: Gateway;
  const decisions: DecisionEvent[] = [];
  const clients: Client[] = [];
  const { uniq } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp({
    env: { DELEGATION_EXPIRY_INTERVAL_S: '1', RATE_LIMIT_BULK: '100000', RATE_LIMIT_STANDARD: '100000' },
  });

  before(async () => {
    app = fx.app;
    api = fx.api;
    world = engineApi(api, uniq);
    idp = await createConnector(app, api, uniq('okta'));
    // The gateway's own API client: it may ask for decisions, nothing else.
    const pep = await createClient(app, ['decisions:evaluate'], 'mcp-gateway');
    upstream = await startDemoServer();
    gateway = await startGateway({
      upstreamUrl: upstream.url,
      pdpUrl: app.http.baseUrl,
      pdpToken: clientCredentials({ baseUrl: app.http.baseUrl, clientId: pep.id, clientSecret: pep.secret }),
      verify: jwtVerifier({ key: TOKEN_SECRET, algorithms: ['HS256'], audience: SERVER_ID }),
      onDecision: (event) => decisions.push(event),
    });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  const tokenFor = (sub: string, clientId?: string): string =>
    jwt.sign({ sub, ...(clientId !== undefined ? { client_id: clientId } : {}) }, TOKEN_SECRET, {
      algorithm: 'HS256',
      audience: SERVER_ID,
      expiresIn: '10m',
    });

  /** An SDK client connected through the gateway with a token for the person and the agent. */
  async function connect(sub: string, clientId?: string): Promise<Client> {
    const client = new Client({ name: 'coding-assistant', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: { headers: { Authorization: `Bearer ${tokenFor(sub, clientId)}` } },
    });
    clients.push(client);
    await client.connect(transport);
    return client;
  }

  const delegate = async (delegatorId: string, delegateId: string, expiresInMs = HOUR): Promise<any> => {
    const res = await api.post('/v1/delegations', {
      delegator_id: delegatorId,
      delegate_id: delegateId,
      expires_at: new Date(Date.now() + expiresInMs).toISOString(),
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.include({ status: 'active' });
    return res.body;
  };

  /**
   * A person (provisioned by the identity provider) and an AI agent with an OAuth client id and
   * two tools, both allowed to open sessions with the MCP server, list its tools and call any;
   * the person may not send email. The agent acts for the person under a delegation, unless
   * `delegation` is null.
   */
  async function people(delegation: { expiresInMs?: number } | null = {}) {
    const email = `${uniq('ada')}@example.com`;
    const userId = await idp.provision({ userName: email });
    const clientId = uniq('assistant');
    const agent = await world.principal('AI_AGENT', {
      client_id: clientId,
      allowed_tools: ['search', 'send_email'],
    });
    const both = { principals: [userId, agent.id] };
    await world.policy({
      subjects: both,
      actions: ['initialize', 'tools/list'],
      resources: [{ type: 'mcp_server', identifier: SERVER_ID }],
    });
    await world.policy({
      subjects: both,
      actions: ['tools/call'],
      resources: [{ type: 'tool', identifier: '*' }],
    });
    await world.policy({
      effect: 'deny',
      subjects: { principals: [userId] },
      actions: ['tools/call'],
      resources: [{ type: 'tool', identifier: 'send_email' }],
    });
    const granted =
      delegation === null ? undefined : await delegate(userId, agent.id, delegation.expiresInMs);
    return { email, userId, agent, clientId, delegation: granted };
  }

  const recorded = (id: string): Promise<any> => recordedDecision(api, id);

  /** The request failed with the binding's denial; answers the recorded decision it names. */
  async function denied(request: Promise<unknown>, reason: string): Promise<any> {
    const err = await request.then(
      () => expect.fail('the request was allowed'),
      (e: unknown) => e,
    );
    expect(err, String(err)).to.be.instanceOf(McpError);
    const { code, data } = err as McpError & { data: { decision_id: string; reasons: string[] } };
    expect(code).to.equal(-32001);
    expect(data.reasons).to.include(reason);
    const record = await recorded(data.decision_id);
    expect(record.decision).to.equal('DENY');
    expect(record.reasons.map((r: any) => r.code)).to.include(reason);
    return record;
  }

  /** The decision the gateway obtained last for a request: its record. */
  async function lastDecision(action: string, resourceId: string): Promise<any> {
    const event = decisions.findLast(
      (d) => d.evaluation.action.name === action && d.evaluation.resource.id === resourceId,
    );
    expect(event, `${action} ${resourceId}`).to.not.equal(undefined);
    return recorded(event!.decision.context!.id!);
  }

  const auditTypes = async (targetId: string): Promise<string[]> => {
    const res = await api.get(`/v1/audit/events?target_id=${targetId}&type=delegation.*`);
    expect(res.status, res.text).to.equal(200);
    return res.body.data.map((e: any) => e.type);
  };

  it('lets an allowed call through and relays its result, decided as the agent for the person', async () => {
    const { email, userId, agent, clientId, delegation } = await people();
    const client = await connect(email, clientId);
    const opened = await lastDecision('initialize', SERVER_ID);
    expect(opened).to.include({ decision: 'ALLOW', principal_id: agent.id, action: 'initialize' });
    expect(opened.on_behalf_of).to.deep.equal([userId]);

    const result = await client.callTool({ name: 'search', arguments: { query: 'token refresh' } });
    expect(result.content).to.deep.equal([{ type: 'text', text: '3 results for token refresh' }]);
    expect(upstream.calls.at(-1)).to.equal('search');
    const record = await lastDecision('tools/call', 'search');
    expect(record).to.include({ decision: 'ALLOW', principal_id: agent.id, action: 'tools/call' });
    expect(record.resource).to.deep.equal({ type: 'tool', identifier: 'search' });
    expect(record.on_behalf_of).to.deep.equal([userId]);
    expect(record.context).to.deep.equal({ agent: clientId });
    expect(await auditTypes(delegation.id)).to.deep.equal(['delegation.created']);

    // ping passes without a decision.
    const before = decisions.length;
    await client.ping();
    expect(decisions.length).to.equal(before);
    expect(upstream.methods.at(-1)).to.equal('ping');
  });

  it("answers a call the person's policies deny with the binding's error, never reaching the server", async () => {
    const { email, userId, agent, clientId } = await people();
    const client = await connect(email, clientId);
    const calls = upstream.calls.length;
    const record = await denied(
      client.callTool({ name: 'send_email', arguments: { to: 'all@example.com', body: 'hi' } }),
      'DELEGATOR_DENIED',
    );
    expect(record.reasons.map((r: any) => r.code)).to.include('POLICY_DENY');
    expect(record).to.include({ principal_id: agent.id, action: 'tools/call' });
    expect(record.on_behalf_of).to.deep.equal([userId]);
    expect(upstream.calls.length).to.equal(calls);
  });

  it('refuses an agent the person never delegated to, from the first request', async () => {
    const { email, userId, agent, clientId } = await people(null);
    const sessions = upstream.methods.filter((m) => m === 'initialize').length;
    const record = await denied(connect(email, clientId), 'NO_DELEGATION');
    expect(record).to.include({ principal_id: agent.id, action: 'initialize' });
    expect(record.on_behalf_of).to.deep.equal([userId]);
    expect(upstream.methods.filter((m) => m === 'initialize').length).to.equal(sessions);
  });

  it('refuses the agent once its delegation has expired, and the audit trail records the expiry', async function () {
    this.timeout(30_000);
    const { email, userId, agent, clientId, delegation } = await people({ expiresInMs: 3_000 });
    const client = await connect(email, clientId);
    await client.callTool({ name: 'search', arguments: { query: 'before' } });
    await until('the delegation to expire', () => Date.now() > Date.parse(delegation.expires_at), 10_000, 50);
    const calls = upstream.calls.length;
    const record = await denied(
      client.callTool({ name: 'search', arguments: { query: 'after' } }),
      'NO_DELEGATION',
    );
    expect(record).to.include({ principal_id: agent.id });
    expect(record.on_behalf_of).to.deep.equal([userId]);
    expect(upstream.calls.length).to.equal(calls);
    await eventually(
      () => auditTypes(delegation.id),
      (types) => types.includes('delegation.expired'),
      15_000,
      250,
    );
    const stored = await api.get(`/v1/delegations/${delegation.id}`);
    expect(stored.body.status).to.equal('expired');
  });

  it('refuses the agent once the person revokes the delegation, and the audit trail records it', async () => {
    const { email, clientId, delegation } = await people();
    const client = await connect(email, clientId);
    await client.callTool({ name: 'search', arguments: { query: 'before' } });
    const revoked = await api.delete(`/v1/delegations/${delegation.id}`);
    expect(revoked.status, revoked.text).to.be.within(200, 204);
    expect((await api.get(`/v1/delegations/${delegation.id}`)).body.status).to.equal('revoked');
    await denied(client.callTool({ name: 'search', arguments: { query: 'after' } }), 'NO_DELEGATION');
    expect(await auditTypes(delegation.id)).to.deep.equal(['delegation.revoked', 'delegation.created']);
  });

  it("keeps the agent to its allowed_tools, whatever the person's policies allow", async () => {
    const { email, userId, agent, clientId } = await people();
    const client = await connect(email, clientId);
    const calls = upstream.calls.length;
    const record = await denied(
      client.callTool({ name: 'delete_repo', arguments: { repo: 'payments' } }),
      'TOOL_NOT_ALLOWED',
    );
    expect(record).to.include({ principal_id: agent.id });
    expect(record.resource).to.deep.equal({ type: 'tool', identifier: 'delete_repo' });
    expect(record.on_behalf_of).to.deep.equal([userId]);
    expect(upstream.calls.length).to.equal(calls);
  });

  it('lists only the tools the person and the agent may both call', async () => {
    const { email, userId, agent, clientId } = await people();
    const viaAgent = await connect(email, clientId);
    const listed = await viaAgent.listTools();
    // send_email: the person may not; delete_repo: outside the agent's allowed_tools.
    expect(listed.tools.map((t) => t.name)).to.deep.equal(['search']);
    expect(listed.tools[0]!.inputSchema.properties).to.have.property('query');
    const list = await lastDecision('tools/list', SERVER_ID);
    expect(list).to.include({ decision: 'ALLOW', principal_id: agent.id });
    const perTool = await Promise.all(
      ['search', 'delete_repo', 'send_email'].map((t) => lastDecision('tools/call', t)),
    );
    expect(
      perTool.map((r) => [r.resource.identifier, r.decision, r.principal_id, r.on_behalf_of]),
    ).to.deep.equal([
      ['search', 'ALLOW', agent.id, [userId]],
      ['delete_repo', 'DENY', agent.id, [userId]],
      ['send_email', 'DENY', agent.id, [userId]],
    ]);

    // The person on their own, without an agent: every tool but the one they may not use.
    const alone = await connect(email);
    expect((await alone.listTools()).tools.map((t) => t.name)).to.deep.equal(['search', 'delete_repo']);
    const own = await lastDecision('tools/call', 'delete_repo');
    expect(own).to.include({ decision: 'ALLOW', principal_id: userId });
    expect(own).not.to.have.property('on_behalf_of');
  });

  it('denies methods the binding does not map, without a decision and without reaching the server', async () => {
    const { email, clientId } = await people();
    const client = await connect(email, clientId);
    const before = decisions.length;
    const err = await client.listResourceTemplates().then(
      () => expect.fail('the request was allowed'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(McpError);
    expect((err as McpError).code).to.equal(-32001);
    expect((err as McpError).message).to.include('resources/templates/list');
    expect(decisions.length).to.equal(before);
    expect(upstream.methods).not.to.include('resources/templates/list');
  });

  it("refuses a token it cannot verify, and another caller's use of a session", async () => {
    const { email, clientId } = await people();
    const forged = jwt.sign({ sub: email, client_id: clientId }, 'another-secret-0123456789abcdef', {
      audience: SERVER_ID,
    });
    const noEntry = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${forged}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(noEntry.status).to.equal(401);
    expect(noEntry.headers.get('www-authenticate')).to.equal('Bearer error="invalid_token"');

    const client = await connect(email, clientId);
    const session = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const intruder = await people();
    const ride = await fetch(gateway.url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${tokenFor(intruder.email, intruder.clientId)}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': session,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search' } }),
    });
    expect(ride.status).to.equal(403);
    await ride.body?.cancel();
  });
});
