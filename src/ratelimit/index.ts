import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import cluster from 'node:cluster';
import {
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';

/**
 * The rate-limit buckets operations count against: `decisions` (evaluate), `bulk` (batch,
 * simulation, and the costlier reads of the engine), `standard` for the rest. A bucket exists
 * from the release whose operations use it (the contract also names the per-connector `scim`).
 */
export const BUCKETS = ['standard', 'decisions', 'bulk', 'scim'] as const;
export type Bucket = (typeof BUCKETS)[number];

export interface Quota {
  bucket: Bucket;
  limit: number;
  windowS: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
  allowed: boolean;
  retryAfterS: number;
}

export interface RateLimiter {
  consume(bucket: Bucket, key: string): Promise<Quota>;
}

/**
 * Brute-force guard for client authentication (token endpoint): failures per client id and
 * source address together, and per source address. Both counts belong to the place the failures
 * come from, so failures can block only that place: nobody can lock a client out of the
 * addresses its owner uses, whatever they send from elsewhere.
 */
export interface AuthFailureGuard {
  /** Seconds until this client id may try again from this address (0 = not blocked). */
  blockedForS(clientId: string | undefined, ip: string): Promise<number>;
  recordFailure(clientId: string | undefined, ip: string): Promise<void>;
  /** A successful authentication clears the failures of the client id from this address. */
  recordSuccess(clientId: string, ip: string): Promise<void>;
}

export interface RateLimiting {
  limiter: RateLimiter;
  authFailures: AuthFailureGuard;
  close(): Promise<void>;
}

type Counter = RateLimiterMemory | RateLimiterRedis | RateLimiterCluster;

/** Builds a fixed-window counter: `points` per `durationS`, keys stored as `<keyPrefix>:<key>`. */
type CounterFactory = (keyPrefix: string, points: number, durationS: number) => Counter;

interface Store {
  counter: CounterFactory;
  close(): Promise<void>;
}

const memoryStore: Store = {
  counter: (keyPrefix, points, duration) => new RateLimiterMemory({ keyPrefix, points, duration }),
  close: async () => {},
};

/**
 * Counters kept by the primary of a host's serving processes (src/cluster/primary.ts), which each
 * process asks over its IPC channel: the processes count once together, as one instance did.
 */
const primaryStore: Store = {
  counter: (keyPrefix, points, duration) =>
    new RateLimiterCluster({ keyPrefix, points, duration, timeoutMs: PRIMARY_TIMEOUT_MS }),
  close: async () => {},
};

/** How long a serving process waits for the primary's count before the request fails. */
const PRIMARY_TIMEOUT_MS = 2_000;

/**
 * Counters in Redis so that every instance shares them. Commands fail fast while Redis is away
 * (no offline queue, short timeouts) and each counter then falls back to an in-memory twin, so
 * an outage costs precision, never availability or latency.
 */
function redisStore(url: string, logger: Logger): Store {
  const client = new Redis(url, {
    enableOfflineQueue: false,
    lazyConnect: false,
    connectTimeout: 2_000,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    // Keep probing at a bounded pace so shared counting resumes soon after Redis returns.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let reachable: boolean | undefined;
  let closing = false;
  const wentAway = (err?: unknown): void => {
    // Reconnect attempts fail over and over during an outage: one warning is enough.
    if (closing || reachable === false) return;
    reachable = false;
    logger.warn(
      { err },
      'Redis is unreachable: rate limits are counted in memory on this instance until it returns',
    );
  };
  client.on('error', (err: unknown) => wentAway(err));
  client.on('close', () => wentAway());
  client.on('end', () => wentAway());
  client.on('ready', () => {
    if (reachable === false) logger.info('Redis is reachable again: rate limits are shared again');
    reachable = true;
  });
  return {
    counter: (keyPrefix, points, duration) =>
      new RateLimiterRedis({
        storeClient: client,
        keyPrefix,
        points,
        duration,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
      }),
    close: async () => {
      closing = true;
      if (client.status === 'ready') {
        try {
          await client.quit();
          return;
        } catch {
          // Fall through: a connection that cannot say goodbye is simply dropped.
        }
      }
      client.disconnect();
    },
  };
}

function quotaOf(bucket: Bucket, counter: Counter, res: RateLimiterRes, allowed: boolean): Quota {
  const windowMs = counter.duration * 1000;
  const ms = Number.isFinite(res.msBeforeNext) && res.msBeforeNext >= 0 ? res.msBeforeNext : windowMs;
  return {
    bucket,
    limit: counter.points,
    windowS: counter.duration,
    remaining: allowed ? Math.max(0, res.remainingPoints) : 0,
    resetAt: Date.now() + ms,
    allowed,
    retryAfterS: allowed ? 0 : Math.max(1, Math.ceil(ms / 1000)),
  };
}

function createLimiter(store: Store, config: Config): RateLimiter {
  const { keyPrefix, windowS, buckets } = config.rateLimits;
  const counters = Object.fromEntries(
    BUCKETS.map((bucket) => [bucket, store.counter(`${keyPrefix}:${bucket}`, buckets[bucket], windowS)]),
  ) as Record<Bucket, Counter>;
  return {
    async consume(bucket, key) {
      const counter = counters[bucket];
      try {
        return quotaOf(bucket, counter, await counter.consume(key), true);
      } catch (err) {
        // Over the limit the library rejects with the counter state; anything else is a real failure.
        if (err instanceof RateLimiterRes) return quotaOf(bucket, counter, err, false);
        throw err;
      }
    },
  };
}

/**
 * Client ids reach the guard before they are known to exist, and an address is whatever the
 * trusted proxies forwarded: a long one is hashed so that a caller cannot make the store keep
 * arbitrarily large keys.
 */
function bounded(text: string): string {
  return text.length <= 64 ? text : `h:${createHash('sha256').update(text).digest('hex')}`;
}

/** An address holds no space (the forwarded list is trimmed), so the first space ends it. */
function clientAtAddress(clientId: string, ip: string): string {
  return `${bounded(ip)} ${bounded(clientId)}`;
}

function createAuthFailureGuard(store: Store, config: Config): AuthFailureGuard {
  const { keyPrefix } = config.rateLimits;
  const { perClient, perIp, windowS } = config.rateLimits.authFailures;
  const byClient = store.counter(`${keyPrefix}:authfail:client_ip`, perClient, windowS);
  const byIp = store.counter(`${keyPrefix}:authfail:ip`, perIp, windowS);

  const blockedMs = async (counter: Counter, key: string): Promise<number> => {
    const res = await counter.get(key);
    return res && res.consumedPoints >= counter.points ? Math.max(0, res.msBeforeNext) : 0;
  };

  return {
    async blockedForS(clientId, ip) {
      const waits = await Promise.all([
        blockedMs(byIp, bounded(ip)),
        clientId === undefined ? 0 : blockedMs(byClient, clientAtAddress(clientId, ip)),
      ]);
      const ms = Math.max(...waits);
      return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0;
    },
    async recordFailure(clientId, ip) {
      // `penalty` counts without rejecting: the window is fixed, so a blocked caller's further
      // failures do not prolong the block, they only keep it in place until the window ends.
      await Promise.all([
        byIp.penalty(bounded(ip)),
        clientId === undefined ? undefined : byClient.penalty(clientAtAddress(clientId, ip)),
      ]);
    },
    async recordSuccess(clientId, ip) {
      await byClient.delete(clientAtAddress(clientId, ip));
    },
  };
}

/**
 * Request rate limits and the authentication brute-force guard, counted in Redis when
 * `REDIS_URL` is set (shared by every instance), in the primary when this is one of several
 * serving processes of a host (src/cluster), and in this process's memory otherwise (a host's
 * only serving process counts alone, even beside a background process).
 */
export function createRateLimiting(config: Config, logger: Logger): RateLimiting {
  const store = config.redisUrl
    ? redisStore(config.redisUrl, logger)
    : cluster.isWorker && config.workers > 1
      ? primaryStore
      : memoryStore;
  return {
    limiter: createLimiter(store, config),
    authFailures: createAuthFailureGuard(store, config),
    close: () => store.close(),
  };
}
