import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { encodeTime } from 'ulid';
import { Catalogue } from '../../src/db/catalogue.js';
import { settleWindowMs } from '../../src/decisions/record-list.js';
import type { TestApp } from '../helpers/app.js';
import { authed, createClient } from '../helpers/auth.js';
import { profile } from '../helpers/db.js';
import { engineApi, namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';
import { eventually, metricValue } from '../helpers/wait.js';

/**
 * `GET /v1/decisions`: recorded decisions listed in the order they were made, once older than the
 * settle window, and followed by cursor. A short flush interval keeps the window near its margin
 * (2 s), which each test waits out once.
 */

const FLUSH_MS = 50;
const SETTLE_MS = settleWindowMs(FLUSH_MS);
const ENV = { DECISION_FLUSH_INTERVAL_MS: String(FLUSH_MS) };

interface Page {
  data: any[];
  pagination: {
    per_page: number;
    next_cursor: string;
    has_more: boolean;
    settled_until: string;
    horizon: string;
  };
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('listing recorded decisions', function () {
  // Every test waits out the settle window once, some twice.
  this.timeout(60_000);
  const fx = useApp({ env: ENV });
  const { uniq, type } = namer();
  let api: HttpClient;
  let world: ReturnType<typeof engineApi>;

  /**
   * An instance starts the thread that writes its records with its first batch: that first write
   * takes longer than any later one, so each instance makes one before the tests.
   */
  async function warmUp(app: TestApp): Promise<void> {
    const res = await (
      await authed(app)
    ).post('/v1/decisions/evaluate', {
      principal_id: 'prn_01JD0000000000000000000000',
      action: 'read',
      resource: { type: 'warm-up', identifier: 'x' },
    });
    expect(res.status, res.text).to.equal(200);
    await app.runtime.engine.log.flush();
  }

  before(async () => {
    api = fx.api;
    world = engineApi(api, uniq);
    await warmUp(fx.app);
  });

  const query = (params: Record<string, string | number | undefined>): string => {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(params))
      if (value !== undefined) search.set(name, String(value));
    return `/v1/decisions?${search.toString()}`;
  };

  async function list(params: Record<string, string | number | undefined>, client = api): Promise<Page> {
    const res = await client.get(query(params));
    expect(res.status, res.text).to.equal(200);
    return res.body as Page;
  }

  /** Every page from `params` on, following `next_cursor` while `has_more`: the decisions and the cursor. */
  async function drain(
    params: Record<string, string | number | undefined>,
  ): Promise<{ data: any[]; cursor: string; pages: number }> {
    const data: any[] = [];
    let page = await list(params);
    let pages = 1;
    data.push(...page.data);
    while (page.pagination.has_more) {
      page = await list({ ...params, since: undefined, cursor: page.pagination.next_cursor });
      pages += 1;
      data.push(...page.data);
    }
    return { data, cursor: page.pagination.next_cursor, pages };
  }

  /** Waits until `params` list exactly `n` decisions (all pages), once they are past the settle window. */
  async function listed(params: Record<string, string | number | undefined>, n: number): Promise<any[]> {
    const { value } = await eventually(
      async () => (await drain(params)).data,
      (data) => data.length >= n,
      SETTLE_MS + 8_000,
      200,
    );
    expect(value).to.have.length(n);
    return value;
  }

  async function decide(
    principalId: string,
    resourceType: string,
    identifier: string,
    action = 'read',
    client = api,
  ): Promise<any> {
    const res = await client.post('/v1/decisions/evaluate', {
      principal_id: principalId,
      action,
      resource: { type: resourceType, identifier },
      context: { n: identifier },
    });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  let sequence = 0;
  /** A decision id made at `ms`, unique within the run. */
  const idAt = (ms: number): string =>
    `dec_${encodeTime(ms, 10)}${String((sequence += 1)).padStart(16, '0')}`;

  const recordOf = (id: string, ms: number, principalId: string): Record<string, unknown> => ({
    id,
    decision: 'DENY',
    allowed: false,
    principal_id: principalId,
    action: 'read',
    resource: { type: 'db', identifier: 'x' },
    reasons: [{ code: 'PRINCIPAL_NOT_FOUND' }],
    granted_by: [],
    evaluated_at: new Date(ms).toISOString(),
  });

  /** Stores records as one batch, as an instance writes them (cypher/decisions/record.cypher). */
  async function storeBatch(records: Record<string, unknown>[]): Promise<void> {
    const sorted = [...records].sort((a, b) => String(a['id']).localeCompare(String(b['id'])));
    const body = gzipSync(sorted.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const first = sorted[0]!;
    const last = sorted.at(-1)!;
    await fx.app.runtime.db.write('test/decision_batch', (tx) =>
      tx.run(
        {
          name: 'test/decision_batch',
          text: `CREATE (:DecisionBatch {first_id: $first_id, last_id: $last_id, first_at: datetime($first_at),
                   last_at: datetime($last_at), count: $count, allowed: 0, encoding: 'jsonl+gzip+base64',
                   body: $body})`,
        },
        {
          first_id: first['id'],
          last_id: last['id'],
          first_at: first['evaluated_at'],
          last_at: last['evaluated_at'],
          count: sorted.length,
          body: body.toString('base64'),
        },
      ),
    );
  }

  it('lists decisions once past the settle window, in the order they were made, as recorded', async () => {
    const since = new Date().toISOString();
    const p = (await world.principal()).id as string;
    const t = type();
    await world.policy({ subjects: { principals: [p] }, resources: [{ type: t, identifier: 'a*' }] });
    const made: any[] = [];
    for (const identifier of ['a1', 'b1', 'a2', 'b2', 'a3']) made.push(await decide(p, t, identifier));

    const early = await list({ since, principal_id: p });
    expect(early.data, 'younger than the settle window').to.deep.equal([]);
    expect(Date.parse(early.pagination.settled_until)).to.be.below(Date.parse(made[0].evaluated_at));
    expect(early.pagination).to.include({ per_page: 100, has_more: false });

    const data = await listed({ since, principal_id: p }, made.length);
    expect(data.map((d) => d.id)).to.deep.equal(made.map((d) => d.id));
    expect(data.map((d) => d.decision)).to.deep.equal(['ALLOW', 'DENY', 'ALLOW', 'DENY', 'ALLOW']);
    for (const record of data) {
      const got = await api.get(`/v1/decisions/${record.id}`);
      expect(record, 'the record GET /v1/decisions/{id} answers').to.deep.equal(got.body);
    }
    expect(data[0].context).to.deep.equal({ n: 'a1' });
    const horizon = (await list({ since, principal_id: p })).pagination.horizon;
    expect(Date.now() - Date.parse(horizon)).to.be.closeTo(30 * 86_400_000, 60_000);
  });

  it('filters by principal, decision, action and resource type', async () => {
    const since = new Date().toISOString();
    const [p, q] = [(await world.principal()).id as string, (await world.principal()).id as string];
    const [t, u] = [type(), type()];
    await world.policy({ subjects: { principals: [p, q] }, resources: [{ type: t, identifier: '*' }] });
    const made = [
      await decide(p, t, 'x'),
      await decide(p, u, 'x'),
      await decide(q, t, 'x', 'write'),
      await decide(q, u, 'y'),
      await decide(p, t, 'y', 'write'),
    ];
    const mine = (d: any): boolean => d.principal_id === p || d.principal_id === q;
    // The last decision is p's: once p's are listed, all are.
    await listed({ since, principal_id: p }, 3);
    const ids = (rows: any[]): string[] => rows.map((d) => d.id);
    const expectFilter = async (params: Record<string, string>, keep: (d: any) => boolean): Promise<void> => {
      const { data } = await drain({ since, ...params });
      expect(ids(data.filter(mine)), JSON.stringify(params)).to.deep.equal(ids(made.filter(keep)));
      expect(data.every(keep), `${JSON.stringify(params)}: only matches`).to.equal(true);
    };
    await expectFilter({ principal_id: p }, (d) => d.principal_id === p);
    await expectFilter({ decision: 'ALLOW' }, (d) => d.decision === 'ALLOW');
    await expectFilter({ decision: 'DENY' }, (d) => d.decision === 'DENY');
    await expectFilter({ action: 'write' }, (d) => d.action === 'write');
    await expectFilter({ resource_type: u }, (d) => d.resource.type === u);
    await expectFilter(
      { principal_id: q, resource_type: t, decision: 'DENY', action: 'write' },
      (d) => d.principal_id === q && d.resource.type === t && d.decision === 'DENY' && d.action === 'write',
    );
    expect((await drain({ since, principal_id: 'prn_01JD0000000000000000000000' })).data).to.deep.equal([]);
  });

  it('pages with the cursor across several pages and batches, without duplicates or gaps', async () => {
    const since = new Date().toISOString();
    const p = (await world.principal()).id as string;
    const t = type();
    const made: string[] = [];
    // Several rounds a few flushes apart: several batches, one of them from a decision thread.
    for (let round = 0; round < 3; round += 1) {
      const requests = Array.from({ length: 40 }, (_, i) => ({
        principal_id: p,
        action: 'read',
        resource: { type: t, identifier: `r-${round}-${i}` },
      }));
      const res = await api.post('/v1/decisions/batch', { requests });
      expect(res.status, res.text).to.equal(200);
      made.push(...res.body.results.map((r: any) => r.id as string));
      made.push((await decide(p, t, `single-${round}`)).id);
      // Written before the next round is made, so that each round is a batch of its own.
      await eventually(
        () => metricValue(fx.app.http, 'decision_records_pending'),
        (n) => n === 0,
        5_000,
      );
    }
    await listed({ since, principal_id: p }, made.length);

    const seen: string[] = [];
    let page = await list({ since, principal_id: p, limit: 7 });
    let pages = 1;
    seen.push(...page.data.map((d) => d.id));
    while (page.pagination.has_more) {
      expect(page.data.length, 'a page that says more follows is full').to.equal(7);
      page = await list({ cursor: page.pagination.next_cursor, principal_id: p, limit: 7 });
      pages += 1;
      seen.push(...page.data.map((d) => d.id));
    }
    expect(pages).to.be.at.least(Math.ceil(made.length / 7));
    expect(seen, 'every decision once, in the order made').to.deep.equal(made);
    const batches = await fx.app.runtime.db.run<{ n: number }>(
      {
        name: 'test/batches_holding',
        text: 'MATCH (b:DecisionBatch) WHERE b.last_id >= $first AND b.first_id <= $last RETURN count(b) AS n',
      },
      { first: made[0], last: made.at(-1) },
    );
    expect(batches[0]!.n, 'the decisions span several batches').to.be.at.least(2);

    // The last cursor lists nothing more until there is more.
    const after = await list({ cursor: page.pagination.next_cursor, principal_id: p });
    expect(after.data).to.deep.equal([]);
    expect(after.pagination.has_more).to.equal(false);
  });

  it('gives a follower a batch written late within the settle window, in its place', async () => {
    const p = `prn_${encodeTime(Date.now(), 10)}${'W'.repeat(16)}`;
    const started = Date.now();
    const seen: string[] = [];
    let cursor: string | undefined;
    let stop = false;
    let polls = 0;
    const follower = (async () => {
      while (!stop) {
        const page = await list(
          cursor
            ? { cursor, principal_id: p }
            : { since: new Date(started - 5_000).toISOString(), principal_id: p },
        );
        polls += 1;
        seen.push(...page.data.map((d) => d.id));
        cursor = page.pagination.next_cursor;
        if (!page.pagination.has_more) await pause(100);
      }
    })();
    try {
      // One instance's batch holds a decision made now; another's, written a moment after it,
      // holds one made half a second earlier.
      const now = Date.now();
      const recent = idAt(now);
      await storeBatch([recordOf(recent, now, p)]);
      const earlier = idAt(now - 500);
      await storeBatch([recordOf(earlier, now - 500, p)]);
      await eventually(
        async () => seen.length,
        (n) => n >= 2,
        SETTLE_MS + 8_000,
        100,
      );
      // Two more polls past them find nothing again.
      const polled = polls;
      await eventually(
        async () => polls,
        (n) => n >= polled + 2,
        5_000,
      );
      expect(seen, 'both, each once, in the order they were made').to.deep.equal([earlier, recent]);
    } finally {
      stop = true;
      await follower;
    }
  });

  it('moves the cursor past batches a filter finds nothing in, a bounded number at a time', async () => {
    const rare = `prn_${encodeTime(Date.now(), 10)}${'R'.repeat(16)}`;
    const other = `prn_${encodeTime(Date.now(), 10)}${'X'.repeat(16)}`;
    const base = Date.now() - 10 * 60_000;
    // 40 batches of others' decisions, a second apart, then the one decision looked for.
    for (let b = 0; b < 40; b += 1) {
      const at = base + b * 1_000;
      await storeBatch([0, 1, 2].map((i) => recordOf(idAt(at + i), at + i, other)));
    }
    const wanted = idAt(base + 41_000);
    await storeBatch([recordOf(wanted, base + 41_000, rare)]);

    const since = new Date(base - 1_000).toISOString();
    const first = await list({ since, principal_id: rare, limit: 10 });
    expect(first.data, 'the first page reads 16 batches and finds nothing').to.deep.equal([]);
    expect(first.pagination.has_more).to.equal(true);
    const cursors = [first.pagination.next_cursor];
    const found: string[] = [];
    let page = first;
    while (page.pagination.has_more) {
      page = await list({ cursor: page.pagination.next_cursor, principal_id: rare, limit: 10 });
      found.push(...page.data.map((d) => d.id));
      cursors.push(page.pagination.next_cursor);
    }
    expect(found).to.deep.equal([wanted]);
    expect(cursors.length, 'pages of at most 16 batches').to.be.at.least(3);
    const decoded = cursors.map((c) => Buffer.from(c, 'base64url').toString());
    expect(decoded, 'each cursor past the one before').to.deep.equal([...new Set(decoded)].sort());
  });

  it('lists nothing past retention', async () => {
    const p = `prn_${encodeTime(Date.now(), 10)}${'T'.repeat(16)}`;
    const old = Date.now() - 31 * 86_400_000;
    await storeBatch([recordOf(idAt(old), old, p)]);
    const page = await list({ since: new Date(old - 60_000).toISOString(), principal_id: p });
    expect(page.data).to.deep.equal([]);
    const oldCursor = Buffer.from(idAt(old - 1)).toString('base64url');
    expect((await list({ cursor: oldCursor, principal_id: p })).data).to.deep.equal([]);
  });

  it('reads the batches through the index on first_id, in its order', async () => {
    const catalogue = await Catalogue.load();
    const operators = await profile(fx.app.runtime.db, catalogue.get('decisions/list'), {
      after: idAt(Date.now() - 60_000),
      from: `dec_${encodeTime(Date.now() - 120_000, 10)}`,
      until: idAt(Date.now()),
      batches: 4,
    });
    const names = operators.map((o) => o.operator);
    expect(names).to.include('NodeIndexSeekByRange');
    for (const slow of ['NodeByLabelScan', 'Sort', 'Top']) expect(names).to.not.include(slow);
  });

  it('refuses bad input with 400 and a pointer, and a client without decisions:read with 403', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ cursor: 'not a cursor' }, '/query/cursor'],
      [{ cursor: Buffer.from('prn_01JD0000000000000000000000').toString('base64url') }, '/query/cursor'],
      [{ cursor: Buffer.from('dec_01JD').toString('base64url') }, '/query/cursor'],
      [{ since: 'yesterday' }, '/query/since'],
      [{ since: '2026-02-30T00:00:00Z' }, '/query/since'],
      [{ decision: 'MAYBE' }, '/query/decision'],
      [{ action: 'Read Everything' }, '/query/action'],
      [{ resource_type: 'Not A Type' }, '/query/resource_type'],
      [{ principal_id: '' }, '/query/principal_id'],
      [{ limit: '0' }, '/query/limit'],
      [{ limit: '501' }, '/query/limit'],
    ];
    for (const [params, pointer] of cases) {
      const res = await api.get(query(params));
      expect(res.status, `${JSON.stringify(params)}: ${res.text}`).to.equal(400);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(
        res.body.errors.map((e: any) => e.pointer),
        JSON.stringify(params),
      ).to.include(pointer);
    }
    const auditor = await authed(fx.app, await createClient(fx.app, ['audit:read']));
    const refused = await auditor.get('/v1/decisions');
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('INSUFFICIENT_SCOPE');
    const reader = await authed(fx.app, await createClient(fx.app, ['decisions:read']));
    expect((await reader.get('/v1/decisions?limit=1')).status).to.equal(200);
  });

  describe('across instances', () => {
    // A second instance on the same store, writing its own batches.
    const fx2 = useApp({ keepData: true, env: ENV });
    before(() => warmUp(fx2.app));

    it('a follower sees every decision of both instances exactly once, in order', async () => {
      const p = (await world.principal()).id as string;
      const t = type();
      const since = new Date().toISOString();
      const seen: string[] = [];
      let cursor: string | undefined;
      let stop = false;
      let polls = 0;
      const follower = (async () => {
        while (!stop) {
          const page = await list(cursor ? { cursor, limit: 5 } : { since, limit: 5 });
          polls += 1;
          seen.push(...page.data.filter((d) => d.principal_id === p).map((d) => d.id));
          cursor = page.pagination.next_cursor;
          if (!page.pagination.has_more) await pause(150);
        }
      })();
      const made: string[] = [];
      try {
        // Decisions on both instances, for a little over a second and a half.
        const until = Date.now() + 1_600;
        for (let i = 0; Date.now() < until; i += 1) {
          const client = i % 2 === 0 ? api : fx2.api;
          made.push((await decide(p, t, `i-${i}`, 'read', client)).id);
          await pause(20);
        }
        await eventually(
          async () => seen.length,
          (n) => n >= made.length,
          SETTLE_MS + 10_000,
          100,
        );
        const polled = polls;
        await eventually(
          async () => polls,
          (n) => n >= polled + 3,
          5_000,
          50,
        );
      } finally {
        stop = true;
        await follower;
      }
      expect(seen.length, 'none twice').to.equal(new Set(seen).size);
      expect(seen, 'every one, in the order of their ids').to.deep.equal([...made].sort());
    });
  });
});
