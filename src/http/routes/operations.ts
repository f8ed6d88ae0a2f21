import { Type } from '@sinclair/typebox';
import { unavailable } from '../../errors/errors.js';
import type { Metrics } from '../../metrics.js';
import { SERVICE_VERSION } from '../../version.js';
import { carriesMetricsToken, METRICS_CHALLENGE } from '../../metrics-server.js';
import { HttpError } from '../problems.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { header } from '../state.js';

const Version = Type.String({ description: "The service's version (its package.json's)", minLength: 1 });

const Health = Type.Object(
  { status: Type.Literal('ok'), version: Version },
  { additionalProperties: false, title: 'Health' },
);

const Readiness = Type.Object(
  {
    status: Type.Literal('ready'),
    version: Version,
    checks: Type.Object({ neo4j: Type.Literal('up') }, { additionalProperties: false }),
  },
  { additionalProperties: false, title: 'Readiness' },
);

export function operationRoutes(deps: {
  /** Whether the database answers now. */
  databaseUp: () => Promise<boolean>;
  metrics: Metrics;
  /** True once shutdown has begun. */
  draining: () => boolean;
  openapi: () => Record<string, unknown>;
  /**
   * How this port serves /metrics: `undefined` (the default) or `{ token }` serves it, behind the
   * bearer token when one is given (METRICS_TOKEN); `false` leaves it to METRICS_PORT's listener.
   */
  metricsHere?: { token: string | undefined } | false;
}): AnyRoute[] {
  const metricsHere = deps.metricsHere ?? { token: undefined };
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      tags: ['Operations'],
      auth: 'public',
      rateLimit: 'none',
      responses: { 200: { description: 'The process is alive', schema: Health } },
      handler: () => ({ body: { status: 'ok', version: SERVICE_VERSION } as const }),
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      operationId: 'getReadiness',
      summary: 'Readiness: the database answers and the service is not shutting down',
      tags: ['Operations'],
      auth: 'public',
      rateLimit: 'none',
      responses: {
        200: { description: 'Ready to serve', schema: Readiness },
        503: { description: 'Not ready (`UNAVAILABLE`)' },
      },
      handler: async () => {
        if (deps.draining()) throw unavailable('the service is shutting down', 5);
        if (!(await deps.databaseUp())) throw unavailable('the database is unreachable', 5);
        return { body: { status: 'ready', version: SERVICE_VERSION, checks: { neo4j: 'up' } } as const };
      },
    }),
    ...(metricsHere ? [metricsRoute(deps.metrics, metricsHere.token)] : []),
    defineRoute({
      method: 'GET',
      path: '/v1/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This API described as OpenAPI 3.1',
      tags: ['Operations'],
      auth: 'public',
      rateLimit: 'standard',
      responses: {
        200: { description: 'The OpenAPI document', schema: Type.Object({}, { additionalProperties: true }) },
      },
      handler: () => ({ body: deps.openapi() }),
    }),
  ];
}

/** `GET /metrics` on the API's port, open or behind the bearer token `token`. */
function metricsRoute(metrics: Metrics, token: string | undefined): AnyRoute {
  return defineRoute({
    method: 'GET',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      'Open unless METRICS_TOKEN is set: then the request must carry that token as its bearer token. ' +
      'With METRICS_PORT it is served on that port instead, and this port answers 404.',
    tags: ['Operations'],
    auth: 'public',
    rateLimit: 'none',
    responses: {
      200: { description: 'Prometheus text exposition format', contentType: 'text/plain; version=0.0.4' },
      401: { description: 'METRICS_TOKEN is set and the request does not carry it (`UNAUTHENTICATED`)' },
    },
    handler: async ({ ctx }) => {
      if (token !== undefined && !carriesMetricsToken(header(ctx, 'authorization'), token)) {
        throw new HttpError(
          'UNAUTHENTICATED',
          'a scrape of /metrics needs the bearer token METRICS_TOKEN holds',
          {
            'WWW-Authenticate': METRICS_CHALLENGE,
          },
        );
      }
      ctx.set('Cache-Control', 'no-store');
      ctx.type = metrics.registry.contentType;
      ctx.body = await metrics.registry.metrics();
      return undefined;
    },
  });
}
