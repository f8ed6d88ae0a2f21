/**
 * An error of the OAuth 2.0 endpoints, answered as RFC 6749 §5.2 `{ error, error_description }`
 * rather than problem details. The HTTP edge picks the status and headers from what it says.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'
  | 'temporarily_unavailable';

export interface OAuthErrorOptions {
  /** For `temporarily_unavailable`: seconds until the caller may try again. */
  retryAfterS?: number;
  /** The client authenticated with HTTP Basic, so a failure answers with a Basic challenge. */
  viaBasic?: boolean;
}

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly options: OAuthErrorOptions = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}
