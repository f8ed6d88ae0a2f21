import { expect } from 'chai';
import { loadMigrations } from '../../src/db/migrations.js';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { snapshotLines, syncSnapshot } from '../helpers/sync.js';

/**
 * What a connector's SCIM view holds: the users and groups of that connector (by its id, never
 * by its name, which a later connector may reuse), each userName once, and externalIds as the
 * client sends them, repeated or not.
 */

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

type Json = Record<string, any>;

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

const user = (userName: string, extra: Json = {}): Json => ({
  schemas: [USER, ENTERPRISE],
  userName,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: userName, type: 'work', primary: true }],
  active: true,
  ...extra,
});
const managedBy = (value: string): Json => ({ [ENTERPRISE]: { manager: { value } } });
const filtered = (resource: 'Users' | 'Groups', filter: string): string =>
  `/scim/v2/${resource}?filter=${encodeURIComponent(filter)}&count=200`;

describe('SCIM scoping: connectors by id, externalIds that repeat', () => {
  const fx = useApp();

  interface Connector {
    id: string;
    name: string;
    scim: HttpClient;
  }

  async function connector(name = uniq('okta-')): Promise<Connector> {
    const res = await fx.api.post('/v1/connectors', { name, description: 'scoping' });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, name: res.body.name, scim: fx.app.http.withToken(res.body.token) };
  }

  async function create(c: Connector, body: Json, resource: 'Users' | 'Groups' = 'Users'): Promise<Json> {
    const res = await c.scim.post(`/scim/v2/${resource}`, body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }

  async function principal(id: string): Promise<Json> {
    const res = await fx.api.get(`/v1/principals/${id}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  const managerOf = async (id: string): Promise<string | undefined> =>
    (await principal(id)).attributes.manager_id as string | undefined;

  const sync = (c: Connector, lines: Json[]): Promise<Json> =>
    syncSnapshot(fx.api, c.id, snapshotLines(lines));

  describe('externalId', () => {
    it('lets users of one connector share an externalId: each is created, read and found by it', async () => {
      const c = await connector();
      const externalId = uniq('shared-');
      const names = ['ann', 'bob', 'cat'].map((n) => `${n}.${uniq('')}@example.com`);
      const ids: string[] = [];
      for (const n of names) ids.push((await create(c, user(n, { externalId }))).id);
      expect(new Set(ids).size).to.equal(3);
      for (const [i, id] of ids.entries()) {
        const got = await c.scim.get(`/scim/v2/Users/${id}`);
        expect(got.status, got.text).to.equal(200);
        expect(got.body).to.include({ userName: names[i], externalId });
        expect(await principal(id)).to.include({ connector_id: externalId, connector_source: c.name });
      }
      const found = await c.scim.get(filtered('Users', `externalId eq "${externalId}"`));
      expect(found.status, found.text).to.equal(200);
      expect(found.body.totalResults).to.equal(3);
      expect(found.body.Resources.map((r: Json) => r.id)).to.deep.equal(ids);

      // A user replaced or patched to an externalId others have keeps it too.
      const other = await create(c, user(`dan.${uniq('')}@example.com`, { externalId: uniq('own-') }));
      const patched = await c.scim.patch(`/scim/v2/Users/${other.id}`, {
        schemas: [PATCH],
        Operations: [{ op: 'replace', path: 'externalId', value: externalId }],
      });
      expect(patched.status, patched.text).to.equal(200);
      expect(patched.body.externalId).to.equal(externalId);
      expect(
        (await c.scim.get(filtered('Users', `externalId eq "${externalId}"`))).body.totalResults,
      ).to.equal(4);
    });

    it('keeps userName unique within the connector, in any case, whatever the externalId', async () => {
      const c = await connector();
      const userName = `Dup.${uniq('')}@example.com`;
      await create(c, user(userName, { externalId: uniq('a-') }));
      for (const body of [
        user(userName.toUpperCase(), { externalId: uniq('b-') }),
        user(userName.toLowerCase()),
      ]) {
        const again = await c.scim.post('/scim/v2/Users', body);
        expect(again.status, again.text).to.equal(409);
        expect(again.body).to.deep.include({ status: '409', scimType: 'uniqueness' });
        expect(again.body.detail).to.not.match(/externalId/);
      }
    });

    it('links a manager by an externalId one user has, and nobody by one several users share', async () => {
      const c = await connector();
      const shared = uniq('twin-');
      const unique = uniq('boss-');
      const twins = [
        await create(c, user(`t1.${uniq('')}@example.com`, { externalId: shared })),
        await create(c, user(`t2.${uniq('')}@example.com`, { externalId: shared })),
      ];
      const boss = await create(c, user(`boss.${uniq('')}@example.com`, { externalId: unique }));

      const toBoss = await create(c, user(`r1.${uniq('')}@example.com`, managedBy(unique)));
      expect(await managerOf(toBoss.id)).to.equal(boss.id);
      expect(toBoss[ENTERPRISE].manager.$ref).to.match(new RegExp(`/Users/${boss.id}$`));
      const toTwin = await create(c, user(`r2.${uniq('')}@example.com`, managedBy(shared)));
      expect(await managerOf(toTwin.id)).to.equal(undefined);
      expect(toTwin[ENTERPRISE].manager).to.not.have.property('$ref');
      // A SCIM id is never ambiguous.
      const toTwinById = await create(c, user(`r3.${uniq('')}@example.com`, managedBy(twins[0]!.id)));
      expect(await managerOf(toTwinById.id)).to.equal(twins[0]!.id);

      // Changing the manager to a shared externalId unlinks; back to the unique one links again.
      const patch = (value: string) =>
        c.scim.patch(`/scim/v2/Users/${toBoss.id}`, {
          schemas: [PATCH],
          Operations: [{ op: 'replace', path: `${ENTERPRISE}:manager`, value: { value } }],
        });
      expect((await patch(shared)).status).to.equal(200);
      expect(await managerOf(toBoss.id)).to.equal(undefined);
      expect((await patch(unique)).status).to.equal(200);
      expect(await managerOf(toBoss.id)).to.equal(boss.id);
    });

    it('links a waiting report when its manager arrives, unless the externalId it names is shared by then', async () => {
      const c = await connector();
      const awaited = uniq('late-');
      const report = await create(c, user(`r.${uniq('')}@example.com`, managedBy(awaited)));
      expect(await managerOf(report.id)).to.equal(undefined);
      const manager = await create(c, user(`m.${uniq('')}@example.com`, { externalId: awaited }));
      expect(await managerOf(report.id)).to.equal(manager.id);

      // Another report waits on an externalId that one user takes (by a replace, which wakes
      // nobody) and another then brings: two users have it, so the report stays unlinked.
      const contested = uniq('contested-');
      const waiting = await create(c, user(`w.${uniq('')}@example.com`, managedBy(contested)));
      const first = await create(c, user(`f.${uniq('')}@example.com`));
      const replaced = await c.scim.put(
        `/scim/v2/Users/${first.id}`,
        user(first.userName as string, { externalId: contested }),
      );
      expect(replaced.status, replaced.text).to.equal(200);
      expect(await managerOf(waiting.id)).to.equal(undefined);
      const second = await create(c, user(`s.${uniq('')}@example.com`, { externalId: contested }));
      expect(second.id).to.not.equal(first.id);
      expect(await managerOf(waiting.id)).to.equal(undefined);
      const got = await c.scim.get(`/scim/v2/Users/${waiting.id}`);
      expect(got.body[ENTERPRISE].manager).to.deep.equal({ value: contested });
    });

    it('leaves an AuthZEN subject named by a shared externalId ambiguous, and one named by a unique one resolved', async () => {
      const c = await connector();
      const shared = uniq('authzen-shared-');
      const unique = uniq('authzen-unique-');
      const twins = [
        await create(c, user(`t1.${uniq('')}@example.com`, { externalId: shared })),
        await create(c, user(`t2.${uniq('')}@example.com`, { externalId: shared })),
      ];
      const single = await create(c, user(`s.${uniq('')}@example.com`, { externalId: unique }));
      const type = uniq('t-').toLowerCase();
      const policy = await fx.api.post('/v1/policies', {
        name: uniq('policy-'),
        effect: 'allow',
        actions: ['read'],
        subjects: { principals: [twins[0]!.id, twins[1]!.id, single.id] },
        resources: [{ type, identifier: 'x' }],
      });
      expect(policy.status, policy.text).to.equal(201);
      const ask = async (id: string): Promise<Json> => {
        const res = await fx.api.post('/access/v1/evaluation', {
          subject: { type: 'user', id, properties: { connector: c.id } },
          action: { name: 'read' },
          resource: { type, id: 'x' },
        });
        expect(res.status, res.text).to.equal(200);
        return res.body;
      };
      const ambiguous = await ask(shared);
      expect(ambiguous.decision).to.equal(false);
      expect(ambiguous.context.reasons.map((r: Json) => r.code)).to.deep.equal(['AMBIGUOUS_SUBJECT']);
      expect((await ask(unique)).decision).to.equal(true);
      expect((await ask(twins[0]!.id)).decision).to.equal(true);
    });

    it('reconciles a snapshot whose users share an externalId, matching them by userName', async () => {
      const c = await connector();
      const shared = uniq('sync-shared-');
      const [ann, bob, lead, rep, rep2] = ['ann', 'bob', 'lead', 'rep', 'rep2'].map(
        (n) => `${n}.${uniq('')}@example.com`,
      );
      const snapshot = (annTitle: string): Json[] => [
        user(ann!, { externalId: shared, title: annTitle }),
        user(bob!, { externalId: shared }),
        user(lead!, { externalId: `${shared}-lead` }),
        user(rep!, managedBy(shared)),
        user(rep2!, managedBy(`${shared}-lead`)),
      ];
      const first = await sync(c, snapshot('Engineer'));
      expect(first.counts).to.include({ lines: 5, invalid: 0, users_created: 5 });
      const found = await c.scim.get(filtered('Users', `externalId eq "${shared}"`));
      expect(found.body.Resources.map((r: Json) => r.userName).sort()).to.deep.equal([ann, bob].sort());
      const idOf = async (userName: string): Promise<string> =>
        (await c.scim.get(filtered('Users', `userName eq "${userName}"`))).body.Resources[0].id as string;
      expect(await managerOf(await idOf(rep!))).to.equal(undefined);
      expect(await managerOf(await idOf(rep2!))).to.equal(await idOf(lead!));

      const again = await sync(c, snapshot('Staff engineer'));
      expect(again.counts).to.include({
        users_created: 0,
        users_updated: 1,
        users_unchanged: 4,
        users_deprovisioned: 0,
      });
      const annUser = (await c.scim.get(`/scim/v2/Users/${await idOf(ann!)}`)).body;
      expect(annUser.title).to.equal('Staff engineer');
      expect(await managerOf(await idOf(rep!))).to.equal(undefined);
    });
  });

  describe('a deleted connector whose name is reused', () => {
    it('leaves the new connector none of the old one’s users and groups, and the old principals as they were', async () => {
      const name = uniq('reused-');
      const old = await connector(name);
      const userName = `kept.${uniq('')}@example.com`;
      const externalId = uniq('ext-');
      const kept = await create(old, user(userName, { externalId }));
      const team = await create(
        old,
        { schemas: [GROUP], displayName: 'Team', externalId: 'g-team', members: [{ value: kept.id }] },
        'Groups',
      );
      expect((await fx.api.delete(`/v1/connectors/${old.id}`)).status).to.equal(200);

      const fresh = await connector(name);
      expect(fresh.id).to.not.equal(old.id);
      const users = await fresh.scim.get('/scim/v2/Users');
      expect(users.body).to.include({ totalResults: 0 });
      const groups = await fresh.scim.get('/scim/v2/Groups');
      expect(groups.body).to.include({ totalResults: 0 });
      for (const filter of [
        `userName eq "${userName}"`,
        `externalId eq "${externalId}"`,
        `id eq "${kept.id}"`,
      ]) {
        expect((await fresh.scim.get(filtered('Users', filter))).body.totalResults, filter).to.equal(0);
      }
      expect((await fresh.scim.get(filtered('Groups', 'displayName eq "Team"'))).body.totalResults).to.equal(
        0,
      );
      expect((await fresh.scim.get(`/scim/v2/Users/${kept.id}`)).status).to.equal(404);
      expect((await fresh.scim.get(`/scim/v2/Groups/${team.id}`)).status).to.equal(404);
      expect((await fresh.scim.put(`/scim/v2/Users/${kept.id}`, user(userName))).status).to.equal(404);
      const deactivate = { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] };
      expect((await fresh.scim.patch(`/scim/v2/Users/${kept.id}`, deactivate)).status).to.equal(404);
      expect((await fresh.scim.delete(`/scim/v2/Users/${kept.id}`)).status).to.equal(404);
      expect((await fresh.scim.delete(`/scim/v2/Groups/${team.id}`)).status).to.equal(404);

      // Names are free to it; the old users are not its managers or members.
      const again = await create(
        fresh,
        user(userName.toUpperCase(), { externalId, ...managedBy(externalId) }),
      );
      expect(again.id).to.not.equal(kept.id);
      expect(await managerOf(again.id)).to.equal(undefined);
      const byOldId = await create(fresh, user(`r.${uniq('')}@example.com`, managedBy(kept.id)));
      expect(await managerOf(byOldId.id)).to.equal(undefined);
      const newTeam = await create(
        fresh,
        { schemas: [GROUP], displayName: 'team', externalId: 'g-team', members: [{ value: again.id }] },
        'Groups',
      );
      expect(newTeam.id).to.not.equal(team.id);
      const withOld = await fresh.scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName: 'Other',
        members: [{ value: kept.id }],
      });
      expect(withOld.status, withOld.text).to.equal(400);
      expect(withOld.body.scimType).to.equal('invalidValue');
      expect((await fresh.scim.get('/scim/v2/Users')).body.totalResults).to.equal(2);

      // A snapshot of the new connector leaves the old one's user alone.
      const synced = await sync(fresh, [
        user(userName.toUpperCase(), { externalId, ...managedBy(externalId) }),
      ]);
      expect(synced.counts).to.include({ users_created: 0, users_unchanged: 1, users_deprovisioned: 1 });

      // The old principals and group stay, with the connector's name as their source.
      expect(await principal(kept.id)).to.include({
        status: 'active',
        connector_source: name,
        connector_id: externalId,
      });
      expect(await principal(again.id)).to.include({ connector_source: name });
      const oldGroup = await fx.api.get(`/v1/groups/${team.id}`);
      expect(oldGroup.status, oldGroup.text).to.equal(200);
      expect(oldGroup.body).to.include({ connector_source: name, name: 'Team', member_count: 1 });
      const listed = await fx.api.get(`/v1/principals?connector_source=${name}&limit=100`);
      expect(listed.body.data.map((p: Json) => p.id)).to.include(kept.id);
    });
  });

  describe('migration 013', () => {
    it('gives principals and groups written before it the id of their connector, and groups their name keys', async () => {
      const db = fx.app.runtime.db;
      const name = uniq('legacy-');
      const early = await connector(name);
      const earlyUser = await create(early, user(`early.${uniq('')}@example.com`));
      const earlyGroup = await create(early, { schemas: [GROUP], displayName: 'Legacy Team' }, 'Groups');
      expect((await fx.api.delete(`/v1/connectors/${early.id}`)).status).to.equal(200);
      const late = await connector(name);
      const lateUser = await create(late, user(`late.${uniq('')}@example.com`));
      const lateGroup = await create(late, { schemas: [GROUP], displayName: 'Late Team' }, 'Groups');
      // Written before any connector of its name: it falls to the earliest of them.
      const before = await create(late, user(`before.${uniq('')}@example.com`));

      // As the nodes were before the migration: no connector_ref, name keys by connector name.
      const ids = [earlyUser.id, lateUser.id, before.id, earlyGroup.id, lateGroup.id];
      await cypher(
        db,
        `MATCH (n) WHERE n.id IN $ids
         REMOVE n.connector_ref
         SET n.name_key = CASE WHEN n:Group THEN 'connector:' + $name + ':' + toLower(n.name) END`,
        { ids, name },
      );
      await cypher(
        db,
        `MATCH (p:Principal {id: $id}), (c:Connector {id: $early})
         SET p.created_at = c.created_at - duration('PT1H')`,
        { id: before.id, early: early.id },
      );
      expect((await late.scim.get('/scim/v2/Users')).body.totalResults).to.equal(0);

      const [migration] = (await loadMigrations()).filter((m) => m.version === 13);
      expect(migration, 'cypher/schema/013_*.cypher').to.not.equal(undefined);
      for (const statement of migration!.statements) await db.schema(statement);

      const rows = await cypher(
        db,
        'MATCH (n) WHERE n.id IN $ids RETURN n.id AS id, n.connector_ref AS ref, n.name_key AS key',
        {
          ids,
        },
      );
      const byId = new Map(rows.map((r) => [r['id'], r]));
      expect(byId.get(earlyUser.id)).to.include({ ref: early.id });
      expect(byId.get(lateUser.id)).to.include({ ref: late.id });
      expect(byId.get(before.id)).to.include({ ref: early.id });
      expect(byId.get(earlyGroup.id)).to.include({ ref: early.id, key: `connector:${early.id}:legacy team` });
      expect(byId.get(lateGroup.id)).to.include({ ref: late.id, key: `connector:${late.id}:late team` });

      // Running it again changes nothing, and each connector sees its own again.
      for (const statement of migration!.statements) await db.schema(statement);
      const listed = await late.scim.get('/scim/v2/Users');
      expect(listed.body.Resources.map((r: Json) => r.id)).to.deep.equal([lateUser.id]);
      expect((await late.scim.get(`/scim/v2/Users/${earlyUser.id}`)).status).to.equal(404);
      expect((await late.scim.get(`/scim/v2/Groups/${lateGroup.id}`)).status).to.equal(200);
      await create(late, { schemas: [GROUP], displayName: 'legacy team' }, 'Groups');
      const taken = await late.scim.post('/scim/v2/Groups', { schemas: [GROUP], displayName: 'LATE TEAM' });
      expect(taken.status, taken.text).to.equal(409);
    });
  });
});
