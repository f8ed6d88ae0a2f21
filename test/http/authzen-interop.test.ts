import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { createConnector } from '../helpers/identities.js';

const EVALUATION = '/access/v1/evaluation';
const EVALUATIONS = '/access/v1/evaluations';
const SEARCH_SUBJECT = '/access/v1/search/subject';
const SEARCH_RESOURCE = '/access/v1/search/resource';
const SEARCH_ACTION = '/access/v1/search/action';

/**
 * The OpenID AuthZEN interop scenarios, with their fixtures built through the public API: the
 * Todo application (its users, an identity provider's opaque subject ids, provisioned through
 * SCIM; their roles as attributes) and the Search demo (users and records, with subject, resource
 * and action searches).
 */
describe('AuthZEN interop scenarios', () => {
  let app: TestApp;
  let api: HttpClient;

  const fx = useApp({ env: { RATE_LIMIT_BULK: '100000' } });

  before(async function () {
    this.timeout(60_000);
    app = fx.app;
    api = fx.api;
  });

  const post = async (path: string, body: unknown): Promise<any> => {
    const res = await api.post(path, body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const created = async (path: string, body: unknown): Promise<string> => {
    const res = await api.post(path, body);
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  };

  describe('Todo application', () => {
    /** The subject ids the identity provider gives, its users' emails and their roles. */
    const USERS = {
      rick: {
        sub: 'CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs',
        email: 'rick@the-citadel.com',
        name: 'Rick Sanchez',
        roles: ['admin', 'evil_genius'],
      },
      morty: {
        sub: 'CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs',
        email: 'morty@the-citadel.com',
        name: 'Morty Smith',
        roles: ['editor'],
      },
      summer: {
        sub: 'CiRmZDI2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs',
        email: 'summer@the-smiths.com',
        name: 'Summer Smith',
        roles: ['editor'],
      },
      beth: {
        sub: 'CiRmZDM2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs',
        email: 'beth@the-smiths.com',
        name: 'Beth Smith',
        roles: ['viewer'],
      },
      jerry: {
        sub: 'CiRmZDQ2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs',
        email: 'jerry@the-smiths.com',
        name: 'Jerry Smith',
        roles: ['viewer'],
      },
    } as const;
    type Name = keyof typeof USERS;
    const NAMES = Object.keys(USERS) as Name[];

    before(async function () {
      this.timeout(60_000);
      const citadel = await createConnector(app, api, 'citadel');
      for (const name of NAMES) {
        const u = USERS[name];
        const id = await citadel.provision({ userName: u.email, externalId: u.sub, displayName: u.name });
        const res = await api.patch(`/v1/principals/${id}`, { attributes: { roles: [...u.roles] } });
        expect(res.status, res.text).to.equal(200);
      }
      const citizens = { type: 'USER', connector_source: 'citadel' };
      const withRole = (...roles: string[]) => ({ ...citizens, attributes: { roles: { $in: roles } } });
      const todos = [{ type: 'todo', identifier: '*' }];
      const policies = [
        {
          name: 'todo: everyone reads users and todos',
          subjects: { match: citizens },
          actions: ['can_read_user', 'can_read_todos'],
          resources: [{ type: 'user', identifier: '*' }, ...todos],
        },
        {
          name: 'todo: editors and admins create',
          subjects: { match: withRole('editor', 'admin') },
          actions: ['can_create_todo'],
          resources: todos,
        },
        {
          name: 'todo: editors change their own todos',
          subjects: { match: withRole('editor') },
          actions: ['can_update_todo', 'can_delete_todo'],
          resources: todos,
          conditions: { 'resource.attributes.ownerID': { $ref: 'principal.email' } },
        },
        {
          name: 'todo: evil geniuses change any todo',
          subjects: { match: withRole('evil_genius') },
          actions: ['can_update_todo'],
          resources: todos,
        },
        {
          name: 'todo: admins delete any todo',
          subjects: { match: withRole('admin') },
          actions: ['can_delete_todo'],
          resources: todos,
        },
      ];
      for (const policy of policies) await created('/v1/policies', { effect: 'allow', ...policy });
    });

    const subject = (name: Name) => ({ type: 'user', id: USERS[name].sub });
    const todoOf = (owner: Name, n: number) => ({
      type: 'todo',
      id: `7240d0db-8ff0-41ec-98b2-34a096273b9${n}`,
      properties: { ownerID: USERS[owner].email },
    });
    const ask = async (name: Name, action: string, resource: Record<string, unknown>): Promise<boolean> =>
      (await post(EVALUATION, { subject: subject(name), action: { name: action }, resource, context: {} }))
        .decision as boolean;

    it('lets everyone read users, by email or subject id, and todos', async () => {
      for (const name of NAMES) {
        for (const id of [USERS.beth.email, USERS[name].email, USERS[name].sub]) {
          expect(await ask(name, 'can_read_user', { type: 'user', id }), `${name} ${id}`).to.equal(true);
        }
        expect(await ask(name, 'can_read_todos', { type: 'todo', id: 'todo-1' }), name).to.equal(true);
      }
    });

    it('lets editors and admins create todos', async () => {
      const creators = { rick: true, morty: true, summer: true, beth: false, jerry: false };
      for (const name of NAMES) {
        expect(await ask(name, 'can_create_todo', { type: 'todo', id: 'todo-1' }), name).to.equal(
          creators[name],
        );
      }
    });

    it('lets owners who are editors, evil geniuses and admins update and delete as the roles say', async () => {
      // [user, the owner of a second todo, then: may update Rick's todo, update the second,
      // delete Rick's, delete the second]
      const expected: [Name, Name, boolean, boolean, boolean, boolean][] = [
        ['rick', 'morty', true, true, true, true],
        ['morty', 'morty', false, true, false, true],
        ['summer', 'summer', false, true, false, true],
        ['beth', 'beth', false, false, false, false],
        ['jerry', 'jerry', false, false, false, false],
      ];
      const ricks = todoOf('rick', 2);
      for (const [name, owner, updateRicks, updateSecond, deleteRicks, deleteSecond] of expected) {
        const second = todoOf(owner, NAMES.indexOf(owner) + 1);
        const about = `${name}, ${owner}'s todo`;
        expect(await ask(name, 'can_update_todo', ricks), about).to.equal(updateRicks);
        expect(await ask(name, 'can_update_todo', second), about).to.equal(updateSecond);
        expect(await ask(name, 'can_delete_todo', ricks), about).to.equal(deleteRicks);
        expect(await ask(name, 'can_delete_todo', second), about).to.equal(deleteSecond);
      }
    });

    it('decides which todos a user may complete in one batch', async () => {
      const completable = async (name: Name, todos: Record<string, unknown>[]) =>
        (
          await post(EVALUATIONS, {
            subject: subject(name),
            action: { name: 'can_update_todo' },
            resource: {},
            context: {},
            evaluations: todos.map((resource) => ({ resource })),
          })
        ).evaluations.map((e: any) => e.decision);
      expect(await completable('rick', [todoOf('rick', 2), todoOf('jerry', 5)])).to.deep.equal([true, true]);
      expect(await completable('morty', [todoOf('rick', 2), todoOf('morty', 1)])).to.deep.equal([
        false,
        true,
      ]);
      expect(await completable('jerry', [todoOf('rick', 2), todoOf('jerry', 5)])).to.deep.equal([
        false,
        false,
      ]);
    });
  });

  describe('Search demo', () => {
    /** [id, display name, role, department] of each user. */
    const PEOPLE: [string, string, string, string][] = [
      ['alice', 'Alice', 'manager', 'Sales'],
      ['bob', 'Bob', 'employee', 'Legal'],
      ['carol', 'Carol', 'contractor', 'Legal'],
      ['dan', 'Dan', 'manager', 'Finance'],
      ['erin', 'Erin', 'employee', 'Finance'],
      ['felix', 'Felix', 'contractor', 'Accounting'],
    ];
    /**
     * Each record: its department and owner, then who may view and who may edit it (its owner
     * alone may delete it). Anyone views what their department or they own, managers everything;
     * owners edit, and managers edit what their department owns.
     */
    const RECORDS: Record<string, [string, string, string[], string[]]> = {
      '101': ['Legal', 'alice', ['alice', 'bob', 'carol', 'dan'], ['alice']],
      '102': ['Legal', 'bob', ['alice', 'bob', 'carol', 'dan'], ['bob']],
      '103': ['Legal', 'carol', ['alice', 'bob', 'carol', 'dan'], ['carol']],
      '104': ['Accounting', 'dan', ['alice', 'dan', 'felix'], ['dan']],
      '105': ['Legal', 'erin', ['alice', 'bob', 'carol', 'dan', 'erin'], ['erin']],
      '106': ['Accounting', 'felix', ['alice', 'dan', 'felix'], ['felix']],
      '107': ['Sales', 'alice', ['alice', 'dan'], ['alice']],
      '108': ['Legal', 'bob', ['alice', 'bob', 'carol', 'dan'], ['bob']],
      '109': ['Accounting', 'carol', ['alice', 'carol', 'dan', 'felix'], ['carol']],
      '110': ['Sales', 'dan', ['alice', 'dan'], ['alice', 'dan']],
      '111': ['Accounting', 'erin', ['alice', 'dan', 'erin', 'felix'], ['erin']],
      '112': ['Legal', 'felix', ['alice', 'bob', 'carol', 'dan', 'felix'], ['felix']],
      '113': ['Sales', 'alice', ['alice', 'dan'], ['alice']],
      '114': ['Accounting', 'bob', ['alice', 'bob', 'dan', 'felix'], ['bob']],
      '115': ['Finance', 'carol', ['alice', 'carol', 'dan', 'erin'], ['carol', 'dan']],
      '116': ['Legal', 'dan', ['alice', 'bob', 'carol', 'dan'], ['dan']],
      '117': ['Legal', 'erin', ['alice', 'bob', 'carol', 'dan', 'erin'], ['erin']],
      '118': ['Accounting', 'felix', ['alice', 'dan', 'felix'], ['felix']],
      '119': ['Legal', 'alice', ['alice', 'bob', 'carol', 'dan'], ['alice']],
      '120': ['Accounting', 'bob', ['alice', 'bob', 'dan', 'felix'], ['bob']],
    };
    const ids = Object.keys(RECORDS);
    const mayDo = (action: string, id: string): string[] => {
      const [, owner, viewers, editors] = RECORDS[id]!;
      return action === 'view' ? viewers : action === 'edit' ? editors : [owner];
    };

    before(async function () {
      this.timeout(60_000);
      const directory = await createConnector(app, api, 'search-demo');
      for (const [id, name, role, department] of PEOPLE) {
        await directory.provision({
          userName: `${id}@search.example`,
          externalId: id,
          displayName: name,
          title: role,
          department,
        });
      }
      for (const [id, [department, owner]] of Object.entries(RECORDS)) {
        const res = await api.put(`/v1/resources/record/${id}`, { attributes: { department, owner } });
        expect(res.status, res.text).to.equal(201);
      }
      const people = { type: 'USER', connector_source: 'search-demo' };
      const managers = { ...people, attributes: { role: 'manager' } };
      const records = ids.map((identifier) => ({ type: 'record', identifier }));
      const sameDepartment = {
        'resource.attributes.department': { $ref: 'principal.attributes.department' },
      };
      const policies = [
        { name: 'demo: managers view', subjects: { match: managers }, actions: ['view'] },
        {
          name: 'demo: a department views its records',
          subjects: { match: people },
          actions: ['view'],
          conditions: sameDepartment,
        },
        {
          name: 'demo: owners view, edit and delete',
          subjects: { match: people },
          actions: ['view', 'edit', 'delete'],
          conditions: { 'resource.attributes.owner': { $ref: 'principal.connector_id' } },
        },
        {
          name: "demo: managers edit their department's records",
          subjects: { match: managers },
          actions: ['edit'],
          conditions: sameDepartment,
        },
      ];
      for (const policy of policies) {
        await created('/v1/policies', { effect: 'allow', resources: records, ...policy });
      }
    });

    const sorted = (list: { id?: string; name?: string }[]): string[] =>
      list.map((r) => (r.id ?? r.name)!).sort();

    it('finds the users who may view, edit and delete each record', async () => {
      for (const id of ids) {
        for (const action of ['view', 'edit', 'delete']) {
          const answer = await post(SEARCH_SUBJECT, {
            subject: { type: 'user' },
            action: { name: action },
            resource: { type: 'record', id },
          });
          for (const result of answer.results) expect(result).to.deep.equal({ type: 'user', id: result.id });
          expect(sorted(answer.results), `${action} ${id}`).to.deep.equal([...mayDo(action, id)].sort());
        }
      }
    });

    it('finds the records each user may view, edit and delete', async () => {
      for (const [user] of PEOPLE) {
        for (const action of ['view', 'edit', 'delete']) {
          const answer = await post(SEARCH_RESOURCE, {
            subject: { type: 'user', id: user },
            action: { name: action },
            resource: { type: 'record' },
          });
          const expected = ids.filter((id) => mayDo(action, id).includes(user));
          expect(sorted(answer.results), `${user} ${action}`).to.deep.equal(expected);
        }
      }
    });

    it('finds the actions each user may take on each record', async () => {
      for (const [user] of PEOPLE) {
        for (const id of ids) {
          const answer = await post(SEARCH_ACTION, {
            subject: { type: 'user', id: user },
            resource: { type: 'record', id },
          });
          const expected = ['delete', 'edit', 'view'].filter((action) => mayDo(action, id).includes(user));
          expect(sorted(answer.results), `${user} on ${id}`).to.deep.equal(expected);
        }
      }
    });
  });
});
