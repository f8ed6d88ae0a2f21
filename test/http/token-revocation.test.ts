import { expect } from 'chai';
import type { ChangeEvent } from '../../src/events/feed.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { ADMIN, authed, createClient, tokenFor } from '../helpers/auth.js';
import { needsRedis, testRedisUrl } from '../helpers/redis.js';
import { eventually } from '../helpers/wait.js';

needsRedis();

/** How many times each unit of work has run in read mode. */
async function readUnits(app: TestApp): Promise<Map<string, number>> {
  const metric = await app.runtime.metrics.dbTransactions.get();
  const units = new Map<string, number>();
  for (const v of metric.values) {
    if (v.labels.mode === 'read') units.set(String(v.labels.unit), v.value);
  }
  return units;
}

async function status(app: TestApp, token: string): Promise<number> {
  return (await app.http.withToken(token).get('/v1/audit/events?limit=1')).status;
}

/**
 * Two instances of the service on one Neo4j, sharing their public address (so tokens of one are
 * valid at the other). Without Redis they learn of each other's changes by polling Neo4j; with
 * it, through pub/sub (the poll is then made slow, to show that Redis alone is fast enough).
 */
function pair(redis: boolean): { a: () => TestApp; b: () => TestApp } {
  const channel = `test:events:${process.pid}:${Date.now()}:${redis ? 'redis' : 'poll'}`;
  // Read when each app starts: the run's Redis is found by the global setup, after loading.
  const env = (): Record<string, string> =>
    redis
      ? {
          REDIS_URL: testRedisUrl(),
          EVENTS_CHANNEL: channel,
          EVENT_POLL_INTERVAL_MS: '60000',
          RATE_LIMIT_KEY_PREFIX: channel,
        }
      : {};
  const a = useApp({ env });
  const b = useApp({
    keepData: true,
    env: () => ({ ...env(), PUBLIC_BASE_URL: a.app.config.publicBaseUrl }),
  });
  return { a: () => a.app, b: () => b.app };
}

for (const redis of [false, true]) {
  describe(`token revocation across two instances (${redis ? 'Redis pub/sub' : 'polling Neo4j'})`, () => {
    const apps = pair(redis);

    it('refuses a revoked access token at once where it was revoked, and within a second on the other instance', async () => {
      const client = await createClient(apps.a(), ['audit:read']);
      const token = (await tokenFor(apps.a().http, client)).access_token;
      expect(await status(apps.a(), token)).to.equal(200);
      expect(await status(apps.b(), token)).to.equal(200);
      const revoked = await apps.a().http.withToken(token).delete('/v1/auth/revoke');
      expect(revoked.status).to.equal(200);
      expect(await status(apps.a(), token)).to.equal(401);
      const { elapsedMs } = await eventually(
        () => status(apps.b(), token),
        (s) => s === 401,
        1_000,
      );
      expect(elapsedMs).to.be.below(1_000);
    });

    it('refuses every access token of a revoked refresh token family on both instances', async () => {
      const client = await createClient(apps.a(), ['audit:read']);
      const first = await tokenFor(apps.a().http, client);
      const refreshed = await apps.a().http.post('/v1/auth/refresh', { refresh_token: first.refresh_token });
      expect(refreshed.status).to.equal(200);
      const second = refreshed.body.access_token as string;
      expect(await status(apps.b(), first.access_token)).to.equal(200);
      expect(await status(apps.b(), second)).to.equal(200);
      const res = await apps
        .b()
        .http.withToken(second)
        .post('/v1/auth/revoke', { token: refreshed.body.refresh_token, token_type_hint: 'refresh_token' });
      expect(res.status).to.equal(200);
      expect(await status(apps.b(), first.access_token)).to.equal(401);
      expect(await status(apps.b(), second)).to.equal(401);
      for (const token of [first.access_token, second]) {
        await eventually(
          () => status(apps.a(), token),
          (s) => s === 401,
          1_000,
        );
      }
    });

    it('refuses the tokens of a deleted client on both instances', async () => {
      const client = await createClient(apps.a(), ['audit:read']);
      const token = (await tokenFor(apps.a().http, client)).access_token;
      expect(await status(apps.a(), token)).to.equal(200);
      const admin = await authed(apps.b(), ADMIN);
      expect((await admin.delete(`/v1/clients/${client.id}`)).status).to.equal(200);
      expect(await status(apps.b(), token)).to.equal(401);
      await eventually(
        () => status(apps.a(), token),
        (s) => s === 401,
        1_000,
      );
    });

    it('tells the other instance of every change committed here, each at least once', async () => {
      const seen = new Map<string, ChangeEvent>();
      apps.b().runtime.feed.subscribe((event) => {
        if (event.type === 'principal.created') seen.set(event.target.id, event);
      });
      const api = await authed(apps.a());
      const ids: string[] = [];
      for (let i = 0; i < 15; i += 1) {
        const res = await api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: `feed-${i}` });
        expect(res.status).to.equal(201);
        ids.push(res.body.id as string);
      }
      await eventually(
        async () => ids.filter((id) => seen.has(id)).length,
        (n) => n === ids.length,
        1_500,
      );
      // Each shard of the sequence numbers its events in commit order.
      for (const shard of new Set(ids.map((id) => seen.get(id)!.shard))) {
        const seqs = ids
          .map((id) => seen.get(id)!)
          .filter((e) => e.shard === shard)
          .map((e) => e.seq);
        expect(seqs, `shard ${shard} numbered in commit order`).to.deep.equal(
          [...seqs].sort((x, y) => x - y),
        );
        expect(new Set(seqs).size).to.equal(seqs.length);
      }
    });
  });
}

describe('token verification', () => {
  let app: TestApp;
  const fx = useApp();
  before(async () => {
    app = fx.app;
  });

  it('needs no database round trip: each request runs only its own unit of work', async () => {
    const api = await authed(app);
    const created = await api.post('/v1/principals', { type: 'API_KEY', name: 'probe' });
    expect(created.status).to.equal(201);
    const before = await readUnits(app);
    for (let i = 0; i < 20; i += 1) {
      expect((await api.get(`/v1/principals/${created.body.id}`)).status).to.equal(200);
    }
    const ran = new Map<string, number>();
    for (const [unit, count] of await readUnits(app)) {
      const delta = count - (before.get(unit) ?? 0);
      if (delta > 0) ran.set(unit, delta);
    }
    // Each request reads the principal once, and nothing else runs once per request: the
    // background tasks that share the window (the index following a commit, the feed's poll)
    // run a few times at most. Tokens and clients are never read.
    expect(ran.get('principals/get')).to.equal(20);
    for (const [unit, count] of ran) {
      expect(unit, `${unit} ran ${count} times`).not.to.match(/^(tokens|clients)\//);
      if (unit !== 'principals/get') expect(count, `${unit} ran ${count} times`).to.be.below(20);
    }
  });

  it('still refuses, after a restart, a token revoked before it', async () => {
    const client = await createClient(app, ['audit:read']);
    const token = (await tokenFor(app.http, client)).access_token;
    expect((await app.http.withToken(token).delete('/v1/auth/revoke')).status).to.equal(200);
    const restarted = await startTestApp({
      keepData: true,
      env: { PUBLIC_BASE_URL: app.config.publicBaseUrl },
    });
    try {
      expect(await status(restarted, token)).to.equal(401);
      const fresh = (await tokenFor(restarted.http, client)).access_token;
      expect(await status(restarted, fresh)).to.equal(200);
    } finally {
      await restarted.close();
    }
  });

  it('refuses a remembered token once it has been revoked', async () => {
    const client = await createClient(app, ['audit:read']);
    const token = (await tokenFor(app.http, client)).access_token;
    // Verified (and remembered) several times first.
    for (let i = 0; i < 3; i += 1) expect(await status(app, token)).to.equal(200);
    await app.http.withToken(token).delete('/v1/auth/revoke');
    const res = await app.http.withToken(token).get('/v1/audit/events?limit=1');
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.match(/error="invalid_token".*revoked/);
  });
});
