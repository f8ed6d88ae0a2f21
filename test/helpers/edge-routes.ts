import { Type } from '@sinclair/typebox';
import type { Database } from '../../src/db/database.js';
import { defineRoute, type AnyRoute } from '../../src/http/route.js';
import { Id } from '../../src/schemas/common.js';

export interface EdgeHooks {
  /** Runs when a request to `/v1/_edge/slow` arrives; the request goes on once it settles. */
  onSlow?: () => Promise<void>;
}

/**
 * Operations that exist only in the test suite's app, to drive the HTTP edge (parsing,
 * validation, errors, shutdown) independently of any resource.
 */
export function edgeRoutes(db: () => Database, hooks: EdgeHooks = {}): AnyRoute[] {
  const Echo = Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 256 }),
      attributes: Type.Optional(
        Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())])),
      ),
    },
    { additionalProperties: false },
  );
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/_edge/echo/{id}',
      operationId: 'edgeEcho',
      summary: 'Echo (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      params: Type.Object({ id: Id('principal') }),
      query: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        flag: Type.Optional(Type.Boolean()),
      }),
      body: Echo,
      responses: {
        201: {
          description: 'Echoed',
          schema: Type.Object(
            { id: Type.String(), query: Type.Any(), body: Echo },
            { additionalProperties: false },
          ),
        },
      },
      handler: ({ params, query, body }) => ({ status: 201, body: { id: params.id, query, body } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/_edge/db',
      operationId: 'edgeDb',
      summary: 'Database round trip (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      responses: { 200: { description: 'ok', schema: Type.Object({ ok: Type.Integer() }) } },
      handler: async () => {
        const rows = await db().run<{ ok: number }>('system/ping');
        return { body: { ok: rows[0]!.ok } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/_edge/boom',
      operationId: 'edgeBoom',
      summary: 'Unexpected failure (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      responses: { 200: { description: 'never' } },
      handler: () => {
        throw new Error('internal detail: connection string bolt://secret@db/');
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/_edge/leak',
      operationId: 'edgeLeak',
      summary: 'A response breaking its schema (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      responses: {
        200: {
          description: 'ok',
          schema: Type.Object({ id: Type.String() }, { additionalProperties: false }),
        },
      },
      handler: () => ({ body: { id: 'x', secret_hash: 'scrypt$...' } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/_edge/slow',
      operationId: 'edgeSlow',
      summary: 'A slow request (test only)',
      tags: ['Test'],
      auth: 'public',
      rateLimit: 'standard',
      query: Type.Object({ ms: Type.Integer({ minimum: 0, maximum: 10_000 }) }),
      responses: { 200: { description: 'ok', schema: Type.Object({ waited: Type.Integer() }) } },
      handler: async ({ query }) => {
        await hooks.onSlow?.();
        // A request that takes `ms` to answer: the slowness is what the caller asked for.
        await new Promise((r) => setTimeout(r, query.ms));
        return { body: { waited: query.ms } };
      },
    }),
  ];
}
