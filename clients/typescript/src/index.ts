/**
 * A typed client of the Principals and Access Service REST API.
 *
 * It is openapi-fetch over the types openapi-typescript makes of the service's own OpenAPI
 * document (./api.ts, written by `npm run client:types`), so a path, a parameter or a body
 * field the service does not declare fails to compile:
 *
 *   const baseUrl = 'http://localhost:8080';
 *   const pas = createPasClient({
 *     baseUrl,
 *     token: clientCredentialsToken({ baseUrl, clientId, clientSecret }),
 *   });
 *   const principal = unwrap(await pas.GET('/v1/principals/{id}', { params: { path: { id } } }));
 *
 * Every call answers openapi-fetch's `{ data, error, response }`; `unwrap` turns an error answer
 * into a thrown `PasApiError` carrying the problem details (RFC 9457) the service sent.
 */
import createClient, { type Client, type ClientPathsWithMethod, type MethodResponse } from 'openapi-fetch';
import type { components, operations, paths } from './api.js';

export type { components, operations, paths };

/** The client `createPasClient` answers: every operation of the service, typed. */
export type PasClient = Client<paths>;

/** A named schema of the service's OpenAPI document: `Schema<'Principal'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

/**
 * What an operation answers on success, as the client types it:
 * `ResponseData<'get', '/v1/principals/{id}'>`. This is the schema as read (openapi-fetch leaves out
 * what only a request may carry), so prefer it to `Schema` for what a call returned.
 */
export type ResponseData<
  Method extends 'get' | 'put' | 'post' | 'delete' | 'patch',
  Path extends ClientPathsWithMethod<PasClient, Method>,
> = MethodResponse<PasClient, Method, Path>;

/** An RFC 9457 problem, as the `/v1` operations answer their errors. */
export type Problem = Schema<'Problem'>;

/** The answer of the token endpoint. */
export type TokenResponse = Schema<'TokenResponse'>;

/**
 * A bearer token, or a function giving one. A function is asked before every request, so it can
 * keep a token and replace it before it expires (as `clientCredentialsToken` does).
 */
export type TokenSource = string | (() => Promise<string>);

export interface PasClientOptions {
  /** The service's root URL, without `/v1`: `https://pas.example.com`. */
  baseUrl: string;
  /** The bearer token sent with every request; none for the public operations only. */
  token?: TokenSource;
  /** The fetch to use (default: the global one); tests and proxies pass their own. */
  fetch?: typeof fetch;
  /** Headers sent with every request, besides `Authorization`. */
  headers?: Record<string, string>;
}

/** A client of the service whose requests carry the given token. */
export function createPasClient(options: PasClientOptions): PasClient {
  const client = createClient<paths>({
    baseUrl: trimBaseUrl(options.baseUrl),
    // The global fetch is looked up at each request, so that one replaced after the client was
    // made (a test's stub, an instrumented fetch) is the one used.
    fetch: (request: Request) => (options.fetch ?? globalThis.fetch)(request),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const token = options.token;
  if (token !== undefined) {
    client.use({
      async onRequest({ request }) {
        const value = typeof token === 'string' ? token : await token();
        request.headers.set('Authorization', `Bearer ${value}`);
        return request;
      },
    });
  }
  return client;
}

/** The error `unwrap` and the token helpers throw for an error answer of the service. */
export class PasApiError extends Error {
  override readonly name = 'PasApiError';

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The problem details of a `/v1` error, when the answer carried them. */
    readonly problem?: Partial<Problem>,
    /** The OAuth error code of a token endpoint error (`invalid_client`, ...). */
    readonly oauthError?: string,
  ) {
    super(describeError(status, problem, oauthError));
  }

  /** The stable error code (`NOT_FOUND`, `VALIDATION_FAILED`, `invalid_client`, ...), if any. */
  get code(): string | undefined {
    return this.problem?.code ?? this.oauthError;
  }
}

/** What one call of the client answers, as far as `unwrap` reads it. */
export interface CallResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful answer; throws `PasApiError` for an error answer. */
export function unwrap<T>(result: CallResult<T>): T {
  const { response } = result;
  if (result.error !== undefined || !response.ok) throw apiError(response.status, result.error);
  return result.data as T;
}

/** A `PasApiError` for an error answer of the service, whatever format its body came in. */
export function apiError(status: number, body: unknown): PasApiError {
  if (body !== null && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    if (typeof record['error'] === 'string') {
      // RFC 6749 errors of the token endpoints.
      const description = record['error_description'];
      return new PasApiError(
        status,
        {
          title: record['error'],
          ...(typeof description === 'string' ? { detail: description } : {}),
        },
        record['error'],
      );
    }
    if (typeof record['title'] === 'string' || typeof record['code'] === 'string') {
      return new PasApiError(status, record);
    }
    if (typeof record['detail'] === 'string') {
      // A SCIM error carries its message in `detail` alone.
      return new PasApiError(status, { detail: record['detail'] });
    }
  }
  if (typeof body === 'string' && body.trim()) return new PasApiError(status, { detail: body.trim() });
  return new PasApiError(status);
}

function describeError(status: number, problem?: Partial<Problem>, oauthError?: string): string {
  const title = problem?.title ?? (oauthError ? oauthError : `HTTP ${status}`);
  const parts = [problem?.detail ? `${title}: ${problem.detail}` : title];
  for (const e of problem?.errors ?? []) parts.push(`${e.pointer}: ${e.message}`);
  if (problem?.request_id) parts.push(`(request ${problem.request_id})`);
  return parts.join('\n  ');
}

export interface ClientCredentials {
  /** The service's root URL, without `/v1`. */
  baseUrl: string;
  /** The API client's id, `cli_…`. */
  clientId: string;
  /** The API client's secret, `pas_cs_…`. */
  clientSecret: string;
  /** A space-separated subset of the client's scopes (default: all of them). */
  scope?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * Asks the token endpoint (POST /v1/auth/token) for an access token by the OAuth 2.0 client
 * credentials grant; throws `PasApiError` when the service refuses (`invalid_client` for a wrong
 * id or secret).
 */
export async function requestToken(credentials: ClientCredentials): Promise<TokenResponse> {
  const client = createPasClient({
    baseUrl: credentials.baseUrl,
    ...(credentials.fetch ? { fetch: credentials.fetch } : {}),
  });
  const body: Record<string, string> = {
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
  };
  if (credentials.scope !== undefined) body['scope'] = credentials.scope;
  return unwrap(await client.POST('/v1/auth/token', { body }));
}

/** How long before its expiry a kept token is replaced, so none expires while in flight. */
const EXPIRY_MARGIN_MS = 30_000;

/**
 * A token source for `createPasClient` that obtains tokens by the client credentials grant and
 * keeps each until shortly before it expires. Concurrent requests share one token request.
 */
export function clientCredentialsToken(credentials: ClientCredentials): () => Promise<string> {
  let current: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return () => {
    if (current && Date.now() < current.renewAt) return Promise.resolve(current.token);
    pending ??= requestToken(credentials)
      .then((answer) => {
        const lifetime = answer.expires_in * 1000;
        current = {
          token: answer.access_token,
          renewAt: Date.now() + Math.max(lifetime - EXPIRY_MARGIN_MS, lifetime / 2),
        };
        return answer.access_token;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
}

function trimBaseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}
