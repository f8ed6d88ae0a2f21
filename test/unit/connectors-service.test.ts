import { expect } from 'chai';
import { sha256 } from '../../src/auth/secrets.js';
import type { ScimCaller } from '../../src/connectors/model.js';
import type {
  ConnectorChange,
  LockedConnector,
  NewConnector,
  StoredConnector,
} from '../../src/connectors/repository.js';
import { ConnectorService, type ConnectorRepository } from '../../src/connectors/service.js';
import { AppError, conflict } from '../../src/errors/errors.js';
import type { ChangeEvent } from '../../src/events/feed.js';
import { newId } from '../../src/ids.js';
import type { Page } from '../../src/pagination.js';
import type { DeletedConnectorView } from '../../src/schemas/connectors.js';
import { FakeDatabase, FakeEventSink, FIRST_PAGE, operation, rejection } from '../helpers/fakes.js';

const EARLIER = '2020-01-01T00:00:00.000Z';
const SCIM_BASE_URL = 'https://pas.example.test/scim/v2';

interface Row {
  stored: StoredConnector;
  tokenHash: string;
}

/**
 * The connector repository over a Map. Names are unique among connectors that are not deleted,
 * and a clash fails as the database reports a constraint violation. `byToken` can be held at a
 * gate, so a test can let a change happen while a lookup is under way.
 */
class FakeConnectors implements ConnectorRepository {
  readonly connectors = new Map<string, Row>();
  readonly calls: string[] = [];
  gate: Promise<void> | undefined;

  seed(fields: Partial<StoredConnector> & { name: string }, token = 'pas_scim_seeded'): StoredConnector {
    const stored: StoredConnector = {
      id: newId('connector'),
      description: null,
      profile: 'generic',
      status: 'active',
      created_at: EARLIER,
      created_by: 'cli_seed',
      token_rotated_at: EARLIER,
      ...fields,
    };
    this.connectors.set(stored.id, { stored, tokenHash: sha256(token) });
    return stored;
  }

  async create(_tx: unknown, c: NewConnector): Promise<StoredConnector> {
    this.calls.push('create');
    for (const { stored } of this.connectors.values()) {
      if (stored.status !== 'deleted' && stored.name.toLowerCase() === c.name.toLowerCase()) {
        throw conflict('a resource with the same unique value already exists');
      }
    }
    const stored: StoredConnector = {
      id: c.id,
      name: c.name,
      description: c.description,
      profile: c.profile,
      status: 'active',
      created_at: 'now',
      created_by: c.createdBy,
      token_rotated_at: 'now',
      deleted_at: null,
      deleted_by: null,
    };
    this.connectors.set(c.id, { stored, tokenHash: c.tokenHash });
    return { ...stored };
  }

  async get(_tx: unknown, id: string): Promise<StoredConnector | undefined> {
    const row = this.connectors.get(id);
    return row && { ...row.stored };
  }

  async count(_tx: unknown, statuses: StoredConnector['status'][]): Promise<number> {
    this.calls.push(`count:${statuses.join(',')}`);
    return this.matching(statuses).length;
  }

  async page(_tx: unknown, statuses: StoredConnector['status'][], page: Page): Promise<StoredConnector[]> {
    this.calls.push(`page:${statuses.join(',')}`);
    return this.matching(statuses).slice(page.skip, page.skip + page.limit);
  }

  async lock(_tx: unknown, id: string): Promise<LockedConnector | undefined> {
    this.calls.push('lock');
    const row = this.connectors.get(id);
    if (!row) return undefined;
    const { name, status, description, profile } = row.stored;
    return { id, name, status, description, profile };
  }

  async update(_tx: unknown, id: string, change: ConnectorChange): Promise<StoredConnector> {
    this.calls.push('update');
    const row = this.connectors.get(id)!;
    row.stored = { ...row.stored, ...change };
    return { ...row.stored };
  }

  async delete(_tx: unknown, id: string, deletedBy: string): Promise<DeletedConnectorView> {
    this.calls.push('delete');
    const row = this.connectors.get(id)!;
    row.stored = { ...row.stored, status: 'deleted', deleted_at: 'now', deleted_by: deletedBy };
    row.tokenHash = '';
    return { id, status: 'deleted', deleted_at: 'now', deleted_by: deletedBy };
  }

  async rotateToken(_tx: unknown, id: string, tokenHash: string): Promise<void> {
    this.calls.push('rotateToken');
    this.connectors.get(id)!.tokenHash = tokenHash;
  }

  async byToken(_tx: unknown, tokenHash: string): Promise<ScimCaller | undefined> {
    this.calls.push('byToken');
    await this.gate;
    for (const { stored, tokenHash: hash } of this.connectors.values()) {
      if (hash === tokenHash && stored.status === 'active')
        return { id: stored.id, name: stored.name, profile: stored.profile };
    }
    return undefined;
  }

  private matching(statuses: readonly string[]): StoredConnector[] {
    return [...this.connectors.values()].map((r) => r.stored).filter((s) => statuses.includes(s.status));
  }
}

function setup() {
  const db = new FakeDatabase();
  const sink = new FakeEventSink();
  const repo = new FakeConnectors();
  const service = new ConnectorService(db, sink, SCIM_BASE_URL, repo);
  return { db, sink, repo, service };
}

const op = operation('cli_admin');

/** A change as the feed reports it; only its type matters to the service. */
const change = (type: string): ChangeEvent =>
  ({ type, id: newId('event'), shard: 0, seq: 1 }) as unknown as ChangeEvent;

function expectCode(err: Error, code: string): AppError {
  expect(err).to.be.instanceOf(AppError);
  expect((err as AppError).code).to.equal(code);
  return err as AppError;
}

describe('connector service', () => {
  describe('create', () => {
    for (const description of [undefined, 'the corporate directory']) {
      it(`answers the token once and keeps its digest (${description ? 'with' : 'without'} a description)`, async () => {
        const { service, sink, repo } = setup();
        const created = await service.create({ name: 'okta', description }, op);
        expect(created.token).to.match(/^pas_scim_[A-Za-z0-9_-]{43}$/);
        expect(created).to.include({
          name: 'okta',
          description: description ?? null,
          profile: 'generic',
          status: 'active',
          scim_base_url: SCIM_BASE_URL,
          created_by: 'cli_admin',
        });
        expect(created).to.not.have.property('deleted_at');
        expect(created).to.not.have.property('deleted_by');
        expect(repo.connectors.get(created.id)!.tokenHash).to.equal(sha256(created.token));
        expect(sink.events).to.deep.equal([
          {
            type: 'connector.created',
            target: { type: 'connector', id: created.id },
            changes: {
              name: { to: 'okta' },
              ...(description ? { description: { to: description } } : {}),
              profile: { to: 'generic' },
            },
            op,
          },
        ]);
      });
    }

    it('keeps the profile it is given, and records it', async () => {
      const { service, sink, repo } = setup();
      const created = await service.create({ name: 'entra', profile: 'entra' }, op);
      expect(created.profile).to.equal('entra');
      expect(repo.connectors.get(created.id)!.stored.profile).to.equal('entra');
      expect(sink.events[0]!.changes).to.deep.equal({ name: { to: 'entra' }, profile: { to: 'entra' } });
    });

    it('names the clash when an active connector has the name, and records nothing', async () => {
      const { service, sink, repo } = setup();
      repo.seed({ name: 'okta' });
      const err = expectCode(await rejection(service.create({ name: 'okta' }, op)), 'CONFLICT');
      expect(err.message).to.equal('a connector named "okta" already exists');
      expect(repo.connectors.size).to.equal(1);
      expect(sink.events).to.deep.equal([]);
    });
  });

  describe('get and list', () => {
    it('shows the SCIM base URL, and deletion fields only when deleted', async () => {
      const { service, repo } = setup();
      const active = repo.seed({ name: 'okta', deleted_at: null, deleted_by: null });
      const gone = repo.seed({ name: 'azure', status: 'deleted', deleted_at: 'then', deleted_by: 'cli_x' });
      const shown = await service.get(active.id);
      expect(shown.scim_base_url).to.equal(SCIM_BASE_URL);
      expect(shown).to.not.have.property('deleted_at');
      expect(await service.get(gone.id)).to.include({ deleted_at: 'then', deleted_by: 'cli_x' });
      const listed = await service.list(['deleted'], FIRST_PAGE);
      expect(listed.total).to.equal(1);
      expect(listed.items.map((c) => [c.name, c.scim_base_url])).to.deep.equal([['azure', SCIM_BASE_URL]]);
    });

    it('answers NOT_FOUND for an unknown connector', async () => {
      const { service } = setup();
      const id = newId('connector');
      expect(expectCode(await rejection(service.get(id)), 'NOT_FOUND').message).to.equal(
        `connector ${id} does not exist`,
      );
    });
  });

  describe('update', () => {
    it('changes the profile and the description, and records what changed as connector.updated', async () => {
      const { service, sink, repo } = setup();
      const connector = repo.seed({ name: 'azure', description: 'old' });
      const updated = await service.update(connector.id, { profile: 'entra' }, op);
      expect(updated).to.include({ id: connector.id, profile: 'entra', description: 'old' });
      expect(updated.scim_base_url).to.equal(SCIM_BASE_URL);
      const cleared = await service.update(connector.id, { description: null }, op);
      expect(cleared).to.include({ profile: 'entra', description: null });
      expect(sink.events).to.deep.equal([
        {
          type: 'connector.updated',
          target: { type: 'connector', id: connector.id },
          changes: { profile: { from: 'generic', to: 'entra' } },
          op,
        },
        {
          type: 'connector.updated',
          target: { type: 'connector', id: connector.id },
          changes: { description: { from: 'old', to: null } },
          op,
        },
      ]);
    });

    it('records nothing when nothing changes', async () => {
      const { service, sink, repo } = setup();
      const connector = repo.seed({ name: 'okta', profile: 'okta' });
      expect(await service.update(connector.id, { profile: 'okta' }, op)).to.include({ profile: 'okta' });
      expect(sink.events).to.deep.equal([]);
    });
  });

  describe('delete and rotateToken', () => {
    it('deletes a connector and records connector.deleted', async () => {
      const { service, sink, repo } = setup();
      const connector = repo.seed({ name: 'okta' });
      expect(await service.delete(connector.id, op)).to.include({ id: connector.id, status: 'deleted' });
      expect(repo.connectors.get(connector.id)!.stored.status).to.equal('deleted');
      expect(sink.events).to.deep.equal([
        {
          type: 'connector.deleted',
          target: { type: 'connector', id: connector.id },
          changes: { status: { from: 'active', to: 'deleted' } },
          op,
        },
      ]);
    });

    it('rotates the token: the new digest is kept, and connector.token_rotated holds no token', async () => {
      const { service, sink, repo } = setup();
      const connector = repo.seed({ name: 'okta' }, 'pas_scim_old');
      const { token } = await service.rotateToken(connector.id, op);
      expect(token).to.match(/^pas_scim_/);
      expect(repo.connectors.get(connector.id)!.tokenHash).to.equal(sha256(token));
      expect(sink.events).to.deep.equal([
        { type: 'connector.token_rotated', target: { type: 'connector', id: connector.id }, op },
      ]);
    });

    const writes: [string, (s: ConnectorService, id: string) => Promise<unknown>, string][] = [
      ['delete', (s, id) => s.delete(id, op), 'is already deleted'],
      ['rotateToken', (s, id) => s.rotateToken(id, op), 'is deleted'],
      ['update', (s, id) => s.update(id, { profile: 'okta' }, op), 'is deleted'],
    ];
    for (const [name, write, deletedMessage] of writes) {
      it(`${name} answers NOT_FOUND for an unknown connector and CONFLICT for a deleted one`, async () => {
        const { service, sink, repo } = setup();
        expectCode(await rejection(write(service, newId('connector'))), 'NOT_FOUND');
        const gone = repo.seed({ name: 'gone', status: 'deleted' });
        const err = expectCode(await rejection(write(service, gone.id)), 'CONFLICT');
        expect(err.message).to.equal(`connector ${gone.id} ${deletedMessage}`);
        expect(repo.calls.filter((c) => c !== 'lock')).to.deep.equal([]);
        expect(sink.events).to.deep.equal([]);
      });
    }
  });

  describe('authenticate', () => {
    it('finds the active connector holding a token, and remembers it', async () => {
      const { service, repo } = setup();
      const connector = repo.seed({ name: 'okta' }, 'pas_scim_token');
      const caller = { id: connector.id, name: 'okta', profile: 'generic' };
      expect(await service.authenticate('pas_scim_token')).to.deep.equal(caller);
      expect(await service.authenticate('pas_scim_token')).to.deep.equal(caller);
      expect(repo.calls).to.deep.equal(['byToken']);
    });

    it('looks up nothing for a token without the SCIM prefix', async () => {
      const { service, repo } = setup();
      repo.seed({ name: 'okta' }, 'not_scim_token');
      expect(await service.authenticate('not_scim_token')).to.equal(undefined);
      expect(repo.calls).to.deep.equal([]);
    });

    it('does not remember a token that finds nothing', async () => {
      const { service, repo } = setup();
      expect(await service.authenticate('pas_scim_unknown')).to.equal(undefined);
      const connector = repo.seed({ name: 'okta' }, 'pas_scim_unknown');
      expect(await service.authenticate('pas_scim_unknown')).to.deep.equal({
        id: connector.id,
        name: 'okta',
        profile: 'generic',
      });
    });

    const changes: [string, 'forgets' | 'keeps'][] = [
      ['connector.deleted', 'forgets'],
      ['connector.token_rotated', 'forgets'],
      ['connector.created', 'forgets'],
      ['connector.updated', 'forgets'],
      ['principal.updated', 'keeps'],
      ['group.deleted', 'keeps'],
    ];
    for (const [type, outcome] of changes) {
      it(`${outcome} what it remembers on ${type} from the change feed`, async () => {
        const { service, repo } = setup();
        repo.seed({ name: 'okta' }, 'pas_scim_token');
        await service.authenticate('pas_scim_token');
        service.onChange(change(type));
        await service.authenticate('pas_scim_token');
        expect(repo.calls).to.deep.equal(outcome === 'forgets' ? ['byToken', 'byToken'] : ['byToken']);
      });
    }

    it('stops answering for a token once this instance rotates it', async () => {
      const { service, repo } = setup();
      const connector = repo.seed({ name: 'okta' }, 'pas_scim_old');
      await service.authenticate('pas_scim_old');
      await service.rotateToken(connector.id, op);
      // The feed tells this instance of its own change before the write returns.
      service.onChange(change('connector.token_rotated'));
      expect(await service.authenticate('pas_scim_old')).to.equal(undefined);
    });

    it("answers with the connector's new profile once this instance changes it", async () => {
      const { service, repo } = setup();
      const connector = repo.seed({ name: 'azure' }, 'pas_scim_token');
      expect((await service.authenticate('pas_scim_token'))?.profile).to.equal('generic');
      await service.update(connector.id, { profile: 'entra' }, op);
      service.onChange(change('connector.updated'));
      expect((await service.authenticate('pas_scim_token'))?.profile).to.equal('entra');
    });

    it('does not remember a lookup that a connector change overtook', async () => {
      const { service, repo } = setup();
      repo.seed({ name: 'okta' }, 'pas_scim_token');
      let open!: () => void;
      repo.gate = new Promise((resolve) => (open = resolve));
      const lookup = service.authenticate('pas_scim_token');
      service.onChange(change('connector.deleted'));
      open();
      expect(await lookup).to.not.equal(undefined);
      repo.gate = undefined;
      await service.authenticate('pas_scim_token');
      expect(repo.calls).to.deep.equal(['byToken', 'byToken']);
    });
  });
});
