import { expect } from 'chai';
import { mapRequest, type TokenClaims } from '../../examples/mcp-gateway/mapping.js';

/** The COAZ-MCP binding's default mappings, as the example gateway (examples/mcp-gateway) makes them. */
describe('MCP gateway: the default mappings of the COAZ-MCP binding', () => {
  const SERVER = 'https://mcp.example.com';
  const token: TokenClaims = { sub: 'ada@example.com', client_id: 'coding-assistant', aud: SERVER };
  const subject = { type: 'identity', id: 'ada@example.com' };

  const evaluation = (method: string, params: unknown, claims = token, serverId?: string) => {
    const mapped = mapRequest(method, params, claims, serverId);
    expect(mapped.kind, method).to.equal('evaluate');
    return (mapped as { evaluation: unknown }).evaluation;
  };

  it('maps each method to its action and resource, with the person as subject and the agent in the context', () => {
    const cases: [string, unknown, { type: string; id: string }][] = [
      ['tools/list', {}, { type: 'mcp_server', id: SERVER }],
      ['tools/call', { name: 'search', arguments: { query: 'x' } }, { type: 'tool', id: 'search' }],
      ['resources/list', undefined, { type: 'mcp_server', id: SERVER }],
      ['resources/read', { uri: 'file:///a.txt' }, { type: 'resource', id: 'file:///a.txt' }],
      ['resources/subscribe', { uri: 'file:///a.txt' }, { type: 'resource', id: 'file:///a.txt' }],
      ['resources/unsubscribe', { uri: 'file:///a.txt' }, { type: 'resource', id: 'file:///a.txt' }],
      ['prompts/list', {}, { type: 'mcp_server', id: SERVER }],
      ['prompts/get', { name: 'review' }, { type: 'prompt', id: 'review' }],
      [
        'completion/complete',
        { ref: { type: 'ref/prompt', name: 'review' } },
        { type: 'prompt', id: 'review' },
      ],
      [
        'completion/complete',
        { ref: { type: 'ref/resource', uri: 'file:///{path}' } },
        { type: 'resource', id: 'file:///{path}' },
      ],
      ['tasks/get', { taskId: 't-1' }, { type: 'task', id: 't-1' }],
      ['tasks/result', { taskId: 't-1' }, { type: 'task', id: 't-1' }],
      ['tasks/cancel', { taskId: 't-1' }, { type: 'task', id: 't-1' }],
      ['tasks/list', {}, { type: 'mcp_server', id: SERVER }],
    ];
    for (const [method, params, resource] of cases) {
      expect(evaluation(method, params), method).to.deep.equal({
        subject,
        action: { name: method },
        resource,
        context: { agent: 'coding-assistant' },
      });
    }
  });

  it('adds what initialize and logging/setLevel carry to the context', () => {
    expect(evaluation('initialize', { protocolVersion: '2025-06-18', capabilities: {} })).to.deep.equal({
      subject,
      action: { name: 'initialize' },
      resource: { type: 'mcp_server', id: SERVER },
      context: { agent: 'coding-assistant', protocol_version: '2025-06-18' },
    });
    expect(evaluation('logging/setLevel', { level: 'debug' })).to.deep.include({
      context: { agent: 'coding-assistant', level: 'debug' },
    });
  });

  it('leaves the agent out when the token has no client_id', () => {
    expect(
      evaluation('tools/call', { name: 'search' }, { sub: 'ada@example.com', aud: SERVER }),
    ).to.deep.equal({
      subject,
      action: { name: 'tools/call' },
      resource: { type: 'tool', id: 'search' },
    });
  });

  it("takes the server's id from configuration, else from an audience naming one server", () => {
    const server = (claims: TokenClaims, configured?: string) =>
      mapRequest('tools/list', {}, claims, configured);
    expect(evaluation('tools/list', {}, { ...token, aud: [SERVER] })).to.have.nested.property(
      'resource.id',
      SERVER,
    );
    expect(
      evaluation('tools/list', {}, { ...token, aud: [SERVER, 'other'] }, 'mine'),
    ).to.have.nested.property('resource.id', 'mine');
    expect(server({ ...token, aud: [SERVER, 'other'] }).kind).to.equal('error');
    expect(server({ sub: 'ada@example.com' }).kind).to.equal('error');
  });

  it('passes ping, and refuses methods it does not map and requests missing what the mapping reads', () => {
    expect(mapRequest('ping', undefined, token)).to.deep.equal({ kind: 'pass' });
    for (const method of [
      'resources/templates/list',
      'sampling/createMessage',
      'vendor/anything',
      'toString',
    ]) {
      expect(mapRequest(method, {}, token), method).to.deep.equal({ kind: 'unknown' });
    }
    for (const [method, params] of [
      ['tools/call', {}],
      ['tools/call', { name: 42 }],
      ['tools/call', { name: '' }],
      ['tools/call', ['search']],
      ['resources/read', { name: 'a' }],
      ['initialize', {}],
      ['completion/complete', { ref: 'ref/prompt' }],
      ['tasks/get', undefined],
    ] as const) {
      expect(mapRequest(method, params, token).kind, `${method} ${JSON.stringify(params)}`).to.equal('error');
    }
  });
});
