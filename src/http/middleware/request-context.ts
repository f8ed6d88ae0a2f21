import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { createAccessLog, type Logger } from '../../logging/logger.js';
import type { Metrics } from '../../metrics.js';
import { currentTraceId } from '../../tracing/tracing.js';
import { header, stateOf, type RequestState } from '../state.js';

const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** What an AuthZEN operation echoes: its standard lets the request id be any text. */
const PRINTABLE_REQUEST_ID = /^[\x20-\x7e]{1,256}$/;

/**
 * A request's state, starting with its id and a logger carrying it, made the first time something
 * logs through it: most requests log only their completion line, which names the id itself.
 */
class State {
  private child: Logger | undefined;

  constructor(
    private readonly root: Logger,
    public requestId: string,
  ) {}

  get log(): Logger {
    return (this.child ??= this.root.child({ request_id: this.requestId }));
  }
}

/**
 * Gives every request its id (the caller's when well formed), a child logger carrying it, and
 * one structured log line plus metrics when it ends. Paths are logged without query strings and
 * headers only by allow-list, so no secret reaches the log from a URL or header.
 */
export function requestContext(logger: Logger, metrics: Metrics): Middleware {
  const access = createAccessLog(logger);
  return async (ctx, next) => {
    const incoming = header(ctx, 'x-request-id');
    const requestId = WELL_FORMED_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const state: RequestState = new State(logger, requestId);
    ctx.state = state;
    ctx.res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    metrics.http.inFlight += 1;
    metrics.http.started += 1;
    try {
      await next();
      if (
        stateOf(ctx).route?.errors === 'authzen' &&
        incoming !== requestId &&
        PRINTABLE_REQUEST_ID.test(incoming)
      ) {
        ctx.set('X-Request-Id', incoming);
      }
    } finally {
      metrics.http.inFlight -= 1;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = state.routeTemplate ?? 'unmatched';
      metrics.http.of(ctx.method, route, ctx.status).observe(seconds);
      access({
        request_id: requestId,
        method: ctx.method,
        path: ctx.path,
        route,
        ip: ctx.ip,
        user_agent: header(ctx, 'user-agent') || undefined,
        status: ctx.status,
        length: ctx.length,
        client_id: state.auth?.clientId,
        trace_id: currentTraceId(),
        duration_ms: Math.round(seconds * 1e6) / 1e3,
      });
    }
  };
}
