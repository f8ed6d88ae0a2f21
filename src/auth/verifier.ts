import jwt, { type JwtPayload } from 'jsonwebtoken';
import type { Revocations } from './revocations.js';
import type { SigningKeys } from './signing-keys.js';

/** The caller of an authenticated request, as its access token says. */
export interface AuthContext {
  clientId: string;
  scopes: ReadonlySet<string>;
  tokenId: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Why a bearer token was refused; the message goes into `WWW-Authenticate` and the problem detail. */
export class InvalidTokenError extends Error {
  override name = 'InvalidTokenError';
}

export const CLOCK_TOLERANCE_S = 30;
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt']);

export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

export interface VerifierSettings {
  issuer: string;
  audience: string;
  /** Verified tokens remembered (0: check every signature). */
  cacheSize: number;
}

/**
 * Checks bearer access tokens without a database round trip: the signature against the signing
 * keys held in memory, the claims, and the in-memory revocation view. A token verified once is
 * remembered until it expires (least recently used ones make room), so a client that sends the
 * same token again and again costs a map lookup and a revocation check, not a signature check.
 */
export class TokenVerifier {
  private readonly verified = new Map<string, AuthContext>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly revocations: Revocations,
    private readonly settings: VerifierSettings,
  ) {}

  async verify(token: string): Promise<AuthContext> {
    const known = this.verified.get(token);
    const context = known ?? (await this.check(token));
    if (context.expiresAt + CLOCK_TOLERANCE_S * 1000 <= Date.now()) {
      this.verified.delete(token);
      throw new InvalidTokenError('the access token has expired');
    }
    if (this.revocations.isRevoked(context.tokenId, context.clientId)) {
      this.verified.delete(token);
      throw new InvalidTokenError('the access token has been revoked');
    }
    if (known) {
      // Most recently used last, so that eviction takes the oldest.
      this.verified.delete(token);
      this.verified.set(token, known);
    } else if (this.settings.cacheSize > 0) {
      if (this.verified.size >= this.settings.cacheSize) {
        this.verified.delete(this.verified.keys().next().value!);
      }
      this.verified.set(token, context);
    }
    return context;
  }

  /** Forgets tokens that expired. */
  prune(now = Date.now()): void {
    for (const [token, context] of this.verified) {
      if (context.expiresAt + CLOCK_TOLERANCE_S * 1000 <= now) this.verified.delete(token);
    }
  }

  private async check(token: string): Promise<AuthContext> {
    if (!looksLikeJwt(token)) throw new InvalidTokenError('the access token is malformed');
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload === 'string')
      throw new InvalidTokenError('the access token is malformed');
    const { header } = decoded;
    if (typeof header.typ !== 'string' || !ACCESS_TOKEN_TYPES.has(header.typ.toLowerCase())) {
      throw new InvalidTokenError('the token is not an access token (typ must be at+jwt)');
    }
    if (typeof header.kid !== 'string') throw new InvalidTokenError('the access token names no signing key');
    const key = await this.keys.verificationKey(header.kid);
    if (!key) throw new InvalidTokenError('the access token is signed with an unknown key');
    let claims: JwtPayload;
    try {
      claims = jwt.verify(token, key.publicKey, {
        algorithms: [key.alg],
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
      }) as JwtPayload;
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'TokenExpiredError') throw new InvalidTokenError('the access token has expired');
      if (name === 'NotBeforeError') throw new InvalidTokenError('the access token is not valid yet');
      throw new InvalidTokenError(`the access token is invalid: ${(err as Error).message}`);
    }
    const { sub, jti, scope, iat, exp } = claims;
    if (
      typeof sub !== 'string' ||
      claims['client_id'] !== sub ||
      typeof jti !== 'string' ||
      typeof scope !== 'string' ||
      typeof iat !== 'number' ||
      typeof exp !== 'number'
    ) {
      throw new InvalidTokenError('the access token lacks required claims');
    }
    if (iat > Date.now() / 1000 + CLOCK_TOLERANCE_S)
      throw new InvalidTokenError('the access token is not valid yet');
    return { clientId: sub, scopes: new Set(scope.split(' ')), tokenId: jti, expiresAt: exp * 1000 };
  }
}
