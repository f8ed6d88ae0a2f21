import Koa, { type Middleware } from 'koa';
import type { Config } from './config/config.js';
import type { Database } from './db/database.js';
import { AppError } from './errors/errors.js';
import { buildOpenApi } from './http/openapi/build.js';
import { errorHandler } from './http/middleware/errors.js';
import { rateLimit } from './http/middleware/rate-limit.js';
import { requestContext } from './http/middleware/request-context.js';
import type { AnyRoute } from './http/route.js';
import { buildRouteTable, type RouteTable } from './http/router.js';
import { stateOf } from './http/state.js';
import { operationRoutes, type Lifecycle } from './http/routes/operations.js';
import type { Logger } from './logging/logger.js';
import type { Metrics } from './metrics.js';
import type { RateLimiter } from './ratelimit/index.js';
import type { Services } from './services.js';
import { authenticate, authorize } from './http/middleware/auth.js';
import { auditRoutes } from './http/routes/audit.js';
import { authRoutes } from './http/routes/auth.js';
import { clientRoutes } from './http/routes/clients.js';
import { principalSearchRoutes } from './http/routes/principal-search.js';
import { groupRoutes } from './http/routes/groups.js';
import { principalRoutes } from './http/routes/principals.js';

export const API_VERSION = '1.0.0';

export interface AppDeps {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  db: Database;
  lifecycle: Lifecycle;
  rateLimiter: RateLimiter;
  services: Services;
  /** Check each response against its schema; tests turn this on. */
  validateResponses?: boolean;
  /** Operations added to the built-in ones (the test suite uses this to exercise the HTTP edge). */
  extraRoutes?: AnyRoute[];
}

export interface App {
  koa: Koa;
  routes: RouteTable;
  openapi: Record<string, unknown>;
}

/** Every operation of the service; the OpenAPI document and the router are built from this list. */
export function allRoutes(deps: AppDeps, openapi: () => unknown): AnyRoute[] {
  return [
    ...operationRoutes({ db: deps.db, metrics: deps.metrics, lifecycle: deps.lifecycle, openapi }),
    ...authRoutes({ ...deps.services, issuer: deps.config.tokens.issuer }),
    ...clientRoutes(deps.services),
    ...auditRoutes(deps.services),
    ...principalSearchRoutes(deps.services),
    ...groupRoutes(deps.services),
    ...principalRoutes(deps.services),
    ...(deps.extraRoutes ?? []),
  ];
}

const securityHeaders: Middleware = async (ctx, next) => {
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (ctx.path.startsWith('/v1/') || ctx.path.startsWith('/scim/')) ctx.set('Cache-Control', 'no-store');
  await next();
};

function resolveRoute(routes: RouteTable): Middleware {
  return async (ctx, next) => {
    const { route, allowed } = routes.resolve(ctx.method, ctx.path);
    const state = stateOf(ctx);
    if (route) {
      state.route = route;
      state.routeTemplate = route.path;
    }
    state.allowedMethods = allowed;
    await next();
  };
}

/** Answers requests no operation took: OPTIONS, 405 with `Allow`, or 404. */
const unmatched: Middleware = async (ctx, next) => {
  await next();
  const state = stateOf(ctx);
  if (state.route || ctx.body !== undefined) return;
  const allowed = (state.allowedMethods ?? []).filter((m) => m !== 'OPTIONS');
  if (allowed.length > 0) {
    const allow = [...allowed, 'OPTIONS'].join(', ');
    ctx.set('Allow', allow);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      return;
    }
    throw new AppError(
      'METHOD_NOT_ALLOWED',
      `${ctx.method} is not allowed on ${ctx.path}; use ${allowed.join(', ')}`,
      {
        headers: { Allow: allow },
      },
    );
  }
  throw new AppError('NOT_FOUND', `no resource at ${ctx.path}`);
};

export function createApp(deps: AppDeps): App {
  let document: Record<string, unknown> = {};
  const routes = buildRouteTable(
    allRoutes(deps, () => document),
    { validateResponses: deps.validateResponses ?? false },
  );
  document = buildOpenApi(routes.routes, {
    title: 'Principals and Access Service',
    version: API_VERSION,
    description:
      'Identity graph and authorization service: principals, groups, policies, access decisions and audit.',
    serverUrl: deps.config.publicBaseUrl,
    tokenUrl: `${deps.config.publicBaseUrl}/v1/auth/token`,
  });

  const koa = new Koa({ proxy: deps.config.trustProxy });
  koa.silent = true;
  koa.on('error', (err: unknown) => deps.logger.error({ err }, 'unhandled error outside a request'));
  koa.use(requestContext(deps.logger, deps.metrics));
  koa.use(errorHandler(deps.logger));
  koa.use(securityHeaders);
  koa.use(unmatched);
  koa.use(resolveRoute(routes));
  koa.use(authenticate(deps.services.tokens));
  koa.use(rateLimit(deps.rateLimiter, deps.config));
  koa.use(authorize);
  koa.use(routes.dispatch);
  return { koa, routes, openapi: document };
}
