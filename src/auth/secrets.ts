import {
  createHash,
  randomBytes,
  scrypt as scryptCb,
  timingSafeEqual,
  type ScryptOptions,
} from 'node:crypto';

function scrypt(secret: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCb(secret, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

const KEY_LENGTH = 32;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;

/** A high-entropy credential: 32 random bytes, base64url, behind a recognisable prefix. */
export function generateSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

function options(cost: number): ScryptOptions {
  const N = 2 ** cost;
  // scrypt needs 128 * N * r bytes; leave headroom above Node's 32 MiB default.
  return { N, r: BLOCK_SIZE, p: PARALLELISM, maxmem: 256 * N * BLOCK_SIZE + 1024 * 1024 };
}

/** Slow, salted hash for client secrets: `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`. */
export async function hashSecret(secret: string, cost: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(secret, salt, KEY_LENGTH, options(cost));
  return [
    'scrypt',
    cost,
    BLOCK_SIZE,
    PARALLELISM,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, cost, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !cost || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const N = 2 ** Number(cost);
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), expected.length, {
    N,
    r: Number(r),
    p: Number(p),
    maxmem: 256 * N * Number(r) + 1024 * 1024,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * Spends the same time as a real verification, for unknown client ids, so that response time
 * does not reveal which ids exist.
 */
export async function verifyNothing(cost: number): Promise<false> {
  await scrypt('not-a-secret', randomBytes(16), KEY_LENGTH, options(cost));
  return false;
}

/** Fast digest for random tokens (their entropy, not the hash, is what resists guessing). */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
