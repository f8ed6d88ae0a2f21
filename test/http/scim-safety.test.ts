import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient, HttpResponse } from '../helpers/http.js';
import { eventually } from '../helpers/wait.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;
const patchOp = (operations: unknown[]) => ({ schemas: [PATCH], Operations: operations });

/** `{"a":{"a":…"x"}}`: an object nested `levels` deep (the outermost at level 1). */
function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
}

/** The same, as JSON text, for depths JSON.stringify cannot reach. */
const deepJson = (levels: number): string => `${'{"a":'.repeat(levels)}"x"${'}'.repeat(levels)}`;

/** `count` keys and elements in all: an array of `count - 1` elements under one key. */
const wide = (count: number): unknown => ({ list: Array.from({ length: count - 1 }, (_, i) => i) });

function expectScimError(res: HttpResponse, status: number, scimType?: string): void {
  expect(res.status, res.text.slice(0, 300)).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/application\/scim\+json/);
  expect(res.body.schemas).to.deep.equal([ERROR]);
  expect(res.body.status).to.equal(String(status));
  if (scimType !== undefined) expect(res.body.scimType, res.body.detail).to.equal(scimType);
}

describe('SCIM: passwords are never kept, and what a client sends is bounded', () => {
  const fx = useApp();

  async function connector(): Promise<{ id: string; name: string; scim: HttpClient }> {
    const res = await fx.api.post('/v1/connectors', { name: uniq('safe-') });
    expect(res.status, res.text).to.equal(201);
    return { id: res.body.id, name: res.body.name, scim: fx.app.http.withToken(res.body.token) };
  }

  const user = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    schemas: [USER, ENTERPRISE],
    userName: `${uniq('ada')}@example.com`,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    active: true,
    ...extra,
  });

  async function create(scim: HttpClient, body: Record<string, unknown>): Promise<string> {
    const res = await scim.post('/scim/v2/Users', body);
    expect(res.status, res.text).to.equal(201);
    return res.body.id as string;
  }

  /** Every node holding `text` in one of its properties, by label. */
  async function nodesHolding(text: string): Promise<string[]> {
    const rows = await cypher(
      fx.app.runtime.db,
      `MATCH (n) WHERE any(k IN keys(n) WHERE any(x IN CASE WHEN n[k] IS :: LIST<ANY> THEN n[k] ELSE [n[k]] END
                                         WHERE toStringOrNull(x) CONTAINS $text))
       RETURN labels(n)[0] AS label`,
      { text },
    );
    return rows.map((r) => String(r['label']));
  }

  async function principalCount(source: string): Promise<number> {
    const rows = await cypher(
      fx.app.runtime.db,
      'MATCH (p:Principal {connector_source: $source}) RETURN count(p) AS n',
      { source },
    );
    return Number(rows[0]!['n']);
  }

  async function eventCount(connectorId: string): Promise<number> {
    const res = await fx.api.get(`/v1/audit/events?actor_id=${connectorId}&limit=1`);
    expect(res.status, res.text).to.equal(200);
    return res.body.pagination.total as number;
  }

  /** The secret is nowhere: not in any read of the user, its audit events or the graph. */
  async function expectNowhere(
    scim: HttpClient,
    id: string,
    userName: string,
    secret: string,
  ): Promise<void> {
    const reads = [
      await scim.get(`/scim/v2/Users/${id}`),
      await scim.get(`/scim/v2/Users/${id}?attributes=password`),
      await scim.get(`/scim/v2/Users/${id}?attributes=${encodeURIComponent(`${USER}:password`)}`),
      await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`),
      await scim.get(`/scim/v2/Users?filter=${encodeURIComponent('password pr')}&attributes=password`),
      await fx.api.get(`/v1/principals/${id}`),
      await fx.api.get(`/v1/audit/events?target_id=${id}&limit=100`),
    ];
    for (const read of reads) {
      expect(read.status, read.text).to.equal(200);
      expect(read.text).to.not.include(secret);
      expect(read.text.toLowerCase()).to.not.match(/"(urn:[^"]*:)?password"/);
    }
    expect(reads[0]!.body).to.not.have.property(USER);
    expect(reads[3]!.body.totalResults).to.equal(1);
    expect(reads[4]!.body.totalResults).to.equal(0);
    expect(await nodesHolding(secret)).to.deep.equal([]);
  }

  /** A password in each of the ways a client may spell it, on a body. */
  const spellings: [string, (secret: string) => Record<string, unknown>][] = [
    ['plain', (s) => ({ password: s })],
    ['in another case', (s) => ({ PassWord: s })],
    ['URN-qualified', (s) => ({ [`${USER}:password`]: s })],
    ['URN-qualified in capitals', (s) => ({ [`${USER}:PASSWORD`.toUpperCase()]: s })],
    ['inside the core schema object', (s) => ({ [USER]: { password: s } })],
    ['URN-qualified inside the core schema object', (s) => ({ [USER]: { [`${USER}:Password`]: s } })],
    ['as a part of itself', (s) => ({ 'password.value': s })],
  ];

  describe('password', () => {
    it('is neither kept nor returned from a POST, whatever its spelling', async () => {
      const { scim } = await connector();
      for (const [label, spell] of spellings) {
        const secret = uniq('S3cret-post-');
        const body = user({ displayName: label, ...spell(secret) });
        const res = await scim.post('/scim/v2/Users', body);
        expect(res.status, `${label}: ${res.text}`).to.equal(201);
        expect(res.text, label).to.not.include(secret);
        await expectNowhere(scim, res.body.id, body['userName'] as string, secret);
      }
    });

    it('is neither kept nor returned from a PUT, whatever its spelling', async () => {
      const { scim } = await connector();
      for (const [label, spell] of spellings) {
        const body = user();
        const id = await create(scim, body);
        const secret = uniq('S3cret-put-');
        const res = await scim.put(`/scim/v2/Users/${id}`, { ...body, title: label, ...spell(secret) });
        expect(res.status, `${label}: ${res.text}`).to.equal(200);
        expect(res.body.title).to.equal(label);
        expect(res.text, label).to.not.include(secret);
        await expectNowhere(scim, id, body['userName'] as string, secret);
      }
    });

    it('is neither kept nor returned from a PATCH, by path or in a value, whatever its spelling', async () => {
      const { scim } = await connector();
      const operations: [string, (secret: string) => unknown][] = [
        ['path', (s) => ({ op: 'replace', path: 'password', value: s })],
        ['path in another case', (s) => ({ op: 'add', path: 'PassWord', value: s })],
        ['URN-qualified path', (s) => ({ op: 'Replace', path: `${USER}:password`, value: s })],
        ['core schema path', (s) => ({ op: 'replace', path: USER, value: { password: s } })],
        ...spellings.map(([label, spell]): [string, (secret: string) => unknown] => [
          `path-less value, ${label}`,
          (s) => ({ op: 'replace', value: spell(s) }),
        ]),
      ];
      for (const [label, operation] of operations) {
        const body = user();
        const id = await create(scim, body);
        const secret = uniq('S3cret-patch-');
        const res = await scim.patch(
          `/scim/v2/Users/${id}`,
          patchOp([operation(secret), { op: 'replace', path: 'title', value: label }]),
        );
        expect(res.status, `${label}: ${res.text}`).to.equal(200);
        expect(res.body.title).to.equal(label);
        expect(res.text, label).to.not.include(secret);
        await expectNowhere(scim, id, body['userName'] as string, secret);
      }
    });

    it('reads the other attributes of the core schema object, and URN-qualified ones, as core attributes', async () => {
      const { scim } = await connector();
      const id = await create(
        scim,
        user({ [USER]: { displayName: 'Inside', nickName: 'Ada' }, [`${USER}:title`]: 'Countess' }),
      );
      const got = await scim.get(`/scim/v2/Users/${id}`);
      expect(got.body).to.include({ displayName: 'Inside', nickName: 'Ada', title: 'Countess' });
      expect(got.body).to.not.have.property(USER);
      expect((await fx.api.get(`/v1/principals/${id}`)).body).to.deep.include({ name: 'Inside' });
    });

    it('is not returned from a user stored with one, nor audited when that user changes', async () => {
      const { scim } = await connector();
      const body = user();
      const id = await create(scim, body);
      const secret = uniq('S3cret-stored-');
      const [row] = await cypher(fx.app.runtime.db, 'MATCH (p:Principal {id: $id}) RETURN p.scim AS scim', {
        id,
      });
      const stored = {
        ...(JSON.parse(String(row!['scim'])) as Record<string, unknown>),
        [`${USER}:password`]: secret,
        [USER]: { Password: secret, nickName: 'Ada' },
      };
      await cypher(fx.app.runtime.db, 'MATCH (p:Principal {id: $id}) SET p.scim = $scim', {
        id,
        scim: JSON.stringify(stored),
      });
      for (const path of [
        `/scim/v2/Users/${id}`,
        `/scim/v2/Users/${id}?attributes=password`,
        '/scim/v2/Users',
      ]) {
        const read = await scim.get(path);
        expect(read.status, read.text).to.equal(200);
        expect(read.text).to.not.include(secret);
      }
      const put = await scim.put(`/scim/v2/Users/${id}`, { ...body, title: 'Countess' });
      expect(put.status, put.text).to.equal(200);
      await expectNowhere(scim, id, body['userName'] as string, secret);
    });

    it('is not kept from the lines of a sync snapshot, whatever its spelling', async () => {
      const { id: connectorId, scim } = await connector();
      const secret = uniq('S3cret-sync-');
      const users = spellings.map(([label, spell]) =>
        user({ displayName: label, ...spell(`${secret}-${label}`) }),
      );
      const sync = await fx.api.post(`/v1/connectors/${connectorId}/sync`, undefined, {
        raw: users.map((u) => JSON.stringify(u)).join('\n'),
        headers: { 'Content-Type': 'application/x-ndjson' },
      });
      expect(sync.status, sync.text).to.equal(202);
      const { value } = await eventually(
        async () => (await fx.api.get(sync.headers.get('location')!)).body,
        (s) => s.status === 'completed' || s.status === 'failed',
        30_000,
        100,
      );
      expect(value.status, JSON.stringify(value)).to.equal('completed');
      expect(value.counts).to.include({ invalid: 0, users_created: users.length });
      const listed = await scim.get('/scim/v2/Users?count=100');
      expect(listed.body.totalResults).to.equal(users.length);
      for (const resource of listed.body.Resources as { id: string; userName: string }[])
        await expectNowhere(scim, resource.id, resource.userName, secret);
    });
  });

  describe('names', () => {
    for (const [kind, attribute] of [
      ['Users', 'userName'],
      ['Users', 'externalId'],
      ['Users', 'displayName'],
      ['Groups', 'displayName'],
      ['Groups', 'externalId'],
    ] as const) {
      it(`refuses a ${kind === 'Users' ? 'user' : 'group'} ${attribute} over 256 characters with 400 invalidValue, and keeps one of 256`, async () => {
        const { id: connectorId, name, scim } = await connector();
        const body = (value: string): Record<string, unknown> =>
          kind === 'Users'
            ? user({ [attribute]: value })
            : { schemas: [GROUP], displayName: uniq('team-'), [attribute]: value };
        const events = await eventCount(connectorId);
        for (const length of [257, 10_000]) {
          const res = await scim.post(`/scim/v2/${kind}`, body('n'.repeat(length)));
          expectScimError(res, 400, 'invalidValue');
          expect(res.body.detail).to.equal(`/${attribute} is longer than 256 characters`);
        }
        expect((await scim.get(`/scim/v2/${kind}`)).body.totalResults).to.equal(0);
        expect(await principalCount(name)).to.equal(0);
        expect(await eventCount(connectorId)).to.equal(events);

        const fine = 'n'.repeat(256);
        const created = await scim.post(`/scim/v2/${kind}`, body(fine));
        expect(created.status, created.text).to.equal(201);
        expect(created.body[attribute]).to.equal(fine);
        const id = created.body.id as string;

        // A replace or a PATCH that would make it longer changes nothing either.
        const after = await eventCount(connectorId);
        const put = await scim.put(`/scim/v2/${kind}/${id}`, {
          ...created.body,
          [attribute]: 'n'.repeat(10_000),
        });
        expectScimError(put, 400, 'invalidValue');
        for (const operation of [
          { op: 'replace', path: attribute, value: 'n'.repeat(257) },
          { op: 'replace', value: { [attribute]: 'n'.repeat(10_000) } },
          { op: 'replace', path: `${kind === 'Users' ? USER : GROUP}:${attribute}`, value: 'n'.repeat(257) },
        ]) {
          const patched = await scim.patch(`/scim/v2/${kind}/${id}`, patchOp([operation]));
          expectScimError(patched, 400, 'invalidValue');
        }
        expect((await scim.get(`/scim/v2/${kind}/${id}`)).body[attribute]).to.equal(fine);
        expect(await eventCount(connectorId)).to.equal(after);
      });
    }

    it('counts a snapshot line with too long a name as invalid, and writes the others', async () => {
      const { id: connectorId, name } = await connector();
      const lines = [
        user({ userName: 'u'.repeat(10_000) }),
        user({ externalId: 'e'.repeat(257) }),
        user(),
        { schemas: [GROUP], displayName: 'g'.repeat(300) },
      ];
      const sync = await fx.api.post(`/v1/connectors/${connectorId}/sync`, undefined, {
        raw: lines.map((l) => JSON.stringify(l)).join('\n'),
        headers: { 'Content-Type': 'application/x-ndjson' },
      });
      expect(sync.status, sync.text).to.equal(202);
      const { value } = await eventually(
        async () => (await fx.api.get(sync.headers.get('location')!)).body,
        (s) => s.status === 'completed' || s.status === 'failed',
        30_000,
        100,
      );
      expect(value.status, JSON.stringify(value)).to.equal('completed');
      expect(value.counts).to.include({ lines: 4, invalid: 3, users_created: 1, groups_created: 0 });
      expect(value.errors.map((e: { line: number }) => e.line)).to.deep.equal([1, 2, 4]);
      expect(value.errors[0].detail).to.equal('/userName is longer than 256 characters');
      expect(await principalCount(name)).to.equal(1);
    });
  });

  describe('free-form values', () => {
    /** What a value in an unknown attribute, or in the enterprise extension, may and may not be. */
    const cases: [string, unknown, RegExp][] = [
      [
        'nested 17 levels deep',
        nested(17),
        /^\/(customThing|urn:[^ ]*\/department)(\/a)+ is nested more than 16 levels deep$/,
      ],
      ['holding 1,001 keys and elements', wide(1001), / has more than 1,000 keys and elements in all$/],
      [
        'holding a string of 4,097 characters',
        { text: 's'.repeat(4097) },
        /\/text is longer than 4,096 characters$/,
      ],
      [
        'holding a key of 4,097 characters',
        { ['k'.repeat(4097)]: 1 },
        /is a key longer than 4,096 characters$/,
      ],
      ['naming __proto__', JSON.parse('{"__proto__":{"admin":true}}'), /\/__proto__ is a reserved key$/],
      ['naming constructor', { constructor: 1 }, /\/constructor is a reserved key$/],
      ['naming prototype', { inner: { prototype: 1 } }, /\/inner\/prototype is a reserved key$/],
    ];
    const at = {
      'an unknown attribute': (value: unknown) => ({ customThing: value }),
      'the enterprise extension': (value: unknown) => ({
        [ENTERPRISE]: { department: 'R&D', costCenter: 'x', extra: value },
      }),
    };

    for (const [where, place] of Object.entries(at)) {
      it(`refuses a value in ${where} beyond the bounds on POST, PUT and PATCH, with a pointer, and keeps nothing`, async () => {
        const { id: connectorId, name, scim } = await connector();
        const events = await eventCount(connectorId);
        for (const [label, value, detail] of cases) {
          const res = await scim.post('/scim/v2/Users', user(place(value) as Record<string, unknown>));
          expectScimError(res, 400, 'invalidValue');
          if (where === 'an unknown attribute') expect(res.body.detail, label).to.match(detail);
          else expect(res.body.detail, label).to.include(`/${ENTERPRISE}`);
        }
        expect(await principalCount(name)).to.equal(0);
        expect(await eventCount(connectorId)).to.equal(events);

        const body = user();
        const id = await create(scim, body);
        const after = await eventCount(connectorId);
        for (const [label, value] of cases) {
          const put = await scim.put(`/scim/v2/Users/${id}`, { ...body, ...(place(value) as object) });
          expectScimError(put, 400, 'invalidValue');
          const patched = await scim.patch(
            `/scim/v2/Users/${id}`,
            patchOp([{ op: 'add', value: place(value) }]),
          );
          expect(patched.status, `${label}: ${patched.text}`).to.equal(400);
          expect(patched.body.scimType, label).to.equal('invalidValue');
        }
        const got = await scim.get(`/scim/v2/Users/${id}`);
        expect(got.body).to.not.have.property('customThing');
        expect(got.body).to.not.have.property(ENTERPRISE);
        expect(await eventCount(connectorId)).to.equal(after);
      });
    }

    it('keeps values at the bounds', async () => {
      const { scim } = await connector();
      const atBounds = {
        deep: nested(16),
        wide: wide(1000),
        long: 's'.repeat(4096),
        [`${'k'.repeat(4096)}`]: 1,
      };
      const id = await create(
        scim,
        user({ ...atBounds, [ENTERPRISE]: { department: 'd'.repeat(1000), extra: nested(15) } }),
      );
      const got = await scim.get(`/scim/v2/Users/${id}`);
      for (const [key, value] of Object.entries(atBounds))
        expect(got.body[key], key.slice(0, 10)).to.deep.equal(value);
      expect(got.body[ENTERPRISE].extra).to.deep.equal(nested(15));
      // The enterprise extension is one value: its own object is the first level.
      const deeper = await scim.patch(
        `/scim/v2/Users/${id}`,
        patchOp([{ op: 'add', path: `${ENTERPRISE}:extra`, value: nested(16) }]),
      );
      expectScimError(deeper, 400, 'invalidValue');
    });

    it('answers 400, never 5xx, to values far beyond the bounds, and to reserved attribute names', async () => {
      const { name, scim } = await connector();
      const deep = await scim.post('/scim/v2/Users', undefined, {
        raw: `{"userName":"deep@example.com","customThing":${deepJson(100_000)}}`,
        headers: { 'Content-Type': 'application/scim+json' },
      });
      expectScimError(deep, 400, 'invalidValue');
      const deepCore = await scim.post('/scim/v2/Users', undefined, {
        raw: `{"userName":"deep@example.com",${`"${USER}":{`.repeat(10_000)}"x":1${'}'.repeat(10_000)}}`,
        headers: { 'Content-Type': 'application/scim+json' },
      });
      expectScimError(deepCore, 400, 'invalidValue');
      for (const key of ['constructor', 'prototype', '__proto__']) {
        const res = await scim.post('/scim/v2/Users', undefined, {
          raw: `{"userName":"${key}@example.com","${key}":{"polluted":true}}`,
          headers: { 'Content-Type': 'application/scim+json' },
        });
        expectScimError(res, 400, 'invalidValue');
        expect(res.body.detail).to.equal(`/${key} is a reserved key`);
      }
      const manyAttributes = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`a${i}`, i]));
      expectScimError(await scim.post('/scim/v2/Users', user(manyAttributes)), 400, 'invalidValue');
      const id = await create(scim, user());
      const patched = await scim.patch(`/scim/v2/Users/${id}`, undefined, {
        raw: JSON.stringify(patchOp([{ op: 'add', path: 'customThing', value: 0 }])).replace(
          '"value":0',
          `"value":${deepJson(100_000)}`,
        ),
        headers: { 'Content-Type': 'application/scim+json' },
      });
      expectScimError(patched, 400, 'invalidValue');
      expect(await principalCount(name)).to.equal(1);
    });

    it('bounds the unknown attributes of a group, and counts its members', async () => {
      const { name, scim } = await connector();
      const deep = await scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName: 'deep',
        extra: nested(17),
      });
      expectScimError(deep, 400, 'invalidValue');
      expect(deep.body.detail).to.match(/^\/extra(\/a)+ is nested more than 16 levels deep$/);
      const member = await create(scim, user());
      const many = Array.from({ length: 10_001 }, () => ({ value: member }));
      const tooMany = await scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName: 'many',
        members: many,
      });
      expectScimError(tooMany, 400, 'invalidValue');
      expect(tooMany.body.detail).to.equal('/members has more than 10,000 elements');
      const badMember = await scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName: 'bad',
        members: [{ value: member, extra: nested(17) }],
      });
      expectScimError(badMember, 400, 'invalidValue');

      const created = await scim.post('/scim/v2/Groups', {
        schemas: [GROUP],
        displayName: uniq('team-'),
        members: [{ value: member }],
      });
      expect(created.status, created.text).to.equal(201);
      const id = created.body.id as string;
      // A hundred thousand members are more than a request body may carry.
      const huge = Array.from({ length: 100_000 }, (_, i) => ({
        value: `prn_01JD${String(i).padStart(22, '0')}`,
      }));
      const put = await scim.put(`/scim/v2/Groups/${id}`, { ...created.body, members: huge });
      expectScimError(put, 413);
      const added = await scim.patch(
        `/scim/v2/Groups/${id}`,
        patchOp([{ op: 'add', path: 'members', value: many.slice(1) }]),
      );
      expect(added.status, added.text).to.equal(200);
      const beyond = await scim.patch(
        `/scim/v2/Groups/${id}`,
        patchOp([{ op: 'add', path: 'members', value: [{ value: 'prn_01JD0000000000000000000000' }] }]),
      );
      expect(beyond.status).to.equal(400);
      const got = await scim.get(`/scim/v2/Groups/${id}`);
      expect(got.body.members.map((m: { value: string }) => m.value)).to.deep.equal([member]);
      expect(await principalCount(name)).to.equal(1);
    });

    it('counts a snapshot line beyond the bounds as invalid', async () => {
      const { id: connectorId, name } = await connector();
      const lines = [
        JSON.stringify(user({ customThing: nested(17) })),
        `{"userName":"deep@example.com","x":${deepJson(50_000)}}`,
        JSON.stringify(user({ [ENTERPRISE]: { department: 'd'.repeat(4097) } })),
        '{"userName":"proto@example.com","__proto__":{"x":1}}',
        JSON.stringify({
          schemas: [GROUP],
          displayName: 'many',
          members: Array.from({ length: 10_001 }, (_, i) => ({ value: `m${i}` })),
        }),
        JSON.stringify(user()),
      ];
      const sync = await fx.api.post(`/v1/connectors/${connectorId}/sync`, undefined, {
        raw: lines.join('\n'),
        headers: { 'Content-Type': 'application/x-ndjson' },
      });
      expect(sync.status, sync.text).to.equal(202);
      const { value } = await eventually(
        async () => (await fx.api.get(sync.headers.get('location')!)).body,
        (s) => s.status === 'completed' || s.status === 'failed',
        30_000,
        100,
      );
      expect(value.status, JSON.stringify(value)).to.equal('completed');
      expect(value.counts).to.include({ lines: 6, invalid: 5, users_created: 1, groups_created: 0 });
      expect(value.errors.map((e: { line: number }) => e.line)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(await principalCount(name)).to.equal(1);
    });
  });

  describe('filters', () => {
    it('answers huge filters, and filter values no name can hold, with 4xx', async () => {
      const { scim } = await connector();
      await create(scim, user({ title: 'Engineer' }));
      for (const kind of ['Users', 'Groups']) {
        const long = await scim.get(
          `/scim/v2/${kind}?filter=${encodeURIComponent(`displayName eq "${'x'.repeat(5000)}"`)}`,
        );
        expectScimError(long, 400, 'invalidFilter');
        const huge = await scim.get(`/scim/v2/${kind}?filter=${'x'.repeat(20_000)}`);
        expect(huge.status).to.be.within(400, 499);
        const name = await scim.get(
          `/scim/v2/${kind}?filter=${encodeURIComponent(`displayName eq "${'x'.repeat(257)}"`)}`,
        );
        expectScimError(name, 400, 'invalidFilter');
      }
      for (const attribute of ['userName', 'externalId', `${USER}:userName`]) {
        const res = await scim.get(
          `/scim/v2/Users?filter=${encodeURIComponent(`${attribute} sw "${'x'.repeat(257)}"`)}`,
        );
        expectScimError(res, 400, 'invalidFilter');
      }
      // Values of other attributes are bounded by the filter's own length, and merely match nothing.
      for (const filter of [
        `title eq "${'x'.repeat(4000)}"`,
        `emails.value co "${'x'.repeat(4000)}"`,
        `name.familyName sw "${'x'.repeat(4000)}"`,
        `userName eq "${'x'.repeat(256)}" or title co "${'x'.repeat(3000)}"`,
      ]) {
        const res = await scim.get(`/scim/v2/Users?filter=${encodeURIComponent(filter)}`);
        expect(res.status, `${filter.slice(0, 30)}: ${res.text.slice(0, 200)}`).to.equal(200);
        expect(res.body.totalResults).to.equal(0);
      }
    });
  });
});
