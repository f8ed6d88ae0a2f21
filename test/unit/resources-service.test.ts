import { expect } from 'chai';
import type { Changes } from '../../src/audit/audit.js';
import { AppError } from '../../src/errors/errors.js';
import { newId } from '../../src/ids.js';
import type { Page } from '../../src/pagination.js';
import type { Resource } from '../../src/resources/repository.js';
import { ResourceService, type OwnerLookup, type ResourceRepository } from '../../src/resources/service.js';
import type { Attributes } from '../../src/schemas/principals.js';
import { FakeDatabase, FakeEventSink, FIRST_PAGE, operation, rejection } from '../helpers/fakes.js';

const EARLIER = '2020-01-01T00:00:00.000Z';
const key = (type: string, identifier: string): string => `${type}:${identifier}`;

/**
 * The resource repository over a Map. A resource exists once a policy names it (`named` counts
 * the policies) or once it is registered; unregistering one no policy names removes it.
 */
class FakeResources implements ResourceRepository {
  readonly resources = new Map<string, Resource>();
  readonly named = new Map<string, number>();
  readonly calls: string[] = [];

  seed(type: string, identifier: string, fields: Partial<Resource> = {}): Resource {
    const resource: Resource = {
      type,
      identifier,
      attributes: {},
      owner_id: null,
      registered: true,
      created_at: EARLIER,
      updated_at: EARLIER,
      ...fields,
    };
    this.resources.set(key(type, identifier), resource);
    return resource;
  }

  /** A resource a policy names and nobody registered. */
  seedNamed(type: string, identifier: string, policies = 1): Resource {
    this.named.set(key(type, identifier), policies);
    return this.seed(type, identifier, { registered: false });
  }

  async lock(
    _tx: unknown,
    type: string,
    identifier: string,
    now: string,
  ): Promise<{ resource: Resource; created: boolean }> {
    this.calls.push('lock');
    const found = this.resources.get(key(type, identifier));
    if (found) return { resource: { ...found }, created: false };
    return {
      resource: this.seed(type, identifier, { registered: false, created_at: now, updated_at: now }),
      created: true,
    };
  }

  async register(
    _tx: unknown,
    ref: { type: string; identifier: string },
    attributes: Attributes,
    ownerId: string | null,
    now: string,
  ): Promise<Resource> {
    this.calls.push('register');
    const current = this.resources.get(key(ref.type, ref.identifier))!;
    return this.seed(ref.type, ref.identifier, {
      created_at: current.created_at,
      attributes: { ...attributes },
      owner_id: ownerId,
      registered: true,
      updated_at: now,
    });
  }

  async unregister(
    _tx: unknown,
    type: string,
    identifier: string,
    now: string,
  ): Promise<{ named: number } | undefined> {
    this.calls.push('unregister');
    const named = this.named.get(key(type, identifier)) ?? 0;
    if (named === 0) this.resources.delete(key(type, identifier));
    else this.seedNamed(type, identifier, named).updated_at = now;
    return { named };
  }

  async get(_tx: unknown, type: string, identifier: string): Promise<Resource | undefined> {
    const found = this.resources.get(key(type, identifier));
    return found && { ...found };
  }

  async list(
    _tx: unknown,
    filter: { type: string | null; registered: boolean | null },
    page: Page,
  ): Promise<{ total: number; resources: Resource[] }> {
    this.calls.push(`list:${filter.type}:${filter.registered}`);
    const all = [...this.resources.values()].filter(
      (r) =>
        (filter.type === null || r.type === filter.type) &&
        (filter.registered === null || r.registered === filter.registered),
    );
    return { total: all.length, resources: all.slice(page.skip, page.skip + page.limit) };
  }
}

/** Principals by id, as registering a resource reads its owner. */
class FakeOwners implements OwnerLookup {
  readonly statuses = new Map<string, string>();

  add(status = 'active'): string {
    const id = newId('principal');
    this.statuses.set(id, status);
    return id;
  }

  async get(_tx: unknown, id: string): Promise<{ status: string } | undefined> {
    const status = this.statuses.get(id);
    return status === undefined ? undefined : { status };
  }
}

function setup() {
  const db = new FakeDatabase();
  const sink = new FakeEventSink();
  const repo = new FakeResources();
  const owners = new FakeOwners();
  const service = new ResourceService(db, sink, owners, repo);
  return { db, sink, repo, owners, service };
}

const op = operation('cli_admin');
const target = (type: string, identifier: string) => ({ type: 'resource', id: `${type}:${identifier}` });

function expectCode(err: Error, code: string): AppError {
  expect(err).to.be.instanceOf(AppError);
  expect((err as AppError).code).to.equal(code);
  return err as AppError;
}

describe('resource service', () => {
  describe('put', () => {
    it('registers a new resource: created, with resource.created listing every attribute and the owner', async () => {
      const { service, sink, repo, owners } = setup();
      const owner = owners.add();
      const { resource, created } = await service.put(
        'document',
        'q3-plan',
        { attributes: { tier: 'gold', region: 'eu' }, owner_id: owner },
        op,
      );
      expect(created).to.equal(true);
      expect(resource).to.include({
        type: 'document',
        identifier: 'q3-plan',
        owner_id: owner,
        registered: true,
      });
      expect(resource.attributes).to.deep.equal({ tier: 'gold', region: 'eu' });
      expect(repo.resources.get('document:q3-plan')!.registered).to.equal(true);
      expect(sink.events).to.deep.equal([
        {
          type: 'resource.created',
          target: target('document', 'q3-plan'),
          changes: {
            'attributes.region': { to: 'eu' },
            'attributes.tier': { to: 'gold' },
            owner_id: { to: owner },
          },
          op,
        },
      ]);
    });

    it('registers a resource with neither attributes nor owner, recording resource.created without changes', async () => {
      const { service, sink } = setup();
      const { resource, created } = await service.put('document', 'empty', {}, op);
      expect(created).to.equal(true);
      expect(resource).to.include({ owner_id: null, registered: true });
      expect(resource.attributes).to.deep.equal({});
      expect(sink.events.map((e) => [e.type, e.changes])).to.deep.equal([['resource.created', {}]]);
    });

    it('registers a resource a policy named first: not created, but resource.created', async () => {
      const { service, sink, repo } = setup();
      repo.seedNamed('document', 'named');
      const { resource, created } = await service.put(
        'document',
        'named',
        { attributes: { tier: 'gold' } },
        op,
      );
      expect(created).to.equal(false);
      expect(resource.registered).to.equal(true);
      expect(sink.events.map((e) => [e.type, e.changes])).to.deep.equal([
        ['resource.created', { 'attributes.tier': { to: 'gold' } }],
      ]);
    });

    const changes: [string, { attributes?: Attributes; owner?: 'same' | 'other' | null }, Changes][] = [
      [
        'an attribute added',
        { attributes: { tier: 'gold', env: 'prod', region: 'eu' } },
        { 'attributes.region': { to: 'eu' } },
      ],
      [
        'an attribute changed',
        { attributes: { tier: 'silver', env: 'prod' } },
        { 'attributes.tier': { from: 'gold', to: 'silver' } },
      ],
      ['an attribute removed', { attributes: { tier: 'gold' } }, { 'attributes.env': { from: 'prod' } }],
      [
        'attributes left out, which removes them all',
        { attributes: undefined },
        { 'attributes.env': { from: 'prod' }, 'attributes.tier': { from: 'gold' } },
      ],
      ['the owner cleared', { owner: null }, { owner_id: { from: 'OWNER' } }],
      ['the owner replaced', { owner: 'other' }, { owner_id: { from: 'OWNER', to: 'OTHER' } }],
    ];
    for (const [what, input, expected] of changes) {
      it(`re-registers with ${what}: resource.updated with only what changed`, async () => {
        const { service, sink, repo, owners } = setup();
        const owner = owners.add();
        const other = owners.add();
        repo.seed('document', 'plan', { attributes: { tier: 'gold', env: 'prod' }, owner_id: owner });
        const attributes = 'attributes' in input ? input.attributes : { tier: 'gold', env: 'prod' };
        const ownerId = input.owner === undefined ? owner : input.owner === null ? null : other;
        const { resource, created } = await service.put(
          'document',
          'plan',
          { ...(attributes ? { attributes } : {}), owner_id: ownerId },
          op,
        );
        expect(created).to.equal(false);
        expect(resource.attributes).to.deep.equal(attributes ?? {});
        expect(resource.owner_id).to.equal(ownerId);
        const named = JSON.parse(
          JSON.stringify(expected).replaceAll('OWNER', owner).replaceAll('OTHER', other),
        );
        expect(sink.events).to.deep.equal([
          { type: 'resource.updated', target: target('document', 'plan'), changes: named, op },
        ]);
      });
    }

    it('writes nothing and records nothing when the registration is the same', async () => {
      const { service, sink, repo, owners } = setup();
      const owner = owners.add();
      repo.seed('document', 'plan', { attributes: { tier: 'gold', env: 'prod' }, owner_id: owner });
      const { resource, created } = await service.put(
        'document',
        'plan',
        { attributes: { env: 'prod', tier: 'gold' }, owner_id: owner },
        op,
      );
      expect(created).to.equal(false);
      expect(resource.updated_at).to.equal(EARLIER);
      expect(repo.calls).to.deep.equal(['lock']);
      expect(sink.events).to.deep.equal([]);
    });

    const owners: [string, string | undefined, 'registers' | 'refuses'][] = [
      ['an active principal', 'active', 'registers'],
      ['a suspended principal', 'suspended', 'registers'],
      ['a deprovisioned principal', 'deprovisioned', 'registers'],
      ['a deleted principal', 'deleted', 'refuses'],
      ['an unknown principal', undefined, 'refuses'],
    ];
    for (const [what, status, outcome] of owners) {
      it(`${outcome === 'registers' ? 'registers' : 'refuses with REFERENCE_NOT_FOUND'} a resource owned by ${what}`, async () => {
        const { service, sink, repo, owners: principals } = setup();
        const owner = status === undefined ? newId('principal') : principals.add(status);
        const work = service.put('document', 'plan', { owner_id: owner }, op);
        if (outcome === 'registers') {
          expect((await work).resource.owner_id).to.equal(owner);
          expect(sink.types()).to.deep.equal(['resource.created']);
          return;
        }
        const err = expectCode(await rejection(work), 'REFERENCE_NOT_FOUND');
        expect(err.message).to.equal(`principal ${owner} does not exist`);
        expect(err.errors).to.deep.equal([{ pointer: '/owner_id', message: 'names no existing principal' }]);
        expect(repo.calls).to.deep.equal([]);
        expect(repo.resources.size).to.equal(0);
        expect(sink.events).to.deep.equal([]);
      });
    }
  });

  describe('get and list', () => {
    it('answers NOT_FOUND naming type and identifier', async () => {
      const { service } = setup();
      const err = expectCode(await rejection(service.get('document', 'nope')), 'NOT_FOUND');
      expect(err.message).to.equal('resource document:nope does not exist');
    });

    it('passes absent filters on as null', async () => {
      const { service, repo } = setup();
      repo.seed('document', 'a');
      repo.seedNamed('folder', 'b');
      const all = await service.list({}, FIRST_PAGE);
      expect(all.total).to.equal(2);
      const named = await service.list({ type: 'folder', registered: false }, FIRST_PAGE);
      expect(named.items.map((r) => r.identifier)).to.deep.equal(['b']);
      expect(repo.calls).to.deep.equal(['list:null:null', 'list:folder:false']);
    });
  });

  describe('delete', () => {
    for (const policies of [0, 2]) {
      it(`takes a registration back and records what it held (${policies} policies naming it)`, async () => {
        const { service, sink, repo } = setup();
        if (policies > 0) repo.named.set('document:plan', policies);
        repo.seed('document', 'plan', { attributes: { tier: 'gold' }, owner_id: 'prn_owner' });
        const deleted = await service.delete('document', 'plan', op);
        expect(deleted).to.deep.equal({
          type: 'document',
          identifier: 'plan',
          deleted: true,
          named_by_policies: policies,
        });
        expect(repo.resources.get('document:plan')?.registered).to.equal(policies > 0 ? false : undefined);
        expect(sink.events).to.deep.equal([
          {
            type: 'resource.deleted',
            target: target('document', 'plan'),
            changes: { 'attributes.tier': { from: 'gold' }, owner_id: { from: 'prn_owner' } },
            op,
          },
        ]);
      });
    }

    it('records no owner change for a resource without an owner', async () => {
      const { service, sink, repo } = setup();
      repo.seed('document', 'plan');
      await service.delete('document', 'plan', op);
      expect(sink.events.map((e) => e.changes)).to.deep.equal([{}]);
    });

    const missing: [string, (repo: FakeResources) => void][] = [
      ['an unknown resource', () => undefined],
      ['a resource a policy only names', (repo) => repo.seedNamed('document', 'plan')],
    ];
    for (const [what, arrange] of missing) {
      it(`answers NOT_FOUND for ${what} and records nothing`, async () => {
        const { service, sink, repo } = setup();
        arrange(repo);
        const err = expectCode(await rejection(service.delete('document', 'plan', op)), 'NOT_FOUND');
        expect(err.message).to.equal('registered resource document:plan does not exist');
        expect(repo.calls).to.not.include('unregister');
        expect(sink.events).to.deep.equal([]);
      });
    }
  });
});
