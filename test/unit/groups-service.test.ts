import { expect } from 'chai';
import { AppError, conflict } from '../../src/errors/errors.js';
import { newId } from '../../src/ids.js';
import type { Page } from '../../src/pagination.js';
import { groupNameKey } from '../../src/groups/model.js';
import {
  type Group,
  type GroupChanges,
  type LockedGroup,
  type MemberRow,
  type NewGroup,
} from '../../src/groups/repository.js';
import { GroupService, MAX_NESTING_LEVELS, type GroupRepository } from '../../src/groups/service.js';
import {
  FakeDatabase,
  FakeEventSink,
  FIRST_PAGE,
  operation,
  rejection,
  type RecordedEvent,
} from '../helpers/fakes.js';

const EARLIER = '2020-01-01T00:00:00.000Z';

interface FakePrincipal {
  id: string;
  name: string;
  type: Exclude<MemberRow['type'], 'GROUP'>;
  email: string | null;
  status: string;
}

/**
 * The group repository over Maps: groups, principals, and MEMBER_OF edges (member → group →
 * when it joined). Names are unique per source as the `name_key` constraint makes them, and a
 * clash fails as the database reports a constraint violation. `calls` logs what was asked.
 */
class FakeGroups implements GroupRepository {
  readonly groups = new Map<string, LockedGroup>();
  readonly principals = new Map<string, FakePrincipal>();
  readonly edges = new Map<string, Map<string, string>>();
  readonly calls: string[] = [];

  seedGroup(fields: Partial<LockedGroup> & { name: string }): LockedGroup {
    const group: LockedGroup = {
      id: newId('group'),
      description: null,
      source: 'api',
      connector_source: null,
      connector_id: null,
      created_at: EARLIER,
      created_by: 'cli_seed',
      updated_at: EARLIER,
      ...fields,
    };
    this.groups.set(group.id, group);
    return group;
  }

  seedPrincipal(fields: Partial<FakePrincipal> & { name: string }): FakePrincipal {
    const principal: FakePrincipal = {
      id: newId('principal'),
      type: 'USER',
      email: null,
      status: 'active',
      ...fields,
    };
    this.principals.set(principal.id, principal);
    return principal;
  }

  /** Makes `memberId` a member of `groupId` directly in the store. */
  join(groupId: string, memberId: string, addedAt = EARLIER): void {
    const joined = this.edges.get(memberId) ?? new Map<string, string>();
    joined.set(groupId, addedAt);
    this.edges.set(memberId, joined);
  }

  /** A chain of `length` groups, each nested inside the one before. */
  chain(prefix: string, length: number): LockedGroup[] {
    const groups = Array.from({ length }, (_, i) => this.seedGroup({ name: `${prefix}-${i}` }));
    for (let i = 1; i < length; i += 1) this.join(groups[i - 1]!.id, groups[i]!.id);
    return groups;
  }

  async create(_tx: unknown, g: NewGroup, now: string): Promise<Group> {
    this.calls.push('create');
    this.checkUnique(g.name, g.source === 'connector' ? g.connectorSource : null, null);
    this.groups.set(g.id, {
      id: g.id,
      name: g.name,
      description: g.description,
      source: g.source,
      connector_source: g.connectorSource,
      connector_id: g.connectorId,
      created_at: now,
      created_by: g.createdBy,
      updated_at: now,
    });
    return this.view(g.id)!;
  }

  async get(_tx: unknown, id: string): Promise<Group | undefined> {
    this.calls.push('get');
    return this.view(id);
  }

  async lock(_tx: unknown, id: string): Promise<LockedGroup | undefined> {
    this.calls.push('lock');
    const group = this.groups.get(id);
    return group && { ...group };
  }

  async list(
    _tx: unknown,
    filter: { connectorSource: string | null },
    page: Page,
  ): Promise<{ total: number; groups: Group[] }> {
    this.calls.push(`list:${filter.connectorSource}`);
    const all = [...this.groups.values()]
      .filter((g) => filter.connectorSource === null || g.connector_source === filter.connectorSource)
      .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    return {
      total: all.length,
      groups: all.slice(page.skip, page.skip + page.limit).map((g) => this.view(g.id)!),
    };
  }

  async update(_tx: unknown, current: LockedGroup, changes: GroupChanges, now: string): Promise<Group> {
    this.calls.push('update');
    const group = this.groups.get(current.id)!;
    if (changes.name !== undefined) {
      this.checkUnique(changes.name, group.source === 'connector' ? group.connector_source : null, group.id);
    }
    this.groups.set(group.id, {
      ...group,
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      updated_at: now,
    });
    return this.view(group.id)!;
  }

  async delete(_tx: unknown, id: string): Promise<{ members: number; groups: string[] }> {
    this.calls.push('delete');
    const members = this.directMembers(id).length;
    const groups = [...(this.edges.get(id)?.keys() ?? [])];
    this.groups.delete(id);
    this.edges.delete(id);
    for (const joined of this.edges.values()) joined.delete(id);
    return { members, groups };
  }

  async lockNesting(): Promise<void> {
    this.calls.push('lockNesting');
  }

  async lockMember(
    _tx: unknown,
    groupId: string,
    memberId: string,
  ): Promise<{ member: MemberRow & { status: string | null }; addedAt: string | null } | undefined> {
    this.calls.push('lockMember');
    const addedAt = this.edges.get(memberId)?.get(groupId) ?? null;
    const principal = this.principals.get(memberId);
    if (principal) return { member: { ...principal }, addedAt };
    const group = this.groups.get(memberId);
    if (group) {
      return {
        member: { id: group.id, name: group.name, type: 'GROUP', email: null, status: null },
        addedAt,
      };
    }
    return undefined;
  }

  async nestingCheck(
    _tx: unknown,
    groupId: string,
    memberId: string,
  ): Promise<{ cycle: boolean; levels: number }> {
    this.calls.push('nestingCheck');
    const parents = (id: string): string[] => [...(this.edges.get(id)?.keys() ?? [])];
    const children = (id: string): string[] => this.directMembers(id).filter((m) => this.groups.has(m));
    const longest = (id: string, next: (id: string) => string[]): number =>
      Math.max(0, ...next(id).map((n) => 1 + longest(n, next)));
    const reaches = (from: string, to: string): boolean =>
      parents(from).some((p) => p === to || reaches(p, to));
    return {
      cycle: groupId === memberId || reaches(groupId, memberId),
      levels: longest(memberId, children) + longest(groupId, parents) + 2,
    };
  }

  async addMember(
    _tx: unknown,
    groupId: string,
    memberId: string,
    _addedBy: string,
    now: string,
  ): Promise<string> {
    this.calls.push('addMember');
    this.join(groupId, memberId, now);
    return now;
  }

  async removeMember(_tx: unknown, groupId: string, memberId: string): Promise<boolean> {
    this.calls.push('removeMember');
    return this.edges.get(memberId)?.delete(groupId) ?? false;
  }

  async members(
    _tx: unknown,
    id: string,
    transitive: boolean,
    page: Page,
  ): Promise<{ total: number; members: MemberRow[] } | undefined> {
    if (!this.groups.has(id)) return undefined;
    const found = new Set<string>();
    const walk = (groupId: string): void => {
      for (const member of this.directMembers(groupId)) {
        if (found.has(member)) continue;
        found.add(member);
        if (transitive && this.groups.has(member)) walk(member);
      }
    };
    walk(id);
    const rows: MemberRow[] = [...found].map((m) => {
      const p = this.principals.get(m);
      if (p) return { id: p.id, name: p.name, type: p.type, email: p.email };
      return { id: m, name: this.groups.get(m)!.name, type: 'GROUP', email: null };
    });
    return { total: rows.length, members: rows.slice(page.skip, page.skip + page.limit) };
  }

  private directMembers(groupId: string): string[] {
    return [...this.edges.entries()]
      .filter(([member, joined]) => joined.has(groupId) && this.principals.get(member)?.status !== 'deleted')
      .map(([member]) => member);
  }

  private view(id: string): Group | undefined {
    const group = this.groups.get(id);
    return group && { ...group, member_count: this.directMembers(id).length };
  }

  private checkUnique(name: string, connectorSource: string | null, self: string | null): void {
    const key = groupNameKey(name, connectorSource);
    for (const g of this.groups.values()) {
      const theirs = groupNameKey(g.name, g.source === 'connector' ? g.connector_source : null);
      if (g.id !== self && theirs === key) {
        throw conflict('a resource with the same unique value already exists');
      }
    }
  }
}

function setup() {
  const db = new FakeDatabase();
  const sink = new FakeEventSink();
  const repo = new FakeGroups();
  const service = new GroupService(db, sink, repo);
  return { db, sink, repo, service };
}

const op = operation('cli_admin');

function expectCode(err: Error, code: string): AppError {
  expect(err).to.be.instanceOf(AppError);
  expect((err as AppError).code).to.equal(code);
  return err as AppError;
}

describe('group service', () => {
  describe('create', () => {
    const cases: [string, { name: string; description?: string }, RecordedEvent['changes']][] = [
      ['a name only', { name: 'Engineering' }, { name: { to: 'Engineering' } }],
      [
        'a name and a description',
        { name: 'Engineering', description: 'builders' },
        { name: { to: 'Engineering' }, description: { to: 'builders' } },
      ],
      [
        'a name with surrounding space (trimmed)',
        { name: '  Engineering \t' },
        { name: { to: 'Engineering' } },
      ],
    ];
    for (const [what, input, changes] of cases) {
      it(`creates an API group from ${what} and records group.created`, async () => {
        const { service, sink, repo } = setup();
        const group = await service.create(input, op);
        expect(group).to.include({
          name: 'Engineering',
          description: input.description ?? null,
          source: 'api',
          connector_source: null,
          connector_id: null,
          created_by: 'cli_admin',
          member_count: 0,
        });
        expect(group.id).to.match(/^grp_/);
        expect([...repo.groups.keys()]).to.deep.equal([group.id]);
        expect(sink.events).to.deep.equal([
          { type: 'group.created', target: { type: 'group', id: group.id }, changes, op },
        ]);
      });
    }

    it('names the clash when the name is taken, whatever its case, and records nothing', async () => {
      const { service, sink, repo } = setup();
      repo.seedGroup({ name: 'Engineering' });
      const err = expectCode(await rejection(service.create({ name: ' ENGINEERING ' }, op)), 'CONFLICT');
      expect(err.message).to.equal('a group named "ENGINEERING" already exists');
      expect(repo.groups.size).to.equal(1);
      expect(sink.events).to.deep.equal([]);
    });

    it('takes a name a connector group holds: names are unique per source', async () => {
      const { service, repo } = setup();
      repo.seedGroup({ name: 'Engineering', source: 'connector', connector_source: 'okta' });
      const group = await service.create({ name: 'engineering' }, op);
      expect(group.source).to.equal('api');
      expect(repo.groups.size).to.equal(2);
    });

    it('answers what the first run committed when a commit answer was lost', async () => {
      const { service, sink, repo, db } = setup();
      db.lostCommitAnswers = 1;
      const group = await service.create({ name: 'Engineering', description: 'builders' }, op);
      expect([...repo.groups.keys()]).to.deep.equal([group.id]);
      expect(repo.calls.filter((c) => c === 'create')).to.have.length(1);
      expect(sink.types()).to.deep.equal(['group.created']);
    });
  });

  describe('get and list', () => {
    it('answers NOT_FOUND for an unknown group', async () => {
      const { service } = setup();
      const id = newId('group');
      const err = expectCode(await rejection(service.get(id)), 'NOT_FOUND');
      expect(err.message).to.equal(`group ${id} does not exist`);
    });

    it('lists with no connector filter as null, and answers the page it was asked for', async () => {
      const { service, repo } = setup();
      repo.seedGroup({ name: 'b' });
      repo.seedGroup({ name: 'a' });
      repo.seedGroup({ name: 'c', source: 'connector', connector_source: 'okta' });
      const all = await service.list({}, FIRST_PAGE);
      expect(all.total).to.equal(3);
      expect(all.items.map((g) => g.name)).to.deep.equal(['a', 'b', 'c']);
      expect(all.page).to.equal(FIRST_PAGE);
      const okta = await service.list({ connectorSource: 'okta' }, FIRST_PAGE);
      expect(okta.items.map((g) => g.name)).to.deep.equal(['c']);
      expect(repo.calls).to.deep.equal(['list:null', 'list:okta']);
    });
  });

  describe('update', () => {
    const cases: [string, { name?: string; description?: string | null }, RecordedEvent['changes']][] = [
      ['a new name', { name: 'Builders' }, { name: { from: 'Engineering', to: 'Builders' } }],
      [
        'a new name with surrounding space (trimmed)',
        { name: ' Builders ' },
        { name: { from: 'Engineering', to: 'Builders' } },
      ],
      ['a new description', { description: 'new' }, { description: { from: 'old', to: 'new' } }],
      [
        'a null description, which clears it',
        { description: null },
        { description: { from: 'old', to: null } },
      ],
      [
        'both, of which only the name changes',
        { name: 'Builders', description: 'old' },
        { name: { from: 'Engineering', to: 'Builders' } },
      ],
    ];
    for (const [what, patch, changes] of cases) {
      it(`writes ${what} and records only the fields that changed`, async () => {
        const { service, sink, repo } = setup();
        const group = repo.seedGroup({ name: 'Engineering', description: 'old' });
        const updated = await service.update(group.id, patch, op);
        expect(updated.name).to.equal(patch.name?.trim() ?? 'Engineering');
        expect(updated.description).to.equal(patch.description === undefined ? 'old' : patch.description);
        expect(updated.updated_at).to.not.equal(EARLIER);
        expect(sink.events).to.deep.equal([
          { type: 'group.updated', target: { type: 'group', id: group.id }, changes, op },
        ]);
      });
    }

    const noops: [string, { name?: string; description?: string | null }][] = [
      ['the same name', { name: 'Engineering' }],
      ['the same name with surrounding space', { name: '  Engineering  ' }],
      ['the same description', { description: 'old' }],
      ['the same name and description', { name: 'Engineering', description: 'old' }],
    ];
    for (const [what, patch] of noops) {
      it(`writes nothing and records nothing for ${what}`, async () => {
        const { service, sink, repo } = setup();
        const group = repo.seedGroup({ name: 'Engineering', description: 'old' });
        const answered = await service.update(group.id, patch, op);
        expect(answered).to.include({ name: 'Engineering', description: 'old', updated_at: EARLIER });
        expect(repo.calls).to.not.include('update');
        expect(sink.events).to.deep.equal([]);
      });
    }

    it('names the clash on a rename to a taken name and records nothing', async () => {
      const { service, sink, repo } = setup();
      repo.seedGroup({ name: 'Builders' });
      const group = repo.seedGroup({ name: 'Engineering' });
      const err = expectCode(await rejection(service.update(group.id, { name: 'builders' }, op)), 'CONFLICT');
      expect(err.message).to.equal('a group named "builders" already exists');
      expect(repo.groups.get(group.id)!.name).to.equal('Engineering');
      expect(sink.events).to.deep.equal([]);
    });

    it('lets a group change the case of its own name', async () => {
      const { service, sink, repo } = setup();
      const group = repo.seedGroup({ name: 'engineering' });
      expect((await service.update(group.id, { name: 'Engineering' }, op)).name).to.equal('Engineering');
      expect(sink.types()).to.deep.equal(['group.updated']);
    });
  });

  describe('delete', () => {
    it('records the name, and the description, members and parent groups only when there are any', async () => {
      const { service, sink, repo } = setup();
      const bare = repo.seedGroup({ name: 'bare' });
      const full = repo.seedGroup({ name: 'full', description: 'has it all' });
      const parentB = repo.seedGroup({ name: 'parent-b' });
      const parentA = repo.seedGroup({ name: 'parent-a' });
      // The store answers the parent groups in no particular order (here: newest first); the
      // event lists them sorted, and ids sort by creation.
      repo.join(parentA.id, full.id);
      repo.join(parentB.id, full.id);
      repo.join(full.id, repo.seedPrincipal({ name: 'ann' }).id);
      repo.join(full.id, repo.seedPrincipal({ name: 'bob' }).id);

      const deleted = await service.delete(bare.id, operation('cli_deleter'));
      expect(deleted).to.include({ id: bare.id, status: 'deleted', deleted_by: 'cli_deleter' });
      expect(Date.parse(deleted.deleted_at)).to.be.closeTo(Date.now(), 5_000);
      await service.delete(full.id, op);

      expect(repo.groups.has(bare.id)).to.equal(false);
      expect(repo.groups.has(full.id)).to.equal(false);
      expect(sink.events.map((e) => e.changes)).to.deep.equal([
        { name: { from: 'bare' } },
        {
          name: { from: 'full' },
          description: { from: 'has it all' },
          member_count: { from: 2 },
          groups: { from: [parentB.id, parentA.id], to: [] },
        },
      ]);
      expect(sink.events.map((e) => e.target)).to.deep.equal([
        { type: 'group', id: bare.id },
        { type: 'group', id: full.id },
      ]);
    });
  });

  describe('writes to a group the API may not change', () => {
    const writes: [string, (s: GroupService, groupId: string, memberId: string) => Promise<unknown>][] = [
      ['update', (s, g) => s.update(g, { name: 'renamed' }, op)],
      ['delete', (s, g) => s.delete(g, op)],
      ['addMember', (s, g, m) => s.addMember(g, m, op)],
      ['removeMember', (s, g, m) => s.removeMember(g, m, op)],
    ];
    for (const [name, write] of writes) {
      it(`${name} refuses a connector group with PRINCIPAL_MANAGED_BY_CONNECTOR and records nothing`, async () => {
        const { service, sink, repo } = setup();
        const group = repo.seedGroup({ name: 'synced', source: 'connector', connector_source: 'okta' });
        const member = repo.seedPrincipal({ name: 'ann' });
        repo.join(group.id, member.id);
        const err = expectCode(
          await rejection(write(service, group.id, member.id)),
          'PRINCIPAL_MANAGED_BY_CONNECTOR',
        );
        expect(err.message).to.contain(group.id).and.contain('(okta)');
        expect(repo.groups.get(group.id)!.name).to.equal('synced');
        expect(repo.edges.get(member.id)?.has(group.id)).to.equal(true);
        expect(repo.calls.filter((c) => !['lock', 'lockNesting'].includes(c))).to.deep.equal([]);
        expect(sink.events).to.deep.equal([]);
      });

      it(`${name} answers NOT_FOUND for an unknown group`, async () => {
        const { service, sink, repo } = setup();
        const member = repo.seedPrincipal({ name: 'ann' });
        const id = newId('group');
        const err = expectCode(await rejection(write(service, id, member.id)), 'NOT_FOUND');
        expect(err.message).to.equal(`group ${id} does not exist`);
        expect(sink.events).to.deep.equal([]);
      });
    }
  });

  describe('members', () => {
    it('answers NOT_FOUND for an unknown group', async () => {
      const { service } = setup();
      expectCode(await rejection(service.members(newId('group'), false, FIRST_PAGE)), 'NOT_FOUND');
    });

    it('shows principals with their email and nested groups as GROUP summaries', async () => {
      const { service, repo } = setup();
      const outer = repo.seedGroup({ name: 'outer' });
      const inner = repo.seedGroup({ name: 'inner' });
      const ann = repo.seedPrincipal({ name: 'ann', email: 'ann@example.test' });
      const bot = repo.seedPrincipal({ name: 'bot', type: 'SERVICE_ACCOUNT' });
      repo.join(outer.id, ann.id);
      repo.join(outer.id, inner.id);
      repo.join(inner.id, bot.id);

      const direct = await service.members(outer.id, false, FIRST_PAGE);
      expect(direct.total).to.equal(2);
      expect(direct.items).to.have.deep.members([
        { id: ann.id, name: 'ann', type: 'USER', email: 'ann@example.test' },
        { id: inner.id, name: 'inner', type: 'GROUP' },
      ]);
      const everyone = await service.members(outer.id, true, FIRST_PAGE);
      expect(everyone.items.map((m) => m.id)).to.have.members([ann.id, inner.id, bot.id]);
      expect(everyone.items.find((m) => m.id === bot.id)).to.deep.equal({
        id: bot.id,
        name: 'bot',
        type: 'SERVICE_ACCOUNT',
        email: null,
      });
    });
  });

  describe('addMember', () => {
    it('adds a principal without the nesting lock, and records group.member_added', async () => {
      const { service, sink, repo } = setup();
      const group = repo.seedGroup({ name: 'team' });
      const ann = repo.seedPrincipal({ name: 'ann', email: 'ann@example.test' });
      const added = await service.addMember(group.id, ann.id, op);
      expect(added.group_id).to.equal(group.id);
      expect(added.member).to.deep.equal({
        id: ann.id,
        name: 'ann',
        type: 'USER',
        email: 'ann@example.test',
      });
      expect(repo.edges.get(ann.id)?.get(group.id)).to.equal(added.added_at);
      expect(repo.calls).to.deep.equal(['lock', 'lockMember', 'addMember']);
      expect(sink.events).to.deep.equal([
        {
          type: 'group.member_added',
          target: { type: 'group', id: group.id },
          changes: { members: { to: ann.id } },
          op,
        },
      ]);
    });

    it('nests a group under the nesting lock, taken before the group lock, after checking the nesting', async () => {
      const { service, sink, repo } = setup();
      const outer = repo.seedGroup({ name: 'outer' });
      const inner = repo.seedGroup({ name: 'inner' });
      const added = await service.addMember(outer.id, inner.id, op);
      expect(added.member).to.deep.equal({ id: inner.id, name: 'inner', type: 'GROUP' });
      expect(repo.calls).to.deep.equal(['lockNesting', 'lock', 'lockMember', 'nestingCheck', 'addMember']);
      expect(sink.types()).to.deep.equal(['group.member_added']);
    });

    it('answers an existing membership with its original time and records nothing', async () => {
      const { service, sink, repo } = setup();
      const group = repo.seedGroup({ name: 'team' });
      const ann = repo.seedPrincipal({ name: 'ann' });
      repo.join(group.id, ann.id, EARLIER);
      expect((await service.addMember(group.id, ann.id, op)).added_at).to.equal(EARLIER);
      expect(repo.calls).to.not.include('addMember');
      expect(sink.events).to.deep.equal([]);
    });

    it('answers a deleted principal that is a member already as before, and refuses to add one that is not', async () => {
      const { service, sink, repo } = setup();
      const group = repo.seedGroup({ name: 'team' });
      const member = repo.seedPrincipal({ name: 'gone-member', status: 'deleted' });
      const outsider = repo.seedPrincipal({ name: 'gone-outsider', status: 'deleted' });
      repo.join(group.id, member.id, EARLIER);
      expect((await service.addMember(group.id, member.id, op)).added_at).to.equal(EARLIER);
      const err = expectCode(
        await rejection(service.addMember(group.id, outsider.id, op)),
        'PRINCIPAL_DELETED',
      );
      expect(err.message).to.equal(`principal ${outsider.id} is deleted`);
      expect(repo.edges.has(outsider.id)).to.equal(false);
      expect(sink.events).to.deep.equal([]);
    });

    const unknown: [string, string, string][] = [
      ['principal', newId('principal'), 'principal'],
      ['group', newId('group'), 'group'],
      ['malformed', 'not-an-id', 'principal'],
    ];
    for (const [what, memberId, named] of unknown) {
      it(`answers NOT_FOUND naming the ${named} for an unknown ${what} id`, async () => {
        const { service, sink, repo } = setup();
        const group = repo.seedGroup({ name: 'team' });
        const err = expectCode(await rejection(service.addMember(group.id, memberId, op)), 'NOT_FOUND');
        expect(err.message).to.equal(`${named} ${memberId} does not exist`);
        expect(sink.events).to.deep.equal([]);
      });
    }

    it('refuses a group inside itself with CYCLE_DETECTED', async () => {
      const { service, sink, repo } = setup();
      const group = repo.seedGroup({ name: 'team' });
      const err = expectCode(await rejection(service.addMember(group.id, group.id, op)), 'CYCLE_DETECTED');
      expect(err.message).to.equal(`group ${group.id} cannot be a member of itself`);
      expect(repo.edges.size).to.equal(0);
      expect(sink.events).to.deep.equal([]);
    });

    it('refuses a nesting that closes a cycle, directly or indirectly, with CYCLE_DETECTED', async () => {
      const { service, sink, repo } = setup();
      const [top, middle, bottom] = repo.chain('c', 3) as [LockedGroup, LockedGroup, LockedGroup];
      for (const [groupId, memberId] of [
        [middle.id, top.id],
        [bottom.id, top.id],
      ] as const) {
        const err = expectCode(await rejection(service.addMember(groupId, memberId, op)), 'CYCLE_DETECTED');
        expect(err.message).to.equal(
          `group ${groupId} is already nested inside ${memberId}, directly or indirectly`,
        );
      }
      expect(repo.calls).to.not.include('addMember');
      expect(sink.events).to.deep.equal([]);
    });

    // A chain of `above` groups (the new parent innermost) gets a chain of `below` groups (the
    // new member outermost) nested inside: the result has above + below levels.
    const depths: [number, number, 'allowed' | 'refused'][] = [
      [1, MAX_NESTING_LEVELS - 1, 'allowed'],
      [MAX_NESTING_LEVELS - 1, 1, 'allowed'],
      [8, 8, 'allowed'],
      [1, MAX_NESTING_LEVELS, 'refused'],
      [MAX_NESTING_LEVELS, 1, 'refused'],
      [8, 9, 'refused'],
    ];
    for (const [above, below, outcome] of depths) {
      it(`${outcome === 'allowed' ? 'allows' : 'refuses with CONFLICT'} joining chains of ${above} and ${below} groups`, async () => {
        const { service, sink, repo } = setup();
        const upper = repo.chain('up', above);
        const lower = repo.chain('low', below);
        const parent = upper[above - 1]!.id;
        const child = lower[0]!.id;
        const work = service.addMember(parent, child, op);
        if (outcome === 'allowed') {
          await work;
          expect(repo.edges.get(child)?.has(parent)).to.equal(true);
          expect(sink.types()).to.deep.equal(['group.member_added']);
        } else {
          const err = expectCode(await rejection(work), 'CONFLICT');
          expect(err.message).to.equal(
            `nesting ${child} inside ${parent} would make a chain of ${above + below} groups; at most ${MAX_NESTING_LEVELS} are allowed`,
          );
          expect(repo.edges.has(child)).to.equal(false);
          expect(sink.events).to.deep.equal([]);
        }
      });
    }
  });

  describe('removeMember', () => {
    it('removes a member and records group.member_removed; a second removal says false and records nothing', async () => {
      const { service, sink, repo } = setup();
      const group = repo.seedGroup({ name: 'team' });
      const ann = repo.seedPrincipal({ name: 'ann' });
      repo.join(group.id, ann.id);
      expect(await service.removeMember(group.id, ann.id, op)).to.deep.equal({
        group_id: group.id,
        member_id: ann.id,
        removed: true,
      });
      expect(repo.edges.get(ann.id)?.has(group.id)).to.equal(false);
      expect((await service.removeMember(group.id, ann.id, op)).removed).to.equal(false);
      expect(sink.events).to.deep.equal([
        {
          type: 'group.member_removed',
          target: { type: 'group', id: group.id },
          changes: { members: { from: ann.id } },
          op,
        },
      ]);
    });
  });
});
