import { Type } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { OAuthServer } from '../../auth/oauth.js';
import type { SigningKeys } from '../../auth/signing-keys.js';
import { RefreshRequest, RevokeRequest, TokenRequest, TokenResponseSchema } from '../../schemas/clients.js';
import { requestMeta } from '../context.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { stateOf } from '../state.js';

interface AuthDeps {
  oauth: OAuthServer;
  keys: SigningKeys;
}

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** Error statuses of the OAuth endpoints; their bodies follow RFC 6749 §5.2 (see the builder). */
const oauthResponses = {
  400: {
    description:
      'RFC 6749 §5.2 error (`invalid_request`, `invalid_grant`, `unsupported_grant_type`, `invalid_scope`)',
  },
  401: { description: 'Client authentication failed (`invalid_client`)' },
  429: {
    description:
      'Too many requests (problem details, `RATE_LIMITED`), or too many failed client authentications (`temporarily_unavailable`)',
  },
};

export function authRoutes(deps: AuthDeps): AnyRoute[] {
  const revoke = async ({
    ctx,
    body,
  }: {
    ctx: Context;
    body: Record<string, string | undefined> | undefined;
  }) => {
    const state = stateOf(ctx);
    await deps.oauth.revoke(body, {
      authorization: ctx.get('Authorization') || undefined,
      meta: requestMeta(ctx),
      bearer: { caller: state.auth, error: state.authError },
    });
    return { body: {}, headers: NO_STORE };
  };

  const revokeSpec = {
    tags: ['Authentication'],
    auth: 'public' as const,
    identifiesCaller: true,
    rateLimit: 'standard' as const,
    errors: 'oauth' as const,
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
      errors: 'oauth' as const,
      body: TokenRequest,
      bodyTypes: ['form', 'json'],
      responses: { 200: { description: 'Tokens issued', schema: TokenResponseSchema }, ...oauthResponses },
      handler: async ({ ctx, body }) => ({
        body: await deps.oauth.token(body as Record<string, string | undefined>, {
          authorization: ctx.get('Authorization') || undefined,
          meta: requestMeta(ctx),
        }),
        headers: NO_STORE,
      }),
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
      errors: 'oauth' as const,
      body: RefreshRequest,
      bodyTypes: ['json', 'form'],
      responses: { 200: { description: 'Tokens issued', schema: TokenResponseSchema }, ...oauthResponses },
      handler: async ({ ctx, body }) => ({
        body: await deps.oauth.refresh(body.refresh_token, body.scope, requestMeta(ctx)),
        headers: NO_STORE,
      }),
    }),
    defineRoute({
      ...revokeSpec,
      method: 'POST',
      path: '/v1/auth/revoke',
      operationId: 'revokeTokenPost',
      summary: 'Revoke a token (RFC 7009)',
      handler: revoke,
    }),
    defineRoute({
      ...revokeSpec,
      method: 'DELETE',
      path: '/v1/auth/revoke',
      operationId: 'revokeToken',
      summary: 'Revoke a token',
      handler: revoke,
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
        body: deps.oauth.metadata(),
        headers: { 'Cache-Control': 'public, max-age=300' },
      }),
    }),
  ];
}
