import type { Middleware } from 'koa';
import { serverSpan, SpanStatusCode, tracing } from '../../tracing/tracing.js';
import { stateOf } from '../state.js';

/**
 * The server span of every request, installed only when the service traces: a child of the
 * caller's `traceparent` when it sends one, named by the operation's route template once the
 * request is routed (`POST /v1/decisions/evaluate`), and current while the request runs, so the
 * transactions and decisions it makes are its children.
 */
export const traceRequests: Middleware = (ctx, next) =>
  !tracing()
    ? next()
    : serverSpan(
        ctx.req.headers,
        ctx.method,
        { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol },
        async (span) => {
          try {
            await next();
          } finally {
            const state = stateOf(ctx);
            const route = state.routeTemplate;
            if (route) {
              span.updateName(`${ctx.method} ${route}`);
              span.setAttribute('http.route', route);
            }
            span.setAttribute('http.response.status_code', ctx.status);
            if (state.requestId) span.setAttribute('pas.request_id', state.requestId);
            if (state.auth) span.setAttribute('pas.client_id', state.auth.clientId);
            if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
          }
        },
      );
