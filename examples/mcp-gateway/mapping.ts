/**
 * The default mappings of the COAZ-MCP binding (OpenID AuthZEN, `authzen-coaz-mcp-binding-1_0`):
 * how one MCP request becomes one AuthZEN Access Evaluation. Every mapping shares its subject,
 * the person the token was issued for (`$token.sub`), and its context, the agent acting for them
 * (`$token.?client_id`); the action is the MCP method, and the resource what the method targets:
 * the MCP server itself, or one tool, resource, prompt or task of it.
 */

/** Claims of the caller's validated access token. */
export interface TokenClaims {
  sub: string;
  [claim: string]: unknown;
}

export interface Evaluation {
  subject: { type: 'identity'; id: string };
  action: { name: string };
  resource: { type: string; id: string };
  context?: Record<string, unknown>;
}

/**
 * What the binding says of a request: let it through without a decision (`ping`), decide it, or
 * refuse it, as unknown (a method the binding does not map is denied, so that methods added to
 * MCP later fail closed) or as a mapping error (a field the mapping reads is missing).
 */
export type Mapped =
  | { kind: 'pass' }
  | { kind: 'evaluate'; evaluation: Evaluation }
  | { kind: 'unknown' }
  | { kind: 'error'; message: string };

type Params = Record<string, unknown>;

/** How a method's resource (and any context of its own) is read from the request. */
type Target = (
  params: Params,
  server: () => string,
) => {
  resource: { type: string; id: string };
  context?: Record<string, unknown>;
};

/** A missing or malformed field: the mapping cannot be made, and the request is refused. */
class MappingError extends Error {}

/** `$params.<field>`: a plain selection, so that a missing field is an error, not an absent value. */
function field(params: Params, name: string): unknown {
  if (!Object.hasOwn(params, name)) throw new MappingError(`params.${name} is missing`);
  return params[name];
}

/** A field that becomes a resource id: AuthZEN ids are strings. */
function text(params: Params, name: string): string {
  const value = field(params, name);
  if (typeof value !== 'string' || value === '') throw new MappingError(`params.${name} is not a string`);
  return value;
}

const server: Target = (_params, id) => ({ resource: { type: 'mcp_server', id: id() } });
const named =
  (type: string, name: string): Target =>
  (params) => ({ resource: { type, id: text(params, name) } });

const TARGETS: Record<string, Target> = {
  initialize: (params, id) => ({
    resource: { type: 'mcp_server', id: id() },
    context: { protocol_version: field(params, 'protocolVersion') },
  }),
  'tools/list': server,
  'tools/call': named('tool', 'name'),
  'resources/list': server,
  'resources/read': named('resource', 'uri'),
  'resources/subscribe': named('resource', 'uri'),
  'resources/unsubscribe': named('resource', 'uri'),
  'prompts/list': server,
  'prompts/get': named('prompt', 'name'),
  'completion/complete': (params) => {
    const ref = field(params, 'ref');
    if (typeof ref !== 'object' || ref === null) throw new MappingError('params.ref is not an object');
    const prompt = (ref as Params)['type'] === 'ref/prompt';
    return {
      resource: {
        type: prompt ? 'prompt' : 'resource',
        id: text(ref as Params, prompt ? 'name' : 'uri'),
      },
    };
  },
  'logging/setLevel': (params, id) => ({
    resource: { type: 'mcp_server', id: id() },
    context: { level: field(params, 'level') },
  }),
  'tasks/get': named('task', 'taskId'),
  'tasks/result': named('task', 'taskId'),
  'tasks/cancel': named('task', 'taskId'),
  'tasks/list': server,
};

/**
 * `$token.aud` as the id of this MCP server: the configured id when there is one, else the
 * audience when it names exactly one server. An audience of several members would need the
 * gateway to know which is its own, which is what configuring the id is for.
 */
function serverIdOf(claims: TokenClaims, configured: string | undefined): string {
  if (configured !== undefined) return configured;
  const aud = claims['aud'];
  if (typeof aud === 'string' && aud !== '') return aud;
  if (Array.isArray(aud) && aud.length === 1 && typeof aud[0] === 'string') return aud[0];
  throw new MappingError('the token audience does not name exactly one MCP server');
}

/** The binding's default mapping of one request, for the caller whose token gave `claims`. */
export function mapRequest(method: string, params: unknown, claims: TokenClaims, serverId?: string): Mapped {
  if (method === 'ping') return { kind: 'pass' };
  const target = Object.hasOwn(TARGETS, method) ? TARGETS[method] : undefined;
  if (!target) return { kind: 'unknown' };
  try {
    const { resource, context } = target(
      typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Params) : {},
      () => serverIdOf(claims, serverId),
    );
    // `$token.?client_id`: an optional selection, absent from the request when the token has none.
    const agent = claims['client_id'];
    const all = { ...(agent === undefined ? {} : { agent }), ...context };
    return {
      kind: 'evaluate',
      evaluation: {
        subject: { type: 'identity', id: claims.sub },
        action: { name: method },
        resource,
        ...(Object.keys(all).length > 0 ? { context: all } : {}),
      },
    };
  } catch (err) {
    if (err instanceof MappingError) return { kind: 'error', message: err.message };
    throw err;
  }
}
