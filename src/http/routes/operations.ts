import { Type } from '@sinclair/typebox';
import { unavailable } from '../../errors/errors.js';
import type { Metrics } from '../../metrics.js';
import { defineRoute, type AnyRoute } from '../route.js';

const Health = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false, title: 'Health' });

const Readiness = Type.Object(
  {
    status: Type.Literal('ready'),
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
}): AnyRoute[] {
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
      handler: () => ({ body: { status: 'ok' } as const }),
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
        return { body: { status: 'ready', checks: { neo4j: 'up' } } as const };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/metrics',
      operationId: 'getMetrics',
      summary: 'Prometheus metrics',
      tags: ['Operations'],
      auth: 'public',
      rateLimit: 'none',
      responses: {
        200: { description: 'Prometheus text exposition format', contentType: 'text/plain; version=0.0.4' },
      },
      handler: async ({ ctx }) => {
        ctx.set('Cache-Control', 'no-store');
        ctx.type = deps.metrics.registry.contentType;
        ctx.body = await deps.metrics.registry.metrics();
        return undefined;
      },
    }),
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
