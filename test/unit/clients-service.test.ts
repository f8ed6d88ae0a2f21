import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SYSTEM_CONTEXT, type RequestMeta } from '../../src/audit/audit.js';
import {
  BootstrapFileError,
  ClientService,
  type ClientRepository,
  type ClientSettings,
} from '../../src/auth/clients.js';
import { OAuthError } from '../../src/auth/oauth-error.js';
import type {
  ClientCredentials,
  ClientView,
  DeletedClientView,
  LockedClient,
  NewClient,
} from '../../src/auth/repository.js';
import { hashSecret, verifySecret } from '../../src/auth/secrets.js';
import { AppError, conflict } from '../../src/errors/errors.js';
import { newId } from '../../src/ids.js';
import type { Page } from '../../src/pagination.js';
import type { AuthFailureGuard } from '../../src/ratelimit/index.js';
import { FakeDatabase, FakeEventSink, FIRST_PAGE, operation, rejection } from '../helpers/fakes.js';

/** Cheap enough for unit tests (scrypt N = 16); the service takes the cost from its settings. */
const HASH_COST = 4;
const EARLIER = '2020-01-01T00:00:00.000Z';

type Scope = Parameters<ClientService['create']>[0]['scopes'][number];

interface Row {
  view: ClientView;
  secretHash: string;
}

/**
 * The client repository over a Map. Names are unique among clients that are not deleted (the
 * delete gives up the name key), and a clash fails as the database reports a constraint
 * violation.
 */
class FakeClients implements ClientRepository {
  readonly clients = new Map<string, Row>();
  readonly calls: string[] = [];

  async seed(fields: Partial<ClientView> & { name: string }, secret = 'pas_cs_seeded'): Promise<ClientView> {
    const view: ClientView = {
      id: newId('client'),
      scopes: ['principals:read'],
      status: 'active',
      created_at: EARLIER,
      created_by: 'system',
      ...fields,
    };
    this.clients.set(view.id, { view, secretHash: await hashSecret(secret, HASH_COST) });
    return view;
  }

  async create(_tx: unknown, c: NewClient & { createdBy: string }): Promise<ClientView> {
    this.calls.push('create');
    this.insert(c, c.createdBy);
    return { ...this.clients.get(c.id)!.view };
  }

  async get(_tx: unknown, id: string): Promise<ClientView | undefined> {
    const row = this.clients.get(id);
    return row && { ...row.view };
  }

  async count(_tx: unknown, statuses: readonly string[]): Promise<number> {
    this.calls.push(`count:${statuses.join(',')}`);
    return this.matching(statuses).length;
  }

  async page(_tx: unknown, statuses: readonly string[], page: Page): Promise<ClientView[]> {
    this.calls.push(`page:${statuses.join(',')}`);
    return this.matching(statuses).slice(page.skip, page.skip + page.limit);
  }

  async lock(_tx: unknown, id: string): Promise<LockedClient | undefined> {
    this.calls.push('lock');
    const row = this.clients.get(id);
    return row && { id, scopes: [...row.view.scopes], status: row.view.status };
  }

  async countOtherAdmins(_tx: unknown, id: string): Promise<number> {
    this.calls.push('countOtherAdmins');
    return [...this.clients.values()].filter(
      ({ view }) => view.id !== id && view.status === 'active' && view.scopes.includes('clients:admin'),
    ).length;
  }

  async delete(_tx: unknown, id: string, deletedBy: string): Promise<DeletedClientView> {
    this.calls.push('delete');
    const row = this.clients.get(id)!;
    row.view = { ...row.view, status: 'deleted', deleted_at: 'now', deleted_by: deletedBy };
    return { id, status: 'deleted', deleted_at: 'now', deleted_by: deletedBy };
  }

  async credentials(_tx: unknown, id: string): Promise<ClientCredentials | undefined> {
    this.calls.push('credentials');
    const row = this.clients.get(id);
    return row && { status: row.view.status, secretHash: row.secretHash, scopes: [...row.view.scopes] };
  }

  async bootstrap(_tx: unknown, c: NewClient): Promise<boolean> {
    this.calls.push('bootstrap');
    if (this.clients.size > 0) return false;
    this.insert(c, 'system');
    return true;
  }

  private insert(c: NewClient, createdBy: string): void {
    const key = c.name.trim().toLowerCase();
    for (const { view } of this.clients.values()) {
      if (view.status !== 'deleted' && view.name.trim().toLowerCase() === key) {
        throw conflict('a resource with the same unique value already exists');
      }
    }
    this.clients.set(c.id, {
      view: {
        id: c.id,
        name: c.name,
        scopes: c.scopes as Scope[],
        status: 'active',
        created_at: 'now',
        created_by: createdBy,
      },
      secretHash: c.secretHash,
    });
  }

  private matching(statuses: readonly string[]): ClientView[] {
    return [...this.clients.values()].map((r) => r.view).filter((v) => statuses.includes(v.status));
  }
}

/** The brute-force guard, with blocks set by the test and the outcomes it was told of. */
class FakeGuard implements AuthFailureGuard {
  readonly blocked = new Map<string, number>();
  readonly outcomes: string[] = [];

  async blockedForS(clientId: string | undefined, ip: string): Promise<number> {
    return this.blocked.get(`${clientId}@${ip}`) ?? 0;
  }

  async recordFailure(clientId: string | undefined, ip: string): Promise<void> {
    this.outcomes.push(`failure:${clientId}@${ip}`);
  }

  async recordSuccess(clientId: string, ip: string): Promise<void> {
    this.outcomes.push(`success:${clientId}@${ip}`);
  }
}

class FakeLogger {
  readonly lines: { level: 'info' | 'warn'; args: unknown[] }[] = [];
  info = (...args: unknown[]): void => {
    this.lines.push({ level: 'info', args });
  };
  warn = (...args: unknown[]): void => {
    this.lines.push({ level: 'warn', args });
  };
}

/** A folder of this run's own for the bootstrap secret files. */
const files = mkdtempSync(path.join(os.tmpdir(), 'pas-clients-'));
let fileCount = 0;
/** A path where no file is yet. */
const freshFile = (): string => path.join(files, `bootstrap-${(fileCount += 1)}.json`);

function setup(settings: Partial<ClientSettings> = {}) {
  const db = new FakeDatabase();
  const sink = new FakeEventSink();
  const repo = new FakeClients();
  const guard = new FakeGuard();
  const logger = new FakeLogger();
  const service = new ClientService(
    db,
    sink,
    {
      secretHashCost: HASH_COST,
      bootstrapId: undefined,
      bootstrapSecret: undefined,
      bootstrapSecretFile: freshFile(),
      ...settings,
    },
    guard,
    logger,
    repo,
  );
  return { db, sink, repo, guard, logger, service };
}

const op = operation('cli_admin');
const meta: RequestMeta = { requestId: 'req-9', sourceIp: '198.51.100.7', userAgent: 'curl/8' };

function expectCode(err: Error, code: string): AppError {
  expect(err).to.be.instanceOf(AppError);
  expect((err as AppError).code).to.equal(code);
  return err as AppError;
}

describe('client service', () => {
  describe('create', () => {
    it('trims the name, sorts and deduplicates the scopes, keeps only a hash of the secret', async () => {
      const { service, sink, repo } = setup();
      const client = await service.create(
        { name: '  ci pipeline ', scopes: ['principals:write', 'groups:read', 'principals:write'] },
        op,
      );
      expect(client).to.include({ name: 'ci pipeline', status: 'active', created_by: 'cli_admin' });
      expect(client.scopes).to.deep.equal(['groups:read', 'principals:write']);
      expect(client.client_secret).to.match(/^pas_cs_[A-Za-z0-9_-]{43}$/);
      const stored = repo.clients.get(client.id)!;
      expect(stored.secretHash).to.not.include(client.client_secret.slice('pas_cs_'.length));
      expect(await verifySecret(client.client_secret, stored.secretHash)).to.equal(true);
      expect(sink.events).to.deep.equal([
        {
          type: 'client.created',
          target: { type: 'client', id: client.id },
          changes: { name: { to: 'ci pipeline' }, scopes: { to: ['groups:read', 'principals:write'] } },
          op,
        },
      ]);
    });

    it('names the clash when an active client holds the name, whatever its case, and records nothing', async () => {
      const { service, sink, repo } = setup();
      await repo.seed({ name: 'CI Pipeline' });
      const err = expectCode(
        await rejection(service.create({ name: 'ci pipeline ', scopes: ['groups:read'] }, op)),
        'CONFLICT',
      );
      expect(err.message).to.equal('a client named "ci pipeline" already exists');
      expect(repo.clients.size).to.equal(1);
      expect(sink.events).to.deep.equal([]);
    });

    it('takes the name of a deleted client', async () => {
      const { service, repo } = setup();
      await repo.seed({ name: 'ci pipeline', status: 'deleted' });
      const client = await service.create({ name: 'ci pipeline', scopes: ['groups:read'] }, op);
      expect(repo.clients.get(client.id)!.view.status).to.equal('active');
    });
  });

  describe('get and list', () => {
    it('answers NOT_FOUND for an unknown client', async () => {
      const { service } = setup();
      const id = newId('client');
      const err = expectCode(await rejection(service.get(id)), 'NOT_FOUND');
      expect(err.message).to.equal(`client ${id} does not exist`);
    });

    it('lists the clients of the statuses asked for', async () => {
      const { service, repo } = setup();
      await repo.seed({ name: 'a' });
      await repo.seed({ name: 'b', status: 'deleted' });
      const listed = await service.list(['deleted'], FIRST_PAGE);
      expect(listed.total).to.equal(1);
      expect(listed.items.map((c) => c.name)).to.deep.equal(['b']);
      expect(repo.calls).to.deep.equal(['count:deleted', 'page:deleted']);
    });
  });

  describe('delete', () => {
    it('deletes a client and records client.deleted', async () => {
      const { service, sink, repo } = setup();
      const client = await repo.seed({ name: 'reader' });
      const deleted = await service.delete(client.id, op);
      expect(deleted).to.deep.equal({
        id: client.id,
        status: 'deleted',
        deleted_at: 'now',
        deleted_by: 'cli_admin',
      });
      expect(repo.clients.get(client.id)!.view.status).to.equal('deleted');
      expect(sink.events).to.deep.equal([
        {
          type: 'client.deleted',
          target: { type: 'client', id: client.id },
          changes: { status: { from: 'active', to: 'deleted' } },
          op,
        },
      ]);
    });

    it('counts the other admins only when the client is an admin', async () => {
      const { service, repo } = setup();
      const reader = await repo.seed({ name: 'reader' });
      await service.delete(reader.id, op);
      expect(repo.calls).to.deep.equal(['lock', 'delete']);
    });

    // The admin to delete, and the other clients there are.
    const admins: [string, Partial<ClientView>[], 'deletes' | 'refuses'][] = [
      ['another active admin beside it', [{ scopes: ['clients:admin'] }], 'deletes'],
      ['no other client beside it', [], 'refuses'],
      ['only a deleted admin beside it', [{ scopes: ['clients:admin'], status: 'deleted' }], 'refuses'],
      ['only clients without clients:admin beside it', [{ scopes: ['groups:write'] }], 'refuses'],
    ];
    for (const [what, others, outcome] of admins) {
      it(`${outcome === 'deletes' ? 'deletes' : 'refuses with CONFLICT to delete'} an admin with ${what}`, async () => {
        const { service, sink, repo } = setup();
        const admin = await repo.seed({ name: 'admin', scopes: ['clients:admin', 'groups:read'] });
        for (const [i, other] of others.entries()) await repo.seed({ name: `other-${i}`, ...other });
        const work = service.delete(admin.id, op);
        if (outcome === 'deletes') {
          await work;
          expect(sink.types()).to.deep.equal(['client.deleted']);
          return;
        }
        const err = expectCode(await rejection(work), 'CONFLICT');
        expect(err.message).to.equal(
          'this is the last active client with clients:admin; create another admin client first',
        );
        expect(repo.clients.get(admin.id)!.view.status).to.equal('active');
        expect(sink.events).to.deep.equal([]);
      });
    }

    it('answers NOT_FOUND for an unknown client and CONFLICT for a deleted one', async () => {
      const { service, sink, repo } = setup();
      const unknown = newId('client');
      expect(expectCode(await rejection(service.delete(unknown, op)), 'NOT_FOUND').message).to.equal(
        `client ${unknown} does not exist`,
      );
      const gone = await repo.seed({ name: 'gone', status: 'deleted' });
      expect(expectCode(await rejection(service.delete(gone.id, op)), 'CONFLICT').message).to.equal(
        `client ${gone.id} is already deleted`,
      );
      expect(repo.calls).to.not.include('delete');
      expect(sink.events).to.deep.equal([]);
    });
  });

  describe('authenticate', () => {
    it('answers the id and scopes of an active client with its secret, and tells the guard', async () => {
      const { service, sink, repo, guard } = setup();
      const client = await repo.seed(
        { name: 'ci', scopes: ['groups:read', 'policies:read'] },
        'pas_cs_right',
      );
      expect(await service.authenticate(client.id, 'pas_cs_right', meta)).to.deep.equal({
        id: client.id,
        scopes: ['groups:read', 'policies:read'],
      });
      expect(guard.outcomes).to.deep.equal([`success:${client.id}@198.51.100.7`]);
      expect(sink.events).to.deep.equal([]);
    });

    // Whatever the cause, the caller hears the same; the audit trail says which it was.
    const failures: [string, 'unknown' | 'active' | 'deleted', string, string][] = [
      ['an unknown client', 'unknown', 'pas_cs_right', 'unknown_client'],
      ['a wrong secret', 'active', 'pas_cs_wrong', 'invalid_secret'],
      ['a deleted client, even with its secret', 'deleted', 'pas_cs_right', 'client_deleted'],
      ['a deleted client with a wrong secret', 'deleted', 'pas_cs_wrong', 'client_deleted'],
    ];
    for (const [what, state, secret, reason] of failures) {
      it(`refuses ${what} with invalid_client; auth.failed says ${reason}`, async () => {
        const { service, sink, repo, guard, db } = setup();
        const id =
          state === 'unknown'
            ? newId('client')
            : (await repo.seed({ name: 'ci', status: state }, 'pas_cs_right')).id;
        const err = await rejection(service.authenticate(id, secret, meta));
        expect(err).to.be.instanceOf(OAuthError);
        expect(err).to.include({ error: 'invalid_client', description: 'client authentication failed' });
        expect(guard.outcomes).to.deep.equal([`failure:${id}@198.51.100.7`]);
        expect(db.units).to.deep.equal(['write:audit/auth_failed']);
        expect(sink.events).to.deep.equal([
          {
            type: 'auth.failed',
            target: { type: 'client', id },
            outcome: 'failure',
            reason,
            op: { actor: { type: 'client', id }, meta },
          },
        ]);
      });
    }

    it('counts failures from an unknown address under "unknown", and shortens a long client id in the trail', async () => {
      const { service, sink, guard } = setup();
      const long = 'x'.repeat(300);
      await rejection(service.authenticate(long, 'pas_cs_wrong', { ...meta, sourceIp: null }));
      expect(guard.outcomes).to.deep.equal([`failure:${long}@unknown`]);
      expect(sink.events[0]!.target).to.deep.equal({ type: 'client', id: 'x'.repeat(128) });
      expect(sink.events[0]!.op.actor).to.deep.equal({ type: 'client', id: 'x'.repeat(128) });
    });

    it('still refuses, and logs a warning, when the failure cannot be recorded', async () => {
      const { service, sink, db, logger } = setup();
      db.failing.set('audit/auth_failed', new Error('database away'));
      const err = await rejection(service.authenticate(newId('client'), 'pas_cs_wrong', meta));
      expect(err).to.be.instanceOf(OAuthError).and.include({ error: 'invalid_client' });
      expect(sink.events).to.deep.equal([]);
      expect(logger.lines.map((l) => [l.level, l.args[1]])).to.deep.equal([
        ['warn', 'could not record a failed authentication'],
      ]);
    });

    it('refuses a blocked address before reading any credentials, whatever the secret', async () => {
      const { service, sink, repo, guard } = setup();
      const client = await repo.seed({ name: 'ci' }, 'pas_cs_right');
      guard.blocked.set(`${client.id}@198.51.100.7`, 42);
      const err = await rejection(service.authenticate(client.id, 'pas_cs_right', meta));
      expect(err).to.be.instanceOf(OAuthError);
      expect(err).to.include({ error: 'temporarily_unavailable' });
      expect((err as OAuthError).options.retryAfterS).to.equal(42);
      expect(err.message).to.contain('retry in 42 s');
      expect(repo.calls).to.not.include('credentials');
      expect(guard.outcomes).to.deep.equal([]);
      expect(sink.events).to.deep.equal([]);
      // The same client from elsewhere is not blocked.
      const elsewhere = await service.authenticate(client.id, 'pas_cs_right', {
        ...meta,
        sourceIp: '203.0.113.1',
      });
      expect(elsewhere.id).to.equal(client.id);
    });
  });

  describe('bootstrap', () => {
    after(() => rmSync(files, { recursive: true, force: true }));

    it('creates the admin client from the configured id and secret on an empty store, and logs its id', async () => {
      const { service, sink, repo, logger } = setup({
        bootstrapId: 'cli_boot',
        bootstrapSecret: 'pas_cs_configured',
      });
      await service.bootstrap();
      const stored = repo.clients.get('cli_boot')!;
      expect(stored.view).to.include({ name: 'bootstrap-admin', created_by: 'system', status: 'active' });
      expect(stored.view.scopes).to.include.members([
        'clients:admin',
        'connectors:admin',
        'principals:write',
      ]);
      expect(await verifySecret('pas_cs_configured', stored.secretHash)).to.equal(true);
      expect(sink.events).to.deep.equal([
        {
          type: 'client.created',
          target: { type: 'client', id: 'cli_boot' },
          changes: { name: { to: 'bootstrap-admin' }, scopes: { to: stored.view.scopes } },
          op: SYSTEM_CONTEXT,
        },
      ]);
      expect(logger.lines).to.have.length(1);
      expect(logger.lines[0]!.level).to.equal('info');
      expect(logger.lines[0]!.args[0]).to.deep.equal({ client_id: 'cli_boot' });
      expect(JSON.stringify(logger.lines)).to.not.include('pas_cs_configured');
    });

    it('writes no file when the secret is configured', async () => {
      const file = freshFile();
      const { service } = setup({ bootstrapSecret: 'pas_cs_configured', bootstrapSecretFile: file });
      await service.bootstrap();
      expect(await rejection(stat(file))).to.have.property('code', 'ENOENT');
    });

    it('writes a generated secret to a file only its owner may read, never to the log', async () => {
      const file = freshFile();
      const { service, repo, logger } = setup({ bootstrapSecretFile: file });
      await service.bootstrap();
      const [id] = [...repo.clients.keys()] as [string];
      expect(id).to.match(/^cli_/);
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      const written = JSON.parse(await readFile(file, 'utf8')) as {
        client_id: string;
        client_secret: string;
      };
      expect(written.client_id).to.equal(id);
      expect(await verifySecret(written.client_secret, repo.clients.get(id)!.secretHash)).to.equal(true);
      expect(logger.lines).to.have.length(1);
      const line = logger.lines[0]!;
      expect(line.level).to.equal('warn');
      expect(line.args[0]).to.deep.equal({ client_id: id, file });
      expect(String(line.args[1])).to.contain(id).and.to.contain(file);
      expect(JSON.stringify(logger.lines)).to.not.include(written.client_secret);
    });

    it('never overwrites an existing file: the start fails, saying what to do', async () => {
      const file = freshFile();
      await writeFile(file, 'an earlier secret\n');
      const { service, logger } = setup({ bootstrapSecretFile: file });
      const err = await rejection(service.bootstrap());
      expect(err).to.be.instanceOf(BootstrapFileError);
      expect(err.message).to.contain(file).and.to.contain('BOOTSTRAP_CLIENT_SECRET');
      expect(await readFile(file, 'utf8')).to.equal('an earlier secret\n');
      expect(logger.lines).to.deep.equal([]);
    });

    it('removes the file when the client is not committed, and keeps it when the client may be', async () => {
      const failed = new Error('the transaction failed');
      // Rolled back: the store has no client afterwards.
      const gone = freshFile();
      const rolledBack = setup({ bootstrapSecretFile: gone });
      rolledBack.sink.record = () => {
        rolledBack.repo.clients.clear();
        throw failed;
      };
      expect(await rejection(rolledBack.service.bootstrap())).to.equal(failed);
      expect(await rejection(stat(gone))).to.have.property('code', 'ENOENT');
      // The client is there after the error (its commit went through): the file holds its only secret.
      const kept = freshFile();
      const committed = setup({ bootstrapSecretFile: kept });
      committed.sink.record = () => {
        throw failed;
      };
      expect(await rejection(committed.service.bootstrap())).to.equal(failed);
      const [id] = [...committed.repo.clients.keys()] as [string];
      const written = JSON.parse(await readFile(kept, 'utf8')) as {
        client_id: string;
        client_secret: string;
      };
      expect(written.client_id).to.equal(id);
    });

    it('keeps the file when the commit that created the client lost its answer and ran again', async () => {
      const file = freshFile();
      const { service, db, repo, logger } = setup({ bootstrapSecretFile: file });
      db.lostCommitAnswers = 1;
      await service.bootstrap();
      const [id] = [...repo.clients.keys()] as [string];
      const written = JSON.parse(await readFile(file, 'utf8')) as {
        client_id: string;
        client_secret: string;
      };
      expect(written.client_id).to.equal(id);
      expect(await verifySecret(written.client_secret, repo.clients.get(id)!.secretHash)).to.equal(true);
      expect(logger.lines.map((l) => l.level)).to.deep.equal(['warn']);
    });

    it('does nothing on a store that has a client', async () => {
      const { service, sink, repo, logger } = setup({
        bootstrapId: 'cli_boot',
        bootstrapSecret: 'pas_cs_configured',
      });
      await repo.seed({ name: 'existing' });
      await service.bootstrap();
      expect(repo.clients.has('cli_boot')).to.equal(false);
      expect(sink.events).to.deep.equal([]);
      expect(logger.lines).to.deep.equal([]);
    });
  });
});
