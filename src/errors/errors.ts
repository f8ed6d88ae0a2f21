/**
 * Domain errors: thrown by services and repositories without any knowledge of HTTP. Each carries
 * a stable `code`; the HTTP edge (src/http/problems.ts) decides the status and headers.
 */
export interface FieldError {
  pointer: string;
  message: string;
}

export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'MALFORMED_JSON',
  'UNAUTHENTICATED',
  'INSUFFICIENT_SCOPE',
  'PRINCIPAL_MANAGED_BY_CONNECTOR',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'PRINCIPAL_DELETED',
  'PRECONDITION_FAILED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'REFERENCE_NOT_FOUND',
  'CYCLE_DETECTED',
  'DELEGATION_NOT_ALLOWED',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface AppErrorOptions {
  errors?: FieldError[];
  /** For temporary conditions: how long the caller should wait before trying again. */
  retryAfterS?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly errors: FieldError[] | undefined;
  readonly retryAfterS: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.errors = options.errors;
    this.retryAfterS = options.retryAfterS;
  }
}

export const validationFailed = (message: string, errors: FieldError[]): AppError =>
  new AppError('VALIDATION_FAILED', message, { errors });

export const notFound = (what: string, id: string): AppError =>
  new AppError('NOT_FOUND', `${what} ${id} does not exist`);

export const conflict = (message: string): AppError => new AppError('CONFLICT', message);

export const unavailable = (message: string, retryAfterS: number, cause?: unknown): AppError =>
  new AppError('UNAVAILABLE', message, { retryAfterS, cause });
