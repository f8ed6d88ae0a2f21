import { expect } from 'chai';
import fc from 'fast-check';
import { fromProperties } from '../../src/principals/model.js';
import type { ExistingUser } from '../../src/scim/repository.js';
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from '../../src/scim/schema.js';
import {
  planGroups,
  planGroupsSteps,
  planUsers,
  planUsersSteps,
  readSnapshot,
  resolveMembers,
  SnapshotReader,
  type CurrentGroup,
  type GroupsPlan,
  type Snapshot,
  type SnapshotUser,
  type UsersPlan,
} from '../../src/scim/sync-plan.js';

type Json = Record<string, unknown>;

const user = (userName: string, extra: Json = {}): Json => ({ schemas: [USER_SCHEMA], userName, ...extra });
const group = (displayName: string, members: string[] = [], extra: Json = {}): Json => ({
  schemas: [GROUP_SCHEMA],
  displayName,
  ...(members.length > 0 ? { members: members.map((value) => ({ value })) } : {}),
  ...extra,
});
const managedBy = (ref: string): Json => ({ [ENTERPRISE_SCHEMA]: { manager: { value: ref } } });

const snapshotOf = (...items: (Json | string)[]): Snapshot =>
  readSnapshot(items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n'));

/** The snapshot's one user, read as the sync reads it. */
function readOne(json: Json): SnapshotUser {
  const { users, errors } = snapshotOf(json);
  expect(errors).to.deep.equal([]);
  return users[0]!;
}

/**
 * A user of the connector as cypher/scim/sync_users reads it, stored from `json` as a previous
 * sync would have written it.
 */
function stored(
  id: string,
  json: Json,
  options: { status?: 'active' | 'suspended'; name?: string; managerId?: string; managerRef?: string } = {},
): ExistingUser {
  const { scim, fields } = readOne(json);
  return {
    principal: fromProperties({
      id,
      type: 'USER',
      name: options.name ?? fields.name,
      status: options.status ?? (fields.active ? 'active' : 'suspended'),
      connector_source: 'okta',
      ...(fields.externalId ? { connector_id: fields.externalId } : {}),
    }),
    scim: JSON.stringify(scim),
    userName: fields.userName.toLowerCase(),
    managerId: options.managerId ?? null,
    managerRef: options.managerRef ?? null,
  };
}

/** New principal ids in the order they are asked for. */
function ids(): () => string {
  let n = 0;
  return () => `prn_new${++n}`;
}

const plan = (snapshot: Snapshot, current: ExistingUser[] = []): UsersPlan =>
  planUsers(snapshot, current, ids());
const userNames = (list: { user: SnapshotUser }[]): string[] => list.map((c) => c.user.fields.userName);

describe('SCIM sync plan', () => {
  describe('reading a snapshot', () => {
    const cases: { name: string; line: string; detail: string }[] = [
      { name: 'a line that is not JSON', line: '{"userName":', detail: 'not a JSON value' },
      { name: 'a JSON value that is not an object', line: '["ann"]', detail: 'not a JSON object' },
      {
        name: 'a User without userName',
        line: JSON.stringify({ schemas: [USER_SCHEMA], displayName: 'Ann' }),
        detail: 'userName is required and must be a non-empty string',
      },
      {
        name: 'a User whose externalId is not a string',
        line: JSON.stringify(user('ann', { externalId: 7 })),
        detail: 'externalId must be a string',
      },
      {
        name: 'a Group without displayName',
        line: JSON.stringify({ schemas: [GROUP_SCHEMA] }),
        detail: 'displayName is required and must be a non-empty string',
      },
      {
        name: 'a Group member without a value',
        line: JSON.stringify({ displayName: 'Ops', members: [{ value: '' }] }),
        detail: 'members[0].value must be a member id',
      },
    ];
    for (const c of cases) {
      it(`reports ${c.name} with its line and takes nothing from it`, () => {
        const read = readSnapshot(['', JSON.stringify(user('ann')), c.line].join('\n'));
        expect(read.errors).to.deep.equal([{ line: 3, detail: c.detail }]);
        expect(read.lines).to.equal(2);
        expect(read.users.map((u) => u.fields.userName)).to.deep.equal(['ann']);
        expect(read.groups).to.deep.equal([]);
      });
    }

    it('tells users from groups by their schemas, else by a userName, and numbers lines from one', () => {
      const read = readSnapshot(
        [
          JSON.stringify({ userName: 'bare-user' }),
          '   ',
          JSON.stringify({ displayName: 'Bare group' }),
          JSON.stringify(group('Typed group', [], { userName: 'not a user' })),
          JSON.stringify(user('typed-user')),
        ].join('\n'),
      );
      expect(read.lines).to.equal(4);
      expect(read.users.map((u) => [u.line, u.fields.userName])).to.deep.equal([
        [1, 'bare-user'],
        [5, 'typed-user'],
      ]);
      expect(read.groups.map((g) => [g.line, g.fields.displayName])).to.deep.equal([
        [3, 'Bare group'],
        [4, 'Typed group'],
      ]);
    });
  });

  describe('users', () => {
    it('creates the users the connector does not hold, with new ids, and removes nothing it has', () => {
      const p = plan(snapshotOf(user('ann', { externalId: 'e-ann' }), user('bob')));
      expect(p.creates.map((c) => [c.id, c.user.fields.userName])).to.deep.equal([
        ['prn_new1', 'ann'],
        ['prn_new2', 'bob'],
      ]);
      expect(p.matches).to.deep.equal([]);
      expect(p.deprovisions).to.deep.equal([]);
      expect(p.removes).to.equal(true);
      expect(p.errors).to.deep.equal([]);
      expect(Object.fromEntries(p.ids)).to.deep.equal({
        prn_new1: 'prn_new1',
        'e-ann': 'prn_new1',
        prn_new2: 'prn_new2',
      });
    });

    const ann = user('ann@example.com', { externalId: 'e-ann', title: 'Engineer', displayName: 'Ann' });
    const changes: {
      name: string;
      snapshot: Json;
      stored?: { status?: 'active' | 'suspended'; name?: string };
      differs: boolean;
    }[] = [
      { name: 'the same user', snapshot: ann, differs: false },
      {
        name: 'a user whose stored name is not the one it maps to',
        snapshot: ann,
        stored: { name: 'Ann (old)' },
        differs: true,
      },
      { name: 'a changed title', snapshot: { ...ann, title: 'Staff engineer' }, differs: true },
      { name: 'a changed display name', snapshot: { ...ann, displayName: 'Ann B.' }, differs: true },
      { name: 'a user made inactive', snapshot: { ...ann, active: false }, differs: true },
      {
        name: 'a suspended user active again',
        snapshot: ann,
        stored: { status: 'suspended' },
        differs: true,
      },
      {
        name: 'a userName in another case',
        snapshot: { ...ann, userName: 'ANN@example.com' },
        differs: true,
      },
    ];
    for (const c of changes) {
      it(`matches ${c.name} with the stored user and writes it ${c.differs ? 'again' : 'not at all'}`, () => {
        const current = stored('prn_ann', ann, c.stored);
        const p = plan(snapshotOf(c.snapshot), [current]);
        expect(p.creates).to.deep.equal([]);
        expect(p.matches).to.have.length(1);
        expect(p.matches[0]!.current).to.equal(current);
        expect(p.matches[0]!.differs).to.equal(c.differs);
        expect(p.deprovisions).to.deep.equal([]);
      });
    }

    it('matches by the SCIM id a line gives, else by userName in any case, never by externalId', () => {
      const byId = stored('prn_id', user('old-name', { externalId: 'e-1' }));
      const byName = stored('prn_name', user('Carol'));
      const sharing = stored('prn_dave', user('dave', { externalId: 'e-2' }));
      const p = plan(
        snapshotOf(
          user('new-name', { id: 'prn_id', externalId: 'e-1' }),
          user('CAROL', { externalId: 'e-2' }),
          user('david', { externalId: 'e-2' }),
          user('Dave', { id: 'prn_unknown', externalId: 'e-2' }),
        ),
        [byId, byName, sharing],
      );
      expect(p.matches.map((m) => [m.user.fields.userName, m.current.principal.id])).to.deep.equal([
        ['new-name', 'prn_id'],
        ['CAROL', 'prn_name'],
        ['Dave', 'prn_dave'],
      ]);
      expect(userNames(p.creates)).to.deep.equal(['david']);
      expect(p.errors).to.deep.equal([]);
    });

    it("refuses a line whose SCIM id names one stored user and whose userName is another's", () => {
      const p = plan(snapshotOf(user('bob', { id: 'prn_ann' }), user('carol')), [
        stored('prn_ann', user('ann')),
        stored('prn_bob', user('bob')),
      ]);
      expect(p.errors).to.deep.equal([
        { line: 1, detail: 'the userName "bob" of user prn_ann belongs to user prn_bob' },
      ]);
      expect(p.matches).to.deep.equal([]);
      expect(p.removes).to.equal(false);
      expect(p.deprovisions).to.deep.equal([]);
    });

    it('creates new users that share an externalId, and names none of them by it', () => {
      const p = plan(
        snapshotOf(
          user('dan', { externalId: 'e-shared' }),
          user('daniel', { externalId: 'e-shared' }),
          user('ann', { externalId: 'e-ann' }),
        ),
      );
      expect(p.creates.map((c) => [c.id, c.user.fields.userName])).to.deep.equal([
        ['prn_new1', 'dan'],
        ['prn_new2', 'daniel'],
        ['prn_new3', 'ann'],
      ]);
      expect(p.errors).to.deep.equal([]);
      expect(p.ids.has('e-shared')).to.equal(false);
      expect(p.ids.get('e-ann')).to.equal('prn_new3');
    });

    it('deprovisions the stored users the snapshot lacks, and keeps those it has', () => {
      const [ann, bob, carol] = ['ann', 'bob', 'carol'].map((n) => stored(`prn_${n}`, user(n)));
      const p = plan(snapshotOf(user('bob')), [ann!, bob!, carol!]);
      expect(p.deprovisions.map((u) => u.principal.id)).to.deep.equal(['prn_ann', 'prn_carol']);
      expect(p.matches.map((m) => m.current.principal.id)).to.deep.equal(['prn_bob']);
      expect(p.removes).to.equal(true);
    });

    const partial: { name: string; snapshot: Snapshot; errors: number }[] = [
      { name: 'a line could not be read', snapshot: snapshotOf(user('bob'), 'not json'), errors: 0 },
      {
        name: 'a user appears twice',
        snapshot: snapshotOf(user('bob'), user('new'), user('NEW')),
        errors: 1,
      },
    ];
    for (const c of partial) {
      it(`deprovisions nobody when ${c.name}`, () => {
        const p = plan(c.snapshot, [stored('prn_ann', user('ann')), stored('prn_bob', user('bob'))]);
        expect(p.removes).to.equal(false);
        expect(p.deprovisions).to.deep.equal([]);
        expect(p.errors).to.have.length(c.errors);
        expect(p.matches.map((m) => m.current.principal.id)).to.deep.equal(['prn_bob']);
      });
    }

    it('creates a deprovisioned user that comes back anew, under the externalId it had', () => {
      // The sync reads only the users SCIM still sees: a deprovisioned one is not among them, so
      // the snapshot that names it again provisions a new principal (the old one keeps its
      // externalId, which names only users SCIM still sees).
      const first = plan(snapshotOf(user('bob')), [stored('prn_ann', user('ann', { externalId: 'e-ann' }))]);
      expect(first.deprovisions.map((u) => u.principal.id)).to.deep.equal(['prn_ann']);
      const back = plan(snapshotOf(user('ann', { externalId: 'e-ann' }), user('bob')), [
        stored('prn_bob', user('bob')),
      ]);
      expect(back.creates.map((c) => [c.id, c.user.fields.externalId])).to.deep.equal([
        ['prn_new1', 'e-ann'],
      ]);
      expect(back.ids.get('e-ann')).to.equal('prn_new1');
      expect(back.matches.map((m) => m.current.principal.id)).to.deep.equal(['prn_bob']);
      expect(back.deprovisions).to.deep.equal([]);
    });

    const duplicates: { name: string; snapshot: Snapshot; current: ExistingUser[]; detail: string }[] = [
      {
        name: 'two new users with one userName in different cases',
        snapshot: snapshotOf(user('dan'), user('DAN')),
        current: [],
        detail: 'a user with userName "DAN" appears twice',
      },
      {
        name: 'two lines naming one stored user by its userName',
        snapshot: snapshotOf(user('dan', { externalId: 'e-dan' }), user('Dan')),
        current: [stored('prn_dan', user('dan', { externalId: 'e-dan' }))],
        detail: 'a user with userName "Dan" appears twice',
      },
      {
        name: 'two lines naming one stored user by its SCIM id',
        snapshot: snapshotOf(user('dan', { id: 'prn_dan' }), user('other', { id: 'prn_dan' })),
        current: [stored('prn_dan', user('dan', { externalId: 'e-dan' }))],
        detail: 'the user prn_dan appears twice',
      },
    ];
    for (const c of duplicates) {
      it(`takes the first of ${c.name} and reports the second`, () => {
        const p = plan(c.snapshot, c.current);
        expect(p.errors).to.deep.equal([{ line: 2, detail: c.detail }]);
        expect(p.creates.length + p.matches.length).to.equal(1);
        expect([...userNames(p.creates), ...userNames(p.matches)][0]).to.equal(
          c.snapshot.users[0]!.fields.userName,
        );
      });
    }

    it('reports stored users named twice before new users named twice', () => {
      const p = plan(snapshotOf(user('new'), user('NEW'), user('kept'), user('Kept')), [
        stored('prn_kept', user('kept')),
      ]);
      expect(p.errors.map((e) => e.line)).to.deep.equal([4, 2]);
    });
  });

  describe('managers', () => {
    const managerOf = (p: UsersPlan, userName: string): [string | null, string | null] => {
      const c = p.creates.find((x) => x.user.fields.userName === userName)!;
      return [c.managerId, c.managerRef];
    };

    const cases: { name: string; ref: string; managerId: string | null; managerRef: string | null }[] = [
      { name: 'a new user by its externalId', ref: 'e-boss', managerId: 'prn_new2', managerRef: null },
      {
        name: 'a stored user of the snapshot by its SCIM id',
        ref: 'prn_lead',
        managerId: 'prn_lead',
        managerRef: null,
      },
      {
        name: 'a stored user of the snapshot by its externalId',
        ref: 'e-lead',
        managerId: 'prn_lead',
        managerRef: null,
      },
      { name: 'a stored user the snapshot lacks', ref: 'prn_gone', managerId: null, managerRef: 'prn_gone' },
      { name: 'nobody the connector knows', ref: 'e-unknown', managerId: null, managerRef: 'e-unknown' },
      { name: 'the user itself', ref: 'e-ann', managerId: null, managerRef: 'e-ann' },
    ];
    for (const c of cases) {
      it(`links a new user to ${c.name} (${c.managerId ? 'at once' : 'waiting on the reference'})`, () => {
        const p = plan(
          snapshotOf(
            user('ann', { externalId: 'e-ann', ...managedBy(c.ref) }),
            user('boss', { externalId: 'e-boss' }),
            user('lead', { externalId: 'e-lead' }),
          ),
          [stored('prn_lead', user('lead', { externalId: 'e-lead' })), stored('prn_gone', user('gone'))],
        );
        expect(managerOf(p, 'ann')).to.deep.equal([c.managerId, c.managerRef]);
        expect(managerOf(p, 'boss')).to.deep.equal([null, null]);
      });
    }

    it('creates managers before their reports, whatever the order of the snapshot', () => {
      const p = plan(
        snapshotOf(
          user('ann', { externalId: 'e-ann', ...managedBy('e-lead') }),
          user('zoe'),
          user('lead', { externalId: 'e-lead', ...managedBy('e-boss') }),
          user('boss', { externalId: 'e-boss' }),
        ),
      );
      expect(userNames(p.creates)).to.deep.equal(['boss', 'lead', 'ann', 'zoe']);
      expect(managerOf(p, 'ann')[0]).to.equal(p.ids.get('e-lead'));
      expect(managerOf(p, 'lead')[0]).to.equal(p.ids.get('e-boss'));
    });

    it('cuts a cycle at the first link that closes it: that user waits on its reference', () => {
      const p = plan(
        snapshotOf(
          user('a', { externalId: 'e-a', ...managedBy('e-b') }),
          user('b', { externalId: 'e-b', ...managedBy('e-a') }),
        ),
      );
      expect(managerOf(p, 'a')).to.deep.equal([null, 'e-b']);
      expect(managerOf(p, 'b')).to.deep.equal([p.ids.get('e-a'), null]);
      expect(userNames(p.creates)).to.deep.equal(['a', 'b']);
    });

    const links: {
      name: string;
      stored: { managerId?: string; managerRef?: string };
      ref: string | null;
      change: { managerId: string | null; ref: string | null; from: string | null } | null;
    }[] = [
      {
        name: 'a manager named for the first time',
        stored: {},
        ref: 'e-boss',
        change: { managerId: 'prn_boss', ref: null, from: null },
      },
      { name: 'the same manager', stored: { managerId: 'prn_boss' }, ref: 'e-boss', change: null },
      {
        name: 'a manager dropped',
        stored: { managerId: 'prn_boss' },
        ref: null,
        change: { managerId: null, ref: null, from: 'prn_boss' },
      },
      {
        name: 'a manager that is new in the snapshot',
        stored: { managerId: 'prn_boss' },
        ref: 'e-new',
        change: { managerId: 'prn_new1', ref: null, from: 'prn_boss' },
      },
      {
        name: 'an unknown manager',
        stored: { managerId: 'prn_boss' },
        ref: 'e-ghost',
        change: { managerId: null, ref: 'e-ghost', from: 'prn_boss' },
      },
      {
        name: 'the unknown manager it already waits on',
        stored: { managerRef: 'e-ghost' },
        ref: 'e-ghost',
        change: null,
      },
      {
        name: 'another unknown manager than the one it waits on',
        stored: { managerRef: 'e-ghost' },
        ref: 'e-other',
        change: { managerId: null, ref: 'e-other', from: null },
      },
      {
        name: 'no manager, where it waited on one',
        stored: { managerRef: 'e-ghost' },
        ref: null,
        change: { managerId: null, ref: null, from: null },
      },
      {
        name: 'a manager arrived that it waited on',
        stored: { managerRef: 'e-new' },
        ref: 'e-new',
        change: { managerId: 'prn_new1', ref: null, from: null },
      },
    ];
    for (const c of links) {
      it(`changes the link of a stored user for ${c.name}${c.change ? '' : ': not at all'}`, () => {
        const annLine = user('ann', { externalId: 'e-ann', ...(c.ref ? managedBy(c.ref) : {}) });
        const p = plan(
          snapshotOf(annLine, user('boss', { externalId: 'e-boss' }), user('new', { externalId: 'e-new' })),
          [stored('prn_ann', annLine, c.stored), stored('prn_boss', user('boss', { externalId: 'e-boss' }))],
        );
        expect(p.managers).to.deep.equal(c.change ? [{ id: 'prn_ann', ...c.change }] : []);
      });
    }

    it('links nobody by an externalId several users share: the user waits on it', () => {
      const annLine = user('ann', { externalId: 'e-ann', ...managedBy('e-twin') });
      const bobLine = user('bob', { externalId: 'e-bob', ...managedBy('e-twin') });
      const p = plan(
        snapshotOf(
          annLine,
          bobLine,
          user('twin-1', { externalId: 'e-twin' }),
          user('twin-2', { externalId: 'e-twin' }),
        ),
        [stored('prn_bob', bobLine, { managerId: 'prn_old' })],
      );
      expect(managerOf(p, 'ann')).to.deep.equal([null, 'e-twin']);
      expect(p.managers).to.deep.equal([{ id: 'prn_bob', managerId: null, ref: 'e-twin', from: 'prn_old' }]);
      // A SCIM id is never ambiguous.
      const byId = plan(
        snapshotOf(
          user('ann', managedBy('prn_twin')),
          user('twin-1', { externalId: 'e-twin' }),
          user('twin-2', { externalId: 'e-twin' }),
        ),
        [stored('prn_twin', user('twin-1', { externalId: 'e-twin' }))],
      );
      expect(managerOf(byId, 'ann')).to.deep.equal(['prn_twin', null]);
    });

    it('links nobody by an externalId that a stored user the snapshot lacks still holds', () => {
      // A line that cannot be read keeps every stored user the snapshot lacks: that one still
      // holds the externalId too.
      const p = plan(
        snapshotOf(user('ann', managedBy('e-boss')), user('boss', { externalId: 'e-boss' }), 'not json'),
        [stored('prn_old_boss', user('old-boss', { externalId: 'e-boss' }))],
      );
      expect(p.removes).to.equal(false);
      expect(managerOf(p, 'ann')).to.deep.equal([null, 'e-boss']);
      const removing = plan(
        snapshotOf(user('ann', managedBy('e-boss')), user('boss', { externalId: 'e-boss' })),
        [stored('prn_old_boss', user('old-boss', { externalId: 'e-boss' }))],
      );
      expect(removing.deprovisions.map((u) => u.principal.id)).to.deep.equal(['prn_old_boss']);
      expect(managerOf(removing, 'ann')[0]).to.equal(removing.ids.get('e-boss'));
    });
  });

  describe('groups', () => {
    const users = (...snapshot: Json[]): UsersPlan =>
      plan(snapshotOf(...snapshot), [stored('prn_ann', user('ann', { externalId: 'e-ann' }))]);
    const groupsOf = (items: Json[], current: CurrentGroup[], u: UsersPlan): GroupsPlan =>
      planGroups(snapshotOf(...items).groups, current, u);
    const everyGroupHasAnId = (p: GroupsPlan) => (i: number) => p.groups[i]!.current?.id ?? `grp_created${i}`;
    const GRP_OPS = 'grp_01JD0000000000000000000001';
    const GRP_OLD = 'grp_01JD0000000000000000000002';
    const GRP_DEV = 'grp_01JD0000000000000000000003';

    it('creates a group naming only users of the snapshot with them, in a batch', () => {
      const u = users(user('ann', { externalId: 'e-ann' }), user('bob', { externalId: 'e-bob' }));
      const p = groupsOf([group('Team', ['e-ann', 'prn_new1', 'e-bob'])], [], u);
      expect(p.groups.map((g) => [g.group.fields.displayName, g.current, g.create])).to.deep.equal([
        ['Team', null, 'batch'],
      ]);
      expect(resolveMembers(p.groups[0]!.members, () => undefined)).to.deep.equal([
        'prn_ann',
        'prn_new1',
        'prn_new1',
      ]);
    });

    it('passes a member naming an externalId two users share on as named, for the group service to refuse', () => {
      const u = users(user('dan', { externalId: 'e-shared' }), user('daniel', { externalId: 'e-shared' }));
      const p = groupsOf([group('Team', ['e-shared', 'prn_new1'])], [], u);
      expect(p.groups[0]!.create).to.equal('alone');
      expect(resolveMembers(p.groups[0]!.members, () => undefined)).to.deep.equal(['e-shared', 'prn_new1']);
    });

    it('creates a group alone when it names someone who is not a user of the snapshot, passing that on as named', () => {
      const u = users(user('ann', { externalId: 'e-ann' }));
      const p = groupsOf([group('Team', ['e-ann', 'prn_someone'])], [], u);
      expect(p.groups[0]!.create).to.equal('alone');
      expect(resolveMembers(p.groups[0]!.members, () => undefined)).to.deep.equal(['prn_ann', 'prn_someone']);
    });

    const nested: { name: string; member: string; current: CurrentGroup[]; index: number }[] = [
      { name: 'its name, in any case', member: 'DEVELOPERS', current: [], index: 1 },
      { name: 'its externalId', member: 'g-dev', current: [], index: 1 },
      {
        name: 'the SCIM id of a stored group',
        member: GRP_DEV,
        current: [{ id: GRP_DEV, name: 'Developers', externalId: null }],
        index: 1,
      },
    ];
    for (const c of nested) {
      it(`creates a group naming a group of the snapshot by ${c.name} bare, for its members to follow`, () => {
        const u = users(user('ann', { externalId: 'e-ann' }));
        const p = groupsOf(
          [
            group('Engineering', ['e-ann', c.member]),
            group('Developers', ['e-ann'], { externalId: 'g-dev' }),
          ],
          c.current,
          u,
        );
        expect(p.groups.map((g) => g.create)).to.deep.equal(['bare', c.current.length > 0 ? null : 'batch']);
        expect(p.groups[0]!.members[1]!.candidates).to.deep.equal([{ group: c.index }]);
        const ids = everyGroupHasAnId(p);
        expect(resolveMembers(p.groups[0]!.members, ids)).to.deep.equal(['prn_ann', ids(c.index)]);
        // A group that could not be created stands for nothing: its member is passed on as named.
        expect(resolveMembers(p.groups[0]!.members, () => undefined)).to.deep.equal(['prn_ann', c.member]);
      });
    }

    it('creates bare a group naming an unknown SCIM group id', () => {
      const p = groupsOf(
        [group('Team', ['e-ann', GRP_OLD])],
        [],
        users(user('ann', { externalId: 'e-ann' })),
      );
      expect(p.groups[0]!.create).to.equal('bare');
      expect(resolveMembers(p.groups[0]!.members, everyGroupHasAnId(p))).to.deep.equal(['prn_ann', GRP_OLD]);
    });

    it('prefers the later of two groups of the snapshot a member may name, while it has an id', () => {
      const p = groupsOf(
        [group('Parent', ['twin']), group('Twin'), group('Other', [], { externalId: 'twin' })],
        [],
        users(),
      );
      expect(p.groups[0]!.members[0]!.candidates).to.deep.equal([{ group: 2 }, { group: 1 }]);
      expect(resolveMembers(p.groups[0]!.members, (i) => (i === 2 ? 'grp_other' : 'grp_twin'))).to.deep.equal(
        ['grp_other'],
      );
      expect(resolveMembers(p.groups[0]!.members, (i) => (i === 1 ? 'grp_twin' : undefined))).to.deep.equal([
        'grp_twin',
      ]);
    });

    it('matches a line by the SCIM id it gives before its externalId and name, and reports one named twice', () => {
      const current = [
        { id: GRP_OPS, name: 'Operations', externalId: 'g-ops' },
        { id: GRP_DEV, name: 'Developers', externalId: 'g-dev' },
      ];
      const p = groupsOf(
        [
          group('Renamed', [], { id: GRP_DEV, externalId: 'g-ops' }),
          group('Operations'),
          group('Developers', [], { id: GRP_DEV }),
          group('Unknown id', [], { id: GRP_OLD }),
        ],
        current,
        users(),
      );
      expect(p.groups.map((g) => [g.group.line, g.current?.id ?? null])).to.deep.equal([
        [1, GRP_DEV],
        [2, GRP_OPS],
        [4, null],
      ]);
      expect(p.errors).to.deep.equal([{ line: 3, detail: `the group ${GRP_DEV} appears twice` }]);
    });

    it('matches by an externalId only when one stored group and one line hold it, else by name', () => {
      const GRP_ALPHA = 'grp_01JD0000000000000000000011';
      const GRP_BETA = 'grp_01JD0000000000000000000012';
      const GRP_GAMMA = 'grp_01JD0000000000000000000013';
      const GRP_DELTA = 'grp_01JD0000000000000000000014';
      const current = [
        { id: GRP_ALPHA, name: 'Alpha', externalId: 'shared' },
        { id: GRP_BETA, name: 'Beta', externalId: 'shared' },
        { id: GRP_GAMMA, name: 'Gamma', externalId: 'solo' },
        { id: GRP_DELTA, name: 'Delta', externalId: 'twice' },
        { id: 'grp_01JD0000000000000000000016', name: 'Eta', externalId: 'pair' },
        { id: 'grp_01JD0000000000000000000017', name: 'Theta', externalId: 'pair' },
      ];
      const p = groupsOf(
        [
          group('beta', [], { externalId: 'shared' }),
          group('Alpha', [], { externalId: 'shared' }),
          group('Gamma (renamed)', [], { externalId: 'solo' }),
          group('Epsilon', [], { externalId: 'twice' }),
          group('DELTA', [], { externalId: 'twice' }),
          group('Zeta', [], { externalId: 'shared' }),
          group('Iota', [], { externalId: 'pair' }),
        ],
        current,
        users(),
      );
      expect(
        p.groups.map((g) => [g.group.fields.displayName, g.current?.id ?? null, g.create]),
      ).to.deep.equal([
        ['beta', GRP_BETA, null],
        ['Alpha', GRP_ALPHA, null],
        ['Gamma (renamed)', GRP_GAMMA, null],
        ['Epsilon', null, 'batch'],
        ['DELTA', GRP_DELTA, null],
        ['Zeta', null, 'batch'],
        ['Iota', null, 'batch'],
      ]);
      expect(p.errors).to.deep.equal([]);
      expect(p.deletes.map((g) => g.name)).to.deep.equal(['Eta', 'Theta']);
    });

    it('names a group by an externalId only one group holds; one groups share names no group, one users share nothing', () => {
      const u = users(
        user('ann', { externalId: 'e-ann' }),
        user('dan', { externalId: 'e-shared' }),
        user('daniel', { externalId: 'e-shared' }),
      );
      expect([...u.shared]).to.deep.equal(['e-shared']);
      const p = groupsOf(
        [
          group('Parent', ['g-shared', 'g-one', 'e-shared', 'g-shared-name', 'e-ann']),
          group('First', [], { externalId: 'g-shared' }),
          group('Second', [], { externalId: 'g-shared' }),
          group('One', [], { externalId: 'g-one' }),
          group('e-shared'),
          group('g-shared-name', [], { externalId: 'e-ann' }),
        ],
        [],
        u,
      );
      expect(p.groups[0]!.members.map((m) => m.candidates)).to.deep.equal([
        [],
        [{ group: 3 }],
        [],
        [{ group: 5 }],
        [{ principal: 'prn_ann' }],
      ]);
      expect(p.groups[0]!.create).to.equal('bare');
      expect(resolveMembers(p.groups[0]!.members, everyGroupHasAnId(p))).to.deep.equal([
        'g-shared',
        'grp_created3',
        'e-shared',
        'grp_created5',
        'prn_ann',
      ]);
    });

    it('counts a stored group that stays outside the snapshot as a holder of its externalId', () => {
      const GRP_ZED = 'grp_01JD0000000000000000000015';
      const current = [
        { id: GRP_OLD, name: 'Old', externalId: 'g-x' },
        { id: GRP_ZED, name: 'Zed', externalId: null },
      ];
      const items = [group('Zed', [], { id: GRP_ZED, externalId: 'g-x' }), group('Parent', ['g-x'])];
      const partial = plan(snapshotOf(user('ann'), 'not json'));
      const staying = groupsOf(items, current, partial);
      expect(staying.groups.map((g) => g.current?.id ?? null)).to.deep.equal([GRP_ZED, null]);
      expect(staying.groups[1]!.members[0]!.candidates).to.deep.equal([]);
      expect(staying.deletes).to.deep.equal([]);
      // When the snapshot removes what it lacks, the stored group goes and holds nothing.
      const removing = groupsOf(items, current, users());
      expect(removing.groups[1]!.members[0]!.candidates).to.deep.equal([{ group: 0 }]);
      expect(removing.deletes.map((g) => g.id)).to.deep.equal([GRP_OLD]);
    });

    it('matches stored groups by externalId, else by name in any case, and gives them the members the snapshot lists', () => {
      const u = users(user('ann', { externalId: 'e-ann' }), user('carol', { externalId: 'e-carol' }));
      // The stored groups had ann and bob; the snapshot keeps ann, drops bob and adds carol.
      const current = [
        { id: GRP_OPS, name: 'Operations', externalId: 'g-ops' },
        { id: GRP_DEV, name: 'Developers', externalId: null },
      ];
      const p = groupsOf(
        [
          group('Ops (renamed)', ['e-ann', 'e-carol'], { externalId: 'g-ops' }),
          group('developers', ['prn_ann', 'e-carol']),
        ],
        current,
        u,
      );
      expect(p.groups.map((g) => [g.current?.id, g.create])).to.deep.equal([
        [GRP_OPS, null],
        [GRP_DEV, null],
      ]);
      const ids = everyGroupHasAnId(p);
      for (const g of p.groups) expect(resolveMembers(g.members, ids)).to.deep.equal(['prn_ann', 'prn_new1']);
      expect(p.deletes).to.deep.equal([]);
    });

    it('gives a stored group no members when the snapshot lists none', () => {
      const p = groupsOf(
        [group('Operations')],
        [{ id: GRP_OPS, name: 'Operations', externalId: null }],
        users(),
      );
      expect(p.groups[0]!.members).to.deep.equal([]);
      expect(p.groups[0]!.current?.id).to.equal(GRP_OPS);
    });

    it('deletes the stored groups the snapshot lacks, oldest first, and only when the users plan removes', () => {
      const current = [
        { id: GRP_OLD, name: 'Old', externalId: null },
        { id: GRP_OPS, name: 'Operations', externalId: null },
        { id: GRP_DEV, name: 'Developers', externalId: 'g-dev' },
      ];
      const items = [group('Operations')];
      expect(groupsOf(items, current, users()).deletes.map((g) => g.id)).to.deep.equal([GRP_OLD, GRP_DEV]);
      const partial = plan(snapshotOf(user('ann'), 'not json'));
      expect(partial.removes).to.equal(false);
      expect(groupsOf(items, current, partial).deletes).to.deep.equal([]);
    });

    it('reports a second line naming one stored group, and plans two new groups of one name both', () => {
      const current = [{ id: GRP_OPS, name: 'Operations', externalId: 'g-ops' }];
      const p = groupsOf(
        [group('Operations'), group('Ops', [], { externalId: 'g-ops' }), group('New'), group('new')],
        current,
        users(),
      );
      expect(p.errors).to.deep.equal([{ line: 2, detail: 'a group named "Ops" appears twice' }]);
      // The store keeps names unique: the second new one is refused as it is written.
      expect(p.groups.map((g) => [g.group.line, g.current?.id ?? null])).to.deep.equal([
        [1, GRP_OPS],
        [3, null],
        [4, null],
      ]);
    });
  });
});

describe('SnapshotReader', () => {
  const lines = [
    JSON.stringify(user('ann', { displayName: 'Ann Émile ✓' })),
    '',
    'not json',
    JSON.stringify(group('Eng', ['ann'])),
    '[1]',
    JSON.stringify(user('bob')),
  ];
  const text = lines.join('\n');

  it('reads a snapshot cut into pieces anywhere (inside lines too) as it reads it whole', () => {
    const whole = readSnapshot(text);
    expect(whole.users).to.have.length(2);
    expect(whole.errors.map((e) => e.line)).to.deep.equal([3, 5]);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        (cuts, turn) => {
          const at = [0, ...cuts.sort((a, b) => a - b), text.length];
          const reader = new SnapshotReader();
          for (let i = 1; i < at.length; i++) {
            reader.push(text.slice(at[i - 1], at[i]));
            while (reader.read(turn));
          }
          reader.end();
          while (reader.read(turn));
          expect(reader.snapshot).to.deep.equal(whole);
        },
      ),
    );
  });

  it('reads a trailing line break as no further line', () => {
    const reader = new SnapshotReader();
    reader.push(`${lines[0]}\n`);
    reader.read(10);
    reader.end();
    reader.read(10);
    expect(reader.snapshot.lines).to.equal(1);
    expect(reader.snapshot.users.map((u) => u.line)).to.deep.equal([1]);
  });
});

describe('stepped planning', () => {
  it('pauses between steps of a large plan and ends with the plan computed in one go', () => {
    const items: Json[] = [];
    for (let i = 0; i < 5_000; i++) {
      items.push(
        user(`u${i}@example.com`, {
          externalId: `x${i}`,
          ...(i > 0 ? managedBy(`x${Math.floor(i / 8)}`) : {}),
        }),
      );
    }
    for (let g = 0; g < 20; g++)
      items.push(
        group(
          `g${g}`,
          Array.from({ length: 400 }, (_, i) => `x${(g * 400 + i) % 5_000}`),
        ),
      );
    const snapshot = snapshotOf(...items);
    const steps = planUsersSteps(snapshot, [], ids());
    let pauses = 0;
    let next = steps.next();
    for (; !next.done; next = steps.next()) pauses += 1;
    expect(pauses).to.be.greaterThan(5);
    const whole = planUsers(snapshot, [], ids());
    expect(next.value).to.deep.equal(whole);
    expect(whole.creates).to.have.length(5_000);

    const groupSteps = planGroupsSteps(snapshot.groups, [], whole);
    let groupPauses = 0;
    let g = groupSteps.next();
    for (; !g.done; g = groupSteps.next()) groupPauses += 1;
    expect(groupPauses).to.be.greaterThan(2);
    expect(g.value).to.deep.equal(planGroups(snapshot.groups, [], whole));
  });
});
