import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream } from 'node:stream/web';
import jwt from 'jsonwebtoken';
import { mapRequest, type Evaluation, type TokenClaims } from './mapping.js';
import { AuthZenClient, type Decision, type TokenSource } from './pdp.js';

/**
 * An MCP gateway enforcing the service's decisions, as the COAZ-MCP binding describes a gateway
 * acting as the policy enforcement point: between MCP clients and one MCP server over Streamable
 * HTTP, it authorizes every client request by the binding's default mappings through
 * `POST /access/v1/evaluation`, forwards what is allowed and answers the rest itself. It relays
 * the HTTP exchange as it is (JSON or an event stream) rather than speaking MCP to both sides,
 * so that it needs to understand only the requests it authorizes and the one answer it changes:
 * the tool list, which it narrows to the tools the caller may call.
 */

/** JSON-RPC error codes: the binding's denial, and the standard ones it prescribes. */
const ACCESS_DENIED = -32001;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const INVALID_REQUEST = -32600;
const PARSE_ERROR = -32700;

/** The largest request body taken (MCP messages are small; tool arguments are the big part). */
const MAX_BODY = 4 * 1024 * 1024;
/** Sessions remembered at most; the oldest is forgotten beyond, and its client must start anew. */
const MAX_SESSIONS = 10_000;

/** Request headers the MCP server needs, and response headers the client does. */
const FORWARDED = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
const RETURNED = ['content-type', 'cache-control', 'mcp-session-id'];

/** Checks a bearer token and answers its claims; throws when the token is not acceptable. */
export type Verify = (token: string) => Promise<TokenClaims> | TokenClaims;

/** A decision the gateway obtained, for logs: the MCP method it was for and what was asked. */
export interface DecisionEvent {
  method: string;
  evaluation: Evaluation;
  decision: Decision;
}

export interface GatewayOptions {
  /** The MCP server's Streamable HTTP endpoint. */
  upstreamUrl: string;
  /** The service's base URL (its AuthZEN endpoints are under `/access/v1`). */
  pdpUrl: string;
  /** The gateway's own access token to the service, with scope `decisions:evaluate`. */
  pdpToken: TokenSource;
  /** How the caller's bearer token is checked (`jwtVerifier`, or a verifier of your own). */
  verify: Verify;
  /** `resource.id` of the requests about the server as a whole; by default the token's `aud`. */
  serverId?: string;
  host?: string;
  /** 0 (the default) takes any free port. */
  port?: number;
  /** The path of the MCP endpoint (default `/mcp`). */
  path?: string;
  onDecision?: (event: DecisionEvent) => void;
}

export interface Gateway {
  /** The MCP endpoint clients connect to. */
  url: string;
  close(): Promise<void>;
}

/**
 * Verifies JWT access tokens with a shared secret or a public key: signature, expiry (which
 * must be there), and the issuer and audience when given. The subject (`sub`) is required: it
 * is whom requests are decided for.
 */
export function jwtVerifier(options: {
  key: string | Buffer;
  algorithms: jwt.Algorithm[];
  issuer?: string;
  audience?: string;
}): Verify {
  return (token) => {
    const claims = jwt.verify(token, options.key, {
      algorithms: options.algorithms,
      ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
      ...(options.audience !== undefined ? { audience: options.audience } : {}),
    });
    if (typeof claims === 'string' || typeof claims.sub !== 'string' || claims.sub === '') {
      throw new Error('the token names no subject');
    }
    // jsonwebtoken takes a token without `exp` as valid for ever: a caller's token must end.
    if (typeof claims.exp !== 'number') throw new Error('the token has no expiry');
    return claims as TokenClaims;
  };
}

type Message = Record<string, unknown>;

const isObject = (value: unknown): value is Message =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const rpcError = (id: unknown, code: number, message: string, data?: unknown): Message => ({
  jsonrpc: '2.0',
  id: id ?? null,
  error: { code, message, ...(data !== undefined ? { data } : {}) },
});

function send(res: ServerResponse, status: number, body: Message | string, headers = {}): void {
  const json = typeof body !== 'string';
  res
    .writeHead(status, {
      'Content-Type': json ? 'application/json' : 'text/plain; charset=utf-8',
      ...headers,
    })
    .end(json ? JSON.stringify(body) : body);
}

/**
 * The binding's denial: code -32001, with the reasons the service gave as the message, and the
 * recorded decision's id in `data`, so that whoever looks into a refusal finds the decision
 * (`GET /v1/decisions/{id}`). Reason codes only: the policies behind them stay with the service.
 */
function denial(id: unknown, what: string, decision?: Decision): Message {
  const codes = (decision?.context?.reasons ?? []).map((r) => r.code);
  const message = codes.length > 0 ? `Access denied: ${codes.join(', ')}` : `Access denied: ${what}`;
  const decisionId = decision?.context?.id;
  return rpcError(
    id,
    ACCESS_DENIED,
    message,
    decisionId !== undefined ? { decision_id: decisionId, reasons: codes } : undefined,
  );
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const mediaType = (header: string | null): string => (header ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * Rewrites the JSON-RPC messages of an event stream, event by event, and passes everything else
 * on as it comes (other events, comments, the stream's pace).
 */
async function rewriteEvents(
  body: ReadableStream<Uint8Array>,
  res: ServerResponse,
  rewrite: (message: unknown) => Promise<unknown>,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let carry = '';
  const write = async (text: string): Promise<void> => {
    if (!res.write(text)) await once(res, 'drain');
  };
  for await (const chunk of body) {
    let text = carry + decoder.decode(chunk, { stream: true });
    // A CR at the end of a chunk may be the first half of a CRLF.
    carry = text.endsWith('\r') ? '\r' : '';
    if (carry) text = text.slice(0, -1);
    buffer += text.replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      await write(`${await rewriteEvent(event, rewrite)}\n\n`);
    }
  }
  if (buffer + carry) await write(buffer + carry);
}

async function rewriteEvent(event: string, rewrite: (message: unknown) => Promise<unknown>): Promise<string> {
  const lines = event.split('\n');
  const name = lines
    .find((l) => l.startsWith('event:'))
    ?.slice(6)
    .trim();
  const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
  if (data.length === 0 || (name !== undefined && name !== 'message')) return event;
  let message: unknown;
  try {
    message = JSON.parse(data.join('\n'));
  } catch {
    return event;
  }
  const replaced = await rewrite(message);
  if (replaced === message) return event;
  return [...lines.filter((l) => !l.startsWith('data:')), `data: ${JSON.stringify(replaced)}`].join('\n');
}

/** Starts a gateway listening on `host:port` (127.0.0.1 and any free port by default). */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const path = options.path ?? '/mcp';
  const pdp = new AuthZenClient(options.pdpUrl, options.pdpToken);
  /**
   * The caller each MCP session began with: a session is used by that caller only, so that
   * nobody rides on a session id someone else's client was given.
   */
  const sessions = new Map<string, string>();
  /**
   * Tools that declare a mapping of their own (`x-authzen-mapping`), which overrides the default
   * one. This gateway does not evaluate declared mappings, so it keeps those tools out of listings
   * and refuses calls to them, rather than authorize them by a mapping their server overrode.
   */
  const declared = new Set<string>();

  const decide = async (method: string, evaluation: Evaluation): Promise<Decision> => {
    const decision = await pdp.evaluate(evaluation);
    options.onDecision?.({ method, evaluation, decision });
    return decision;
  };

  /** The tools of a listing this caller may call: one batch of `tools/call` decisions. */
  const permittedTools = async (tools: unknown[], claims: TokenClaims): Promise<unknown[]> => {
    const candidates: { tool: unknown; evaluation: Evaluation }[] = [];
    for (const tool of tools) {
      const name = isObject(tool) ? tool['name'] : undefined;
      if (typeof name !== 'string') continue;
      const schema = isObject(tool) ? tool['inputSchema'] : undefined;
      if (isObject(schema) && schema['x-authzen-mapping'] !== undefined) {
        declared.add(name);
        continue;
      }
      const mapped = mapRequest('tools/call', { name }, claims, options.serverId);
      if (mapped.kind === 'evaluate') candidates.push({ tool, evaluation: mapped.evaluation });
    }
    const decisions = await pdp.evaluateAll(candidates.map((c) => c.evaluation));
    candidates.forEach(({ evaluation }, i) =>
      options.onDecision?.({ method: 'tools/list', evaluation, decision: decisions[i]! }),
    );
    return candidates.filter((_, i) => decisions[i]!.decision).map((c) => c.tool);
  };

  /**
   * Sends the request on to the MCP server and its answer back, the answer to `tools/list`
   * filtered by `rewrite`. A session the answer starts is bound to the caller.
   */
  const relay = async (
    req: IncomingMessage,
    res: ServerResponse,
    owner: string,
    body?: Buffer,
    rewrite?: (message: unknown) => Promise<unknown>,
  ): Promise<void> => {
    const headers = new Headers();
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    // The caller's token stays here: it was issued for this gateway, not for the MCP server.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    let upstream: Response;
    try {
      upstream = await fetch(options.upstreamUrl, {
        method: req.method!,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: abort.signal,
      });
    } catch {
      if (!res.headersSent) send(res, 502, 'the MCP server cannot be reached');
      return;
    }
    const asked = req.headers['mcp-session-id'];
    const given = upstream.headers.get('mcp-session-id');
    if (given !== null && asked === undefined) {
      if (sessions.size >= MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      sessions.set(given, owner);
    }
    if (req.method === 'DELETE' && upstream.ok && typeof asked === 'string') sessions.delete(asked);
    const returned: Record<string, string> = {};
    for (const name of RETURNED) {
      const value = upstream.headers.get(name);
      if (value !== null) returned[name] = value;
    }
    res.writeHead(upstream.status, returned);
    const stream = upstream.body as ReadableStream<Uint8Array> | null;
    if (!stream) {
      res.end();
      return;
    }
    const type = mediaType(upstream.headers.get('content-type'));
    try {
      if (rewrite && type === 'application/json') {
        res.end(JSON.stringify(await rewrite(await upstream.json())));
      } else if (rewrite && type === 'text/event-stream') {
        await rewriteEvents(stream, res, rewrite);
        res.end();
      } else {
        await pipeline(Readable.fromWeb(stream), res);
      }
    } catch {
      // The client went away, or the server's answer broke off: there is no one left to tell.
      res.destroy();
    }
  };

  const post = async (req: IncomingMessage, res: ServerResponse, claims: TokenClaims, owner: string) => {
    const body = await readBody(req);
    if (body === undefined) return send(res, 413, 'the message is too large', { Connection: 'close' });
    let message: unknown;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      return send(res, 400, rpcError(null, PARSE_ERROR, 'Parse error'));
    }
    // Each message is authorized and answered on its own; batches left MCP in 2025-06-18.
    if (!isObject(message)) {
      return send(res, 400, rpcError(null, INVALID_REQUEST, 'send one JSON-RPC message per request'));
    }
    const { id, method } = message;
    // Notifications, and answers to the server's own requests, pass: they ask for nothing.
    if (typeof method !== 'string' || id === undefined) return relay(req, res, owner, body);
    const mapped = mapRequest(method, message['params'], claims, options.serverId);
    switch (mapped.kind) {
      case 'pass':
        return relay(req, res, owner, body);
      case 'unknown':
        return send(res, 200, denial(id, `${method} is not a method this gateway authorizes`));
      case 'error':
        return send(res, 200, rpcError(id, INVALID_PARAMS, `COAZ mapping error: ${mapped.message}`));
    }
    const tool = method === 'tools/call' ? mapped.evaluation.resource.id : undefined;
    if (tool !== undefined && declared.has(tool)) {
      const why = `tool ${tool} declares its own x-authzen-mapping, which this gateway does not evaluate`;
      return send(res, 200, rpcError(id, INVALID_PARAMS, `COAZ mapping error: ${why}`));
    }
    let decision: Decision;
    try {
      decision = await decide(method, mapped.evaluation);
    } catch {
      return send(res, 200, rpcError(id, INTERNAL_ERROR, 'Authorization service unavailable'));
    }
    if (!decision.decision) return send(res, 200, denial(id, method, decision));
    if (method !== 'tools/list') return relay(req, res, owner, body);
    return relay(req, res, owner, body, async (answer) => {
      if (!isObject(answer) || answer['id'] !== id || !isObject(answer['result'])) return answer;
      const result = answer['result'];
      if (!Array.isArray(result['tools'])) return answer;
      try {
        return { ...answer, result: { ...result, tools: await permittedTools(result['tools'], claims) } };
      } catch {
        return rpcError(id, INTERNAL_ERROR, 'Authorization service unavailable');
      }
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (new URL(req.url ?? '/', 'http://gateway').pathname !== path) return send(res, 404, 'not found');
    const bearer = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer === undefined)
      return send(res, 401, 'a bearer token is required', { 'WWW-Authenticate': 'Bearer' });
    let claims: TokenClaims;
    try {
      claims = await options.verify(bearer);
    } catch {
      return send(res, 401, 'the bearer token is not valid', {
        'WWW-Authenticate': 'Bearer error="invalid_token"',
      });
    }
    const owner = JSON.stringify([claims['iss'] ?? null, claims.sub, claims['client_id'] ?? null]);
    const session = req.headers['mcp-session-id'];
    if (typeof session === 'string') {
      const owned = sessions.get(session);
      if (owned === undefined) return send(res, 404, rpcError(null, -32000, 'Session not found'));
      if (owned !== owner) return send(res, 403, 'this MCP session belongs to another caller');
    }
    if (req.method === 'POST') return post(req, res, claims, owner);
    if (req.method === 'GET' || req.method === 'DELETE') return relay(req, res, owner);
    return send(res, 405, 'method not allowed', { Allow: 'GET, POST, DELETE' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'the gateway failed');
      else res.destroy();
    });
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}${path}`,
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      // Event streams stay open as long as their clients do: they end with the gateway.
      server.closeAllConnections();
      await closed;
    },
  };
}
