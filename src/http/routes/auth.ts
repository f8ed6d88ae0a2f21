import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { ClientService } from '../../auth/clients.js';
import { OAuthError } from '../../auth/oauth-error.js';
import type { SigningKeys } from '../../auth/signing-keys.js';
import type { TokenService } from '../../auth/tokens.js';
import {
  OAuthErrorSchema,
  RefreshRequest,
  RevokeRequest,
  TokenRequest,
  TokenResponseSchema,
} from '../../schemas/clients.js';
import { requestMeta } from '../context.js';
import { REALM } from '../middleware/auth.js';
import { defineRoute, SCOPES, type AnyRoute, type RouteResult } from '../route.js';
import { stateOf } from '../state.js';

interface AuthDeps {
  clients: ClientService;
  tokens: TokenService;
  keys: SigningKeys;
  issuer: string;
}

interface ClientCredentials {
  id: string;
  secret: string;
  basic: boolean;
}

/** RFC 6749 §2.3.1: Basic credentials are form-encoded before base64. */
function formDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new OAuthError('invalid_request', 'malformed client credentials in the Authorization header');
  }
}

/** The client's credentials from HTTP Basic or the body; using both is an error (RFC 6749 §2.3). */
function clientCredentials(
  ctx: Context,
  body: Record<string, string | undefined>,
): ClientCredentials | undefined {
  const basic = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(ctx.get('Authorization'));
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0)
      throw new OAuthError('invalid_request', 'malformed client credentials in the Authorization header');
    const id = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    if (
      body['client_secret'] !== undefined ||
      (body['client_id'] !== undefined && body['client_id'] !== id)
    ) {
      throw new OAuthError('invalid_request', 'use one client authentication method, not several');
    }
    return { id, secret, basic: true };
  }
  if (body['client_id'] !== undefined) {
    if (body['client_secret'] === undefined) {
      throw new OAuthError('invalid_client', 'client authentication failed: client_secret is missing', 401);
    }
    return { id: body['client_id'], secret: body['client_secret'], basic: false };
  }
  return undefined;
}

async function authenticateClient(ctx: Context, deps: AuthDeps, credentials: ClientCredentials) {
  try {
    return await deps.clients.authenticate(credentials.id, credentials.secret, requestMeta(ctx));
  } catch (err) {
    if (err instanceof OAuthError && err.error === 'invalid_client' && credentials.basic) {
      throw new OAuthError(err.error, err.description, 401, {
        'WWW-Authenticate': `Basic realm="${REALM}", charset="UTF-8"`,
      });
    }
    throw err;
  }
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const oauthResponses = {
  400: {
    description:
      'RFC 6749 §5.2 error (`invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`)',
    schema: OAuthErrorSchema,
  },
  401: { description: 'Client authentication failed (`invalid_client`)', schema: OAuthErrorSchema },
  429: {
    description: 'Too many requests, or too many failed client authentications',
    schema: OAuthErrorSchema,
  },
};

export function authRoutes(deps: AuthDeps): AnyRoute[] {
  const tokenEndpoint = async (
    ctx: Context,
    body: Record<string, string | undefined>,
  ): Promise<RouteResult> => {
    const grant = body['grant_type'];
    if (!grant) throw new OAuthError('invalid_request', 'grant_type is required');
    const credentials = clientCredentials(ctx, body);
    if (grant === 'client_credentials') {
      if (!credentials) throw new OAuthError('invalid_client', 'client authentication is required', 401);
      const client = await authenticateClient(ctx, deps, credentials);
      return { body: await deps.tokens.issueForClient(client, body['scope']), headers: NO_STORE };
    }
    if (grant === 'refresh_token') {
      const refreshToken = body['refresh_token'];
      if (!refreshToken) throw new OAuthError('invalid_request', 'refresh_token is required');
      const client = credentials ? await authenticateClient(ctx, deps, credentials) : undefined;
      const tokens = await deps.tokens.refresh(
        refreshToken,
        {
          ...(client ? { clientId: client.id } : {}),
          ...(body['scope'] !== undefined ? { scope: body['scope'] } : {}),
        },
        { actor: { type: 'client', id: client?.id ?? 'unknown' }, meta: requestMeta(ctx) },
      );
      return { body: tokens, headers: NO_STORE };
    }
    throw new OAuthError('unsupported_grant_type', `grant_type ${grant} is not supported`);
  };

  const revokeEndpoint = async (
    ctx: Context,
    body: { token: string; token_type_hint?: string; client_id?: string; client_secret?: string } | undefined,
  ): Promise<RouteResult> => {
    const state = stateOf(ctx);
    const meta = requestMeta(ctx);
    if (!body) {
      // No body: the bearer token of this request revokes itself. A token that no longer works
      // (expired, revoked, not ours) has nothing left to revoke.
      if (!/^Bearer /i.test(ctx.get('Authorization'))) {
        throw new OAuthError(
          'invalid_request',
          'give a token to revoke, or send the bearer token to revoke itself',
        );
      }
      if (state.auth) {
        await deps.tokens.revokeOwnAccessToken(state.auth.tokenId, {
          actor: { type: 'client', id: state.auth.clientId },
          meta,
        });
      }
      return { body: {}, headers: NO_STORE };
    }
    let caller: { clientId: string; admin: boolean };
    const credentials = clientCredentials(ctx, body);
    if (credentials) {
      const client = await authenticateClient(ctx, deps, credentials);
      caller = { clientId: client.id, admin: client.scopes.includes('clients:admin') };
    } else if (state.auth) {
      caller = { clientId: state.auth.clientId, admin: state.auth.scopes.has('clients:admin') };
    } else {
      throw new OAuthError(
        'invalid_client',
        state.authError
          ? `client authentication failed: ${state.authError}`
          : 'client authentication is required',
        401,
      );
    }
    await deps.tokens.revoke(body.token, body.token_type_hint, caller, {
      actor: { type: 'client', id: caller.clientId },
      meta,
    });
    return { body: {}, headers: NO_STORE };
  };

  const revokeSpec = {
    tags: ['Authentication'],
    auth: 'public' as const,
    identifiesCaller: true,
    rateLimit: 'standard' as const,
    oauthErrors: true,
    body: RevokeRequest,
    bodyTypes: ['form', 'json'] as const,
    bodyRequired: false,
    description:
      'RFC 7009. The caller authenticates with its bearer token or with client credentials (HTTP Basic or `client_id`/`client_secret`). Unknown tokens are accepted (200). Revoking a refresh token revokes every token of its family. Without a body, the bearer token of the request revokes itself.',
    responses: {
      200: {
        description: 'Revoked, or nothing to revoke',
        schema: Type.Object({}, { additionalProperties: false }),
      },
      ...oauthResponses,
    },
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/auth/token',
      operationId: 'createToken',
      summary: 'Obtain an access token (OAuth 2.0 token endpoint)',
      description:
        'RFC 6749 token endpoint: `client_credentials` and `refresh_token` grants, form-encoded (or JSON). Errors follow RFC 6749 §5.2. Failed client authentications are throttled per client id and source address.',
      tags: ['Authentication'],
      auth: 'public',
      rateLimit: 'standard',
      oauthErrors: true,
      body: TokenRequest,
      bodyTypes: ['form', 'json'],
      responses: { 200: { description: 'Tokens issued', schema: TokenResponseSchema }, ...oauthResponses },
      handler: ({ ctx, body }) => tokenEndpoint(ctx, body as Record<string, string | undefined>),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/refresh',
      operationId: 'refreshToken',
      summary: 'Refresh an access token (rotates the refresh token)',
      description:
        'Exchanges a refresh token for a new access token and a new refresh token. Presenting a refresh token that was already used revokes its whole token family (RFC 9700).',
      tags: ['Authentication'],
      auth: 'public',
      rateLimit: 'standard',
      oauthErrors: true,
      body: RefreshRequest,
      bodyTypes: ['json', 'form'],
      responses: { 200: { description: 'Tokens issued', schema: TokenResponseSchema }, ...oauthResponses },
      handler: async ({ ctx, body }) => ({
        body: await deps.tokens.refresh(
          body.refresh_token,
          body.scope !== undefined ? { scope: body.scope } : {},
          { actor: { type: 'client', id: 'unknown' }, meta: requestMeta(ctx) },
        ),
        headers: NO_STORE,
      }),
    }),
    defineRoute({
      ...revokeSpec,
      method: 'POST',
      path: '/v1/auth/revoke',
      operationId: 'revokeTokenPost',
      summary: 'Revoke a token (RFC 7009)',
      handler: ({ ctx, body }) => revokeEndpoint(ctx, body),
    }),
    defineRoute({
      ...revokeSpec,
      method: 'DELETE',
      path: '/v1/auth/revoke',
      operationId: 'revokeToken',
      summary: 'Revoke a token',
      handler: ({ ctx, body }) => revokeEndpoint(ctx, body),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/auth/jwks.json',
      operationId: 'getJwks',
      summary: 'Public keys that verify access tokens (JWK Set)',
      tags: ['Authentication'],
      auth: 'public',
      rateLimit: 'standard',
      responses: {
        200: {
          description: 'RFC 7517 JWK Set',
          contentType: 'application/jwk-set+json',
          schema: Type.Object(
            { keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) },
            { additionalProperties: false, title: 'JwkSet' },
          ),
        },
      },
      handler: () => ({ body: deps.keys.jwks(), headers: { 'Cache-Control': 'public, max-age=60' } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      operationId: 'getAuthorizationServerMetadata',
      summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
      tags: ['Authentication'],
      auth: 'public',
      rateLimit: 'none',
      responses: {
        200: {
          description: 'RFC 8414 metadata',
          schema: Type.Object(
            { issuer: Type.String() },
            { additionalProperties: true, title: 'AuthorizationServerMetadata' },
          ),
        },
      },
      handler: () => ({
        body: {
          issuer: deps.issuer,
          token_endpoint: `${deps.issuer}/v1/auth/token`,
          revocation_endpoint: `${deps.issuer}/v1/auth/revoke`,
          jwks_uri: `${deps.issuer}/v1/auth/jwks.json`,
          grant_types_supported: ['client_credentials', 'refresh_token'],
          response_types_supported: [],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          scopes_supported: [...SCOPES],
          service_documentation: `${deps.issuer}/v1/openapi.json`,
        },
        headers: { 'Cache-Control': 'public, max-age=300' },
      }),
    }),
  ];
}
