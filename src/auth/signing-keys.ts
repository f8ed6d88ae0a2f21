import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import type { Database } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { decrypt, encrypt } from './key-encryption.js';
import { signingKeyRepository as repo, type SigningAlg, type StoredKey } from './repository.js';

export type { SigningAlg } from './repository.js';

interface LoadedKey {
  kid: string;
  alg: SigningAlg;
  status: 'active' | 'retired';
  createdAt: string;
  publicKey: KeyObject;
  publicJwk: Record<string, unknown>;
  privateKey: KeyObject | undefined;
}

export interface SigningKeyOptions {
  alg: SigningAlg;
  rotationDays: number;
  /** Retired keys stay published this long, so tokens they signed keep verifying. */
  retainRetiredS: number;
  kek: Buffer;
  logger: Logger;
}

export class KeyDecryptionError extends Error {
  override name = 'KeyDecryptionError';
}

/**
 * Token signing keys, persisted in Neo4j (private halves encrypted) so that restarts and every
 * instance share them. Instances refresh periodically (a task of the runtime) and whenever a
 * token names an unknown kid, which is how a key created by another instance becomes known here.
 */
export class SigningKeys {
  private keys = new Map<string, LoadedKey>();
  private active: LoadedKey | undefined;
  private lastReload = 0;
  private reloading: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly options: SigningKeyOptions,
  ) {}

  /**
   * Loads the keys and creates the first (or a due) active key. Run at start and then
   * periodically: a key created by another instance becomes known here that way too.
   */
  async refresh(): Promise<void> {
    await this.reload();
    await this.rotateIfDue();
  }

  /** The key new tokens are signed with. */
  current(): { kid: string; alg: SigningAlg; privateKey: KeyObject } {
    const key = this.active;
    if (!key?.privateKey) throw new Error('no active signing key loaded');
    return { kid: key.kid, alg: key.alg, privateKey: key.privateKey };
  }

  /** A verification key by id, reloading (at most every few seconds) when it is not known yet. */
  async verificationKey(kid: string): Promise<{ alg: SigningAlg; publicKey: KeyObject } | undefined> {
    let key = this.keys.get(kid);
    if (!key && Date.now() - this.lastReload > 5_000) {
      await this.reload();
      key = this.keys.get(kid);
    }
    return key ? { alg: key.alg, publicKey: key.publicKey } : undefined;
  }

  /** The public keys as a JWK Set (RFC 7517). */
  jwks(): { keys: Record<string, unknown>[] } {
    return { keys: [...this.keys.values()].map((k) => k.publicJwk) };
  }

  /** Creates a new active key when there is none or the active one is older than the rotation period. */
  async rotateIfDue(): Promise<void> {
    const { alg, kek, rotationDays } = this.options;
    const freshAfter = new Date(Date.now() - rotationDays * 86_400_000).toISOString();
    if (this.active && this.active.createdAt > freshAfter) return;
    const kid = randomBytes(12).toString('base64url');
    const pair =
      alg === 'ES256'
        ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
    const publicJwk = { ...pair.publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
    const privatePem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const created = await this.db.write('keys/rotate', (tx) =>
      repo.rotate(
        tx,
        { kid, alg, publicJwk: JSON.stringify(publicJwk), privateKey: encrypt(kek, privatePem, kid) },
        freshAfter,
      ),
    );
    if (created) this.options.logger.info({ kid, alg }, 'new token signing key');
    await this.reload();
  }

  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async load(): Promise<void> {
    const retiredAfter = new Date(Date.now() - this.options.retainRetiredS * 1000).toISOString();
    const stored = await repo.list(this.db, retiredAfter);
    const keys = new Map<string, LoadedKey>();
    let active: LoadedKey | undefined;
    for (const key of stored) {
      const loaded = this.keys.get(key.kid) ?? this.decode(key);
      loaded.status = key.status;
      keys.set(key.kid, loaded);
      if (key.status === 'active' && !active) active = loaded;
    }
    this.keys = keys;
    if (active) this.active = active;
    this.lastReload = Date.now();
  }

  private decode(key: StoredKey): LoadedKey {
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(decrypt(this.options.kek, key.private_key, key.kid));
    } catch (err) {
      throw new KeyDecryptionError(
        `signing key ${key.kid} cannot be decrypted: KEY_ENCRYPTION_KEY differs from the one it was stored with`,
        { cause: err },
      );
    }
    const publicJwk = JSON.parse(key.public_jwk) as Record<string, unknown>;
    return {
      kid: key.kid,
      alg: key.alg,
      status: key.status,
      createdAt: key.created_at,
      publicKey: createPublicKey({ key: publicJwk as never, format: 'jwk' }),
      publicJwk,
      privateKey,
    };
  }
}
