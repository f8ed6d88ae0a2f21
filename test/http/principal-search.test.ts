import { expect } from 'chai';
import { cypher, profile } from '../helpers/db.js';
import { newId } from '../../src/ids.js';
import type { Principal } from '../../src/principals/model.js';
import { compileSearch, type SearchRequest } from '../../src/principals/search/service.js';
import { BulkLoader, type SeedPrincipal } from '../../src/seed/bulk.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { authed, createClient } from '../helpers/auth.js';
import type { HttpClient } from '../helpers/http.js';
import { insertPrincipal, type InsertPrincipal } from '../helpers/principals.js';

interface Seed extends InsertPrincipal {
  created: string;
  risk: number;
}

const day = 86_400_000;
const plusDay = (iso: string): string => new Date(Date.parse(iso) + day).toISOString();

/**
 * A small organisation with every type, string and array attributes, missing fields, a deleted
 * and a suspended principal, a created_at tie and a manager link. `updated_at` is a day after
 * `created_at`; risk scores are set so that sorting has ties.
 */
const SEEDS: Record<string, Seed> = {
  alice: {
    type: 'USER',
    name: 'alice',
    email: 'alice@example.com',
    connectorSource: 'okta',
    attributes: {
      team: 'payments',
      environment: 'prod',
      level: '10',
      projects: ['apollo', 'Gemini'],
      title: 'Senior Engineer',
    },
    lastLogin: '2026-07-15T10:00:00.000Z',
    created: '2026-01-01T00:00:00.000Z',
    risk: 10,
  },
  bob: {
    type: 'USER',
    name: 'bob',
    email: 'bob@example.com',
    connectorSource: 'entra',
    attributes: { team: 'platform', level: '9', projects: ['gemini'], title: 'engineer' },
    lastLogin: '2026-08-15T00:00:00.000Z',
    created: '2026-02-01T00:00:00.000Z',
    risk: 25,
  },
  carol: {
    type: 'USER',
    name: 'carol',
    connectorSource: 'okta',
    attributes: { team: 'payments', level: 'n/a', title: 'Engineering Manager' },
    created: '2026-03-01T00:00:00.000Z',
    risk: 10,
  },
  batch: {
    type: 'SERVICE_ACCOUNT',
    name: 'batch',
    attributes: { team: 'payments', environment: 'staging', level: '2' },
    created: '2026-04-01T00:00:00.000Z',
    risk: 30,
  },
  'ci-key': {
    type: 'API_KEY',
    name: 'ci-key',
    attributes: { environment: 'prod', scopes: ['read', 'write'] },
    created: '2026-05-01T00:00:00.000Z',
    risk: 70,
  },
  'support-agent': {
    type: 'AI_AGENT',
    name: 'support-agent',
    attributes: {
      team: 'payments',
      environment: 'prod',
      capabilities: ['code_execution', 'read_tickets'],
      model: 'claude',
    },
    lastLogin: '2026-07-20T00:00:00.000Z',
    created: '2026-06-01T00:00:00.000Z',
    risk: 85,
  },
  'research-agent': {
    type: 'AI_AGENT',
    name: 'research-agent',
    attributes: {
      team: 'research',
      environment: 'staging',
      capabilities: ['web_search'],
      model: 'Claude-Large',
    },
    created: '2026-06-01T00:00:00.000Z',
    risk: 40,
  },
  'old-batch': {
    type: 'SERVICE_ACCOUNT',
    name: 'old-batch',
    status: 'deleted',
    attributes: { team: 'payments', environment: 'prod' },
    created: '2025-12-01T00:00:00.000Z',
    risk: 30,
  },
  dave: {
    type: 'USER',
    name: 'dave',
    status: 'suspended',
    connectorSource: 'okta',
    attributes: { team: 'platform' },
    lastLogin: '2026-07-01T00:00:00.000Z',
    created: '2026-07-01T00:00:00.000Z',
    risk: 25,
  },
  // frank (manager alice) is added after alice exists.
};

const FRANK: Seed = {
  type: 'SERVICE_ACCOUNT',
  name: 'frank',
  attributes: { team: 'payments' },
  created: '2026-08-01T00:00:00.000Z',
  risk: 0,
};

const VISIBLE = [
  'alice',
  'batch',
  'bob',
  'carol',
  'ci-key',
  'dave',
  'frank',
  'research-agent',
  'support-agent',
];
const all = (...except: string[]): string[] => VISIBLE.filter((n) => !except.includes(n));

describe('principal search', () => {
  let app: TestApp;
  let api: HttpClient;
  const seeded = new Map<string, Principal & { risk: number }>();

  const store = async (): Promise<string> => {
    const rows = await cypher(
      app.runtime.db,
      // Leases and schedules are renewed and released by the app's background work at any
      // moment, so they are left out: a search could not change them anyway.
      `MATCH (n) WHERE NOT (n:AccessHistoryLease OR n:Schedule OR n:Job OR n:Lock)
       OPTIONAL MATCH (n)-[r]->()
       RETURN count(DISTINCT n) AS nodes, count(r) AS links,
              collect(DISTINCT labels(n)) AS labels, sum(size(keys(n))) AS properties`,
    );
    return JSON.stringify(rows);
  };

  const fx = useApp();
  before(async function () {
    // The first app of a run also migrates a brand-new store.
    this.timeout(60_000);
    app = fx.app;
    api = fx.api;
    const add = async (key: string, seed: Seed): Promise<void> => {
      const principal = await insertPrincipal(app, seed);
      await cypher(
        app.runtime.db,
        'MATCH (p:Principal {id: $id}) SET p.created_at = datetime($created), p.updated_at = datetime($updated), p.risk_score = $risk',
        { id: principal.id, created: seed.created, updated: plusDay(seed.created), risk: seed.risk },
      );
      seeded.set(key, { ...principal, created_at: seed.created, risk: seed.risk });
    };
    for (const [key, seed] of Object.entries(SEEDS)) await add(key, seed);
    await add('frank', {
      ...FRANK,
      attributes: { ...FRANK.attributes, manager_id: seeded.get('alice')!.id },
    });
  });

  const search = (body: unknown) => api.post('/v1/principals/search', body);

  /** Names of the matches, alphabetically: for filters, where order is not the point. */
  const found = async (query: unknown): Promise<string[]> => {
    const res = await search({ query, limit: 100 });
    expect(res.status, `${JSON.stringify(query)}: ${res.text}`).to.equal(200);
    expect(res.body.pagination.total, JSON.stringify(query)).to.equal(res.body.data.length);
    return res.body.data.map((p: { name: string }) => p.name).sort();
  };

  /** Names in response order. */
  const ordered = async (body: Record<string, unknown>): Promise<string[]> => {
    const res = await search({ limit: 100, ...body });
    expect(res.status, res.text).to.equal(200);
    return res.body.data.map((p: { name: string }) => p.name);
  };

  const id = (name: string): string => seeded.get(name)!.id;
  /** Names sharing a sort value, in id order. */
  const byId = (names: string[], order: 'asc' | 'desc'): string[] =>
    [...names].sort((a, b) => (id(a) < id(b) ? -1 : 1) * (order === 'asc' ? 1 : -1));

  describe('response', () => {
    it('answers the list shape, newest first, without deleted principals', async () => {
      const res = await search({});
      expect(res.status).to.equal(200);
      expect(res.body.pagination).to.deep.equal({ total: 9, page: 1, per_page: 50, pages: 1 });
      const names = res.body.data.map((p: { name: string }) => p.name);
      expect(names).to.deep.equal([
        'frank',
        'dave',
        ...byId(['support-agent', 'research-agent'], 'desc'),
        'ci-key',
        'batch',
        'carol',
        'bob',
        'alice',
      ]);
      const alice = res.body.data.find((p: { name: string }) => p.name === 'alice');
      expect(alice).to.deep.equal({
        id: id('alice'),
        type: 'USER',
        email: 'alice@example.com',
        name: 'alice',
        attributes: {
          environment: 'prod',
          level: '10',
          projects: ['apollo', 'Gemini'],
          team: 'payments',
          title: 'Senior Engineer',
        },
        connector_source: 'okta',
        status: 'active',
        created_at: '2026-01-01T00:00:00.000Z',
        last_login: '2026-07-15T10:00:00.000Z',
        risk_score: alice.risk_score,
      });
      // The score shown in lists is the record's (it depends on the clock: dormancy).
      const record = await api.get(`/v1/principals/${id('alice')}`);
      expect(alice.risk_score).to.be.a('number').and.equal(record.body.risk_score);
      const batch = res.body.data.find((p: { name: string }) => p.name === 'batch');
      expect(Object.keys(batch).sort()).to.deep.equal(
        [
          'attributes',
          'connector_source',
          'created_at',
          'id',
          'last_login',
          'name',
          'risk_score',
          'status',
          'type',
        ].sort(),
      );
      expect(batch).to.include({ connector_source: null, last_login: null });
    });

    it('needs a token with principals:read', async () => {
      expect((await app.http.post('/v1/principals/search', {})).status).to.equal(401);
      const other = await createClient(app, ['audit:read']);
      const res = await (await authed(app, other)).post('/v1/principals/search', {});
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('INSUFFICIENT_SCOPE');
      const reader = await createClient(app, ['principals:read']);
      expect((await (await authed(app, reader)).post('/v1/principals/search', {})).status).to.equal(200);
    });
  });

  describe('type and status', () => {
    it('filters by one type or any of several', async () => {
      expect(await found({ type: 'AI_AGENT' })).to.deep.equal(['research-agent', 'support-agent']);
      expect(await found({ type: ['USER', 'API_KEY'] })).to.deep.equal([
        'alice',
        'bob',
        'carol',
        'ci-key',
        'dave',
      ]);
      expect(await found({ type: ['SERVICE_ACCOUNT'], connector_source: 'okta' })).to.deep.equal([]);
      expect(await found({ type: 'USER', connector_source: 'okta' })).to.deep.equal([
        'alice',
        'carol',
        'dave',
      ]);
    });

    it('filters by status and includes deleted principals only when asked', async () => {
      expect(await found({ status: 'suspended' })).to.deep.equal(['dave']);
      expect(await found({ status: 'deleted' })).to.deep.equal(['old-batch']);
      expect(await found({ status: ['active', 'deleted'] })).to.deep.equal(
        [...all('dave'), 'old-batch'].sort(),
      );
      expect(await found({ attributes: { team: 'payments' } })).to.deep.equal([
        'alice',
        'batch',
        'carol',
        'frank',
        'support-agent',
      ]);
      expect(await found({ status: 'deleted', attributes: { team: 'payments' } })).to.deep.equal([
        'old-batch',
      ]);
      expect(await found({ type: 'SERVICE_ACCOUNT', status: ['deleted', 'active'] })).to.deep.equal([
        'batch',
        'frank',
        'old-batch',
      ]);
    });
  });

  describe('fields', () => {
    it('name: every operator, case-insensitive text matching', async () => {
      expect(await found({ name: 'bob' })).to.deep.equal(['bob']);
      expect(await found({ name: { $eq: 'Bob' } })).to.deep.equal([]);
      expect(await found({ name: { $ne: 'bob' } })).to.deep.equal(all('bob'));
      expect(await found({ name: { $in: ['bob', 'carol', 'nobody'] } })).to.deep.equal(['bob', 'carol']);
      expect(await found({ name: { $nin: ['bob', 'carol'] } })).to.deep.equal(all('bob', 'carol'));
      expect(await found({ name: { $contains: 'AGENT' } })).to.deep.equal([
        'research-agent',
        'support-agent',
      ]);
      expect(await found({ name: { $startsWith: 'B' } })).to.deep.equal(['batch', 'bob']);
      expect(await found({ name: { $gt: 'd' } })).to.deep.equal([
        'dave',
        'frank',
        'research-agent',
        'support-agent',
      ]);
      expect(await found({ name: { $gte: 'carol', $lt: 'dave' } })).to.deep.equal(['carol', 'ci-key']);
      expect(await found({ name: { $lte: 'batch' } })).to.deep.equal(['alice', 'batch']);
      expect(await found({ name: { $gt: 5 } })).to.deep.equal([]);
      expect(await found({ name: { $exists: true } })).to.deep.equal(VISIBLE);
      expect(await found({ name: { $exists: false } })).to.deep.equal([]);
    });

    it('email and connector_source: missing values match only $ne, $nin and $exists: false', async () => {
      expect(await found({ email: 'bob@example.com' })).to.deep.equal(['bob']);
      expect(await found({ email: { $ne: 'bob@example.com' } })).to.deep.equal(all('bob'));
      expect(await found({ email: { $nin: ['bob@example.com', 'alice@example.com'] } })).to.deep.equal(
        all('alice', 'bob'),
      );
      expect(await found({ email: { $exists: false } })).to.deep.equal([
        'batch',
        'ci-key',
        'frank',
        'research-agent',
        'support-agent',
      ]);
      expect(await found({ email: { $contains: 'EXAMPLE.COM' } })).to.deep.equal([
        'alice',
        'bob',
        'carol',
        'dave',
      ]);
      expect(await found({ email: { $gt: 'b' } })).to.deep.equal(['bob', 'carol', 'dave']);
      expect(await found({ connector_source: 'okta' })).to.deep.equal(['alice', 'carol', 'dave']);
      expect(await found({ connector_source: { $in: ['entra'] } })).to.deep.equal(['bob']);
      expect(await found({ connector_source: { $ne: 'okta' } })).to.deep.equal(all('alice', 'carol', 'dave'));
      expect(await found({ connector_source: { $exists: true } })).to.deep.equal([
        'alice',
        'bob',
        'carol',
        'dave',
      ]);
      expect(await found({ connector_source: { $startsWith: 'OK' } })).to.deep.equal([
        'alice',
        'carol',
        'dave',
      ]);
    });

    it('created_at and updated_at compare as instants', async () => {
      expect(await found({ created_at: '2026-01-01T01:00:00+01:00' })).to.deep.equal(['alice']);
      expect(await found({ created_at: { $eq: '2026-01-01T00:00:00Z' } })).to.deep.equal(['alice']);
      expect(await found({ created_at: { $ne: '2026-01-01T00:00:00.000Z' } })).to.deep.equal(all('alice'));
      expect(
        await found({ created_at: { $gte: '2026-06-01T00:00:00Z', $lt: '2026-07-01T00:00:00Z' } }),
      ).to.deep.equal(['research-agent', 'support-agent']);
      expect(await found({ created_at: { $gt: '2026-06-01T00:00:00Z' } })).to.deep.equal(['dave', 'frank']);
      expect(await found({ created_at: { $lte: '2026-02-01T00:00:00Z' } })).to.deep.equal(['alice', 'bob']);
      expect(
        await found({ created_at: { $gt: '2026-05-31T23:59:59.999999999Z', $lte: '2026-06-01T00:00:00Z' } }),
      ).to.deep.equal(['research-agent', 'support-agent']);
      expect(
        await found({ created_at: { $gt: '2026-06-01T00:00:00.000000001Z', $lt: '2026-06-02T00:00:00Z' } }),
      ).to.deep.equal([]);
      expect(
        await found({ created_at: { $in: ['2026-03-01T00:00:00.000Z', '2026-04-01T02:00:00+02:00'] } }),
      ).to.deep.equal(['batch', 'carol']);
      expect(await found({ created_at: { $nin: ['2026-03-01T00:00:00Z'] } })).to.deep.equal(all('carol'));
      expect(await found({ created_at: { $exists: true } })).to.deep.equal(VISIBLE);
      expect(await found({ updated_at: { $gt: '2026-06-01T12:00:00Z' } })).to.deep.equal([
        'dave',
        'frank',
        'research-agent',
        'support-agent',
      ]);
      expect(await found({ updated_at: '2026-01-02T00:00:00Z' })).to.deep.equal(['alice']);
    });

    it('last_login: ranges, and principals that never logged in', async () => {
      expect(await found({ last_login: { $lt: '2026-08-01T00:00:00Z' } })).to.deep.equal([
        'alice',
        'dave',
        'support-agent',
      ]);
      expect(await found({ last_login: { $gte: '2026-07-15T12:00:00+02:00' } })).to.deep.equal([
        'alice',
        'bob',
        'support-agent',
      ]);
      expect(await found({ last_login: { $exists: false } })).to.deep.equal([
        'batch',
        'carol',
        'ci-key',
        'frank',
        'research-agent',
      ]);
      expect(await found({ last_login: { $ne: '2026-07-15T10:00:00Z' } })).to.deep.equal(all('alice'));
      expect(await found({ last_login: { $nin: ['2026-07-15T10:00:00Z'] } })).to.deep.equal(all('alice'));
      expect(await found({ last_login: { $in: ['2026-07-15T10:00:00Z'] } })).to.deep.equal(['alice']);
    });

    it('risk_score compares integers', async () => {
      expect(await found({ risk_score: 10 })).to.deep.equal(['alice', 'carol']);
      expect(await found({ risk_score: { $gte: 70 } })).to.deep.equal(['ci-key', 'support-agent']);
      expect(await found({ risk_score: { $gt: 25, $lte: 40 } })).to.deep.equal(['batch', 'research-agent']);
      expect(await found({ risk_score: { $lt: 10 } })).to.deep.equal(['frank']);
      expect(await found({ risk_score: { $in: [25, 40] } })).to.deep.equal(['bob', 'dave', 'research-agent']);
      expect(await found({ risk_score: { $nin: [25, 40] } })).to.deep.equal(
        all('bob', 'dave', 'research-agent'),
      );
      expect(await found({ risk_score: { $ne: 10 } })).to.deep.equal(all('alice', 'carol'));
    });
  });

  describe('attributes', () => {
    it('equality on strings and membership in arrays (case-sensitive)', async () => {
      expect(await found({ attributes: { team: { $eq: 'platform' } } })).to.deep.equal(['bob', 'dave']);
      expect(await found({ attributes: { projects: 'gemini' } })).to.deep.equal(['bob']);
      expect(await found({ attributes: { projects: 'Gemini' } })).to.deep.equal(['alice']);
      expect(await found({ attributes: { capabilities: 'web_search' } })).to.deep.equal(['research-agent']);
      expect(await found({ attributes: { team: 'nobody' } })).to.deep.equal([]);
      expect(await found({ attributes: { team: 'nobody', environment: 'prod' } })).to.deep.equal([]);
      expect(await found({ attributes: { nokey: 'prod' } })).to.deep.equal([]);
    });

    it('$ne and $nin: arrays must not contain the values; missing attributes match', async () => {
      expect(await found({ attributes: { projects: { $ne: 'gemini' } } })).to.deep.equal(all('bob'));
      expect(await found({ attributes: { projects: { $nin: ['apollo', 'zeus'] } } })).to.deep.equal(
        all('alice'),
      );
      expect(await found({ attributes: { environment: { $ne: 'prod' } } })).to.deep.equal([
        'batch',
        'bob',
        'carol',
        'dave',
        'frank',
        'research-agent',
      ]);
      expect(await found({ attributes: { environment: { $nin: ['prod', 'staging'] } } })).to.deep.equal([
        'bob',
        'carol',
        'dave',
        'frank',
      ]);
    });

    it('$in: any element in the list, each principal once', async () => {
      expect(await found({ attributes: { environment: { $in: ['prod'] } } })).to.deep.equal([
        'alice',
        'ci-key',
        'support-agent',
      ]);
      // alice's array holds both values: she is one match, not two.
      const res = await search({
        query: { attributes: { projects: { $in: ['apollo', 'Gemini', 'gemini'] } } },
      });
      expect(res.body.pagination.total).to.equal(2);
      expect(res.body.data.map((p: { name: string }) => p.name)).to.deep.equal(['bob', 'alice']);
      expect(
        await found({ attributes: { team: 'payments', environment: { $in: ['prod', 'staging'] } } }),
      ).to.deep.equal(['alice', 'batch', 'support-agent']);
    });

    it('$contains: substring of a string ignoring case, equal element of an array', async () => {
      expect(await found({ attributes: { title: { $contains: 'ENGINEER' } } })).to.deep.equal([
        'alice',
        'bob',
        'carol',
      ]);
      expect(await found({ attributes: { model: { $contains: 'claude' } } })).to.deep.equal([
        'research-agent',
        'support-agent',
      ]);
      expect(await found({ attributes: { capabilities: { $contains: 'code_execution' } } })).to.deep.equal([
        'support-agent',
      ]);
      expect(await found({ attributes: { capabilities: { $contains: 'code' } } })).to.deep.equal([]);
      expect(
        await found({ type: 'AI_AGENT', attributes: { capabilities: { $contains: 'read_tickets' } } }),
      ).to.deep.equal(['support-agent']);
    });

    it('$startsWith ignores case, on strings and on any array element', async () => {
      expect(await found({ attributes: { title: { $startsWith: 'eng' } } })).to.deep.equal(['bob', 'carol']);
      expect(await found({ attributes: { projects: { $startsWith: 'GEM' } } })).to.deep.equal([
        'alice',
        'bob',
      ]);
      expect(await found({ attributes: { environment: { $startsWith: '' } } })).to.deep.equal([
        'alice',
        'batch',
        'ci-key',
        'research-agent',
        'support-agent',
      ]);
    });

    it('ranges: numbers compare numerically (non-numbers never match), strings as text', async () => {
      expect(await found({ attributes: { level: { $gt: 5 } } })).to.deep.equal(['alice', 'bob']);
      expect(await found({ attributes: { level: { $lte: 9 } } })).to.deep.equal(['batch', 'bob']);
      expect(await found({ attributes: { level: { $gte: 10 } } })).to.deep.equal(['alice']);
      expect(await found({ attributes: { level: { $gte: 2, $lt: 10 } } })).to.deep.equal(['batch', 'bob']);
      expect(await found({ attributes: { level: { $lt: 1e9 } } })).to.deep.equal(['alice', 'batch', 'bob']);
      expect(await found({ attributes: { level: { $gt: 2.5 } } })).to.deep.equal(['alice', 'bob']);
      // As text "10" < "5" < "9" < "n/a".
      expect(await found({ attributes: { level: { $gt: '5' } } })).to.deep.equal(['bob', 'carol']);
      expect(await found({ attributes: { projects: { $gte: 'b', $lt: 'h' } } })).to.deep.equal(['bob']);
      expect(await found({ attributes: { environment: { $gt: '' } } })).to.deep.equal([
        'alice',
        'batch',
        'ci-key',
        'research-agent',
        'support-agent',
      ]);
    });

    it('$exists, and several keys and operators that must all hold', async () => {
      expect(await found({ attributes: { environment: { $exists: false } } })).to.deep.equal([
        'bob',
        'carol',
        'dave',
        'frank',
      ]);
      expect(await found({ attributes: { scopes: { $exists: true } } })).to.deep.equal(['ci-key']);
      expect(await found({ attributes: { team: 'payments', environment: 'prod' } })).to.deep.equal([
        'alice',
        'support-agent',
      ]);
      expect(
        await found({ type: 'USER', attributes: { team: 'payments', environment: 'prod' } }),
      ).to.deep.equal(['alice']);
      expect(
        await found({
          attributes: { team: { $in: ['payments', 'platform'], $ne: 'platform' }, title: { $exists: true } },
        }),
      ).to.deep.equal(['alice', 'carol']);
      expect(
        await found({
          created_at: { $gte: '2026-03-01T00:00:00Z' },
          attributes: { title: { $contains: 'eng' } },
        }),
      ).to.deep.equal(['carol']);
    });

    it('manager_id, which has no value nodes, is searchable too', async () => {
      expect(await found({ attributes: { manager_id: id('alice') } })).to.deep.equal(['frank']);
      expect(await found({ attributes: { manager_id: { $exists: true } } })).to.deep.equal(['frank']);
      expect(await found({ attributes: { manager_id: id('alice'), team: 'payments' } })).to.deep.equal([
        'frank',
      ]);
    });
  });

  describe('sorting and pagination', () => {
    const logins = ['bob', 'support-agent', 'alice', 'dave'];
    const never = ['batch', 'carol', 'ci-key', 'frank', 'research-agent'];
    const expectations: [Record<string, unknown>, () => string[]][] = [
      [
        {},
        () => [
          'frank',
          'dave',
          ...byId(['support-agent', 'research-agent'], 'desc'),
          'ci-key',
          'batch',
          'carol',
          'bob',
          'alice',
        ],
      ],
      [
        { field: 'created_at', order: 'asc' },
        () => [
          'alice',
          'bob',
          'carol',
          'batch',
          'ci-key',
          ...byId(['support-agent', 'research-agent'], 'asc'),
          'dave',
          'frank',
        ],
      ],
      [
        { field: 'updated_at', order: 'asc' },
        () => [
          'alice',
          'bob',
          'carol',
          'batch',
          'ci-key',
          ...byId(['support-agent', 'research-agent'], 'asc'),
          'dave',
          'frank',
        ],
      ],
      [{ field: 'name', order: 'asc' }, () => VISIBLE],
      [{ field: 'name', order: 'desc' }, () => [...VISIBLE].reverse()],
      [{ field: 'last_login', order: 'desc' }, () => [...logins, ...byId(never, 'desc')]],
      [{ field: 'last_login', order: 'asc' }, () => [...[...logins].reverse(), ...byId(never, 'asc')]],
      [
        { field: 'risk_score' },
        () => [
          'support-agent',
          'ci-key',
          'research-agent',
          'batch',
          ...byId(['bob', 'dave'], 'desc'),
          ...byId(['alice', 'carol'], 'desc'),
          'frank',
        ],
      ],
      [
        { field: 'risk_score', order: 'asc' },
        () => [
          'frank',
          ...byId(['alice', 'carol'], 'asc'),
          ...byId(['bob', 'dave'], 'asc'),
          'batch',
          'research-agent',
          'ci-key',
          'support-agent',
        ],
      ],
    ];

    it('sorts by each field in both orders; ties by id, missing values last', async () => {
      for (const [sort, expected] of expectations) {
        expect(await ordered({ sort }), JSON.stringify(sort)).to.deep.equal(expected());
      }
    });

    it('gives the same order page by page, however the page is read', async () => {
      // Small pages are read along the sort index, later ones by sorting the matches: both
      // must agree with the single full page.
      for (const [sort, expected] of expectations) {
        for (const limit of [1, 2, 4]) {
          const pages: string[] = [];
          for (let page = 1; page <= Math.ceil(9 / limit); page += 1) {
            const res = await search({ sort, page, limit });
            expect(res.body.pagination).to.deep.equal({
              total: 9,
              page,
              per_page: limit,
              pages: Math.ceil(9 / limit),
            });
            pages.push(...res.body.data.map((p: { name: string }) => p.name));
          }
          expect(pages, `${JSON.stringify(sort)} limit ${limit}`).to.deep.equal(expected());
        }
      }
      const filtered = await ordered({
        query: { attributes: { team: 'payments' } },
        sort: { field: 'name', order: 'asc' },
      });
      const pages: string[] = [];
      for (let page = 1; page <= 5; page += 1) {
        const res = await search({
          query: { attributes: { team: 'payments' } },
          sort: { field: 'name', order: 'asc' },
          page,
          limit: 1,
        });
        pages.push(...res.body.data.map((p: { name: string }) => p.name));
      }
      expect(pages).to.deep.equal(filtered);
    });

    it('answers a page past the end with no data and the true total', async () => {
      const res = await search({ query: { type: 'USER' }, page: 3, limit: 2 });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ data: [], pagination: { total: 4, page: 3, per_page: 2, pages: 2 } });
      const far = await search({ page: 1_000_000_000, limit: 100 });
      expect(far.body).to.deep.equal({
        data: [],
        pagination: { total: 9, page: 1_000_000_000, per_page: 100, pages: 1 },
      });
      const none = await search({ query: { name: 'nobody' } });
      expect(none.body).to.deep.equal({
        data: [],
        pagination: { total: 0, page: 1, per_page: 50, pages: 0 },
      });
    });
  });

  describe('errors', () => {
    it('refuses bad searches with 400 and a pointer to the problem', async () => {
      const many = Array.from({ length: 101 }, (_, i) => `v${i}`);
      const conditions = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v']));
      const cases: [unknown, string][] = [
        [{ query: { attributes: { team: { $foo: 'x' } } } }, '/query/attributes/team/$foo'],
        [{ query: { name: { $regex: 'a.*' } } }, '/query/name/$regex'],
        [{ query: { owner: 'x' } }, '/query/owner'],
        [{ query: { attributes: { 'bad key': 'x' } } }, '/query/attributes/bad key'],
        [{ query: { attributes: { '9lives': 'x' } } }, '/query/attributes/9lives'],
        [{ query: { attributes: { team: { $in: [] } } } }, '/query/attributes/team/$in'],
        [{ query: { attributes: { team: { $in: many } } } }, '/query/attributes/team/$in'],
        [{ query: { attributes: conditions } }, '/query'],
        [{ query: { attributes: { team: 7 } } }, '/query/attributes/team'],
        [{ query: { attributes: { team: { $exists: 'yes' } } } }, '/query/attributes/team/$exists'],
        [{ query: { risk_score: { $gt: 'high' } } }, '/query/risk_score/$gt'],
        [{ query: { risk_score: 7.5 } }, '/query/risk_score'],
        [{ query: { created_at: { $gt: 'last week' } } }, '/query/created_at/$gt'],
        [{ query: { created_at: { $gt: 1767225600 } } }, '/query/created_at/$gt'],
        [{ query: { last_login: { $lt: '2026-02-30T00:00:00Z' } } }, '/query/last_login/$lt'],
        [{ query: { last_login: { $lt: '2026-06-30T23:59:60Z' } } }, '/query/last_login/$lt'],
        [{ query: { updated_at: { $contains: '2026' } } }, '/query/updated_at/$contains'],
        [{ query: { type: 'ROBOT' } }, '/query/type'],
        [{ query: { status: ['active', 'gone'] } }, '/query/status/1'],
        [{ sort: { field: 'password' } }, '/sort/field'],
        [{ sort: { order: 'sideways' } }, '/sort/order'],
        [{ page: 0 }, '/page'],
        [{ limit: 0 }, '/limit'],
        [{ limit: 101 }, '/limit'],
        [{ query: {}, fields: ['id'] }, '/fields'],
      ];
      for (const [body, pointer] of cases) {
        const res = await search(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(
          res.body.errors.map((e: { pointer: string }) => e.pointer),
          JSON.stringify(body),
        ).to.include(pointer);
      }
      expect(
        (
          await api.post('/v1/principals/search', undefined, {
            raw: '{"query":',
            headers: { 'Content-Type': 'application/json' },
          })
        ).body.code,
      ).to.equal('MALFORMED_JSON');
    });
  });

  describe('injection', () => {
    const HOSTILE = [
      "x' OR 1=1 //",
      'x" OR true //',
      'a` MATCH (n) DETACH DELETE n //',
      '}) MATCH (n) DETACH DELETE n //',
      '*/ MATCH (n) DETACH DELETE n /*',
      '$statuses',
      'x\\u0027 OR 1=1',
      'CREATE (:Principal {id: "prn_evil"})',
    ];

    it('treats hostile values as plain values and never changes the store', async () => {
      const before = await store();
      for (const value of HOSTILE) {
        const queries = [
          { name: value },
          { name: { $contains: value } },
          { email: { $in: [value, 'alice@example.com'] } },
          { connector_source: { $startsWith: value } },
          { attributes: { team: value } },
          { attributes: { team: { $in: [value] } } },
          { attributes: { team: { $contains: value } } },
          { attributes: { team: { $startsWith: value } } },
          { attributes: { team: { $gt: value } } },
          { attributes: { title: { $ne: value }, capabilities: { $nin: [value] } } },
        ];
        for (const query of queries) {
          const res = await search({ query });
          expect(res.status, `${JSON.stringify(query)}: ${res.text}`).to.equal(200);
        }
        expect(await found({ name: value })).to.deep.equal([]);
        expect(await found({ email: { $in: [value, 'alice@example.com'] } })).to.deep.equal(['alice']);
        expect(await found({ attributes: { title: { $ne: value } } })).to.deep.equal(VISIBLE);
      }
      expect(await store()).to.equal(before);
    });

    it('refuses hostile keys and sort input with 400 and never changes the store', async () => {
      const before = await store();
      const keys = ['team`', "team'", 'team"', 'team}) //', 'team // x', '$team', 'a b', 'team;MATCH', ''];
      for (const key of keys) {
        const res = await search({ query: { attributes: { [key]: 'payments' } } });
        expect(res.status, key).to.equal(400);
      }
      const sorts = [
        'name` DESC, p.secret //',
        "name' //",
        'name}',
        'created_at, p.id',
        '$name',
        'p.name',
        'MATCH (n) DETACH DELETE n',
      ];
      for (const field of sorts) {
        const res = await search({ sort: { field } });
        expect(res.status, field).to.equal(400);
        expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).to.include('/sort/field');
      }
      expect((await search({ sort: { order: 'DESC, p.x' } })).status).to.equal(400);
      expect((await search({ query: { 'name` OR true': 'x' } })).status).to.equal(400);
      expect(await store()).to.equal(before);
    });

    it('finds stored values that look like Cypher exactly, and only them', async () => {
      const tricky = "O'Brien `x` }) // $v0 /*";
      const principal = await insertPrincipal(app, {
        type: 'SERVICE_ACCOUNT',
        name: 'tricky',
        attributes: { note: tricky, tags: [tricky, 'plain'] },
      });
      try {
        expect(await found({ attributes: { note: tricky } })).to.deep.equal(['tricky']);
        expect(await found({ attributes: { note: { $contains: "o'brien `X`" } } })).to.deep.equal(['tricky']);
        expect(await found({ attributes: { tags: { $contains: tricky } } })).to.deep.equal(['tricky']);
        expect(await found({ attributes: { tags: { $in: [tricky] } } })).to.deep.equal(['tricky']);
        expect(await found({ attributes: { note: { $startsWith: "o'brien" } } })).to.deep.equal(['tricky']);
      } finally {
        await cypher(app.runtime.db, 'MATCH (p:Principal {id: $id}) DETACH DELETE p', {
          id: principal.id,
        });
      }
    });
  });
});

describe('principal search plans', () => {
  let app: TestApp;
  const PRINCIPALS = 3_000;

  const fx2 = useApp();
  before(async function () {
    this.timeout(120_000);
    app = fx2.app;
    const loader = new BulkLoader(app.runtime.db);
    const types = ['USER', 'USER', 'USER', 'SERVICE_ACCOUNT', 'AI_AGENT', 'API_KEY'] as const;
    const start = Date.UTC(2024, 0, 1);
    const rows: SeedPrincipal[] = Array.from({ length: PRINCIPALS }, (_, i) => {
      const type = types[i % types.length]!;
      return {
        id: newId('principal'),
        type,
        name: `p-${i}`,
        ...(type === 'USER'
          ? { email: `p-${i}@example.com`, connectorSource: i % 4 === 0 ? 'entra' : 'okta' }
          : {}),
        attributes: {
          team: `team-${i % 40}`,
          environment: ['prod', 'staging', 'dev', 'test'][i % 4]!,
          role: ['engineer', 'manager', 'analyst', 'data scientist'][(i % 7) % 4]!,
          ...(type === 'AI_AGENT' ? { capabilities: [`cap-${i % 5}`, `cap-${(i + 1) % 5}`] } : {}),
        },
        metadata: {},
        createdAt: new Date(start + i * 3_600_000).toISOString(),
        lastLogin: type === 'USER' && i % 3 !== 0 ? new Date(start + i * 7_200_000).toISOString() : null,
      };
    });
    for (let i = 0; i < rows.length; i += 1_000) await loader.principals(rows.slice(i, i + 1_000));
    await cypher(
      app.runtime.db,
      "MATCH (p:Principal) WHERE toInteger(substring(p.name, 2)) % 50 = 0 SET p.status = 'suspended' REMOVE p:Active SET p:Suspended",
    );
    await cypher(app.runtime.db, 'CALL db.resampleOutdatedIndexes()');
    await cypher(app.runtime.db, 'CALL db.awaitIndexes(60)');
  });

  const INDEX_OPERATORS = new Set([
    'NodeIndexSeek',
    'NodeUniqueIndexSeek',
    'NodeIndexSeekByRange',
    'NodeUniqueIndexSeekByRange',
    'NodeIndexScan',
    'NodeCountFromCountStore',
    'MultiNodeIndexSeek',
    // The label index: type and status are labels too.
    'NodeByLabelScan',
    'IntersectionNodeByLabelsScan',
    'UnionNodeByLabelsScan',
  ]);

  /** The operators that produced rows when the compiled search ran. */
  const executed = async (request: SearchRequest) => {
    const { text, params } = compileSearch(request, app.runtime.db.catalogue);
    const plan = await profile(app.runtime.db, text, params);
    return plan.filter((step) => step.rows > 0);
  };

  const cases: [string, SearchRequest, string[]][] = [
    // The page is a range seek over the whole created_at index, read in order.
    ['the unfiltered list', {}, ['NodeCountFromCountStore', 'NodeIndexSeekByRange']],
    ['a type', { query: { type: 'AI_AGENT' }, page: 3 }, ['NodeCountFromCountStore']],
    ['a rare status', { query: { status: 'suspended' } }, []],
    ['type and status', { query: { type: ['USER', 'API_KEY'], status: 'suspended' } }, []],
    ['a connector source', { query: { connector_source: 'entra' } }, ['NodeIndexSeek']],
    ['attribute equality', { query: { attributes: { team: 'team-7' } } }, ['NodeUniqueIndexSeek']],
    [
      'attribute equalities with type and status',
      { query: { type: 'USER', status: 'active', attributes: { team: 'team-7', environment: 'prod' } } },
      ['NodeUniqueIndexSeek'],
    ],
    [
      'attribute $in',
      { query: { attributes: { team: { $in: ['team-1', 'team-2'] } } } },
      ['NodeUniqueIndexSeek'],
    ],
    [
      'attribute $startsWith',
      { query: { attributes: { role: { $startsWith: 'data' } } } },
      ['NodeUniqueIndexSeek'],
    ],
    [
      'attribute $contains on an array',
      { query: { type: 'AI_AGENT', attributes: { capabilities: { $contains: 'cap-2' } } } },
      ['NodeUniqueIndexSeek'],
    ],
    ['email equality', { query: { email: 'p-42@example.com' } }, ['NodeIndexSeek']],
    [
      'a created_at range',
      { query: { created_at: { $gte: '2024-02-01T00:00:00Z', $lt: '2024-02-08T00:00:00Z' } } },
      ['NodeIndexSeekByRange'],
    ],
    [
      'a last_login range, sorted by it',
      {
        query: { last_login: { $gte: '2024-03-01T00:00:00Z', $lt: '2024-03-15T00:00:00Z' } },
        sort: { field: 'last_login', order: 'desc' },
      },
      ['NodeIndexSeekByRange'],
    ],
  ];

  for (const [what, request, expected] of cases) {
    it(`serves ${what} from indexes`, async () => {
      const plan = await executed(request);
      const operators = plan.map((step) => step.operator);
      expect(operators, what).not.to.include('AllNodesScan');
      // A label scan reads the label index, but reading every principal through it is a full
      // scan all the same: label scans may only serve a selective label.
      for (const step of plan.filter((s) => /LabelsScan|LabelScan/.test(s.operator))) {
        expect(step.rows, `${what}: ${step.operator}`).to.be.lessThan(PRINCIPALS / 2);
      }
      for (const operator of expected) expect(operators, what).to.include(operator);
      expect(
        operators.some((o) => INDEX_OPERATORS.has(o)),
        what,
      ).to.equal(true);
    });
  }

  it('answers those searches correctly on the larger store', async () => {
    const api = await authed(app);
    const res = await api.post('/v1/principals/search', {
      query: {
        type: 'USER',
        attributes: { team: 'team-7', environment: { $in: ['prod', 'dev', 'staging', 'test'] } },
      },
      sort: { field: 'name', order: 'asc' },
      limit: 100,
    });
    expect(res.status).to.equal(200);
    // i ≡ 7 (mod 40) and i ≡ 0, 1 or 2 (mod 6): USER rows.
    const expected = Array.from({ length: PRINCIPALS }, (_, i) => i)
      .filter((i) => i % 40 === 7 && [0, 1, 2].includes(i % 6))
      .map((i) => `p-${i}`)
      .sort();
    expect(res.body.pagination.total).to.equal(expected.length);
    expect(res.body.data.map((p: { name: string }) => p.name)).to.deep.equal(expected);
  });
});
