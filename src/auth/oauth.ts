import type { OperationContext, RequestMeta } from '../audit/audit.js';
import type { ClientService } from './clients.js';
import { OAuthError } from './oauth-error.js';
import { SCOPES } from '../vocabulary/scopes.js';
import type { TokenResponse, TokenService } from './tokens.js';
import type { AuthContext } from './verifier.js';

/** Parameters of a token or revocation request (form-encoded or JSON), every value one string. */
export type OAuthParams = Record<string, string | undefined>;

interface ClientCredentials {
  id: string;
  secret: string;
  viaBasic: boolean;
}

/** What an OAuth endpoint knows of its request besides its parameters. */
export interface OAuthRequest {
  /** The `Authorization` header, if any. */
  authorization: string | undefined;
  meta: RequestMeta;
}

/** RFC 6749 §2.3.1: Basic credentials are form-encoded before base64. */
function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_request', 'malformed client credentials in the Authorization header');
  }
}

/** The client's credentials from HTTP Basic or the parameters; using both is an error (RFC 6749 §2.3). */
export function clientCredentials(
  authorization: string | undefined,
  params: OAuthParams,
): ClientCredentials | undefined {
  const basic = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0)
      throw new OAuthError('invalid_request', 'malformed client credentials in the Authorization header');
    const id = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    if (
      params['client_secret'] !== undefined ||
      (params['client_id'] !== undefined && params['client_id'] !== id)
    ) {
      throw new OAuthError('invalid_request', 'use one client authentication method, not several');
    }
    return { id, secret, viaBasic: true };
  }
  if (params['client_id'] !== undefined) {
    if (params['client_secret'] === undefined) {
      throw new OAuthError('invalid_client', 'client authentication failed: client_secret is missing');
    }
    return { id: params['client_id'], secret: params['client_secret'], viaBasic: false };
  }
  return undefined;
}

/**
 * The OAuth 2.0 authorization server: the token endpoint's grants (RFC 6749), refresh-token
 * rotation (RFC 9700), revocation (RFC 7009) and metadata (RFC 8414). The HTTP routes only parse
 * requests and render answers.
 */
export class OAuthServer {
  constructor(
    private readonly clients: ClientService,
    private readonly tokens: TokenService,
    private readonly issuer: string,
  ) {}

  /** The token endpoint: `client_credentials` and `refresh_token` grants. */
  async token(params: OAuthParams, request: OAuthRequest): Promise<TokenResponse> {
    const grant = params['grant_type'];
    if (!grant) throw new OAuthError('invalid_request', 'grant_type is required');
    const credentials = clientCredentials(request.authorization, params);
    if (grant === 'client_credentials') {
      if (!credentials) throw new OAuthError('invalid_client', 'client authentication is required');
      const client = await this.authenticate(credentials, request.meta);
      return this.tokens.issueForClient(client, params['scope']);
    }
    if (grant === 'refresh_token') {
      const refreshToken = params['refresh_token'];
      if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
      const client = credentials ? await this.authenticate(credentials, request.meta) : undefined;
      return this.tokens.refresh(
        refreshToken,
        {
          ...(client ? { clientId: client.id } : {}),
          ...(params['scope'] !== undefined ? { scope: params['scope'] } : {}),
        },
        { actor: { type: 'client', id: client?.id ?? 'unknown' }, meta: request.meta },
      );
    }
    throw new OAuthError('unsupported_grant_type', `grant_type ${grant} is not supported`);
  }

  /** `/auth/refresh`: a refresh token alone, no client authentication. */
  refresh(refreshToken: string, scope: string | undefined, meta: RequestMeta): Promise<TokenResponse> {
    return this.tokens.refresh(refreshToken, scope !== undefined ? { scope } : {}, {
      actor: { type: 'client', id: 'unknown' },
      meta,
    });
  }

  /**
   * RFC 7009. The caller authenticates with client credentials or its bearer token. Without
   * parameters, the bearer token revokes itself (a token that no longer works has nothing left
   * to revoke).
   */
  async revoke(
    params: OAuthParams | undefined,
    request: OAuthRequest & { bearer: { caller: AuthContext | undefined; error: string | undefined } },
  ): Promise<void> {
    const { caller: bearer, error: bearerError } = request.bearer;
    if (!params) {
      if (!/^Bearer /i.test(request.authorization ?? '')) {
        throw new OAuthError(
          'invalid_request',
          'give a token to revoke, or send the bearer token to revoke itself',
        );
      }
      if (bearer) {
        await this.tokens.revokeOwnAccessToken(bearer.tokenId, this.context(bearer.clientId, request.meta));
      }
      return;
    }
    const token = params['token'];
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    let caller: { clientId: string; admin: boolean };
    const credentials = clientCredentials(request.authorization, params);
    if (credentials) {
      const client = await this.authenticate(credentials, request.meta);
      caller = { clientId: client.id, admin: client.scopes.includes('clients:admin') };
    } else if (bearer) {
      caller = { clientId: bearer.clientId, admin: bearer.scopes.has('clients:admin') };
    } else {
      throw new OAuthError(
        'invalid_client',
        bearerError ? `client authentication failed: ${bearerError}` : 'client authentication is required',
      );
    }
    await this.tokens.revoke(
      token,
      params['token_type_hint'],
      caller,
      this.context(caller.clientId, request.meta),
    );
  }

  /** RFC 8414 authorization server metadata. */
  metadata(): { issuer: string; [member: string]: unknown } {
    const issuer = this.issuer;
    return {
      issuer,
      token_endpoint: `${issuer}/v1/auth/token`,
      revocation_endpoint: `${issuer}/v1/auth/revoke`,
      jwks_uri: `${issuer}/v1/auth/jwks.json`,
      grant_types_supported: ['client_credentials', 'refresh_token'],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: [...SCOPES],
      service_documentation: `${issuer}/v1/openapi.json`,
    };
  }

  private context(clientId: string, meta: RequestMeta): OperationContext {
    return { actor: { type: 'client', id: clientId }, meta };
  }

  private async authenticate(credentials: ClientCredentials, meta: RequestMeta) {
    try {
      return await this.clients.authenticate(credentials.id, credentials.secret, meta);
    } catch (err) {
      if (err instanceof OAuthError && err.error === 'invalid_client' && credentials.viaBasic) {
        throw new OAuthError(err.error, err.description, { ...err.options, viaBasic: true });
      }
      throw err;
    }
  }
}
