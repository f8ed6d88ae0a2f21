import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logging/logger.js';

/**
 * The key that encrypts signing keys at rest: KEY_ENCRYPTION_KEY when configured, otherwise one
 * generated once and kept (mode 0600) under the data directory, which suits a single local
 * installation but not several instances.
 */
export async function resolveKeyEncryptionKey(
  configured: Buffer | undefined,
  dataDir: string,
  logger: Logger,
): Promise<Buffer> {
  if (configured) return configured;
  const file = path.resolve(dataDir, 'secrets', 'key-encryption-key');
  try {
    const existing = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (existing.length === 32) return existing;
    throw new Error(`${file} does not hold 32 bytes of base64`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  logger.warn(
    { file },
    'KEY_ENCRYPTION_KEY is not set: generated a local key for the signing keys; set KEY_ENCRYPTION_KEY when running several instances',
  );
  return key;
}

/** AES-256-GCM with the key id as associated data, so a ciphertext cannot be moved to another key. */
export function encrypt(kek: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    'v1',
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

export function decrypt(kek: Buffer, sealed: string, aad: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !body) throw new Error('unknown sealed key format');
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
