import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { ADMIN_CLIENT_ID } from '../helpers/app.js';
import { authed, createClient } from '../helpers/auth.js';
import { insertConnectorGroup } from '../helpers/groups.js';
import { insertPrincipal } from '../helpers/principals.js';
import { useApp } from '../helpers/fixture.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GROUP_ID = /^grp_[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const UNKNOWN_GROUP = 'grp_01JD0000000000000000000000';
const UNKNOWN_PRINCIPAL = 'prn_01JD0000000000000000000000';

describe('groups', () => {
  let seq = 0;
  /** Names unique to one test, so that tests sharing the app never clash. */
  const uniq = (prefix: string): string =>
    `${prefix}-${(seq += 1)}-${Math.random().toString(36).slice(2, 8)}`;

  const fx = useApp();

  const createGroup = async (name: string, description?: string): Promise<any> => {
    const res = await fx.api.post('/v1/groups', {
      name,
      ...(description !== undefined ? { description } : {}),
    });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const addMember = async (groupId: string, memberId: string): Promise<any> => {
    const res = await fx.api.put(`/v1/groups/${groupId}/members/${memberId}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const members = async (groupId: string, query = ''): Promise<any> => {
    const res = await fx.api.get(`/v1/groups/${groupId}/members${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const memberNames = async (groupId: string, query = ''): Promise<string[]> =>
    (await members(groupId, query)).data.map((m: { name: string }) => m.name);
  /** Oldest first. */
  const eventsOf = async (targetId: string): Promise<any[]> => {
    const res = await fx.api.get(`/v1/audit/events?target_id=${targetId}&limit=100`);
    expect(res.status, res.text).to.equal(200);
    return (res.body.data as any[]).reverse();
  };
  const serviceAccount = async (name: string): Promise<any> => {
    const res = await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };

  describe('lifecycle', () => {
    it('creates a group: 201, Location, server-owned fields, then GET returns it', async () => {
      const name = uniq('Payments');
      const res = await fx.api.post('/v1/groups', { name: `  ${name} `, description: 'payments engineers' });
      expect(res.status, res.text).to.equal(201);
      expect(res.headers.get('location')).to.equal(`/v1/groups/${res.body.id}`);
      expect(res.body.id).to.match(GROUP_ID);
      expect(res.body).to.include({
        name,
        description: 'payments engineers',
        source: 'api',
        connector_source: null,
        connector_id: null,
        member_count: 0,
        created_by: ADMIN_CLIENT_ID,
      });
      expect(res.body.created_at).to.match(ISO);
      expect(res.body.updated_at).to.equal(res.body.created_at);

      const fetched = await fx.api.get(`/v1/groups/${res.body.id}`);
      expect(fetched.status).to.equal(200);
      expect(fetched.body).to.deep.equal(res.body);

      const bare = await createGroup(uniq('bare'));
      expect(bare.description).to.equal(null);
    });

    it('updates name and description; null clears the description; a no-op patch changes nothing', async () => {
      const group = await createGroup(uniq('ops'), 'first');
      const renamed = uniq('operations');
      const res = await fx.api.patch(`/v1/groups/${group.id}`, { name: renamed, description: 'second' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({
        id: group.id,
        name: renamed,
        description: 'second',
        created_at: group.created_at,
      });
      expect(res.body.updated_at >= group.updated_at).to.equal(true);

      const cleared = await fx.api.patch(`/v1/groups/${group.id}`, { description: null });
      expect(cleared.status).to.equal(200);
      expect(cleared.body).to.include({ name: renamed, description: null });
      expect((await fx.api.get(`/v1/groups/${group.id}`)).body.description).to.equal(null);

      const same = await fx.api.patch(`/v1/groups/${group.id}`, { name: renamed, description: null });
      expect(same.status).to.equal(200);
      expect(same.body.updated_at).to.equal(cleared.body.updated_at);
      expect((await eventsOf(group.id)).map((e) => e.type)).to.deep.equal([
        'group.created',
        'group.updated',
        'group.updated',
      ]);
    });

    it('deletes a group with its memberships; a later GET is 404', async () => {
      const parent = await createGroup(uniq('parent'));
      const doomed = await createGroup(uniq('doomed'));
      const member = await insertPrincipal(fx.app, { name: uniq('Member') });
      await addMember(parent.id, doomed.id);
      await addMember(doomed.id, member.id);
      expect((await fx.api.get(`/v1/groups/${parent.id}`)).body.member_count).to.equal(1);

      const res = await fx.api.delete(`/v1/groups/${doomed.id}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ id: doomed.id, status: 'deleted', deleted_by: ADMIN_CLIENT_ID });
      expect(res.body.deleted_at).to.match(ISO);
      expect(Object.keys(res.body).sort()).to.deep.equal(['deleted_at', 'deleted_by', 'id', 'status']);

      const gone = await fx.api.get(`/v1/groups/${doomed.id}`);
      expect(gone.status).to.equal(404);
      expect(gone.body.code).to.equal('NOT_FOUND');
      expect((await fx.api.get(`/v1/groups/${doomed.id}/members`)).status).to.equal(404);
      expect((await fx.api.delete(`/v1/groups/${doomed.id}`)).status).to.equal(404);
      expect((await fx.api.get(`/v1/groups/${parent.id}`)).body.member_count).to.equal(0);
      const rows = await cypher(
        fx.app.runtime.db,
        'MATCH (p:Principal {id: $id}) RETURN COUNT { (p)-[:MEMBER_OF]->() } AS n',
        { id: member.id },
      );
      expect(rows[0]!['n']).to.equal(0);
      // The principal itself stays.
      expect((await fx.api.get(`/v1/principals/${member.id}`)).status).to.equal(200);
    });

    it('answers unknown and malformed group ids with 404 on every operation', async () => {
      const member = await insertPrincipal(fx.app, { name: uniq('Lost') });
      for (const id of [
        UNKNOWN_GROUP,
        UNKNOWN_PRINCIPAL,
        'nope',
        'grp_%27%20OR%201%3D1',
        'grp_01jd0000000000000000000000',
      ]) {
        expect((await fx.api.get(`/v1/groups/${id}`)).status, id).to.equal(404);
        expect((await fx.api.patch(`/v1/groups/${id}`, { name: 'x' })).status, id).to.equal(404);
        expect((await fx.api.delete(`/v1/groups/${id}`)).status, id).to.equal(404);
        expect((await fx.api.get(`/v1/groups/${id}/members`)).status, id).to.equal(404);
        expect((await fx.api.put(`/v1/groups/${id}/members/${member.id}`)).status, id).to.equal(404);
        expect((await fx.api.delete(`/v1/groups/${id}/members/${member.id}`)).status, id).to.equal(404);
      }
    });
  });

  describe('validation', () => {
    it('refuses bad create bodies with pointers and creates nothing', async () => {
      const before = (await fx.api.get('/v1/groups?limit=1')).body.pagination.total;
      const cases: [unknown, string][] = [
        [{}, '/name'],
        [{ name: '' }, '/name'],
        [{ name: '   ' }, '/name'],
        [{ name: 42 }, '/name'],
        [{ name: null }, '/name'],
        [{ name: 'x'.repeat(257) }, '/name'],
        [{ name: 'tab\there' }, '/name'],
        [{ name: 'x', description: 7 }, '/description'],
        [{ name: 'x', description: 'd'.repeat(4097) }, '/description'],
        [{ name: 'x', id: 'grp_01JD0000000000000000000000' }, '/id'],
        [{ name: 'x', source: 'connector' }, '/source'],
        [{ name: 'x', member_count: 3 }, '/member_count'],
        [{ name: 'x', connector_source: 'okta' }, '/connector_source'],
        [{ name: 'x', connector_id: '00g1' }, '/connector_id'],
        [{ name: 'x', created_at: '2026-01-01T00:00:00.000Z' }, '/created_at'],
        [{ name: 'x', members: [] }, '/members'],
      ];
      for (const [body, pointer] of cases) {
        const res = await fx.api.post('/v1/groups', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(
          res.body.errors.map((e: { pointer: string }) => e.pointer),
          JSON.stringify(body),
        ).to.include(pointer);
      }
      expect((await fx.api.post('/v1/groups', '["x"]')).status).to.equal(400);
      expect((await fx.api.get('/v1/groups?limit=1')).body.pagination.total).to.equal(before);
    });

    it('refuses bad patch bodies with pointers and changes nothing', async () => {
      const group = await createGroup(uniq('stable'), 'kept');
      const cases: [unknown, string][] = [
        [{ name: '' }, '/name'],
        [{ name: ' ' }, '/name'],
        [{ name: null }, '/name'],
        [{ name: 5 }, '/name'],
        [{ description: 5 }, '/description'],
        [{ source: 'connector' }, '/source'],
        [{ member_count: 0 }, '/member_count'],
        [{ connector_source: 'okta' }, '/connector_source'],
        [{ id: UNKNOWN_GROUP }, '/id'],
      ];
      for (const [body, pointer] of cases) {
        const res = await fx.api.patch(`/v1/groups/${group.id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(
          res.body.errors.map((e: { pointer: string }) => e.pointer),
          JSON.stringify(body),
        ).to.include(pointer);
      }
      const empty = await fx.api.patch(`/v1/groups/${group.id}`, {});
      expect(empty.status).to.equal(400);
      expect(empty.body.code).to.equal('VALIDATION_FAILED');
      expect((await fx.api.get(`/v1/groups/${group.id}`)).body).to.deep.equal(group);
      expect((await eventsOf(group.id)).map((e) => e.type)).to.deep.equal(['group.created']);
    });

    it('refuses malformed query parameters with /query pointers', async () => {
      const group = await createGroup(uniq('q'));
      for (const path of [
        '/v1/groups?limit=0',
        '/v1/groups?limit=101',
        '/v1/groups?page=0',
        '/v1/groups?limit=abc',
        '/v1/groups?connector_source=',
        `/v1/groups/${group.id}/members?transitive=maybe`,
        `/v1/groups/${group.id}/members?limit=101`,
        `/v1/groups/${group.id}/members?page=-1`,
      ]) {
        const res = await fx.api.get(path);
        expect(res.status, path).to.equal(400);
        expect(res.body.errors[0].pointer, path).to.match(/^\/query\//);
      }
    });
  });

  describe('names', () => {
    it('answers 409 CONFLICT for a name already used, whatever its case, on create and rename', async () => {
      const name = uniq('Platform Team');
      const first = await createGroup(name);
      for (const clash of [name.toLowerCase(), name.toUpperCase(), `  ${name} `]) {
        const res = await fx.api.post('/v1/groups', { name: clash });
        expect(res.status, clash).to.equal(409);
        expect(res.body.code).to.equal('CONFLICT');
        expect(res.body.detail).to.contain('already exists');
      }
      const other = await createGroup(uniq('other'));
      const rename = await fx.api.patch(`/v1/groups/${other.id}`, { name: name.toUpperCase() });
      expect(rename.status).to.equal(409);
      expect(rename.body.code).to.equal('CONFLICT');
      expect((await fx.api.get(`/v1/groups/${other.id}`)).body.name).to.equal(other.name);
      expect((await eventsOf(other.id)).map((e) => e.type)).to.deep.equal(['group.created']);

      // A group may change the case of its own name; a connector may use the same name.
      const recased = await fx.api.patch(`/v1/groups/${first.id}`, { name: name.toUpperCase() });
      expect(recased.status, recased.text).to.equal(200);
      expect(recased.body.name).to.equal(name.toUpperCase());
      await insertConnectorGroup(fx.app, { name });
      // Once deleted, the name is free again.
      expect((await fx.api.delete(`/v1/groups/${first.id}`)).status).to.equal(200);
      await createGroup(name);
    });
  });

  describe('listing', () => {
    it('lists by name then id, filters by connector_source, and paginates as everywhere', async () => {
      const source = uniq('ldap');
      const names = ['delta', 'alpha', 'echo', 'charlie', 'bravo'];
      for (const name of names) await insertConnectorGroup(fx.app, { name, connectorSource: source });
      await insertConnectorGroup(fx.app, { name: 'alpha', connectorSource: uniq('other-ldap') });

      const all = await fx.api.get(`/v1/groups?connector_source=${source}`);
      expect(all.status, all.text).to.equal(200);
      expect(all.body.data.map((g: any) => g.name)).to.deep.equal([...names].sort());
      expect(all.body.data.map((g: any) => [g.source, g.connector_source])).to.deep.equal(
        names.map(() => ['connector', source]),
      );
      expect(all.body.pagination).to.deep.equal({ total: 5, page: 1, per_page: 50, pages: 1 });

      const pages = [];
      for (const page of [1, 2, 3]) {
        const res = await fx.api.get(`/v1/groups?connector_source=${source}&limit=2&page=${page}`);
        expect(res.body.pagination).to.deep.equal({ total: 5, page, per_page: 2, pages: 3 });
        pages.push(...res.body.data.map((g: any) => g.name));
      }
      expect(pages).to.deep.equal(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
      const past = await fx.api.get(`/v1/groups?connector_source=${source}&page=9`);
      expect(past.body.data).to.deep.equal([]);
      expect(past.body.pagination).to.deep.equal({ total: 5, page: 9, per_page: 50, pages: 1 });
      const none = await fx.api.get(`/v1/groups?connector_source=${uniq('nobody')}`);
      expect(none.body.pagination).to.deep.equal({ total: 0, page: 1, per_page: 50, pages: 0 });
    });

    it('breaks ties on id and orders the unfiltered list by name then id', async () => {
      // An API group and a connector group may share a name.
      const name = uniq('0-tie');
      const api1 = await createGroup(name);
      const conn = await insertConnectorGroup(fx.app, { name });
      const first = await fx.api.get('/v1/groups?limit=100');
      const rows = first.body.data as { id: string; name: string }[];
      const sorted = [...rows].sort((a, b) =>
        a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1,
      );
      expect(rows.map((g) => g.id)).to.deep.equal(sorted.map((g) => g.id));
      const tied = rows.filter((g) => g.name === name).map((g) => g.id);
      expect(tied).to.deep.equal([api1.id, conn.id].sort());
    });
  });

  describe('members', () => {
    it('adds principals of every type idempotently and lists them by name then id', async () => {
      const group = await createGroup(uniq('crew'));
      const user = await insertPrincipal(fx.app, { name: 'Uma User' });
      const sa = await insertPrincipal(fx.app, { name: 'Sam Service', type: 'SERVICE_ACCOUNT' });
      const agent = await insertPrincipal(fx.app, { name: 'Ada Agent', type: 'AI_AGENT' });
      const key = await insertPrincipal(fx.app, { name: 'Kim Key', type: 'API_KEY' });
      const twin = await insertPrincipal(fx.app, { name: 'Uma User' });

      const added = await addMember(group.id, user.id);
      expect(added).to.deep.equal({
        group_id: group.id,
        member: { id: user.id, name: 'Uma User', type: 'USER', email: user.email },
        added_at: added.added_at,
      });
      expect(added.added_at).to.match(ISO);
      const again = await addMember(group.id, user.id);
      expect(again).to.deep.equal(added);

      const saAdded = await addMember(group.id, sa.id);
      expect(saAdded.member).to.deep.equal({
        id: sa.id,
        name: 'Sam Service',
        type: 'SERVICE_ACCOUNT',
        email: null,
      });
      await addMember(group.id, agent.id);
      await addMember(group.id, key.id);
      await addMember(group.id, twin.id);

      const list = await members(group.id);
      const twins = [user.id, twin.id].sort();
      expect(list.data.map((m: any) => m.id)).to.deep.equal([agent.id, key.id, sa.id, ...twins]);
      expect(list.data.map((m: any) => m.type)).to.deep.equal([
        'AI_AGENT',
        'API_KEY',
        'SERVICE_ACCOUNT',
        'USER',
        'USER',
      ]);
      expect(list.data[0]).to.deep.equal({ id: agent.id, name: 'Ada Agent', type: 'AI_AGENT', email: null });
      expect(list.pagination).to.deep.equal({ total: 5, page: 1, per_page: 50, pages: 1 });
      expect((await fx.api.get(`/v1/groups/${group.id}`)).body.member_count).to.equal(5);

      const page2 = await members(group.id, '?limit=2&page=2');
      expect(page2.data.map((m: any) => m.id)).to.deep.equal([sa.id, twins[0]]);
      expect(page2.pagination).to.deep.equal({ total: 5, page: 2, per_page: 2, pages: 3 });
      expect((await members(group.id, '?page=4&limit=2')).data).to.deep.equal([]);

      const addedEvents = (await eventsOf(group.id)).filter((e) => e.type === 'group.member_added');
      expect(addedEvents).to.have.length(5);
      expect(addedEvents[0].changes).to.deep.equal({ members: { to: user.id } });
    });

    it('removes members idempotently', async () => {
      const group = await createGroup(uniq('shrinking'));
      const member = await insertPrincipal(fx.app, { name: uniq('Leaver') });
      const inner = await createGroup(uniq('inner'));
      await addMember(group.id, member.id);
      await addMember(group.id, inner.id);

      const res = await fx.api.delete(`/v1/groups/${group.id}/members/${member.id}`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ group_id: group.id, member_id: member.id, removed: true });
      const again = await fx.api.delete(`/v1/groups/${group.id}/members/${member.id}`);
      expect(again.body).to.deep.equal({ group_id: group.id, member_id: member.id, removed: false });
      const stranger = await fx.api.delete(`/v1/groups/${group.id}/members/${UNKNOWN_PRINCIPAL}`);
      expect(stranger.status).to.equal(200);
      expect(stranger.body.removed).to.equal(false);
      const nested = await fx.api.delete(`/v1/groups/${group.id}/members/${inner.id}`);
      expect(nested.body.removed).to.equal(true);
      expect((await members(group.id)).data).to.deep.equal([]);
      expect((await fx.api.get(`/v1/groups/${group.id}`)).body.member_count).to.equal(0);

      const removed = (await eventsOf(group.id)).filter((e) => e.type === 'group.member_removed');
      expect(removed.map((e) => e.changes)).to.deep.equal([
        { members: { from: member.id } },
        { members: { from: inner.id } },
      ]);
    });

    it('answers 404 for an unknown or malformed member id and adds nothing', async () => {
      const group = await createGroup(uniq('picky'));
      for (const id of [
        UNKNOWN_PRINCIPAL,
        UNKNOWN_GROUP,
        'nope',
        'cli_01JD0000000000000000000000',
        'prn_short',
      ]) {
        const res = await fx.api.put(`/v1/groups/${group.id}/members/${id}`);
        expect(res.status, id).to.equal(404);
        expect(res.body.code).to.equal('NOT_FOUND');
      }
      for (const id of ['nope', 'evt_01JD0000000000000000000000']) {
        expect((await fx.api.delete(`/v1/groups/${group.id}/members/${id}`)).status, id).to.equal(404);
      }
      expect((await eventsOf(group.id)).map((e) => e.type)).to.deep.equal(['group.created']);
    });

    it('refuses a deleted principal with 409 PRINCIPAL_DELETED and hides deleted members', async () => {
      const group = await createGroup(uniq('careful'));
      const sa = await serviceAccount(uniq('retired-bot'));
      expect((await fx.api.delete(`/v1/principals/${sa.id}`)).status).to.equal(200);
      const res = await fx.api.put(`/v1/groups/${group.id}/members/${sa.id}`);
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('PRINCIPAL_DELETED');
      const tombstone = await insertPrincipal(fx.app, { name: uniq('Gone'), status: 'deleted' });
      expect((await fx.api.put(`/v1/groups/${group.id}/members/${tombstone.id}`)).body.code).to.equal(
        'PRINCIPAL_DELETED',
      );

      // A member deleted later leaves the group, directly and in transitive listings.
      const outer = await createGroup(uniq('outer'));
      await addMember(outer.id, group.id);
      const later = await serviceAccount('Later bot');
      const stays = await insertPrincipal(fx.app, { name: 'Stays', status: 'suspended' });
      await addMember(group.id, later.id);
      await addMember(group.id, stays.id);
      expect(await memberNames(outer.id, '?transitive=true')).to.include('Later bot');
      expect((await fx.api.delete(`/v1/principals/${later.id}`)).status).to.equal(200);
      expect(await memberNames(group.id)).to.deep.equal(['Stays']);
      expect(await memberNames(outer.id, '?transitive=true')).to.deep.equal([group.name, 'Stays'].sort());
      expect((await fx.api.get(`/v1/groups/${group.id}`)).body.member_count).to.equal(1);
      expect((await eventsOf(group.id)).filter((e) => e.type === 'group.member_added')).to.have.length(2);
    });
  });

  describe('nesting', () => {
    it('nests groups and lists transitive members once each, through a diamond', async () => {
      // top ⊃ {left, right}; left ⊃ {shared, bottom}; right ⊃ {shared}; bottom ⊃ {deep}
      const top = await createGroup(uniq('top'));
      const left = await createGroup('n-left');
      const right = await createGroup('n-right');
      const bottom = await createGroup('n-bottom');
      const shared = await insertPrincipal(fx.app, { name: 'n-shared' });
      const deep = await insertPrincipal(fx.app, { name: 'n-deep', type: 'AI_AGENT' });
      const nested = await addMember(top.id, left.id);
      expect(nested.member).to.deep.equal({ id: left.id, name: 'n-left', type: 'GROUP' });
      await addMember(top.id, right.id);
      await addMember(left.id, shared.id);
      await addMember(right.id, shared.id);
      await addMember(left.id, bottom.id);
      await addMember(bottom.id, deep.id);

      const direct = await members(top.id);
      expect(direct.data).to.deep.equal([
        { id: left.id, name: 'n-left', type: 'GROUP' },
        { id: right.id, name: 'n-right', type: 'GROUP' },
      ]);
      expect((await members(top.id, '?transitive=false')).data).to.deep.equal(direct.data);
      expect((await fx.api.get(`/v1/groups/${top.id}`)).body.member_count).to.equal(2);

      const all = await members(top.id, '?transitive=true');
      expect(all.data.map((m: any) => m.name)).to.deep.equal([
        'n-bottom',
        'n-deep',
        'n-left',
        'n-right',
        'n-shared',
      ]);
      expect(all.pagination.total).to.equal(5);
      expect(all.data.find((m: any) => m.name === 'n-shared')).to.deep.equal({
        id: shared.id,
        name: 'n-shared',
        type: 'USER',
        email: shared.email,
      });
      const paged = await members(top.id, '?transitive=true&limit=2&page=3');
      expect(paged.data.map((m: any) => m.name)).to.deep.equal(['n-shared']);
      expect(paged.pagination).to.deep.equal({ total: 5, page: 3, per_page: 2, pages: 3 });

      // The nesting shows up in the principal's relationships too.
      const rel = await fx.api.get(`/v1/principals/${deep.id}/relationships?type=group_member&depth=3`);
      expect(
        rel.body.relationships.map((e: any) => [e.depth, e.principals.map((g: any) => g.name)]),
      ).to.deep.equal([
        [1, ['n-bottom']],
        [2, ['n-left']],
        [3, [top.name]],
      ]);
    });

    it('refuses cycles (self, direct, indirect) with 422 CYCLE_DETECTED and changes nothing', async () => {
      const a = await createGroup(uniq('cyc-a'));
      const b = await createGroup(uniq('cyc-b'));
      const c = await createGroup(uniq('cyc-c'));
      await addMember(a.id, b.id);
      await addMember(b.id, c.id);
      for (const [groupId, memberId] of [
        [a.id, a.id],
        [b.id, a.id],
        [c.id, a.id],
        [c.id, b.id],
        [c.id, c.id],
      ] as const) {
        const res = await fx.api.put(`/v1/groups/${groupId}/members/${memberId}`);
        expect(res.status, `${groupId} <- ${memberId}`).to.equal(422);
        expect(res.body.code).to.equal('CYCLE_DETECTED');
      }
      expect((await members(c.id)).data).to.deep.equal([]);
      expect((await members(b.id)).data.map((m: any) => m.id)).to.deep.equal([c.id]);
      expect((await members(a.id)).data.map((m: any) => m.id)).to.deep.equal([b.id]);
      for (const g of [a, c]) {
        expect((await eventsOf(g.id)).map((e) => e.type)).to.deep.equal(
          g === a ? ['group.created', 'group.member_added'] : ['group.created'],
        );
      }
      // Re-adding an existing nesting is still a plain idempotent success.
      expect((await fx.api.put(`/v1/groups/${a.id}/members/${b.id}`)).status).to.equal(200);
    });

    it('allows 16 levels of nesting and refuses a 17th with 409 CONFLICT', async () => {
      const chain: any[] = [];
      for (let i = 0; i < 16; i += 1) chain.push(await createGroup(uniq(`level-${i}`)));
      for (let i = 1; i < 16; i += 1) await addMember(chain[i - 1].id, chain[i].id);
      const innermost = await insertPrincipal(fx.app, { name: 'deepest-user' });
      await addMember(chain[15].id, innermost.id);
      const everyone = await members(chain[0].id, '?transitive=true&limit=100');
      expect(everyone.pagination.total).to.equal(16);
      expect(everyone.data.map((m: any) => m.id)).to.include(innermost.id);

      const extra = await createGroup(uniq('level-extra'));
      const below = await fx.api.put(`/v1/groups/${chain[15].id}/members/${extra.id}`);
      expect(below.status).to.equal(409);
      expect(below.body.code).to.equal('CONFLICT');
      const above = await fx.api.put(`/v1/groups/${extra.id}/members/${chain[0].id}`);
      expect(above.status).to.equal(409);
      expect(above.body.detail).to.contain('at most 16');
      expect((await members(extra.id)).data).to.deep.equal([]);
      expect((await eventsOf(extra.id)).map((e) => e.type)).to.deep.equal(['group.created']);

      // Joining two chains counts both: 8 + 8 levels fit, 8 + 9 do not.
      const upper: any[] = [];
      const lower: any[] = [];
      for (let i = 0; i < 8; i += 1) upper.push(await createGroup(uniq(`up-${i}`)));
      for (let i = 0; i < 9; i += 1) lower.push(await createGroup(uniq(`low-${i}`)));
      for (let i = 1; i < 8; i += 1) await addMember(upper[i - 1].id, upper[i].id);
      for (let i = 1; i < 9; i += 1) await addMember(lower[i - 1].id, lower[i].id);
      expect((await fx.api.put(`/v1/groups/${upper[7].id}/members/${lower[0].id}`)).status).to.equal(409);
      await addMember(upper[7].id, lower[1].id);
    });

    it('serialises concurrent nestings so that they cannot form a cycle', async () => {
      for (let round = 0; round < 3; round += 1) {
        const a = await createGroup(uniq('race-a'));
        const b = await createGroup(uniq('race-b'));
        const results = await Promise.all([
          fx.api.put(`/v1/groups/${a.id}/members/${b.id}`),
          fx.api.put(`/v1/groups/${b.id}/members/${a.id}`),
        ]);
        expect(results.map((r) => r.status).sort()).to.deep.equal([200, 422]);
        const rows = await cypher(
          fx.app.runtime.db,
          'MATCH (a:Group {id: $a}), (b:Group {id: $b}) RETURN COUNT { (a)-[:MEMBER_OF]-(b) } AS n',
          { a: a.id, b: b.id },
        );
        expect(rows[0]!['n']).to.equal(1);
      }
    });

    it('records one membership for concurrent identical additions', async () => {
      const group = await createGroup(uniq('busy'));
      const member = await insertPrincipal(fx.app, { name: uniq('Popular') });
      const results = await Promise.all(
        [1, 2, 3, 4].map(() => fx.api.put(`/v1/groups/${group.id}/members/${member.id}`)),
      );
      expect(results.map((r) => r.status)).to.deep.equal([200, 200, 200, 200]);
      expect(new Set(results.map((r) => r.body.added_at)).size).to.equal(1);
      expect((await fx.api.get(`/v1/groups/${group.id}`)).body.member_count).to.equal(1);
      expect((await eventsOf(group.id)).filter((e) => e.type === 'group.member_added')).to.have.length(1);
    });
  });

  describe('connector groups', () => {
    it('are readable but read-only through the API (403 on every write, no event)', async () => {
      const user = await insertPrincipal(fx.app, { name: uniq('Okta User') });
      const other = await insertPrincipal(fx.app, { name: uniq('Outsider') });
      const group = await insertConnectorGroup(fx.app, {
        name: uniq('okta-engineering'),
        connectorSource: 'okta',
        connectorId: '00g1abcd',
        members: [user.id],
      });
      const fetched = await fx.api.get(`/v1/groups/${group.id}`);
      expect(fetched.status).to.equal(200);
      expect(fetched.body).to.include({
        source: 'connector',
        connector_source: 'okta',
        connector_id: '00g1abcd',
        member_count: 1,
        created_by: 'con_test',
      });
      expect(await memberNames(group.id)).to.deep.equal([user.name]);

      const attempts = [
        fx.api.patch(`/v1/groups/${group.id}`, { name: 'renamed' }),
        fx.api.patch(`/v1/groups/${group.id}`, { description: null }),
        fx.api.delete(`/v1/groups/${group.id}`),
        fx.api.put(`/v1/groups/${group.id}/members/${other.id}`),
        fx.api.delete(`/v1/groups/${group.id}/members/${user.id}`),
      ];
      for (const res of await Promise.all(attempts)) {
        expect(res.status, res.text).to.equal(403);
        expect(res.body.code).to.equal('PRINCIPAL_MANAGED_BY_CONNECTOR');
      }
      const after = await fx.api.get(`/v1/groups/${group.id}`);
      expect(after.body).to.deep.equal(fetched.body);
      expect(await memberNames(group.id)).to.deep.equal([user.name]);
      expect(await eventsOf(group.id)).to.deep.equal([]);

      // An API group may contain a connector group; transitive listings go through it.
      const wrapper = await createGroup(uniq('wrapper'));
      await addMember(wrapper.id, group.id);
      expect(await memberNames(wrapper.id, '?transitive=true')).to.deep.equal([group.name, user.name].sort());
    });
  });

  describe('scopes', () => {
    it('groups:read may read but not write; other scopes may not read', async () => {
      const group = await createGroup(uniq('scoped'));
      const principal = await insertPrincipal(fx.app, { name: uniq('Scoped') });
      const reader = await authed(fx.app, await createClient(fx.app, ['groups:read']));
      expect((await reader.get('/v1/groups')).status).to.equal(200);
      expect((await reader.get(`/v1/groups/${group.id}`)).status).to.equal(200);
      expect((await reader.get(`/v1/groups/${group.id}/members?transitive=true`)).status).to.equal(200);
      for (const res of [
        await reader.post('/v1/groups', { name: uniq('nope') }),
        await reader.patch(`/v1/groups/${group.id}`, { name: uniq('nope') }),
        await reader.delete(`/v1/groups/${group.id}`),
        await reader.put(`/v1/groups/${group.id}/members/${principal.id}`),
        await reader.delete(`/v1/groups/${group.id}/members/${principal.id}`),
      ]) {
        expect(res.status).to.equal(403);
        expect(res.body.code).to.equal('INSUFFICIENT_SCOPE');
        expect(res.headers.get('www-authenticate')).to.contain('scope="groups:write"');
      }
      const writer = await authed(fx.app, await createClient(fx.app, ['groups:write']));
      expect((await writer.put(`/v1/groups/${group.id}/members/${principal.id}`)).status).to.equal(200);
      expect((await writer.get(`/v1/groups/${group.id}`)).status).to.equal(403);
      const outsider = await authed(fx.app, await createClient(fx.app, ['principals:read']));
      expect((await outsider.get('/v1/groups')).status).to.equal(403);
      expect((await fx.app.http.get('/v1/groups')).status).to.equal(401);
      expect((await eventsOf(group.id)).map((e) => e.type)).to.deep.equal([
        'group.created',
        'group.member_added',
      ]);
    });
  });

  describe('audit trail', () => {
    it('records each change with its actor, target and field changes', async () => {
      const name = uniq('audited');
      const group = await createGroup(name, 'v1');
      const member = await insertPrincipal(fx.app, { name: uniq('Audited') });
      const parent = await createGroup(uniq('audited-parent'));
      await fx.api.patch(`/v1/groups/${group.id}`, { name: `${name}-2`, description: null });
      await addMember(group.id, member.id);
      await addMember(parent.id, group.id);
      await fx.api.delete(`/v1/groups/${group.id}/members/${member.id}`);
      await addMember(group.id, member.id);
      expect((await fx.api.delete(`/v1/groups/${group.id}`)).status).to.equal(200);

      const events = await eventsOf(group.id);
      expect(events.map((e) => e.type)).to.deep.equal([
        'group.created',
        'group.updated',
        'group.member_added',
        'group.member_removed',
        'group.member_added',
        'group.deleted',
      ]);
      for (const e of events) {
        expect(e.actor).to.deep.equal({ type: 'client', id: ADMIN_CLIENT_ID });
        expect(e.target).to.deep.equal({ type: 'group', id: group.id });
        expect(e.outcome).to.equal('success');
      }
      expect(events[0].changes).to.deep.equal({ name: { to: name }, description: { to: 'v1' } });
      expect(events[1].changes).to.deep.equal({
        name: { from: name, to: `${name}-2` },
        description: { from: 'v1', to: null },
      });
      expect(events[2].changes).to.deep.equal({ members: { to: member.id } });
      expect(events[3].changes).to.deep.equal({ members: { from: member.id } });
      expect(events[5].changes).to.deep.equal({
        name: { from: `${name}-2` },
        member_count: { from: 1 },
        groups: { from: [parent.id], to: [] },
      });
      const parentEvents = await eventsOf(parent.id);
      expect(parentEvents.map((e) => [e.type, e.changes])).to.deep.equal([
        ['group.created', { name: { to: parent.name } }],
        ['group.member_added', { members: { to: group.id } }],
      ]);
    });
  });
});
