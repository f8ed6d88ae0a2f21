import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SYSTEM_CONTEXT, type OperationContext, type RequestMeta } from '../audit/audit.js';
import type { Transactions } from '../db/database.js';
import { AppError, conflict, notFound } from '../errors/errors.js';
import type { Page, Paged } from '../pagination.js';
import { SCOPES, type Scope } from '../vocabulary/scopes.js';
import { newId } from '../ids.js';
import type { EventRecorder } from '../events/sink.js';
import type { Logger } from '../logging/logger.js';
import type { AuthFailureGuard } from '../ratelimit/index.js';
import { OAuthError } from './oauth-error.js';
import { clientRepository, type ClientView, type DeletedClientView } from './repository.js';
import { generateSecret, hashSecret, verifyNothing, verifySecret } from './secrets.js';

export type { ClientView, DeletedClientView } from './repository.js';

export interface ClientSettings {
  secretHashCost: number;
  bootstrapId: string | undefined;
  bootstrapSecret: string | undefined;
  /** Where a generated bootstrap secret is written (readable by its owner only), never the log. */
  bootstrapSecretFile: string;
}

/** What the bootstrap secret file holds. */
export interface BootstrapCredentials {
  client_id: string;
  client_secret: string;
}

export class BootstrapFileError extends Error {
  override name = 'BootstrapFileError';
}

/**
 * Writes the bootstrap admin client's credentials to `file`, readable and writable by the
 * service's user alone (0600), in a folder only that user may enter when it has to be made. An
 * existing file is never overwritten: it may hold the only copy of another client's secret.
 */
export async function writeBootstrapFile(file: string, credentials: BootstrapCredentials): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify(
    {
      ...credentials,
      note: 'The bootstrap admin client: it holds every scope. Keep the secret where you keep secrets, then delete this file.',
    },
    null,
    2,
  )}\n`;
  try {
    // The mode is given at creation, so that the secret is never readable by others, not even briefly.
    await writeFile(file, text, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    throw new BootstrapFileError(
      `the store has no API client, so a bootstrap admin client is due, but ${file} exists already ` +
        '(left by an earlier store?) and is never overwritten: move it away, or set ' +
        'BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET, or BOOTSTRAP_SECRET_FILE to another path',
    );
  }
}

/** The client queries the service runs: unit tests give it an in-memory stand-in. */
export type ClientRepository = Pick<
  typeof clientRepository,
  'create' | 'get' | 'count' | 'page' | 'lock' | 'countOtherAdmins' | 'delete' | 'credentials' | 'bootstrap'
>;

/** API clients: the callers of the service, each with a secret (kept only as a slow hash) and scopes. */
export class ClientService {
  constructor(
    private readonly db: Transactions,
    private readonly events: EventRecorder,
    private readonly settings: ClientSettings,
    private readonly authFailures: AuthFailureGuard,
    private readonly logger: Pick<Logger, 'info' | 'warn'>,
    private readonly repo: ClientRepository = clientRepository,
  ) {}

  async create(
    input: { name: string; scopes: Scope[] },
    op: OperationContext,
  ): Promise<ClientView & { client_secret: string }> {
    const secret = generateSecret('pas_cs_');
    const secretHash = await hashSecret(secret, this.settings.secretHashCost);
    const scopes = [...new Set(input.scopes)].sort();
    const name = input.name.trim();
    const id = newId('client');
    try {
      const client = await this.db.write('clients/create', async (tx) => {
        const created = await this.repo.create(tx, { id, name, scopes, secretHash, createdBy: op.actor.id });
        this.events.record(tx, op, {
          type: 'client.created',
          target: { type: 'client', id },
          changes: { name: { to: name }, scopes: { to: scopes } },
        });
        return created;
      });
      return { ...client, client_secret: secret };
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT')
        throw conflict(`a client named "${name}" already exists`);
      throw err;
    }
  }

  async get(id: string): Promise<ClientView> {
    const client = await this.repo.get(this.db, id);
    if (!client) throw notFound('client', id);
    return client;
  }

  async list(statuses: ClientView['status'][], page: Page): Promise<Paged<ClientView>> {
    return this.db.read('clients/list', async (tx) => {
      const total = await this.repo.count(tx, statuses);
      const items = await this.repo.page(tx, statuses, page);
      return { total, items, page };
    });
  }

  /**
   * Deletes a client and revokes its tokens. The last active client holding `clients:admin`
   * cannot be deleted: nobody could manage clients afterwards.
   */
  async delete(id: string, op: OperationContext): Promise<DeletedClientView> {
    return this.db.write('clients/delete', async (tx) => {
      const current = await this.repo.lock(tx, id);
      if (!current) throw notFound('client', id);
      if (current.status === 'deleted') throw conflict(`client ${id} is already deleted`);
      if (current.scopes.includes('clients:admin')) {
        if ((await this.repo.countOtherAdmins(tx, id)) === 0) {
          throw conflict(
            'this is the last active client with clients:admin; create another admin client first',
          );
        }
      }
      const deleted = await this.repo.delete(tx, id, op.actor.id);
      this.events.record(tx, op, {
        type: 'client.deleted',
        target: { type: 'client', id },
        changes: { status: { from: 'active', to: 'deleted' } },
      });
      return deleted;
    });
  }

  /**
   * Checks client credentials for the token endpoints. Failures are counted per client id from
   * one source address, and per source address; past either limit that address must wait,
   * whatever secret it tries, while the client keeps working from everywhere else. The response
   * never says whether the id exists.
   */
  async authenticate(
    clientId: string,
    secret: string,
    meta: RequestMeta,
  ): Promise<{ id: string; scopes: string[] }> {
    const ip = meta.sourceIp ?? 'unknown';
    const waitS = await this.authFailures.blockedForS(clientId, ip);
    if (waitS > 0) {
      throw new OAuthError(
        'temporarily_unavailable',
        `too many failed authentication attempts; retry in ${waitS} s`,
        { retryAfterS: waitS },
      );
    }
    const row = await this.repo.credentials(this.db, clientId);
    const ok = row
      ? await verifySecret(secret, row.secretHash)
      : await verifyNothing(this.settings.secretHashCost);
    if (ok && row?.status === 'active') {
      await this.authFailures.recordSuccess(clientId, ip);
      return { id: clientId, scopes: row.scopes };
    }
    await this.authFailures.recordFailure(clientId, ip);
    const reason = !row ? 'unknown_client' : row.status !== 'active' ? 'client_deleted' : 'invalid_secret';
    await this.recordFailure(clientId, reason, meta);
    throw new OAuthError('invalid_client', 'client authentication failed');
  }

  /**
   * On a store without clients, creates the admin client that holds every scope: with the
   * configured id and secret, or a generated secret, which is written to the bootstrap secret
   * file and never to the log.
   */
  async bootstrap(): Promise<void> {
    const id = this.settings.bootstrapId ?? newId('client');
    const configured = this.settings.bootstrapSecret !== undefined;
    const secret = this.settings.bootstrapSecret ?? generateSecret('pas_cs_');
    const secretHash = await hashSecret(secret, this.settings.secretHashCost);
    const name = 'bootstrap-admin';
    const file = path.resolve(this.settings.bootstrapSecretFile);
    // The file is written inside the transaction, before the client is committed, so that no
    // committed client's secret is ever lost; it is removed again if the client is not committed.
    // A retried transaction finds it written already.
    let written = false;
    const forget = async (): Promise<void> => {
      if (written) await rm(file, { force: true });
      written = false;
    };
    let created: boolean;
    try {
      created = await this.db.write('clients/bootstrap', async (tx) => {
        if (!(await this.repo.bootstrap(tx, { id, name, scopes: [...SCOPES], secretHash }))) {
          // Run again after a commit whose answer was lost, it finds the client it made itself.
          return written && (await this.repo.get(tx, id)) !== undefined;
        }
        if (!configured && !written) {
          await writeBootstrapFile(file, { client_id: id, client_secret: secret });
          written = true;
        }
        this.events.record(tx, SYSTEM_CONTEXT, {
          type: 'client.created',
          target: { type: 'client', id },
          changes: { name: { to: name }, scopes: { to: [...SCOPES] } },
        });
        return true;
      });
    } catch (err) {
      // A commit may have gone through before the error: the file goes only with the client
      // surely not there, as it would then hold the only copy of a committed client's secret.
      const stored = await this.repo.get(this.db, id).then(
        (client) => client !== undefined,
        () => true,
      );
      if (!stored) await forget().catch(() => undefined);
      throw err;
    }
    if (!created) {
      // Another instance created one first, after a failed attempt of this one had written the file.
      await forget();
      return;
    }
    if (configured) {
      this.logger.info(
        { client_id: id },
        'created the bootstrap admin client from BOOTSTRAP_CLIENT_ID/BOOTSTRAP_CLIENT_SECRET',
      );
    } else {
      this.logger.warn(
        { client_id: id, file },
        `created the bootstrap admin client ${id}; its id and secret are in ${file} (readable by this user only): ` +
          'keep the secret where you keep secrets, then delete the file',
      );
    }
  }

  private async recordFailure(clientId: string, reason: string, meta: RequestMeta): Promise<void> {
    const shownId = clientId.slice(0, 128);
    try {
      await this.db.write('audit/auth_failed', async (tx) =>
        this.events.record(
          tx,
          { actor: { type: 'client', id: shownId }, meta },
          { type: 'auth.failed', target: { type: 'client', id: shownId }, outcome: 'failure', reason },
        ),
      );
    } catch (err) {
      this.logger.warn({ err }, 'could not record a failed authentication');
    }
  }
}
