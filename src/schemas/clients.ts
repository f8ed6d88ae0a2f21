import { Type } from '@sinclair/typebox';
import { SCOPES, type Scope } from '../vocabulary/scopes.js';
import { Id, PageQuery, Paginated, Timestamp } from './common.js';

/**
 * A typed enum rather than a union of literals: ajv checks `uniqueItems` over items of a known
 * scalar type in linear time, but over untyped items it compares every pair, deeply, so a list
 * of a million entries or of two deeply nested arrays would hold the process or overflow its stack.
 */
export const ScopeSchema = Type.Unsafe<Scope>({
  type: 'string',
  enum: [...SCOPES],
  title: 'Scope',
  description: 'An API scope',
});

const clientFields = {
  id: Id('client'),
  name: Type.String(),
  scopes: Type.Array(ScopeSchema),
  status: Type.Union([Type.Literal('active'), Type.Literal('deleted')]),
  created_at: Timestamp,
  created_by: Type.String({ description: 'Client id of the creator, or `system`' }),
  deleted_at: Type.Optional(Timestamp),
  deleted_by: Type.Optional(Type.String()),
};

export const ClientSchema = Type.Object(clientFields, { additionalProperties: false, title: 'Client' });

export const CreatedClient = Type.Object(
  {
    ...clientFields,
    client_secret: Type.String({ description: 'Shown only in this response; store it now' }),
  },
  { additionalProperties: false, title: 'CreatedClient' },
);

export const CreateClientBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[^\\u0000-\\u001f]*\\S[^\\u0000-\\u001f]*$',
    }),
    scopes: Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
  },
  { additionalProperties: false, title: 'CreateClient' },
);

export const ClientListQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('deleted')], { default: 'active' })),
});

export const ClientList = Paginated(ClientSchema, 'ClientList');

export const DeletedClient = Type.Object(
  { id: Id('client'), status: Type.Literal('deleted'), deleted_at: Timestamp, deleted_by: Type.String() },
  { additionalProperties: false, title: 'DeletedClient' },
);

export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String({ description: 'RFC 9068 JWT' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds' }),
    scope: Type.String({ description: 'Space-separated scopes granted' }),
    refresh_token: Type.String(),
  },
  { additionalProperties: false, title: 'TokenResponse' },
);

export const OAuthErrorSchema = Type.Object(
  { error: Type.String(), error_description: Type.Optional(Type.String()) },
  { additionalProperties: false, title: 'OAuthError', description: 'RFC 6749 §5.2 error response' },
);

/** Token endpoint parameters: every value a single string (a repeated parameter is an error). */
export const TokenRequest = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), {
  maxProperties: 32,
  title: 'TokenRequest',
  description:
    '`grant_type` = `client_credentials` (with client authentication and optional `scope`) or `refresh_token` (with `refresh_token`, optional `scope`). Client authentication by HTTP Basic or `client_id`/`client_secret`.',
});

export const RefreshRequest = Type.Object(
  {
    refresh_token: Type.String({ minLength: 1, maxLength: 4096 }),
    scope: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false, title: 'RefreshRequest' },
);

export const RevokeRequest = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 4096 }),
    token_type_hint: Type.Optional(Type.String({ maxLength: 64 })),
    client_id: Type.Optional(Type.String({ maxLength: 256 })),
    client_secret: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false, title: 'RevokeRequest' },
);
