import { STATUS_CODES } from 'node:http';
import type { Context } from 'koa';
import type { OAuthError } from '../auth/oauth-error.js';
import { AppError, type AppErrorOptions, type ErrorCode } from '../errors/errors.js';
import { ScimError, type ScimType } from '../scim/errors.js';
import { ERROR_SCHEMA } from '../scim/schema.js';
import { stateOf } from './state.js';

/** The HTTP status of each error code: the one place the two vocabularies meet. */
export const STATUS_OF: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  MALFORMED_JSON: 400,
  UNAUTHENTICATED: 401,
  INSUFFICIENT_SCOPE: 403,
  PRINCIPAL_MANAGED_BY_CONNECTOR: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PRINCIPAL_DELETED: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  REFERENCE_NOT_FOUND: 422,
  CYCLE_DETECTED: 422,
  DELEGATION_NOT_ALLOWED: 422,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** An error raised by the HTTP edge itself, with the headers its status calls for. */
export class HttpError extends AppError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly headers: Record<string, string>,
    options: AppErrorOptions = {},
  ) {
    super(code, message, options);
  }
}

/** Headers that go with an error: its own (edge errors) and `Retry-After` for temporary ones. */
export function problemHeaders(error: AppError): Record<string, string> {
  return {
    ...(error instanceof HttpError ? error.headers : {}),
    ...(error.retryAfterS !== undefined ? { 'Retry-After': String(error.retryAfterS) } : {}),
  };
}

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

/** RFC 9457 problem details for an error; 5xx bodies never carry internal messages. */
export function problemBody(ctx: Context, error: AppError): Record<string, unknown> {
  const status = STATUS_OF[error.code];
  const body: Record<string, unknown> = {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail: error.code === 'INTERNAL' ? 'an internal error occurred; quote the request id' : error.message,
    instance: ctx.path,
    code: error.code,
    request_id: stateOf(ctx).requestId,
  };
  if (error.errors && error.errors.length > 0) body['errors'] = error.errors;
  return body;
}

/**
 * An error said in one line, for formats without a list of field errors (OAuth, AuthZEN, SCIM):
 * the message with the first field error; an internal error says only which request to quote.
 */
export function oneLine(ctx: Context, error: AppError): string {
  if (error.code === 'INTERNAL')
    return `an internal error occurred; quote the request id ${stateOf(ctx).requestId}`;
  const first = error.errors?.[0];
  return first ? `${error.message}: ${first.pointer || '/'} ${first.message}` : error.message;
}

/**
 * An error of an AuthZEN operation: the standard knows 400 for any request it cannot read (a
 * media type other than JSON included), and its body is an error message.
 */
export function authzenError(ctx: Context, error: AppError): { status: number; message: string } {
  const status = error.code === 'UNSUPPORTED_MEDIA_TYPE' ? 400 : STATUS_OF[error.code];
  return { status, message: oneLine(ctx, error) };
}

/**
 * RFC 6749 §5.2: failed client authentication is 401, throttled authentication 429 (with
 * `Retry-After`), every other error 400.
 */
export function oauthStatus(error: OAuthError): number {
  if (error.error === 'invalid_client') return 401;
  if (error.error === 'temporarily_unavailable') return 429;
  return 400;
}

/** The realm of the service's authentication challenges. */
export const REALM = 'principals-access-service';

/** `Retry-After` for throttling, and the Basic challenge when Basic client authentication failed. */
export function oauthHeaders(error: OAuthError): Record<string, string> {
  return {
    ...(error.options.retryAfterS !== undefined ? { 'Retry-After': String(error.options.retryAfterS) } : {}),
    ...(error.error === 'invalid_client' && error.options.viaBasic
      ? { 'WWW-Authenticate': `Basic realm="${REALM}", charset="UTF-8"` }
      : {}),
  };
}

const SCIM_TYPE_OF: Partial<Record<ErrorCode, ScimType>> = {
  VALIDATION_FAILED: 'invalidSyntax',
  MALFORMED_JSON: 'invalidSyntax',
  CONFLICT: 'uniqueness',
  REFERENCE_NOT_FOUND: 'invalidValue',
  CYCLE_DETECTED: 'invalidValue',
};

/**
 * An error under `/scim/v2` in the SCIM error schema (RFC 7644 §3.12): `status` as a string,
 * `scimType` where the RFC has one. Errors of the contract keep their status, except the 422s,
 * which SCIM says as 400 `invalidValue`.
 */
export function scimError(ctx: Context, err: unknown): { status: number; body: Record<string, unknown> } {
  if (err instanceof ScimError) {
    const body: Record<string, unknown> = {
      schemas: [ERROR_SCHEMA],
      status: String(err.status),
      detail: err.message,
    };
    if (err.scimType) body['scimType'] = err.scimType;
    return { status: err.status, body };
  }
  const error = toAppError(err);
  const status = STATUS_OF[error.code] === 422 ? 400 : STATUS_OF[error.code];
  // A filter the query's schema refuses (too long) is a filter the service provider cannot take.
  const badFilter =
    error.code === 'VALIDATION_FAILED' && (error.errors ?? []).some((e) => e.pointer === '/query/filter');
  const scimType = badFilter ? 'invalidFilter' : SCIM_TYPE_OF[error.code];
  return {
    status,
    body: {
      schemas: [ERROR_SCHEMA],
      status: String(status),
      ...(scimType ? { scimType } : {}),
      detail: oneLine(ctx, error),
    },
  };
}
