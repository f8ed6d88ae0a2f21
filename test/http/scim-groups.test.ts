import { expect } from 'chai';
import { newId } from '../../src/ids.js';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { snapshotLines, syncSnapshot } from '../helpers/sync.js';

/**
 * SCIM Groups of a connector: externalIds that repeat (only names are unique, in any case), the
 * display a client sends with a member, and lists that page through many groups, with and
 * without filters, as a reference computed here says.
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

type Json = Record<string, any>;

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

interface Connector {
  id: string;
  name: string;
  scim: HttpClient;
}

/** A member as a list or get shows it, without its `$ref`. */
interface Member {
  value: string;
  display: string;
  type: string;
}

const byValue = (a: Member, b: Member): number => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0);
const membersOf = (group: Json): Member[] =>
  ((group['members'] ?? []) as Json[])
    .map((m) => ({ value: m['value'], display: m['display'], type: m['type'] }))
    .sort(byValue);
const displayOf = (group: Json, id: string): string | undefined =>
  membersOf(group).find((m) => m.value === id)?.display;

describe('SCIM groups', () => {
  const fx = useApp();

  async function connector(profile?: 'entra'): Promise<Connector> {
    const res = await fx.api.post('/v1/connectors', {
      name: uniq('groups-'),
      description: 'groups',
      ...(profile ? { profile } : {}),
    });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, name: res.body.name, scim: fx.app.http.withToken(res.body.token) };
  }

  async function create(c: Connector, resource: 'Users' | 'Groups', body: Json): Promise<Json> {
    const res = await c.scim.post(`/scim/v2/${resource}`, body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  const newUser = (c: Connector, displayName: string, extra: Json = {}): Promise<Json> =>
    create(c, 'Users', {
      schemas: [USER],
      userName: `${uniq('u')}@example.com`,
      displayName,
      active: true,
      ...extra,
    });

  async function get(c: Connector, id: string): Promise<Json> {
    const res = await c.scim.get(`/scim/v2/Groups/${id}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  async function patch(c: Connector, id: string, operations: Json[]): Promise<void> {
    const res = await c.scim.patch(`/scim/v2/Groups/${id}`, { schemas: [PATCH], Operations: operations });
    expect(res.status, res.text).to.be.oneOf([200, 204]);
  }

  const list = (c: Connector, query: string): Promise<Json> =>
    c.scim.get(`/scim/v2/Groups?${query}`).then((res) => {
      expect(res.status, res.text).to.equal(200);
      return res.body;
    });
  const filtered = (filter: string, more = ''): string =>
    `filter=${encodeURIComponent(filter)}&count=200${more}`;

  describe('externalIds and names', () => {
    it('creates groups that share an externalId, each 201, and lists them all by it', async () => {
      const c = await connector();
      const externalId = uniq('shared-');
      const ids: string[] = [];
      for (const name of ['Group1DisplayName', 'GroupDisplayName2', 'GroupDisplayName3']) {
        const group = await create(c, 'Groups', { schemas: [GROUP], externalId, displayName: name });
        expect(group).to.include({ externalId, displayName: name });
        ids.push(group.id);
      }
      expect(new Set(ids).size).to.equal(3);
      const found = await list(c, filtered(`externalId eq "${externalId}"`));
      expect(found.totalResults).to.equal(3);
      expect(found.Resources.map((r: Json) => r.id)).to.deep.equal(ids);
      // Case matters in an externalId.
      expect((await list(c, filtered(`externalId eq "${externalId.toUpperCase()}"`))).totalResults).to.equal(
        0,
      );

      // A group replaced or patched to an externalId others have keeps it too.
      const other = await create(c, 'Groups', {
        schemas: [GROUP],
        externalId: uniq('own-'),
        displayName: 'Other',
      });
      await patch(c, other.id, [{ op: 'replace', path: 'externalId', value: externalId }]);
      const put = await c.scim.put(`/scim/v2/Groups/${ids[0]}`, {
        schemas: [GROUP],
        externalId,
        displayName: 'Group1DisplayName',
      });
      expect(put.status, put.text).to.equal(200);
      const again = await list(c, filtered(`externalId eq "${externalId}"`));
      expect(again.Resources.map((r: Json) => r.id)).to.deep.equal([...ids, other.id]);
      const stored = await cypher(
        fx.app.runtime.db,
        'MATCH (g:Group) WHERE g.connector_ref = $connector AND g.connector_id = $externalId RETURN count(g) AS n',
        { connector: c.id, externalId },
      );
      expect(stored[0]!['n']).to.equal(4);
    });

    it('keeps displayName unique within the connector in any case (409 uniqueness), whatever the externalId', async () => {
      const c = await connector();
      const taken = await create(c, 'Groups', {
        schemas: [GROUP],
        externalId: 'x-1',
        displayName: 'Platform Team',
      });
      for (const body of [
        { schemas: [GROUP], displayName: 'platform team' },
        { schemas: [GROUP], displayName: ' PLATFORM TEAM ', externalId: 'x-2' },
        { schemas: [GROUP], displayName: 'Platform Team', externalId: 'x-1' },
      ]) {
        const res = await c.scim.post('/scim/v2/Groups', body);
        expect(res.status, res.text).to.equal(409);
        expect(res.body).to.deep.include({ status: '409', scimType: 'uniqueness' });
        expect(res.body.detail).to.not.match(/externalId/);
      }
      const second = await create(c, 'Groups', {
        schemas: [GROUP],
        externalId: 'x-1',
        displayName: 'Second',
      });
      const renamed = await c.scim.put(`/scim/v2/Groups/${second.id}`, {
        schemas: [GROUP],
        displayName: 'PLATFORM team',
      });
      expect(renamed.status, renamed.text).to.equal(409);
      expect(renamed.body.scimType).to.equal('uniqueness');
      // Another connector may use the name.
      await create(await connector(), 'Groups', { schemas: [GROUP], displayName: 'Platform Team' });
      expect((await get(c, taken.id)).displayName).to.equal('Platform Team');
    });
  });

  describe('member display', () => {
    it('keeps the display a client sends with a member, replaces it, and drops it with the membership', async () => {
      const c = await connector();
      const uma = await newUser(c, 'Uma One');
      const ugo = await newUser(c, 'Ugo Two');
      const group = await create(c, 'Groups', {
        schemas: [GROUP],
        displayName: uniq('Displays '),
        members: [{ value: uma.id, display: 'VP' }],
      });
      expect(displayOf(group, uma.id)).to.equal('VP');

      // Microsoft's reference tests send it as `displayName`.
      await patch(c, group.id, [
        {
          name: 'addMember',
          op: 'add',
          path: 'members',
          value: [{ value: ugo.id, displayName: 'new User' }],
        },
      ]);
      let got = await get(c, group.id);
      expect(JSON.stringify(got)).to.include('new User');
      expect(membersOf(got)).to.deep.equal(
        [
          { value: uma.id, display: 'VP', type: 'User' },
          { value: ugo.id, display: 'new User', type: 'User' },
        ].sort(byValue),
      );

      // Sent again with another display: replaced. Other changes leave the displays.
      await patch(c, group.id, [
        { op: 'add', path: 'members', value: [{ value: ugo.id, display: 'Newer' }] },
      ]);
      await patch(c, group.id, [{ op: 'replace', path: 'displayName', value: uniq('Renamed ') }]);
      got = await get(c, group.id);
      expect([displayOf(got, uma.id), displayOf(got, ugo.id)]).to.deep.equal(['VP', 'Newer']);
      const listed = await list(c, filtered(`members[display eq "newer"]`));
      expect(listed.Resources.map((r: Json) => r.id)).to.deep.equal([group.id]);
      const events = await fx.api.get(`/v1/audit/events?target_id=${group.id}&limit=50`);
      expect(events.status, events.text).to.equal(200);
      expect(
        events.body.data
          .filter((e: Json) => e.type === 'group.updated' && e.changes.member_display)
          .map((e: Json) => e.changes.member_display),
      ).to.deep.equal([{ from: { [ugo.id]: 'new User' }, to: { [ugo.id]: 'Newer' } }]);

      // A PUT that sends a member without a display leaves it none: its own name shows.
      const put = await c.scim.put(`/scim/v2/Groups/${group.id}`, {
        schemas: [GROUP],
        displayName: got.displayName,
        members: [{ value: uma.id, display: 'VP' }, { value: ugo.id }],
      });
      expect(put.status, put.text).to.equal(200);
      expect([displayOf(put.body, uma.id), displayOf(put.body, ugo.id)]).to.deep.equal(['VP', 'Ugo Two']);

      // The display goes with the membership: added again without one, the member shows its name.
      await patch(c, group.id, [{ op: 'remove', path: `members[value eq "${uma.id}"]` }]);
      const edges = await cypher(
        fx.app.runtime.db,
        'MATCH (:Principal {id: $id})-[r:MEMBER_OF]->(:Group {id: $group}) RETURN r.scim_display AS display',
        { id: uma.id, group: group.id },
      );
      expect(edges).to.deep.equal([]);
      await patch(c, group.id, [{ op: 'add', path: 'members', value: [{ value: uma.id }] }]);
      got = await get(c, group.id);
      expect(displayOf(got, uma.id)).to.equal('Uma One');

      // A member without a display of its own follows its name.
      const renamed = await c.scim.patch(`/scim/v2/Users/${uma.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'replace', path: 'displayName', value: 'Uma Renamed' }],
      });
      expect(renamed.status, renamed.text).to.equal(200);
      expect(displayOf(await get(c, group.id), uma.id)).to.equal('Uma Renamed');

      // A nested group keeps the display sent with it too.
      const child = await create(c, 'Groups', { schemas: [GROUP], displayName: uniq('Child ') });
      await patch(c, group.id, [
        { op: 'add', path: 'members', value: [{ value: child.id, display: 'Sub-team' }] },
      ]);
      got = await get(c, group.id);
      expect(membersOf(got).find((m) => m.value === child.id)).to.deep.equal({
        value: child.id,
        display: 'Sub-team',
        type: 'Group',
      });
      await patch(c, group.id, [{ op: 'remove', path: 'members' }]);
      got = await get(c, group.id);
      expect(got.members ?? []).to.deep.equal([]);
      const left = await cypher(
        fx.app.runtime.db,
        'MATCH ()-[r:MEMBER_OF]->(:Group {id: $group}) RETURN count(r) AS n',
        { group: group.id },
      );
      expect(left[0]!['n']).to.equal(0);
    });

    it("passes Microsoft's add, remove, add again and remove all (profile entra)", async () => {
      const c = await connector('entra');
      const user = await newUser(c, 'lennay');
      const group = await create(c, 'Groups', {
        schemas: [GROUP],
        displayName: 'Group1DisplayName',
        members: [],
      });
      const add = {
        name: 'addMember',
        op: 'add',
        path: 'members',
        value: [{ displayName: 'new User', value: user.id }],
      };
      await patch(c, group.id, [add]);
      await patch(c, group.id, [{ op: 'remove', path: `members[value eq "${user.id}"]` }]);
      await patch(c, group.id, [add]);
      const got = await c.scim.get(`/scim/v2/Groups/${group.id}`);
      expect(got.text).to.include('new User');
      await patch(c, group.id, [{ op: 'remove', path: 'members' }]);
      expect((await c.scim.get(`/scim/v2/Groups/${group.id}`)).text).to.not.include('new User');
    });

    it('keeps the displays of a sync snapshot, and matches its groups by SCIM id where externalIds repeat', async () => {
      const c = await connector();
      const userName = `${uniq('sync')}@example.com`;
      const member = await newUser(c, 'Sync Member', { userName, externalId: 'e-member' });
      const first = await create(c, 'Groups', { schemas: [GROUP], displayName: 'Team A', externalId: 'dup' });
      const second = await create(c, 'Groups', {
        schemas: [GROUP],
        displayName: 'Team B',
        externalId: 'dup',
      });
      const lines: Json[] = [
        { schemas: [USER], userName, displayName: 'Sync Member', externalId: 'e-member', active: true },
        {
          schemas: [GROUP],
          id: first.id,
          displayName: 'Team A2',
          externalId: 'dup',
          members: [{ value: 'e-member', display: 'Lead' }],
        },
        { schemas: [GROUP], id: second.id, displayName: 'Team B', externalId: 'dup' },
        {
          schemas: [GROUP],
          displayName: 'Team C',
          externalId: 'dup',
          members: [{ value: member.id, display: 'Member' }],
        },
      ];
      const value = await syncSnapshot(fx.api, c.id, snapshotLines(lines));
      expect(value.errors, JSON.stringify(value)).to.deep.equal([]);
      expect(value.counts).to.include({
        groups_created: 1,
        groups_updated: 1,
        groups_unchanged: 1,
        groups_deleted: 0,
      });
      const a = await get(c, first.id);
      expect(a).to.include({ displayName: 'Team A2', externalId: 'dup' });
      expect(membersOf(a)).to.deep.equal([{ value: member.id, display: 'Lead', type: 'User' }]);
      const found = await list(c, filtered('externalId eq "dup"'));
      expect(found.Resources.map((r: Json) => r.displayName)).to.deep.equal(['Team A2', 'Team B', 'Team C']);
      expect(membersOf(found.Resources[2])).to.deep.equal([
        { value: member.id, display: 'Member', type: 'User' },
      ]);
    });
  });

  describe('lists over many groups', function () {
    this.timeout(60_000);
    const TOTAL = 1200;

    interface Reference {
      id: string;
      name: string;
      externalId: string | null;
      createdAt: string;
      members: Member[];
    }
    let c: Connector;
    let groups: Reference[];
    let users: { a: Json; b: Json };

    before(async () => {
      c = await connector();
      users = { a: await newUser(c, 'Member A'), b: await newUser(c, 'Member B') };
      // Ids in no order of their creation; three groups to each millisecond.
      let seed = 7;
      const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
      const ids = Array.from({ length: TOTAL }, () => newId('group'))
        .map((id) => ({ id, key: random() }))
        .sort((x, y) => x.key - y.key)
        .map((x) => x.id);
      const base = Date.parse('2024-03-01T00:00:00.000Z');
      groups = ids.map((id, i) => ({
        id,
        name: `Bulk ${String(i).padStart(4, '0')}`,
        externalId: i % 2 === 0 ? 'shared-even' : i % 3 === 0 ? `ext-${i}` : null,
        createdAt: new Date(base + Math.floor(i / 3)).toISOString(),
        members: [],
      }));
      const edges: { member: string; group: string; display: string | null }[] = [];
      groups.forEach((g, i) => {
        const add = (member: string, display: string | null, type: string, name: string): void => {
          edges.push({ member, group: g.id, display });
          g.members.push({ value: member, display: display ?? name, type });
        };
        if (i % 7 === 0) add(users.a.id, null, 'User', 'Member A');
        if (i % 10 === 3) add(users.b.id, i % 20 === 3 ? 'Bee' : null, 'User', 'Member B');
        if (i % 100 === 50) add(groups[i - 1]!.id, null, 'Group', groups[i - 1]!.name);
        g.members.sort(byValue);
      });
      await cypher(
        fx.app.runtime.db,
        `UNWIND $rows AS row
         CREATE (:Group {id: row.id, name: row.name, name_key: 'connector:' + $connector + ':' + toLower(row.name),
           description: null, source: 'connector', connector_source: $source, connector_ref: $connector,
           connector_id: row.externalId, scim: row.scim, created_at: datetime(row.createdAt),
           created_by: $connector, updated_at: datetime(row.createdAt)})`,
        {
          connector: c.id,
          source: c.name,
          rows: groups.map((g) => ({
            id: g.id,
            name: g.name,
            externalId: g.externalId,
            createdAt: g.createdAt,
            scim: JSON.stringify({
              displayName: g.name,
              ...(g.externalId ? { externalId: g.externalId } : {}),
            }),
          })),
        },
      );
      await cypher(
        fx.app.runtime.db,
        `UNWIND $edges AS edge
         MATCH (g:Group {id: edge.group})
         OPTIONAL MATCH (p:Principal {id: edge.member})
         OPTIONAL MATCH (sub:Group {id: edge.member})
         WITH g, edge, coalesce(p, sub) AS m
         CREATE (m)-[:MEMBER_OF {added_at: datetime(), added_by: $connector, scim_display: edge.display}]->(g)`,
        { connector: c.id, edges },
      );
      // The order lists answer in: creation, then id.
      groups.sort((x, y) =>
        x.createdAt !== y.createdAt ? (x.createdAt < y.createdAt ? -1 : 1) : x.id < y.id ? -1 : 1,
      );
    });

    const pages: { startIndex?: number; count?: number }[] = [
      {},
      { count: 200 },
      { startIndex: 95, count: 10 },
      { startIndex: 499, count: 5 },
      { startIndex: 590, count: 200 },
      { startIndex: 1195, count: 500 },
      { startIndex: 5000, count: 10 },
      { count: 0 },
      { startIndex: 3, count: 0 },
    ];

    /** A list as the reference says it: matches in order, one page of them. */
    async function check(
      filter: string | undefined,
      matches: (g: Reference) => boolean,
      extra = '',
    ): Promise<void> {
      const expected = groups.filter(matches);
      for (const page of pages) {
        const query = [
          filter === undefined ? undefined : `filter=${encodeURIComponent(filter)}`,
          page.startIndex === undefined ? undefined : `startIndex=${page.startIndex}`,
          page.count === undefined ? undefined : `count=${page.count}`,
        ]
          .filter((q) => q !== undefined)
          .join('&');
        const body = await list(c, `${query}${extra}`);
        const start = page.startIndex ?? 1;
        const want = expected.slice(start - 1, start - 1 + Math.min(page.count ?? 100, 200));
        const what = `${filter ?? '(no filter)'} ${JSON.stringify(page)} ${extra}`;
        expect(body, what).to.include({
          totalResults: expected.length,
          startIndex: start,
          itemsPerPage: want.length,
        });
        expect(
          body.Resources.map((r: Json) => r.id),
          what,
        ).to.deep.equal(want.map((g) => g.id));
        body.Resources.forEach((resource: Json, i: number) => {
          const g = want[i]!;
          expect(resource.displayName, what).to.equal(g.name);
          expect(resource.externalId, what).to.equal(g.externalId ?? undefined);
          expect(resource.meta.created, what).to.equal(g.createdAt);
          if (extra.includes('excludedAttributes=members'))
            expect(resource, what).to.not.have.property('members');
          else expect(membersOf(resource), what).to.deep.equal(g.members);
        });
      }
    }

    it('pages through all of them without a filter, in creation order then id', async () => {
      await check(undefined, () => true);
      await check(undefined, () => true, '&excludedAttributes=members');
    });

    it('looks an eq on id, displayName (in any case) or externalId up, and checks the rest of the filter', async () => {
      const some = groups[500]!;
      await check(`id eq "${some.id}"`, (g) => g.id === some.id);
      await check(`id eq "${some.id}" and displayName eq "nothing"`, () => false);
      await check(`displayName eq "${some.name.toUpperCase()}"`, (g) => g.id === some.id);
      await check(
        `urn:ietf:params:scim:schemas:core:2.0:Group:displayName eq "${some.name}"`,
        (g) => g.id === some.id,
      );
      await check('externalId eq "shared-even"', (g) => g.externalId === 'shared-even');
      await check('externalId eq "SHARED-EVEN"', () => false);
      await check(
        'externalId eq "shared-even" and (displayName co "7" or members pr)',
        (g) => g.externalId === 'shared-even' && (g.name.includes('7') || g.members.length > 0),
        '&excludedAttributes=members',
      );
      await check('externalId eq "ext-3"', (g) => g.externalId === 'ext-3');
    });

    it('checks any other filter on every group, a batch at a time, members included', async () => {
      await check('displayName co "7"', (g) => g.name.includes('7'));
      await check('not (externalId pr)', (g) => g.externalId === null);
      await check(
        'displayName sw "bulk 01" or externalId eq "ext-3"',
        (g) => g.name.startsWith('Bulk 01') || g.externalId === 'ext-3',
      );
      await check(`members[value eq "${users.a.id}"]`, (g) => g.members.some((m) => m.value === users.a.id));
      await check(
        `members[value eq "${users.a.id}"]`,
        (g) => g.members.some((m) => m.value === users.a.id),
        '&excludedAttributes=members',
      );
      await check('members[display eq "bee"]', (g) => g.members.some((m) => m.display === 'Bee'));
      await check('members[type eq "Group"]', (g) => g.members.some((m) => m.type === 'Group'));
      const from = groups[600]!.createdAt;
      await check(`meta.created ge "${from}"`, (g) => g.createdAt >= from, '&excludedAttributes=members');
    });

    it('projects with attributes and excludedAttributes as before', async () => {
      const lean = await list(c, filtered('displayName sw "Bulk 000"', '&attributes=displayName'));
      expect(lean.totalResults).to.equal(10);
      for (const r of lean.Resources)
        expect(Object.keys(r).sort()).to.deep.equal(['displayName', 'id', 'schemas']);
      const withMembers = await list(c, 'count=3&attributes=members.value');
      expect(withMembers.Resources.map((r: Json) => r.id)).to.deep.equal(groups.slice(0, 3).map((g) => g.id));
      expect(withMembers.Resources[0].members).to.deep.equal(
        groups[0]!.members.map((m) => ({ value: m.value })),
      );
    });
  });
});
