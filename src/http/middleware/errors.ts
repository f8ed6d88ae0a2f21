import { Stream } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { OAuthError } from '../../auth/oauth-error.js';
import { ScimError } from '../../scim/errors.js';
import type { Logger } from '../../logging/logger.js';
import {
  authzenError,
  oneLine,
  oauthHeaders,
  oauthStatus,
  problemBody,
  problemHeaders,
  scimError,
  STATUS_OF,
  toAppError,
} from '../problems.js';
import { stateOf } from '../state.js';

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/**
 * A JSON body becomes its text once, here: Koa would otherwise serialise it when responding, after
 * every middleware has returned, where a body that cannot be serialised escapes this handler (a
 * bare 500); and again for `ctx.length`, which the access log reads.
 */
function serialise(ctx: Context): void {
  const body: unknown = ctx.body;
  if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && !(body instanceof Stream)) {
    ctx.body = JSON.stringify(body);
  }
}

/**
 * The one place errors become responses: RFC 9457 problem details, RFC 6749 §5.2 for the OAuth
 * endpoints, the SCIM error schema under `/scim/v2`, or the plain error messages of the AuthZEN
 * endpoints. 5xx bodies never carry
 * internal messages; the cause is logged with the request id instead.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      serialise(ctx);
    } catch (raw) {
      if (
        raw instanceof ScimError ||
        stateOf(ctx).route?.errors === 'scim' ||
        (!stateOf(ctx).route && ctx.path.startsWith('/scim/'))
      ) {
        const { status, body } = scimError(ctx, raw);
        if (status >= 500) (stateOf(ctx).log ?? logger).error({ err: raw }, 'request failed');
        if (!(raw instanceof ScimError)) ctx.set(problemHeaders(toAppError(raw)));
        if (!ctx.req.complete) ctx.set('Connection', 'close');
        ctx.status = status;
        ctx.type = 'application/scim+json';
        ctx.body = body;
        return;
      }
      if (raw instanceof OAuthError) {
        ctx.set(NO_STORE);
        ctx.set(oauthHeaders(raw));
        ctx.status = oauthStatus(raw);
        ctx.body = { error: raw.error, error_description: raw.description };
        return;
      }
      const error = toAppError(raw);
      const status = STATUS_OF[error.code];
      const log = stateOf(ctx).log ?? logger;
      if (status >= 500) {
        log.error(
          { err: error.code === 'INTERNAL' ? raw : (error.cause ?? raw), code: error.code },
          'request failed',
        );
      }
      ctx.set(problemHeaders(error));
      // A body left unread (too large, wrong type) would be taken as the next request on a
      // kept-alive connection: close it instead.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      if (stateOf(ctx).route?.errors === 'authzen') {
        const answer = authzenError(ctx, error);
        ctx.status = answer.status;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = answer.message;
        return;
      }
      ctx.status = status;
      const oauth = stateOf(ctx).route?.errors === 'oauth';
      if (oauth && status < 500 && error.code !== 'RATE_LIMITED') {
        ctx.set(NO_STORE);
        ctx.body = {
          error: status === 401 ? 'invalid_client' : 'invalid_request',
          error_description: oneLine(ctx, error),
        };
        return;
      }
      ctx.body = problemBody(ctx, error);
      ctx.type = 'application/problem+json';
    } finally {
      // The error bodies made above are plain data (a success's body is text by now).
      serialise(ctx);
    }
  };
}
