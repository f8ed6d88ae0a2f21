import path from 'node:path';
import Koa, { type Middleware } from 'koa';
import { settleWindowMs } from '../decisions/record-list.js';
import { projectRoot } from '../paths.js';
import type { Runtime } from '../runtime.js';
import { SERVICE_VERSION } from '../version.js';
import { tracing } from '../tracing/tracing.js';
import { consoleAssets } from './console.js';
import { authenticate, authorize } from './middleware/auth.js';
import { consistency } from './middleware/consistency.js';
import { errorHandler } from './middleware/errors.js';
import { rateLimit } from './middleware/rate-limit.js';
import { traceRequests } from './middleware/tracing.js';
import { requestContext } from './middleware/request-context.js';
import { buildOpenApi } from './openapi/build.js';
import { Conformance } from './openapi/conformance.js';
import { HttpError } from './problems.js';
import type { AnyRoute } from './route.js';
import { buildRouteTable, type RouteTable } from './router.js';
import { accessHistoryRoutes } from './routes/access-history.js';
import { auditRoutes } from './routes/audit.js';
import { authRoutes } from './routes/auth.js';
import { authzenRoutes } from './routes/authzen.js';
import { clientRoutes } from './routes/clients.js';
import { connectorRoutes } from './routes/connectors.js';
import { groupRoutes } from './routes/groups.js';
import { operationRoutes } from './routes/operations.js';
import { decisionRoutes } from './routes/decisions.js';
import { delegationRoutes } from './routes/delegations.js';
import { policyRoutes } from './routes/policies.js';
import { principalSearchRoutes } from './routes/principal-search.js';
import { resourceRoutes } from './routes/resources.js';
import { scimRoutes } from './routes/scim.js';
import { principalRoutes } from './routes/principals.js';
import { reportRoutes } from './routes/reports.js';
import { webhookRoutes } from './routes/webhooks.js';
import { stateOf } from './state.js';

export interface AppOptions {
  /** Check each response against the OpenAPI document; tests turn this on. */
  validateResponses?: boolean;
  /** Told of each response that breaks the OpenAPI document (with `validateResponses`). */
  onContractViolation?: (violation: string) => void;
  /** Operations added to the built-in ones (the test suite uses this to exercise the HTTP edge). */
  extraRoutes?: AnyRoute[];
  /** The built analyst console (default: `dist/console` of the project). */
  consoleDir?: string;
}

export interface App {
  koa: Koa;
  routes: RouteTable;
  openapi: Record<string, unknown>;
  /** With `validateResponses`: every response checked against the OpenAPI document. */
  conformance: Conformance | undefined;
}

/** Every operation of the service; the OpenAPI document and the router are built from this list. */
function allRoutes(
  runtime: Runtime,
  openapi: () => Record<string, unknown>,
  extra: AnyRoute[] = [],
): AnyRoute[] {
  const { services } = runtime;
  return [
    ...operationRoutes({
      databaseUp: () => runtime.db.health.probe(),
      metrics: runtime.metrics,
      draining: () => runtime.draining,
      openapi,
      // With a port of its own (METRICS_PORT), /metrics is not served on this one.
      metricsHere: runtime.config.metrics.port === undefined && { token: runtime.config.metrics.token },
    }),
    ...authRoutes(services),
    ...clientRoutes(services),
    ...connectorRoutes(services, runtime.config.connectors.syncMaxBytes),
    ...auditRoutes(services),
    ...accessHistoryRoutes(services),
    ...reportRoutes(services),
    ...principalSearchRoutes(services),
    ...groupRoutes(services),
    ...principalRoutes(services),
    ...policyRoutes(services),
    ...decisionRoutes(services, {
      settleMs: settleWindowMs(runtime.config.decisions.flushIntervalMs),
    }),
    ...delegationRoutes(services),
    ...resourceRoutes(services),
    ...authzenRoutes(services),
    ...scimRoutes(services),
    ...webhookRoutes(services),
    ...extra,
  ];
}

const securityHeaders: Middleware = async (ctx, next) => {
  ctx.res.setHeader('X-Content-Type-Options', 'nosniff');
  const path = ctx.path;
  if (path.startsWith('/v1/') || path.startsWith('/scim/')) ctx.res.setHeader('Cache-Control', 'no-store');
  await next();
};

function resolveRoute(routes: RouteTable): Middleware {
  return async (ctx, next) => {
    const { route, allowed, params } = routes.resolve(ctx.method, ctx.path);
    const state = stateOf(ctx);
    if (route) {
      state.route = route;
      state.routeTemplate = route.path;
      state.params = params;
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
    throw new HttpError(
      'METHOD_NOT_ALLOWED',
      `${ctx.method} is not allowed on ${ctx.path}; use ${allowed.join(', ')}`,
      { Allow: allow },
    );
  }
  throw new HttpError('NOT_FOUND', `no resource at ${ctx.path}`, {});
};

export function createApp(runtime: Runtime, options: AppOptions = {}): App {
  const { config, logger, metrics } = runtime;
  let document: Record<string, unknown> = {};
  const routes = buildRouteTable(
    allRoutes(runtime, () => document, options.extraRoutes),
    { validateResponses: options.validateResponses ?? false },
  );
  document = buildOpenApi(routes.routes, {
    title: 'Principals and Access Service',
    version: SERVICE_VERSION,
    description:
      'Identity graph and authorization service: principals, groups, policies, access decisions and audit.',
    serverUrl: config.publicBaseUrl,
    tokenUrl: `${config.publicBaseUrl}/v1/auth/token`,
  });

  // Each trusted proxy appends the address it was reached from, so the entry `proxyHops` from
  // the right is the client as the outermost of them saw it; entries further left are whatever
  // the client chose to send and must never count as its address.
  const koa = new Koa({ proxy: config.proxyHops > 0, maxIpsCount: config.proxyHops });
  koa.silent = true;
  const conformance = options.validateResponses
    ? new Conformance(document, options.onContractViolation)
    : undefined;
  if (conformance) koa.use(conformance.middleware());
  koa.on('error', (err: unknown) => logger.error({ err }, 'unhandled error outside a request'));
  if (tracing()) koa.use(traceRequests);
  koa.use(requestContext(logger, metrics));
  koa.use(errorHandler(logger));
  koa.use(securityHeaders);
  koa.use(consoleAssets(options.consoleDir ?? path.join(projectRoot(), 'dist', 'console')));
  koa.use(unmatched);
  koa.use(resolveRoute(routes));
  koa.use(authenticate(runtime.services.verifier, runtime.services.connectors));
  koa.use(rateLimit(runtime.rateLimiting.limiter, config));
  koa.use(authorize);
  koa.use(consistency(runtime.consistency));
  koa.use(routes.dispatch);
  return { koa, routes, openapi: document, conformance };
}
