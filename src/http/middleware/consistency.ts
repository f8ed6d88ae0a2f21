import type { Middleware } from 'koa';
import type { ConsistencyTokens } from '../../consistency/tokens.js';
import { header } from '../state.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The API surfaces whose writes answer a token: the REST API and SCIM. */
function answersTokens(path: string): boolean {
  return path.startsWith('/v1/') || path.startsWith('/scim/v2/');
}

/**
 * Consistency tokens at the HTTP edge: a request that sends one back (`Consistency-Token`) is
 * served once this instance is at least as fresh as the write that answered it, and every
 * successful write answers one.
 */
export function consistency(tokens: ConsistencyTokens): Middleware {
  return async (ctx, next) => {
    const sent = header(ctx, 'consistency-token');
    if (sent !== '') await tokens.await(sent);
    await next();
    const status = ctx.status;
    if (status >= 200 && status < 300 && WRITES.has(ctx.method) && answersTokens(ctx.path)) {
      ctx.res.setHeader('Consistency-Token', tokens.issue());
    }
  };
}
