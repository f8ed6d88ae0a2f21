import { STATUS_CODES } from 'node:http';
import type { Context, Middleware } from 'koa';
import { OAuthError } from '../../auth/oauth-error.js';
import { AppError, type ErrorCode } from '../../errors/errors.js';
import type { Logger } from '../../logging/logger.js';
import { stateOf } from '../state.js';

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

/** Errors raised below the service's own code (body parsing, Koa) mapped to the contract's codes. */
function fromHttpError(err: HttpLikeError): AppError | undefined {
  const status = err.status ?? err.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (err.type === 'entity.parse.failed' || (status === 400 && err instanceof SyntaxError)) {
    return new AppError('MALFORMED_JSON', 'the request body is not valid JSON');
  }
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'the request body is larger than 1 MiB');
  if (status === 415 || err.type === 'charset.unsupported' || err.type === 'encoding.unsupported') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', err.message ?? 'unsupported media type');
  }
  const byStatus: Partial<Record<number, ErrorCode>> = { 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED' };
  const code = byStatus[status] ?? 'VALIDATION_FAILED';
  return new AppError(
    code,
    err.expose && err.message ? err.message : (STATUS_CODES[status] ?? 'bad request'),
  );
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return fromHttpError(err as HttpLikeError) ?? new AppError('INTERNAL', 'internal error', { cause: err });
}

export function problemBody(ctx: Context, error: AppError): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'about:blank',
    title: STATUS_CODES[error.status] ?? 'Error',
    status: error.status,
    detail:
      error.status >= 500 && error.code === 'INTERNAL'
        ? 'an internal error occurred; quote the request id'
        : error.message,
    instance: ctx.path,
    code: error.code,
    request_id: stateOf(ctx).requestId,
  };
  if (error.errors && error.errors.length > 0) body['errors'] = error.errors;
  return body;
}

/**
 * The one place errors become responses: RFC 9457 problem details, or RFC 6749 §5.2 for the
 * OAuth endpoints. 5xx bodies never carry internal messages; the cause is logged with the
 * request id instead.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (raw) {
      if (raw instanceof OAuthError) {
        for (const [name, value] of Object.entries(raw.headers)) ctx.set(name, value);
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Pragma', 'no-cache');
        ctx.status = raw.status;
        ctx.body = { error: raw.error, error_description: raw.description };
        return;
      }
      const error = toAppError(raw);
      const log = stateOf(ctx).log ?? logger;
      if (error.status >= 500) {
        log.error(
          { err: error.code === 'INTERNAL' ? raw : (error.cause ?? raw), code: error.code },
          'request failed',
        );
      }
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      // A body left unread (too large, wrong type) would be taken as the next request on a
      // kept-alive connection: close it instead.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      ctx.status = error.status;
      const oauth = stateOf(ctx).route?.oauthErrors;
      if (oauth && error.status < 500 && error.code !== 'RATE_LIMITED') {
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Pragma', 'no-cache');
        ctx.body = {
          error: error.status === 401 ? 'invalid_client' : 'invalid_request',
          error_description: error.errors?.[0]
            ? `${error.message}: ${error.errors[0].pointer || '/'} ${error.errors[0].message}`
            : error.message,
        };
        return;
      }
      ctx.body = problemBody(ctx, error);
      ctx.type = 'application/problem+json';
    }
  };
}
