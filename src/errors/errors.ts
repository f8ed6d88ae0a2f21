/**
 * Domain errors: thrown by services and repositories without any knowledge of HTTP. The error
 * middleware turns each into an RFC 9457 problem using its status and stable `code`.
 */
export interface FieldError {
  pointer: string;
  message: string;
}

export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'MALFORMED_JSON'
  | 'UNAUTHENTICATED'
  | 'INSUFFICIENT_SCOPE'
  | 'PRINCIPAL_MANAGED_BY_CONNECTOR'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PRINCIPAL_DELETED'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'REFERENCE_NOT_FOUND'
  | 'CYCLE_DETECTED'
  | 'RATE_LIMITED'
  | 'UNAVAILABLE'
  | 'INTERNAL';

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
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

export interface AppErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.status = STATUS_OF[code];
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export const validationFailed = (message: string, errors: FieldError[]): AppError =>
  new AppError('VALIDATION_FAILED', message, { errors });

export const notFound = (what: string, id: string): AppError =>
  new AppError('NOT_FOUND', `${what} ${id} does not exist`);

export const conflict = (message: string): AppError => new AppError('CONFLICT', message);

export const unavailable = (message: string, retryAfterSeconds: number, cause?: unknown): AppError =>
  new AppError('UNAVAILABLE', message, { headers: { 'Retry-After': String(retryAfterSeconds) }, cause });
