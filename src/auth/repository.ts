import type { Static } from '@sinclair/typebox';
import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { ClientSchema, DeletedClient } from '../schemas/clients.js';

const ClientQ = defineQueries('clients', [
  'create',
  'get',
  'count',
  'page',
  'lock',
  'count_other_admins',
  'delete',
  'credentials',
  'bootstrap',
]);

const KeyQ = defineQueries('keys', ['list', 'rotate']);

const TokenQ = defineQueries('tokens', [
  'create_family',
  'lock_refresh',
  'find_refresh',
  'rotate_refresh',
  'revoke_family',
  'find_access',
  'revoke_access',
  'purge_expired',
  'revoked_access',
  'family_access',
  'deleted_clients',
]);

export type ClientView = Static<typeof ClientSchema>;
export type DeletedClientView = Static<typeof DeletedClient>;

type StoredClient = Omit<ClientView, 'deleted_at' | 'deleted_by'> & {
  deleted_at?: string | null;
  deleted_by?: string | null;
};

function view(row: StoredClient): ClientView {
  const { deleted_at, deleted_by, ...rest } = row;
  return { ...rest, ...(deleted_at ? { deleted_at } : {}), ...(deleted_by ? { deleted_by } : {}) };
}

/** The unique key behind "client names are unique": compared without case and surrounding space. */
const nameKey = (name: string): string => name.trim().toLowerCase();

export interface NewClient {
  id: string;
  name: string;
  scopes: string[];
  /** The slow hash of the client's secret; the secret itself is never stored. */
  secretHash: string;
}

/** A client as read under its write lock. */
export interface LockedClient {
  id: string;
  scopes: string[];
  status: string;
}

export interface ClientCredentials {
  status: string;
  secretHash: string;
  scopes: string[];
}

/** Named queries over client nodes. */
export const clientRepository = {
  async create(tx: Tx, c: NewClient & { createdBy: string }): Promise<ClientView> {
    const row = await tx.first<{ client: StoredClient }>(ClientQ.create, {
      id: c.id,
      name: c.name,
      nameKey: nameKey(c.name),
      scopes: c.scopes,
      secretHash: c.secretHash,
      createdBy: c.createdBy,
    });
    return view(row!.client);
  },

  async get(tx: Reader, id: string): Promise<ClientView | undefined> {
    const row = await tx.first<{ client: StoredClient }>(ClientQ.get, { id });
    return row ? view(row.client) : undefined;
  },

  async count(tx: Reader, statuses: readonly string[]): Promise<number> {
    const row = await tx.first<{ total: number }>(ClientQ.count, { statuses: [...statuses] });
    return row?.total ?? 0;
  },

  async page(tx: Reader, statuses: readonly string[], page: Page): Promise<ClientView[]> {
    const rows = await tx.run<{ client: StoredClient }>(ClientQ.page, {
      statuses: [...statuses],
      skip: page.skip,
      limit: page.limit,
    });
    return rows.map((r) => view(r.client));
  },

  /** The client under its write lock, for the rest of the transaction. */
  async lock(tx: Tx, id: string): Promise<LockedClient | undefined> {
    const row = await tx.first<{ client: LockedClient }>(ClientQ.lock, { id });
    return row?.client;
  },

  /** How many active clients other than this one hold `clients:admin`. */
  async countOtherAdmins(tx: Tx, id: string): Promise<number> {
    const row = await tx.first<{ admins: number }>(ClientQ.count_other_admins, { id });
    return row?.admins ?? 0;
  },

  /** Marks the client deleted and revokes its tokens. */
  async delete(tx: Tx, id: string, deletedBy: string): Promise<DeletedClientView> {
    const row = await tx.first<{ client: DeletedClientView; revoked: number }>(ClientQ.delete, {
      id,
      deletedBy,
    });
    return row!.client;
  },

  /** What authenticating a client needs: its status, secret hash and scopes. */
  async credentials(tx: Reader, id: string): Promise<ClientCredentials | undefined> {
    return tx.first<ClientCredentials>(ClientQ.credentials, { id });
  },

  /** Creates the client on a store without clients; says whether it did. */
  async bootstrap(tx: Tx, c: NewClient): Promise<boolean> {
    const rows = await tx.run(ClientQ.bootstrap, {
      id: c.id,
      name: c.name,
      nameKey: nameKey(c.name),
      scopes: c.scopes,
      secretHash: c.secretHash,
    });
    return rows.length > 0;
  },
};

export type SigningAlg = 'ES256' | 'RS256';

export interface StoredKey {
  kid: string;
  alg: SigningAlg;
  status: 'active' | 'retired';
  public_jwk: string;
  /** The private key as PKCS#8 PEM, encrypted with the key encryption key. */
  private_key: string;
  created_at: string;
}

export interface NewKey {
  kid: string;
  alg: SigningAlg;
  /** The public JWK, as JSON text. */
  publicJwk: string;
  /** The encrypted private key. */
  privateKey: string;
}

/** Named queries over token signing keys. */
export const signingKeyRepository = {
  /** Keys that may still verify a token: the active one and those retired after `retiredAfter`, newest first. */
  async list(tx: Reader, retiredAfter: string): Promise<StoredKey[]> {
    const rows = await tx.run<{ key: StoredKey }>(KeyQ.list, { retiredAfter });
    return rows.map((r) => r.key);
  },

  /**
   * Stores `key` as the active key, retiring the previous one, unless an active key created after
   * `freshAfter` exists already (another instance rotated first); says whether it did.
   */
  async rotate(tx: Tx, key: NewKey, freshAfter: string): Promise<boolean> {
    const rows = await tx.run<{ kid: string }>(KeyQ.rotate, {
      kid: key.kid,
      alg: key.alg,
      publicJwk: key.publicJwk,
      privateKey: key.privateKey,
      freshAfter,
    });
    return rows.length > 0;
  },
};

export interface NewTokenFamily {
  clientId: string;
  familyId: string;
  scope: string[];
  /** The id of the first access token. */
  jti: string;
  /** The digest of the first refresh token. */
  refreshHash: string;
  accessExpiresAt: string;
  refreshExpiresAt: string;
}

/** A refresh token with its family and client. */
export interface RefreshTokenRow {
  status: string;
  expired: boolean;
  familyId: string;
  familyStatus: string;
  scope: string[];
  clientId: string;
  clientStatus: string;
}

/** The next pair of a family that rotates its refresh token. */
export interface RotatedPair {
  jti: string;
  newHash: string;
  accessExpiresAt: string;
  refreshExpiresAt: string;
}

/** An access token and when it expires. */
export interface AccessTokenExpiry {
  jti: string;
  expiresAt: string;
}

/** Named queries over token families, access tokens and refresh tokens. */
export const tokenRepository = {
  /** Records a new family with its first pair; false when there is no active client of that id. */
  async createFamily(tx: Tx, family: NewTokenFamily): Promise<boolean> {
    const rows = await tx.run(TokenQ.create_family, { ...family });
    return rows.length > 0;
  },

  /** Takes the write lock of a refresh token by digest; false when there is none. */
  async lockRefresh(tx: Tx, hash: string): Promise<boolean> {
    const rows = await tx.run(TokenQ.lock_refresh, { hash });
    return rows.length > 0;
  },

  async findRefresh(tx: Reader, hash: string): Promise<RefreshTokenRow | undefined> {
    return tx.first<RefreshTokenRow>(TokenQ.find_refresh, { hash });
  },

  /** Spends the refresh token `hash` and records the family's next pair. */
  async rotateRefresh(tx: Tx, familyId: string, hash: string, next: RotatedPair): Promise<void> {
    await tx.run(TokenQ.rotate_refresh, { familyId, hash, ...next });
  },

  async revokeFamily(tx: Tx, familyId: string, reason: string): Promise<void> {
    await tx.run(TokenQ.revoke_family, { familyId, reason });
  },

  async findAccess(tx: Reader, jti: string): Promise<{ status: string; clientId: string } | undefined> {
    return tx.first<{ status: string; clientId: string }>(TokenQ.find_access, { jti });
  },

  /** Revokes an access token that is not revoked yet; says whether there was one. */
  async revokeAccess(tx: Tx, jti: string): Promise<boolean> {
    const rows = await tx.run(TokenQ.revoke_access, { jti });
    return rows.length > 0;
  },

  /** Deletes up to `batch` tokens that expired more than a day ago; returns how many. */
  async purgeExpired(tx: Tx, batch: number): Promise<number> {
    const row = await tx.first<{ removed: number }>(TokenQ.purge_expired, { batch });
    return row?.removed ?? 0;
  },

  /** Revoked access tokens that have not expired at `now`. */
  async revokedAccess(tx: Reader, now: string): Promise<AccessTokenExpiry[]> {
    return tx.run<AccessTokenExpiry>(TokenQ.revoked_access, { now });
  },

  /** The access tokens of a family. */
  async familyAccess(tx: Reader, familyId: string): Promise<AccessTokenExpiry[]> {
    return tx.run<AccessTokenExpiry>(TokenQ.family_access, { familyId });
  },

  /** Clients deleted after `since`, with when. */
  async deletedClients(tx: Reader, since: string): Promise<{ id: string; deletedAt: string }[]> {
    return tx.run<{ id: string; deletedAt: string }>(TokenQ.deleted_clients, { since });
  },
};
