/**
 * The console's only way to the service: its public API, with an OAuth client's tokens.
 * Tokens live in this module's memory alone (never in storage a script could read later): a
 * reload signs the analyst out. The access token is refreshed a minute before it expires, and
 * once more when a request meets a 401; signing out revokes the refresh token's whole family.
 */

import type { ProblemDocument, TokenResponse } from './types';

/**
 * What the console knows of a failed call: the fields of the service's problem document, of which
 * an OAuth error, a body that is not JSON or a call never sent give only the first three.
 */
export type Problem = Pick<ProblemDocument, 'status' | 'title' | 'detail'> &
  Partial<Pick<ProblemDocument, 'code' | 'errors' | 'request_id'>>;

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
  }
  get status(): number {
    return this.problem.status;
  }
}

export interface Session {
  clientId: string;
  scopes: ReadonlySet<string>;
}

type Listener = (session: Session | null, reason?: string) => void;

/**
 * Refresh a minute before expiry (a fifth of the lifetime for short-lived tokens), so a request
 * never leaves with a token about to lapse.
 */
const refreshAfter = (lifetimeMs: number): number => lifetimeMs - Math.min(60_000, lifetimeMs / 5);

let access: string | null = null;
let refresh: string | null = null;
let session: Session | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | null = null;
const listeners = new Set<Listener>();

export function currentSession(): Session | null {
  return session;
}

export function onSession(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function announce(reason?: string): void {
  for (const l of listeners) l(session, reason);
}

function adopt(clientId: string, tokens: TokenResponse): void {
  access = tokens.access_token;
  refresh = tokens.refresh_token;
  session = { clientId, scopes: new Set(tokens.scope.split(' ').filter(Boolean)) };
  clearTimeout(timer);
  timer = setTimeout(() => void refreshNow(), refreshAfter(tokens.expires_in * 1000));
  announce();
}

function forget(reason?: string): void {
  clearTimeout(timer);
  access = null;
  refresh = null;
  session = null;
  announce(reason);
}

/** Reads an OAuth error (RFC 6749 §5.2) or a problem document into a Problem. */
async function problemOf(res: Response): Promise<Problem> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON: the status says enough.
  }
  if (typeof body['error'] === 'string') {
    return {
      status: res.status,
      title: body['error'],
      detail: typeof body['error_description'] === 'string' ? body['error_description'] : body['error'],
    };
  }
  return {
    status: res.status,
    title: typeof body['title'] === 'string' ? body['title'] : res.statusText || `HTTP ${res.status}`,
    detail: typeof body['detail'] === 'string' ? body['detail'] : '',
    ...(typeof body['code'] === 'string' ? { code: body['code'] } : {}),
    ...(Array.isArray(body['errors']) ? { errors: body['errors'] as Problem['errors'] } : {}),
    ...(typeof body['request_id'] === 'string' ? { request_id: body['request_id'] } : {}),
  };
}

async function tokenCall(path: string, body: Record<string, string>): Promise<TokenResponse> {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  if (!res.ok) throw new ApiError(await problemOf(res));
  return (await res.json()) as TokenResponse;
}

export async function signIn(clientId: string, clientSecret: string): Promise<Session> {
  const tokens = await tokenCall('/v1/auth/token', {
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  adopt(clientId, tokens);
  return session!;
}

/** Rotates the refresh token for a new access token; false (and signed out) when that fails. */
export function refreshNow(): Promise<boolean> {
  if (!refresh || !session) return Promise.resolve(false);
  const clientId = session.clientId;
  const presented = refresh;
  refreshing ??= tokenCall('/v1/auth/refresh', { refresh_token: presented })
    .then((tokens) => {
      adopt(clientId, tokens);
      return true;
    })
    .catch(() => {
      if (refresh === presented) forget('Your session ended: sign in again.');
      return false;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

export async function signOut(): Promise<void> {
  const token = refresh;
  const bearer = access;
  forget();
  if (!token || !bearer) return;
  try {
    await fetch('/v1/auth/revoke', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ token, token_type_hint: 'refresh_token' }),
      credentials: 'omit',
    });
  } catch {
    // Signed out here either way; the tokens lapse on their own.
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** One API call as the signed-in client; a 401 is answered by one refresh and one retry. */
export async function call<T>(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  options: { query?: Query; body?: unknown; signal?: AbortSignal } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    if (!access) {
      throw new ApiError({ status: 401, title: 'Signed out', detail: 'Sign in to continue.' });
    }
    const res = await fetch(withQuery(path, options.query), {
      method,
      headers: {
        Accept: 'application/json',
        Authorization: `Bearer ${access}`,
        ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      credentials: 'omit',
      cache: 'no-store',
    });
    if (res.status === 401 && attempt === 0 && (await refreshNow())) continue;
    if (!res.ok) throw new ApiError(await problemOf(res));
    return (await res.json()) as T;
  }
}

export const get = <T>(path: string, query?: Query, signal?: AbortSignal): Promise<T> =>
  call<T>('GET', path, { ...(query ? { query } : {}), ...(signal ? { signal } : {}) });

export const post = <T>(path: string, body: unknown, query?: Query): Promise<T> =>
  call<T>('POST', path, { body, ...(query ? { query } : {}) });

/** Path segment encoding for ids and resource identifiers. */
export const seg = (value: string): string => encodeURIComponent(value);
