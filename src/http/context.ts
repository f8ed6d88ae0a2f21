import type { Context } from 'koa';
import type { OperationContext, RequestMeta } from '../audit/audit.js';
import type { AuthContext } from '../auth/verifier.js';
import { AppError } from '../errors/errors.js';
import type { Paged } from '../pagination.js';
import { currentTraceparent, wellFormedTraceparent } from '../tracing/tracing.js';
import { header, stateOf } from './state.js';

export function requestMeta(ctx: Context): RequestMeta {
  return {
    requestId: stateOf(ctx).requestId,
    sourceIp: ctx.ip || null,
    userAgent: ctx.get('User-Agent') || null,
    traceparent: currentTraceparent(wellFormedTraceparent(header(ctx, 'traceparent'))),
  };
}

/** The authenticated caller; operations that require a scope always have one. */
function callerOf(ctx: Context): AuthContext {
  const auth = stateOf(ctx).auth;
  if (!auth) throw new AppError('UNAUTHENTICATED', 'authentication required');
  return auth;
}

/** Actor and request details for the audit trail of a mutation made through the API. */
export function operationContext(ctx: Context): OperationContext {
  return { actor: { type: 'client', id: callerOf(ctx).clientId }, meta: requestMeta(ctx) };
}

/** A page of a list as the API answers it: `{ data, pagination }`. */
export function listBody<T, U = T>(paged: Paged<T>, view?: (item: T) => U) {
  const { total, items, page } = paged;
  return {
    data: view ? items.map(view) : items,
    pagination: { total, page: page.page, per_page: page.limit, pages: Math.ceil(total / page.limit) },
  };
}
