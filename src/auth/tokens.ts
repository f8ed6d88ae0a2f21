import { randomBytes } from 'node:crypto';
import jwt, { type JwtPayload } from 'jsonwebtoken';
import { SYSTEM_CONTEXT, type OperationContext } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import type { EventSink } from '../events/sink.js';
import type { Logger } from '../logging/logger.js';
import { OAuthError } from './oauth-error.js';
import { tokenRepository as repo } from './repository.js';
import { generateSecret, sha256 } from './secrets.js';
import type { SigningKeys } from './signing-keys.js';
import { looksLikeJwt } from './verifier.js';
import type { Static } from '@sinclair/typebox';
import type { TokenResponseSchema } from '../schemas/clients.js';

export interface TokenSettings {
  issuer: string;
  audience: string;
  accessTtlS: number;
  refreshTtlDays: number;
}

/** What the token endpoint answers. */
export type TokenResponse = Static<typeof TokenResponseSchema>;

/** Scopes asked for (space-separated) within those allowed; nothing asked means all of them. */
export function narrowScope(requested: string | undefined, allowed: readonly string[]): string[] {
  if (requested === undefined || requested.trim() === '') return [...allowed];
  const asked = [...new Set(requested.split(' ').filter(Boolean))];
  const outside = asked.filter((s) => !allowed.includes(s));
  if (outside.length > 0) {
    throw new OAuthError('invalid_scope', `scope not granted to this client: ${outside.join(' ')}`);
  }
  return asked;
}

type RefreshOutcome =
  | { kind: 'ok'; clientId: string; scope: string[]; jti: string; refreshToken: string }
  | { kind: 'invalid'; reason: string }
  | { kind: 'reuse' }
  | { kind: 'bad_scope'; error: OAuthError };

/**
 * OAuth tokens: RFC 9068 access tokens signed with the shared keys, and opaque refresh tokens
 * kept only as digests. Every token is recorded, so that it can be revoked one by one, with its
 * family or with its client; each revocation is an audit event, which is how every instance's
 * revocation view (src/auth/revocations.ts) learns of it.
 */
export class TokenService {
  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
    private readonly keys: SigningKeys,
    private readonly settings: TokenSettings,
    private readonly logger: Logger,
  ) {}

  /** client_credentials: a new family for an authenticated client. */
  async issueForClient(
    client: { id: string; scopes: readonly string[] },
    requestedScope?: string,
  ): Promise<TokenResponse> {
    const scope = narrowScope(requestedScope, client.scopes);
    const jti = this.newJti();
    const refreshToken = generateSecret('pas_rt_');
    const now = Date.now();
    const created = await this.db.write('tokens/create_family', (tx) =>
      repo.createFamily(tx, {
        clientId: client.id,
        familyId: this.newJti(),
        scope,
        jti,
        refreshHash: sha256(refreshToken),
        accessExpiresAt: new Date(now + this.settings.accessTtlS * 1000).toISOString(),
        refreshExpiresAt: new Date(now + this.settings.refreshTtlDays * 86_400_000).toISOString(),
      }),
    );
    if (!created) throw new OAuthError('invalid_client', 'client authentication failed');
    return this.respond(client.id, scope, jti, refreshToken, now);
  }

  /**
   * Rotation (RFC 9700): the presented refresh token is spent and a new pair issued. Presenting
   * an already-rotated token revokes the whole family, since one of the two holders is not the
   * legitimate client.
   */
  async refresh(
    refreshToken: string,
    options: { clientId?: string; scope?: string },
    op: OperationContext,
  ): Promise<TokenResponse> {
    const hash = sha256(refreshToken);
    const now = Date.now();
    const outcome = await this.db.write<RefreshOutcome>('tokens/refresh', async (tx) => {
      if (!(await repo.lockRefresh(tx, hash))) return { kind: 'invalid', reason: 'unknown' };
      const row = await repo.findRefresh(tx, hash);
      if (!row) return { kind: 'invalid', reason: 'unknown' };
      if (options.clientId !== undefined && row.clientId !== options.clientId) {
        return { kind: 'invalid', reason: 'issued to another client' };
      }
      if (row.status === 'rotated' && row.familyStatus === 'active') {
        await repo.revokeFamily(tx, row.familyId, 'refresh_token_reuse');
        this.events.record(
          tx,
          { ...op, actor: SYSTEM_CONTEXT.actor },
          {
            type: 'token.revoked',
            target: { type: 'token_family', id: row.familyId },
            reason: 'refresh_token_reuse',
            changes: { status: { from: 'active', to: 'revoked' } },
          },
        );
        return { kind: 'reuse' };
      }
      if (row.status !== 'active' || row.familyStatus !== 'active' || row.clientStatus !== 'active') {
        return { kind: 'invalid', reason: 'revoked' };
      }
      if (row.expired) return { kind: 'invalid', reason: 'expired' };
      let scope: string[];
      try {
        scope = narrowScope(options.scope, row.scope);
      } catch (err) {
        return { kind: 'bad_scope', error: err as OAuthError };
      }
      const jti = this.newJti();
      const next = generateSecret('pas_rt_');
      await repo.rotateRefresh(tx, row.familyId, hash, {
        jti,
        newHash: sha256(next),
        accessExpiresAt: new Date(now + this.settings.accessTtlS * 1000).toISOString(),
        refreshExpiresAt: new Date(now + this.settings.refreshTtlDays * 86_400_000).toISOString(),
      });
      return { kind: 'ok', clientId: row.clientId, scope, jti, refreshToken: next };
    });
    switch (outcome.kind) {
      case 'ok':
        return this.respond(outcome.clientId, outcome.scope, outcome.jti, outcome.refreshToken, now);
      case 'bad_scope':
        throw outcome.error;
      case 'reuse':
        this.logger.warn('refresh token reuse detected; token family revoked');
        throw new OAuthError('invalid_grant', 'refresh token was already used; its token family is revoked');
      case 'invalid':
        throw new OAuthError('invalid_grant', `refresh token is invalid (${outcome.reason})`);
    }
  }

  /**
   * RFC 7009 revocation. Unknown tokens are accepted silently; a token of another client is
   * refused unless the caller administers clients. Revoking a refresh token revokes its family.
   */
  async revoke(
    token: string,
    hint: string | undefined,
    caller: { clientId: string; admin: boolean },
    op: OperationContext,
  ): Promise<void> {
    const order = hint === 'refresh_token' ? ['refresh', 'access'] : ['access', 'refresh'];
    for (const kind of order) {
      const done =
        kind === 'access'
          ? await this.revokeAccess(token, caller, op)
          : await this.revokeRefresh(token, caller, op);
      if (done) return;
    }
  }

  /** Revokes one access token by id (the caller's own token, when it revokes itself). */
  async revokeOwnAccessToken(jti: string, op: OperationContext): Promise<void> {
    await this.db.write('tokens/revoke_self', async (tx) => {
      if (await repo.revokeAccess(tx, jti)) {
        this.events.record(tx, op, {
          type: 'token.revoked',
          target: { type: 'access_token', id: jti },
          changes: { status: { from: 'active', to: 'revoked' } },
        });
      }
    });
  }

  /** Forgets tokens that expired more than a day ago (a periodic job). */
  async purge(batch = 5_000): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await this.db.write('tokens/purge_expired', (tx) => repo.purgeExpired(tx, batch));
      total += removed;
      if (removed < batch) return total;
    }
  }

  private async revokeAccess(
    token: string,
    caller: { clientId: string; admin: boolean },
    op: OperationContext,
  ): Promise<boolean> {
    if (!looksLikeJwt(token)) return false;
    const decoded = jwt.decode(token, { complete: true });
    const kid = decoded?.header.kid;
    if (!decoded || typeof decoded.payload === 'string' || typeof kid !== 'string') return false;
    const key = await this.keys.verificationKey(kid);
    if (!key) return false;
    let claims: JwtPayload;
    try {
      // An expired token may still be revoked; only its signature has to be ours.
      claims = jwt.verify(token, key.publicKey, {
        algorithms: [key.alg],
        ignoreExpiration: true,
      }) as JwtPayload;
    } catch {
      return false;
    }
    const jti = claims.jti;
    if (typeof jti !== 'string') return false;
    return this.db.write('tokens/revoke', async (tx) => {
      const found = await repo.findAccess(tx, jti);
      if (!found) return false;
      this.assertMayRevoke(found.clientId, caller);
      if (found.status !== 'revoked') {
        await repo.revokeAccess(tx, jti);
        this.events.record(tx, op, {
          type: 'token.revoked',
          target: { type: 'access_token', id: jti },
          changes: { status: { from: found.status, to: 'revoked' } },
        });
      }
      return true;
    });
  }

  private async revokeRefresh(
    token: string,
    caller: { clientId: string; admin: boolean },
    op: OperationContext,
  ): Promise<boolean> {
    const hash = sha256(token);
    return this.db.write('tokens/revoke', async (tx) => {
      const found = await repo.findRefresh(tx, hash);
      if (!found) return false;
      this.assertMayRevoke(found.clientId, caller);
      if (found.familyStatus !== 'revoked') {
        await repo.revokeFamily(tx, found.familyId, 'revoked');
        this.events.record(tx, op, {
          type: 'token.revoked',
          target: { type: 'token_family', id: found.familyId },
          changes: { status: { from: found.familyStatus, to: 'revoked' } },
        });
      }
      return true;
    });
  }

  private assertMayRevoke(owner: string, caller: { clientId: string; admin: boolean }): void {
    if (owner !== caller.clientId && !caller.admin) {
      throw new OAuthError('unauthorized_client', 'the token was issued to another client');
    }
  }

  private newJti(): string {
    return randomBytes(16).toString('base64url');
  }

  private respond(
    clientId: string,
    scope: string[],
    jti: string,
    refreshToken: string,
    now: number,
  ): TokenResponse {
    const { kid, alg, privateKey } = this.keys.current();
    const iat = Math.floor(now / 1000);
    const accessToken = jwt.sign(
      {
        iss: this.settings.issuer,
        sub: clientId,
        client_id: clientId,
        aud: this.settings.audience,
        scope: scope.join(' '),
        iat,
        exp: iat + this.settings.accessTtlS,
        jti,
      },
      privateKey,
      { algorithm: alg, keyid: kid, header: { alg, typ: 'at+jwt', kid } },
    );
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: this.settings.accessTtlS,
      scope: scope.join(' '),
      refresh_token: refreshToken,
    };
  }
}
