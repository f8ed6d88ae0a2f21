import { readFileSync } from 'node:fs';
import type jwt from 'jsonwebtoken';
import { jwtVerifier, startGateway } from './gateway.js';
import { clientCredentials } from './pdp.js';

/**
 * The example MCP gateway as a process (`npm run mcp-gateway`), configured from the environment;
 * examples/mcp-gateway/README.md describes each variable. It writes one JSON line per decision it obtains.
 */

const env = (name: string): string | undefined => process.env[name] || undefined;

function required(name: string): string {
  const value = env(name);
  if (value === undefined) {
    process.stderr.write(`mcp-gateway: ${name} is required (see examples/mcp-gateway/README.md)\n`);
    process.exit(1);
  }
  return value;
}

/** The callers' tokens: HMAC with a shared secret, or signatures checked with a public key. */
function verifier(): ReturnType<typeof jwtVerifier> {
  const secret = env('MCP_TOKEN_SECRET');
  const keyFile = env('MCP_TOKEN_PUBLIC_KEY_FILE');
  if ((secret === undefined) === (keyFile === undefined)) {
    process.stderr.write('mcp-gateway: set one of MCP_TOKEN_SECRET and MCP_TOKEN_PUBLIC_KEY_FILE\n');
    process.exit(1);
  }
  const algorithms = (env('MCP_TOKEN_ALGORITHMS') ?? (secret !== undefined ? 'HS256' : 'RS256,ES256'))
    .split(',')
    .map((a) => a.trim()) as jwt.Algorithm[];
  const issuer = env('MCP_TOKEN_ISSUER');
  const audience = env('MCP_TOKEN_AUDIENCE');
  return jwtVerifier({
    key: secret ?? readFileSync(keyFile!),
    algorithms,
    ...(issuer !== undefined ? { issuer } : {}),
    ...(audience !== undefined ? { audience } : {}),
  });
}

const pdpUrl = env('PAS_URL') ?? 'http://localhost:8080';
const serverId = env('MCP_SERVER_ID');
const gateway = await startGateway({
  upstreamUrl: required('MCP_UPSTREAM_URL'),
  pdpUrl,
  pdpToken: clientCredentials({
    baseUrl: pdpUrl,
    clientId: required('PAS_CLIENT_ID'),
    clientSecret: required('PAS_CLIENT_SECRET'),
  }),
  verify: verifier(),
  ...(serverId !== undefined ? { serverId } : {}),
  host: env('MCP_GATEWAY_HOST') ?? '127.0.0.1',
  port: Number(env('MCP_GATEWAY_PORT') ?? 8090),
  path: env('MCP_GATEWAY_PATH') ?? '/mcp',
  onDecision: ({ method, evaluation, decision }) =>
    process.stdout.write(
      `${JSON.stringify({
        method,
        subject: evaluation.subject.id,
        agent: evaluation.context?.['agent'],
        action: evaluation.action.name,
        resource: evaluation.resource,
        decision: decision.decision,
        decision_id: decision.context?.id,
        reasons: decision.context?.reasons?.map((r) => r.code),
      })}\n`,
    ),
});
process.stdout.write(`mcp-gateway listening on ${gateway.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void gateway.close().then(() => process.exit(0));
  });
}
