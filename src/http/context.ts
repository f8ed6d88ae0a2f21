import type { Context } from 'koa';
import type { OperationContext, RequestMeta } from '../audit/audit.js';
import { AppError } from '../errors/errors.js';
import { stateOf, type AuthContext } from './state.js';

export function requestMeta(ctx: Context): RequestMeta {
  return {
    requestId: stateOf(ctx).requestId,
    sourceIp: ctx.ip || null,
    userAgent: ctx.get('User-Agent') || null,
  };
}

/** The authenticated caller; operations that require a scope always have one. */
export function callerOf(ctx: Context): AuthContext {
  const auth = stateOf(ctx).auth;
  if (!auth) throw new AppError('UNAUTHENTICATED', 'authentication required');
  return auth;
}

/** Actor and request details for the audit trail of a mutation made through the API. */
export function operationContext(ctx: Context): OperationContext {
  return { actor: { type: 'client', id: callerOf(ctx).clientId }, meta: requestMeta(ctx) };
}

export function pagination(total: number, page: number, limit: number) {
  return { total, page, per_page: limit, pages: Math.ceil(total / limit) };
}
