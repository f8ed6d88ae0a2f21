import { once } from 'node:events';
import { createServer, type Server as HttpServer } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import Koa from 'koa';
import { freePort } from '../../src/dev/local-neo4j.js';
import { errorHandler } from '../../src/http/middleware/errors.js';
import { rateLimit } from '../../src/http/middleware/rate-limit.js';
import { stateOf } from '../../src/http/state.js';
import { createLogger } from '../../src/logging/logger.js';
import { createRateLimiting, type RateLimiting } from '../../src/ratelimit/index.js';
import { LogCapture, testConfig, type TestApp } from '../helpers/app.js';
import { ADMIN } from '../helpers/auth.js';
import { edgeRoutes } from '../helpers/edge-routes.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpResponse } from '../helpers/http.js';
import { connectTestRedis, needsRedis, testRedisUrl } from '../helpers/redis.js';
import { until as waitUntil } from '../helpers/wait.js';

needsRedis();
const ID = 'prn_01JD0000000000000000000000';

let prefixCount = 0;
/** A key prefix of its own for every app, so runs and tests never share counters. */
function uniquePrefix(): string {
  prefixCount += 1;
  return `test:rl:${process.pid}:${Date.now().toString(36)}:${prefixCount}`;
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
}

/** Checks every 100 ms (each check may send a request) until `check` holds. */
const until = (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> =>
  waitUntil(what, check, timeoutMs, 100);

/**
 * A port where no Redis answers: it takes every connection and cuts it at once, counting them,
 * so that a test can tell how many times a client has tried (and failed) to reconnect.
 */
async function refusingRedis(port: number): Promise<{ attempts(): number; close(): Promise<void> }> {
  let attempts = 0;
  const server = net.createServer((socket) => {
    attempts += 1;
    socket.destroy();
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    attempts: () => attempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A TCP relay on `port` to the Redis at `target`: each connection is piped through. `close` stops
 * listening and cuts every connection at once.
 */
async function redisRelay(port: number, target: URL): Promise<{ close(): Promise<void> }> {
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}

function expectRateHeaders(res: HttpResponse, bucket: string, limit: number, remaining: number): void {
  const h = res.headers;
  expect(h.get('ratelimit-policy'), 'RateLimit-Policy').to.equal(`"${bucket}";q=${limit};w=60`);
  const match = /^"([a-z]+)";r=(\d+);t=(\d+)$/.exec(h.get('ratelimit') ?? '');
  expect(match, `RateLimit: ${h.get('ratelimit')}`).to.not.equal(null);
  const [, name, r, t] = match!;
  expect(name).to.equal(bucket);
  expect(Number(r)).to.equal(remaining);
  expect(Number(t)).to.be.within(0, 60);
  expect(h.get('x-ratelimit-limit')).to.equal(String(limit));
  expect(h.get('x-ratelimit-remaining')).to.equal(String(remaining));
  const reset = Number(h.get('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  expect(reset, 'X-RateLimit-Reset is epoch seconds within the window').to.be.within(now - 1, now + 61);
  expect(Math.abs(reset - (Math.floor(now) + Number(t))), 'Reset and t agree').to.be.at.most(2);
}

function expectNoRateHeaders(res: HttpResponse): void {
  for (const name of [
    'ratelimit',
    'ratelimit-policy',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
  ]) {
    expect(res.headers.get(name), name).to.equal(null);
  }
}

function expectRateLimited(res: HttpResponse): number {
  expect(res.status, JSON.stringify(res.body)).to.equal(429);
  expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(res.body).to.include({ status: 429, code: 'RATE_LIMITED', type: 'about:blank' });
  expect(res.body.request_id).to.equal(res.headers.get('x-request-id'));
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).to.match(/^\d+$/);
  expect(Number(retryAfter)).to.be.within(1, 60);
  return Number(retryAfter);
}

const from = (ip: string): { headers: Record<string, string> } => ({ headers: { 'X-Forwarded-For': ip } });

/**
 * Until its connection is ready an instance counts in memory; wait for a request (from an address
 * of its own) to land in Redis so that the counts the tests look at are the shared ones.
 */
async function warmUp(app: TestApp, redis: Redis, prefix: string, ip: string): Promise<void> {
  await until('the instance to count in Redis', async () => {
    await app.http.get('/v1/openapi.json', from(ip));
    return (await redis.exists(`${prefix}:standard:ip:${ip}`)) === 1;
  });
}

describe('rate limits', function () {
  this.timeout(60_000);
  let redis: Redis;
  const prefixes: string[] = [];
  const track = (prefix: string): string => {
    prefixes.push(prefix);
    return prefix;
  };

  before(async () => {
    redis = await connectTestRedis();
  });
  after(async () => {
    if (!redis) return;
    for (const prefix of prefixes) await deleteKeys(redis, prefix);
    await redis.quit();
  });

  describe('with Redis', () => {
    const prefix = track(uniquePrefix());
    const fx = useApp({
      extraRoutes: edgeRoutes(() => fx.app.runtime.db),
      env: () => ({
        REDIS_URL: testRedisUrl(),
        RATE_LIMIT_KEY_PREFIX: prefix,
        RATE_LIMIT_STANDARD: '1000',
        TRUST_PROXY: 'true',
      }),
    });
    before(async () => {
      await warmUp(fx.app, redis, prefix, '192.0.2.1');
    });

    it('reports both header sets on a success and counts in Redis', async () => {
      const res = await fx.http.get('/v1/_edge/db', from('10.1.0.1'));
      expect(res.status).to.equal(200);
      expectRateHeaders(res, 'standard', 1000, 999);
      expect(await redis.get(`${prefix}:standard:ip:10.1.0.1`)).to.equal('1');
      expect(await redis.pttl(`${prefix}:standard:ip:10.1.0.1`)).to.be.within(1, 60_000);
    });

    it('reports them on errors too: 404 under /v1, 405, 400 and 413', async () => {
      const ip = '10.1.0.2';
      const notFound = await fx.http.get('/v1/does/not/exist', from(ip));
      expect(notFound.status).to.equal(404);
      expectRateHeaders(notFound, 'standard', 1000, 999);

      const notAllowed = await fx.http.delete('/v1/openapi.json', from(ip));
      expect(notAllowed.status).to.equal(405);
      expectRateHeaders(notAllowed, 'standard', 1000, 998);

      const invalid = await fx.http.post(`/v1/_edge/echo/${ID}`, { name: '' }, from(ip));
      expect(invalid.status).to.equal(400);
      expect(invalid.body.code).to.equal('VALIDATION_FAILED');
      expectRateHeaders(invalid, 'standard', 1000, 997);

      const tooLarge = await fx.http.post(`/v1/_edge/echo/${ID}`, undefined, {
        raw: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ip },
      });
      expect(tooLarge.status).to.equal(413);
      expectRateHeaders(tooLarge, 'standard', 1000, 996);

      const failed = await fx.http.get('/v1/_edge/boom', from(ip));
      expect(failed.status).to.equal(500);
      expectRateHeaders(failed, 'standard', 1000, 995);
    });

    it('reports them on a 401 and counts an unauthenticated caller by address', async () => {
      const ip = '10.1.0.6';
      const res = await fx.http.get('/v1/clients', {
        headers: { 'X-Forwarded-For': ip, Authorization: 'Bearer nope' },
      });
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHENTICATED');
      expectRateHeaders(res, 'standard', 1000, 999);
      expect(await redis.get(`${prefix}:standard:ip:${ip}`)).to.equal('1');
    });

    it('counts an authenticated caller by client id, whatever its address', async () => {
      const admin = fx.api;
      const seen: number[] = [];
      for (const ip of ['10.1.1.1', '10.1.1.2', '10.1.1.3']) {
        const res = await admin.get('/v1/clients', from(ip));
        expect(res.status, res.text).to.equal(200);
        seen.push(Number(res.headers.get('x-ratelimit-remaining')));
      }
      expect(seen).to.deep.equal([999, 998, 997]);
      expect(await redis.get(`${prefix}:standard:client:${ADMIN.id}`)).to.equal('3');
      expect(await redis.keys(`${prefix}:standard:ip:10.1.1.*`)).to.deep.equal([]);
    });

    it('leaves operational endpoints and paths outside /v1 unlimited and without headers', async () => {
      const expected: [string, number][] = [
        ['/healthz', 200],
        ['/readyz', 200],
        ['/metrics', 200],
        ['/nothing-here', 404],
      ];
      for (const [path, status] of expected) {
        const res = await fx.http.get(path, from('10.1.0.3'));
        expect(res.status, path).to.equal(status);
        expectNoRateHeaders(res);
      }
      expect(await redis.keys(`${prefix}:*:ip:10.1.0.3`)).to.deep.equal([]);
    });

    it('decreases the remaining count by one per request', async () => {
      for (let i = 1; i <= 5; i += 1) {
        const res = await fx.http.get('/v1/openapi.json', from('10.1.0.4'));
        expect(res.status).to.equal(200);
        expectRateHeaders(res, 'standard', 1000, 1000 - i);
      }
    });
  });

  describe('over the limit', () => {
    const prefix = track(uniquePrefix());
    const fx = useApp({
      extraRoutes: edgeRoutes(() => fx.app.runtime.db),
      env: () => ({
        REDIS_URL: testRedisUrl(),
        RATE_LIMIT_KEY_PREFIX: prefix,
        RATE_LIMIT_STANDARD: '5',
        TRUST_PROXY: 'true',
      }),
    });
    before(async () => {
      await warmUp(fx.app, redis, prefix, '192.0.2.1');
    });

    it('answers 429 RATE_LIMITED with Retry-After and the rate-limit headers', async () => {
      const ip = '10.2.0.1';
      for (let i = 1; i <= 5; i += 1) {
        const res = await fx.http.get('/v1/_edge/db', from(ip));
        expect(res.status).to.equal(200);
        expectRateHeaders(res, 'standard', 5, 5 - i);
      }
      const limited = await fx.http.get('/v1/_edge/db', from(ip));
      const retryAfter = expectRateLimited(limited);
      expectRateHeaders(limited, 'standard', 5, 0);
      expect(Number(/t=(\d+)/.exec(limited.headers.get('ratelimit')!)![1])).to.be.at.most(retryAfter);

      // The limit covers the whole bucket, unknown paths and errors included.
      expectRateLimited(await fx.http.get('/v1/does/not/exist', from(ip)));
      expectRateLimited(await fx.http.post(`/v1/_edge/echo/${ID}`, { name: 'x' }, from(ip)));
    });

    it('counts every source address separately', async () => {
      const [a, b] = ['10.2.0.2', '10.2.0.3'];
      for (let i = 0; i < 5; i += 1) await fx.http.get('/v1/openapi.json', from(a));
      expectRateLimited(await fx.http.get('/v1/openapi.json', from(a)));
      const other = await fx.http.get('/v1/openapi.json', from(b));
      expect(other.status).to.equal(200);
      expectRateHeaders(other, 'standard', 5, 4);
    });

    it('counts the address the trusted proxy saw, whatever the caller wrote left of it', async () => {
      const real = '10.2.0.9';
      for (let i = 1; i <= 5; i += 1) {
        const res = await fx.http.get('/v1/openapi.json', from(`6.6.6.${i}, ${real}`));
        expect(res.status).to.equal(200);
        expectRateHeaders(res, 'standard', 5, 5 - i);
      }
      expectRateLimited(await fx.http.get('/v1/openapi.json', from(`6.6.6.77, ${real}`)));
      expectRateLimited(await fx.http.get('/v1/openapi.json', from(real)));
    });

    it('keeps unlimited endpoints available to a limited caller', async () => {
      const ip = '10.2.0.4';
      for (let i = 0; i < 6; i += 1) await fx.http.get('/v1/openapi.json', from(ip));
      expect((await fx.http.get('/healthz', from(ip))).status).to.equal(200);
    });
  });

  describe('in memory (no REDIS_URL)', () => {
    const prefix = track(uniquePrefix());
    const fx = useApp({
      extraRoutes: edgeRoutes(() => fx.app.runtime.db),
      env: { RATE_LIMIT_KEY_PREFIX: prefix, RATE_LIMIT_STANDARD: '3', TRUST_PROXY: 'true' },
    });

    it('counts, reports and limits without Redis', async () => {
      for (let i = 1; i <= 3; i += 1) {
        const res = await fx.http.get('/v1/_edge/db', from('10.3.0.1'));
        expect(res.status).to.equal(200);
        expectRateHeaders(res, 'standard', 3, 3 - i);
      }
      const limited = await fx.http.get('/v1/_edge/db', from('10.3.0.1'));
      expectRateLimited(limited);
      expectRateHeaders(limited, 'standard', 3, 0);
      expect((await fx.http.get('/v1/_edge/db', from('10.3.0.2'))).status).to.equal(200);
      expect(await redis.keys(`${prefix}:*`), 'nothing reaches Redis').to.deep.equal([]);
    });
  });

  describe('proxy hops', () => {
    const remaining = async (app: TestApp, forwardedFor: string): Promise<number> => {
      const res = await app.http.get('/v1/openapi.json', from(forwardedFor));
      expect(res.status).to.equal(200);
      return Number(res.headers.get('x-ratelimit-remaining'));
    };

    describe('without a trusted proxy', () => {
      const fx = useApp({ env: { RATE_LIMIT_KEY_PREFIX: track(uniquePrefix()), RATE_LIMIT_STANDARD: '10' } });

      it('ignores X-Forwarded-For', async () => {
        // Every request comes from the test's own address, whatever the header claims: one count,
        // which the fixture's token request, from that address too, had begun.
        const seen: number[] = [];
        for (const ip of ['10.8.0.1', '10.8.0.2', '10.8.0.3']) seen.push(await remaining(fx.app, ip));
        expect(seen).to.deep.equal([8, 7, 6]);
      });
    });

    describe('behind two trusted proxies', () => {
      const fx = useApp({
        env: { RATE_LIMIT_KEY_PREFIX: track(uniquePrefix()), RATE_LIMIT_STANDARD: '10', TRUST_PROXY: '2' },
      });

      it('takes the entry as many hops from the right as there are trusted proxies', async () => {
        // Two proxies: the outer one appended the client, the inner one the outer proxy.
        expect(await remaining(fx.app, '6.6.6.1, 10.9.0.1, 172.16.0.1')).to.equal(9);
        expect(await remaining(fx.app, '6.6.6.2, 10.9.0.1, 172.16.0.2')).to.equal(8);
        expect(await remaining(fx.app, '10.9.0.2, 172.16.0.1')).to.equal(9);
      });
    });
  });

  describe('several instances', () => {
    const prefix = track(uniquePrefix());
    const env = (): Record<string, string> => ({
      REDIS_URL: testRedisUrl(),
      RATE_LIMIT_KEY_PREFIX: prefix,
      RATE_LIMIT_STANDARD: '4',
      TRUST_PROXY: 'true',
    });
    const one = useApp({ env });
    // A second instance on the same store.
    const two = useApp({ env, keepData: true });
    before(async () => {
      await warmUp(one.app, redis, prefix, '192.0.2.1');
      await warmUp(two.app, redis, prefix, '192.0.2.2');
    });

    it('share one bucket through Redis', async () => {
      const ip = '10.4.0.1';
      const seen: number[] = [];
      for (const instance of [one, two, one, two]) {
        const res = await instance.http.get('/v1/openapi.json', from(ip));
        expect(res.status).to.equal(200);
        seen.push(Number(res.headers.get('x-ratelimit-remaining')));
      }
      expect(seen).to.deep.equal([3, 2, 1, 0]);
      expectRateLimited(await one.http.get('/v1/openapi.json', from(ip)));
      expectRateLimited(await two.http.get('/v1/openapi.json', from(ip)));
    });
  });

  describe('when Redis fails', () => {
    let port: number;
    let url: string;
    let relay: { close(): Promise<void> } | undefined;
    const prefix = uniquePrefix();

    /**
     * The Redis of this block: a relay on a port of its own to the run's Redis. Stopping it cuts
     * every connection and leaves the port refusing, as a Redis that dies; starting it again is
     * Redis coming back. It works with whichever Redis the run found, container included.
     */
    async function startRedis(): Promise<void> {
      relay = await redisRelay(port, new URL(testRedisUrl()));
    }

    async function stopRedis(): Promise<void> {
      const stopping = relay;
      relay = undefined;
      await stopping?.close();
    }

    const warnings = (app: TestApp): number =>
      app.logs.entries().filter((e) => /Redis is unreachable/.test(String(e['msg']))).length;
    const recoveries = (app: TestApp): number =>
      app.logs.entries().filter((e) => /Redis is reachable again/.test(String(e['msg']))).length;

    // The Redis of this block first: the instances start on it (its port is known only then).
    before(async () => {
      port = await freePort();
      // The run's Redis address with the relay's host and port: its credentials, if any, kept.
      const relayed = new URL(testRedisUrl());
      relayed.hostname = '127.0.0.1';
      relayed.port = String(port);
      url = relayed.toString();
      await startRedis();
    });
    const env = (): Record<string, string> => ({
      REDIS_URL: url,
      RATE_LIMIT_KEY_PREFIX: prefix,
      RATE_LIMIT_STANDARD: '100',
      TRUST_PROXY: 'true',
    });
    const one = useApp({ extraRoutes: edgeRoutes(() => one.app.runtime.db), env });
    // A second instance on the same store.
    const two = useApp({ env, keepData: true });
    before(async () => {
      const probe = await connectTestRedis(url);
      try {
        await warmUp(one.app, probe, prefix, '192.0.2.1');
        await warmUp(two.app, probe, prefix, '192.0.2.2');
      } finally {
        await probe.quit();
      }
    });
    // Once the instances are closed.
    after(async () => {
      await stopRedis();
    });

    it('keeps serving with headers, counting in memory, and shares again once Redis is back', async () => {
      const ip = '10.5.0.1';
      const first = await one.http.get('/v1/_edge/db', from(ip));
      expectRateHeaders(first, 'standard', 100, 99);
      const probe = await connectTestRedis(url);
      const count = await probe.get(`${prefix}:standard:ip:${ip}`);
      await probe.quit();
      expect(count, 'the count is in the test Redis').to.equal('1');

      await stopRedis();
      // Where Redis was, connections are now cut at once, and counted.
      const gone = await refusingRedis(port);
      try {
        for (let i = 1; i <= 5; i += 1) {
          const started = Date.now();
          const res = await one.http.get('/v1/_edge/db', from(ip));
          expect(res.status).to.equal(200);
          expect(Date.now() - started, 'no waiting on the dead Redis').to.be.below(1_500);
          // Memory counting starts afresh: the requests seen during the outage.
          expectRateHeaders(res, 'standard', 100, 100 - i);
        }
        // Reconnection attempts keep failing meanwhile (four of them, from the two instances);
        // each instance reports the outage once.
        await until('failed reconnection attempts', () => gone.attempts() >= 4);
        expect(warnings(one.app)).to.equal(1);
        expect(warnings(two.app)).to.equal(1);
        const notFound = await one.http.get('/v1/nowhere', from(ip));
        expect(notFound.status).to.equal(404);
        expect(notFound.headers.get('x-ratelimit-remaining')).to.equal('94');
      } finally {
        await gone.close();
      }
      await startRedis();
      await until(
        'both instances to reconnect',
        () => recoveries(one.app) === 1 && recoveries(two.app) === 1,
      );

      const again = '10.5.0.2';
      const seen: number[] = [];
      for (const instance of [one, two, one, two]) {
        const res = await instance.http.get('/v1/openapi.json', from(again));
        expect(res.status).to.equal(200);
        seen.push(Number(res.headers.get('x-ratelimit-remaining')));
      }
      expect(seen, 'the instances share the count again').to.deep.equal([99, 98, 97, 96]);
    });
  });

  describe('when Redis is unreachable from the start', () => {
    it('counts in memory, warns once and still closes promptly', async () => {
      const logs = new LogCapture();
      const port = await freePort();
      const unreachable = await refusingRedis(port);
      const config = testConfig({
        REDIS_URL: `redis://127.0.0.1:${port}`,
        RATE_LIMIT_KEY_PREFIX: uniquePrefix(),
        RATE_LIMIT_STANDARD: '10',
      });
      const rl = createRateLimiting(config, createLogger('info', logs));
      try {
        for (let i = 1; i <= 3; i += 1) {
          const started = Date.now();
          const quota = await rl.limiter.consume('standard', 'ip:10.7.0.1');
          expect(Date.now() - started).to.be.below(1_000);
          expect(quota).to.include({
            bucket: 'standard',
            limit: 10,
            windowS: 60,
            allowed: true,
            remaining: 10 - i,
          });
        }
        await rl.authFailures.recordFailure('cli_x', '10.7.0.1');
        expect(await rl.authFailures.blockedForS('cli_x', '10.7.0.1')).to.equal(0);
        // The first attempt to connect and two reconnections have failed.
        await until('failed reconnection attempts', () => unreachable.attempts() >= 3);
        const warned = logs.entries().filter((e) => /Redis is unreachable/.test(String(e['msg'])));
        expect(warned).to.have.length(1);
        expect(warned[0]!['level']).to.equal('warn');
      } finally {
        const started = Date.now();
        await rl.close();
        const closingMs = Date.now() - started;
        await unreachable.close();
        expect(closingMs).to.be.below(1_000);
      }
    });
  });

  describe('callers identified by their client', () => {
    let rl: RateLimiting;
    let server: HttpServer;
    let base: string;
    let prefix: string;

    before(async () => {
      prefix = track(uniquePrefix());
      const config = testConfig({
        REDIS_URL: testRedisUrl(),
        RATE_LIMIT_KEY_PREFIX: prefix,
        RATE_LIMIT_STANDARD: '2',
      });
      const logger = createLogger('warn', new LogCapture());
      rl = createRateLimiting(config, logger);
      const koa = new Koa();
      koa.use(async (ctx, next) => {
        stateOf(ctx).log = logger;
        await next();
      });
      koa.use(errorHandler(logger));
      // Stands in for the authentication middleware, which runs before the rate limit.
      koa.use(async (ctx, next) => {
        const clientId = ctx.get('X-Test-Client');
        if (clientId) {
          stateOf(ctx).auth = { clientId, scopes: new Set(), tokenId: 't', expiresAt: Date.now() + 60_000 };
        }
        await next();
      });
      koa.use(rateLimit(rl.limiter, config));
      koa.use((ctx) => {
        ctx.body = { ok: true };
      });
      const handle = koa.callback();
      server = createServer((req, res) => void handle(req, res));
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await until('the limiter to reach Redis', async () => {
        await fetch(`${base}/v1/warm-up`);
        return (await redis.keys(`${prefix}:standard:ip:*`)).length > 0;
      });
    });
    after(async () => {
      server?.close();
      await rl?.close();
    });

    it('counts an authenticated client under its id, wherever it connects from', async () => {
      const call = (client: string): Promise<Response> =>
        fetch(`${base}/v1/anything`, { headers: { 'X-Test-Client': client } });
      expect((await call('cli_a')).status).to.equal(200);
      expect((await call('cli_a')).status).to.equal(200);
      const limited = await call('cli_a');
      expect(limited.status).to.equal(429);
      expect(limited.headers.get('retry-after')).to.match(/^\d+$/);
      expect((await call('cli_b')).status).to.equal(200);
      expect(await redis.get(`${prefix}:standard:client:cli_a`)).to.equal('3');
      expect(await redis.get(`${prefix}:standard:client:cli_b`)).to.equal('1');
    });
  });

  for (const mode of ['redis', 'memory'] as const) {
    describe(`authentication failure guard (${mode})`, () => {
      let rl: RateLimiting;
      let prefix: string;
      before(async () => {
        prefix = track(uniquePrefix());
        const env: Record<string, string> = {
          RATE_LIMIT_KEY_PREFIX: prefix,
          AUTH_FAILURE_LIMIT: '3',
          AUTH_FAILURE_IP_LIMIT: '5',
          AUTH_FAILURE_WINDOW_S: '120',
        };
        if (mode === 'redis') env['REDIS_URL'] = testRedisUrl();
        rl = createRateLimiting(testConfig(env), createLogger('warn', new LogCapture()));
        if (mode === 'redis') {
          // Failures would be counted in memory until the connection is ready.
          await until('the guard to count in Redis', async () => {
            await rl.authFailures.recordFailure(undefined, '192.0.2.1');
            return (await redis.exists(`${prefix}:authfail:ip:192.0.2.1`)) === 1;
          });
        }
      });
      after(async () => {
        await rl?.close();
      });

      it('blocks a client id at the address its failures come from, and only there', async () => {
        const guard = rl.authFailures;
        const [here, elsewhere] = ['10.6.0.1', '10.6.0.2'];
        expect(await guard.blockedForS('cli_one', here)).to.equal(0);
        await guard.recordFailure('cli_one', here);
        await guard.recordFailure('cli_one', here);
        expect(await guard.blockedForS('cli_one', here)).to.equal(0);
        await guard.recordFailure('cli_one', here);
        expect(await guard.blockedForS('cli_one', here)).to.be.within(1, 120);
        expect(await guard.blockedForS('cli_one', elsewhere), 'the client from elsewhere').to.equal(0);
        expect(await guard.blockedForS('cli_two', here), 'another client from there').to.equal(0);
      });

      it('does not add up failures of one client id from different addresses', async () => {
        const guard = rl.authFailures;
        for (let i = 0; i < 6; i += 1) await guard.recordFailure('cli_spread', `10.6.4.${i}`);
        for (let i = 0; i < 7; i += 1)
          expect(await guard.blockedForS('cli_spread', `10.6.4.${i}`)).to.equal(0);
      });

      it('blocks a source address after the configured number of failures, whatever the client id', async () => {
        const guard = rl.authFailures;
        const ip = '10.6.1.1';
        for (let i = 0; i < 4; i += 1) await guard.recordFailure(`cli_guess${i}`, ip);
        expect(await guard.blockedForS('cli_fresh', ip)).to.equal(0);
        await guard.recordFailure(undefined, ip);
        expect(await guard.blockedForS('cli_fresh', ip)).to.be.within(1, 120);
        expect(await guard.blockedForS(undefined, ip)).to.be.within(1, 120);
        expect(await guard.blockedForS('cli_fresh', '10.6.1.2')).to.equal(0);
      });

      it('clears a client id at an address on success there', async () => {
        const guard = rl.authFailures;
        const ip = '10.6.2.1';
        await guard.recordFailure('cli_three', ip);
        await guard.recordFailure('cli_three', ip);
        await guard.recordSuccess('cli_three', ip);
        await guard.recordFailure('cli_three', ip);
        await guard.recordFailure('cli_three', ip);
        expect(await guard.blockedForS('cli_three', ip)).to.equal(0);
        await guard.recordFailure('cli_three', ip);
        expect(await guard.blockedForS('cli_three', ip)).to.be.within(1, 120);
      });

      it('keys long client ids and addresses by hash', async () => {
        const guard = rl.authFailures;
        const long = `cli_${'x'.repeat(5_000)}`;
        const longIp = `10.6.3.${'9'.repeat(200)}`;
        for (let i = 0; i < 3; i += 1) await guard.recordFailure(long, '10.6.3.1');
        expect(await guard.blockedForS(long, '10.6.3.1')).to.be.within(1, 120);
        expect(await guard.blockedForS(long, '10.6.3.2')).to.equal(0);
        for (let i = 0; i < 5; i += 1) await guard.recordFailure(undefined, longIp);
        expect(await guard.blockedForS(undefined, longIp)).to.be.within(1, 120);
        if (mode === 'redis') {
          const keys = await redis.keys(`${prefix}:authfail:*`);
          expect(keys).to.have.length.above(1);
          for (const key of keys) expect(key.length).to.be.below(200);
        }
      });
    });
  }
});
