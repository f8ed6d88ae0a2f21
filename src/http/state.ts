import type { Context } from 'koa';
import type { AuthContext } from '../auth/verifier.js';
import type { ScimCaller } from '../connectors/model.js';
import type { Logger } from '../logging/logger.js';
import type { AnyRoute } from './route.js';

/** What the middleware chain records on `ctx.state`, typed in one place. */
export interface RequestState {
  requestId: string;
  log: Logger;
  route?: AnyRoute;
  routeTemplate?: string;
  allowedMethods?: string[];
  /** Path parameters of the matched operation, decoded. */
  params?: Record<string, string>;
  input?: { params?: unknown; query?: unknown; body?: unknown };
  bodyPresent?: boolean;
  auth?: AuthContext;
  /** The connector a SCIM request comes from, as its bearer token says. */
  connector?: ScimCaller;
  /** Why the bearer token was refused, when it was. */
  authError?: string;
}

export function stateOf(ctx: Context): RequestState {
  const state: RequestState = ctx.state;
  return state;
}

/**
 * A request header straight from Node's parsed headers (lower-case `name`), '' when absent: what
 * `ctx.get` answers, without Koa's delegation on paths every request takes.
 */
export function header(ctx: Context, name: string): string {
  const value = ctx.req.headers[name];
  return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
}
