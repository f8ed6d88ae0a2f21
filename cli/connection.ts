/**
 * Where the command line finds the service and its credentials, and the client it talks through.
 *
 * `pas login` stores a URL, an API client id and its secret in the user's configuration
 * directory ($XDG_CONFIG_HOME/pas/config.json, else ~/.config/pas/config.json), readable by the
 * user alone. PAS_URL, PAS_CLIENT_ID and PAS_CLIENT_SECRET, when set, take precedence over what
 * is stored, each on its own, so a script or a CI job needs no login at all.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { clientCredentialsToken, createPasClient, type PasClient } from '../clients/typescript/src/index.js';
import { CliError } from './output.js';

/** What `pas login` stores. */
export interface StoredLogin {
  url: string;
  client_id: string;
  client_secret: string;
}

/** Where each setting came from, so that messages can say which one to fix. */
export type SettingSource = 'environment' | 'login';

export interface Settings {
  url: string;
  clientId: string;
  clientSecret: string;
  sources: { url: SettingSource; clientId: SettingSource; clientSecret: SettingSource };
}

/** The environment variables that take precedence over the stored login. */
export const ENVIRONMENT = {
  url: 'PAS_URL',
  clientId: 'PAS_CLIENT_ID',
  clientSecret: 'PAS_CLIENT_SECRET',
} as const;

/** The directory of the command line's configuration. */
export function configDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_CONFIG_HOME'];
  // The XDG base directory specification asks to ignore a relative value.
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env['HOME'] || homedir(), '.config');
  return path.join(base, 'pas');
}

/** The file `pas login` writes. */
export function configFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDirectory(env), 'config.json');
}

/** The stored login, or undefined when there is none. */
export async function readStoredLogin(file = configFile()): Promise<StoredLogin | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError(`${file} is not JSON: run \`pas login\` again, or delete it`);
  }
  const login = value as Partial<StoredLogin> | null;
  if (
    !login ||
    typeof login.url !== 'string' ||
    typeof login.client_id !== 'string' ||
    typeof login.client_secret !== 'string'
  ) {
    throw new CliError(`${file} lacks url, client_id or client_secret: run \`pas login\` again`);
  }
  return { url: login.url, client_id: login.client_id, client_secret: login.client_secret };
}

/**
 * Stores a login: the directory is made readable by the user alone (0700) and the file (0600) is
 * written beside it under another name and then renamed over the old one, so that a secret never
 * sits in a file others may read, nor in a half-written one.
 */
export async function storeLogin(login: StoredLogin, file = configFile()): Promise<string> {
  const directory = path.dirname(file);
  await mkdir(directory, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing directory as it was, and the umask may have narrowed a new one.
  await chmod(directory, 0o700);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
    await chmod(temporary, 0o600);
    await rename(temporary, file);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
  return file;
}

/** Forgets the stored login; answers whether there was one. */
export async function removeStoredLogin(file = configFile()): Promise<boolean> {
  try {
    await rm(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * The settings in force: each environment variable that is set, else the stored login. Fails,
 * saying what to do, when one of the three is found in neither.
 */
export async function resolveSettings(env: NodeJS.ProcessEnv = process.env): Promise<Settings> {
  const fromEnv = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const envUrl = fromEnv(ENVIRONMENT.url);
  const envId = fromEnv(ENVIRONMENT.clientId);
  const envSecret = fromEnv(ENVIRONMENT.clientSecret);
  const stored = envUrl && envId && envSecret ? undefined : await readStoredLogin(configFile(env));
  const url = envUrl ?? stored?.url;
  const clientId = envId ?? stored?.client_id;
  const clientSecret = envSecret ?? stored?.client_secret;
  if (!url || !clientId || !clientSecret) {
    throw new CliError('not logged in: run `pas login`, or set PAS_URL, PAS_CLIENT_ID and PAS_CLIENT_SECRET');
  }
  checkUrl(url, envUrl ? ENVIRONMENT.url : 'the stored login');
  return {
    url,
    clientId,
    clientSecret,
    sources: {
      url: envUrl ? 'environment' : 'login',
      clientId: envId ? 'environment' : 'login',
      clientSecret: envSecret ? 'environment' : 'login',
    },
  };
}

/** Refuses a service URL that is not an absolute http(s) URL, naming where it came from. */
export function checkUrl(url: string, where: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`${where}: ${url} is not a URL (write it as https://pas.example.com)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new CliError(`${where}: ${url} is not an http or https URL`);
  }
}

/** A client of the service for the given settings, signed in by the client credentials grant. */
export async function clientFor(settings: Settings): Promise<PasClient> {
  const token = clientCredentialsToken({
    baseUrl: settings.url,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
  });
  // The first token is asked for now, so that wrong credentials or an unreachable service are
  // reported as such, before any command's own request.
  await token();
  return createPasClient({ baseUrl: settings.url, token });
}

/** The service the settings in force name, with a token obtained for them. */
export async function connect(): Promise<PasClient> {
  return clientFor(await resolveSettings());
}
