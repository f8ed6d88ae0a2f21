import type { Middleware } from 'koa';
import { InvalidTokenError, type TokenVerifier } from '../../auth/verifier.js';
import type { ConnectorService } from '../../connectors/service.js';
import { HttpError, REALM } from '../problems.js';
import { header, stateOf } from '../state.js';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

function quoted(text: string): string {
  return text.replace(/["\\]/g, '');
}

/**
 * Identifies the caller from its bearer token for operations that need one: an API client's
 * access token, or on the SCIM operations a connector's token. A refused token is only noted
 * here: rate limiting runs next (counting the caller by address) and `authorize` then answers
 * 401, so that the 401 carries the rate-limit headers too.
 */
export function authenticate(tokens: TokenVerifier, connectors: ConnectorService): Middleware {
  return async (ctx, next) => {
    const state = stateOf(ctx);
    const route = state.route;
    if (!route || (route.auth === 'public' && !route.identifiesCaller)) {
      await next();
      return;
    }
    const authorization = header(ctx, 'authorization');
    if (authorization && !/^Basic /i.test(authorization)) {
      const match = BEARER.exec(authorization);
      if (!match) {
        state.authError = 'the Authorization header does not hold a Bearer token';
      } else if (route.auth === 'connector') {
        state.connector = await connectors.authenticate(match[1]!);
        if (!state.connector) state.authError = 'the token is not the SCIM token of an active connector';
      } else {
        try {
          state.auth = await tokens.verify(match[1]!);
        } catch (err) {
          if (!(err instanceof InvalidTokenError)) throw err;
          state.authError = err.message;
        }
      }
    }
    await next();
  };
}

/** Enforces the operation's scope: 401 without a valid token, 403 without the scope (RFC 6750). */
export const authorize: Middleware = async (ctx, next) => {
  const state = stateOf(ctx);
  const route = state.route;
  if (route && route.auth !== 'public') {
    if (route.auth === 'connector' ? !state.connector : !state.auth) {
      const detail =
        state.authError ??
        (route.auth === 'connector'
          ? "a connector's SCIM bearer token is required"
          : 'a bearer access token is required');
      throw new HttpError('UNAUTHENTICATED', detail, {
        'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_token", error_description="${quoted(detail)}"`,
      });
    }
    if (route.auth !== 'connector' && !state.auth!.scopes.has(route.auth.scope)) {
      const { scope } = route.auth;
      throw new HttpError('INSUFFICIENT_SCOPE', `this operation needs the ${scope} scope`, {
        'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${scope}"`,
      });
    }
  }
  await next();
};
