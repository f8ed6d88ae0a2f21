import type { Reader } from '../db/database.js';
import type { ChangeEvent } from '../events/feed.js';
import { tokenRepository as repo } from './repository.js';

/**
 * Which unexpired access tokens no longer count: revoked ones (one by one, or with their family)
 * and those of deleted clients. Kept in memory so that checking a token needs no database round
 * trip; loaded at start and kept current from the change feed (`token.revoked`,
 * `client.deleted`), at once on the instance that revokes and within the feed's delay on the
 * others. Entries are dropped once the tokens they cover have expired.
 */
export class Revocations {
  /** Revoked token id → when the token expires (epoch ms). */
  private readonly tokens = new Map<string, number>();
  /** Deleted client → until when its tokens may still be presented (epoch ms). */
  private readonly clients = new Map<string, number>();

  constructor(
    private readonly db: Reader,
    /** The longest an access token lives, ms. */
    private readonly accessTtlMs: number,
    /** How long after its expiry a token is still accepted (clock skew), ms. */
    private readonly toleranceMs: number,
  ) {}

  isRevoked(tokenId: string, clientId: string): boolean {
    return this.tokens.has(tokenId) || this.clients.has(clientId);
  }

  async load(): Promise<void> {
    const now = new Date().toISOString();
    const [tokens, clients] = await Promise.all([
      repo.revokedAccess(this.db, now),
      repo.deletedClients(this.db, new Date(Date.now() - this.accessTtlMs).toISOString()),
    ]);
    for (const t of tokens) this.tokens.set(t.jti, Date.parse(t.expiresAt));
    for (const c of clients) this.clients.set(c.id, Date.parse(c.deletedAt) + this.accessTtlMs);
  }

  /** The change-feed listener. */
  readonly onChange = async (event: ChangeEvent): Promise<void> => {
    if (event.type === 'client.deleted') {
      this.clients.set(event.target.id, Date.parse(event.occurred_at) + this.accessTtlMs);
    } else if (event.type === 'token.revoked' && event.target.type === 'access_token') {
      this.tokens.set(event.target.id, Date.parse(event.occurred_at) + this.accessTtlMs);
    } else if (event.type === 'token.revoked' && event.target.type === 'token_family') {
      const rows = await repo.familyAccess(this.db, event.target.id);
      for (const t of rows) this.tokens.set(t.jti, Date.parse(t.expiresAt));
    }
  };

  /** Forgets what only covers expired tokens. */
  prune(now = Date.now()): void {
    const before = now - this.toleranceMs;
    for (const [jti, until] of this.tokens) if (until < before) this.tokens.delete(jti);
    for (const [id, until] of this.clients) if (until < before) this.clients.delete(id);
  }
}
