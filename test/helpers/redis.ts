import { Redis } from 'ioredis';
import { dockerAnswers } from '../../src/dev/local-neo4j.js';

/** Where the run looks for a Redis when TEST_REDIS_URL is not set. */
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379';
/** The image a Redis started for the run comes from: the one docker-compose.yml runs. */
const REDIS_IMAGE = 'redis:7-alpine';

/** What a run without any Redis says, wherever a test or the setup needs one. */
export const NO_REDIS =
  'these tests need a Redis, and none was found. Do one of: set TEST_REDIS_URL to a Redis ' +
  `(redis://host:port); run one at ${LOCAL_REDIS_URL} (Debian/Ubuntu: apt-get install redis-server); ` +
  `or start a Docker engine, and testcontainers runs ${REDIS_IMAGE} for the run.`;

/** An address as the output may show it: a password written into it left out. */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1');
}

export class RedisUnavailableError extends Error {
  override name = 'RedisUnavailableError';
}

/**
 * The Redis of the run, which the global setup (test/setup/global.ts) found and put in
 * TEST_REDIS_URL, for the tests and the service processes they start. Read it inside tests and
 * hooks: the test files are read before the setup runs. Without one, the test that asked fails
 * with the message naming the three ways to provide one; tests never skip for want of a Redis.
 */
export function testRedisUrl(): string {
  const url = process.env['TEST_REDIS_URL'];
  if (!url) throw new RedisUnavailableError(NO_REDIS);
  return url;
}

let needed = false;

/**
 * Says, as a test file is read, that some of its tests need a Redis. A run that includes such a
 * file and finds no Redis fails at its setup, before any test; a run of other files goes on
 * without one.
 */
export function needsRedis(): void {
  needed = true;
}

/** Whether a test file read so far needs a Redis. */
export function redisNeeded(): boolean {
  return needed;
}

/** A Redis of the run, where it was found, and what stops it (a container started for the run). */
export interface TestRedis {
  url: string;
  source: 'TEST_REDIS_URL' | 'local' | 'docker';
  stop(): Promise<void>;
}

/** How the resolver looks around; the unit tests replace some of these. */
export interface RedisProbes {
  /** Whether a Redis answers PING at the address. */
  answers(url: string): Promise<boolean>;
  dockerAnswers(): Promise<boolean>;
  startContainer(): Promise<{ url: string; stop(): Promise<void> }>;
}

export const redisProbes: RedisProbes = {
  async answers(url) {
    try {
      const client = await connectTestRedis(url, 1_000);
      client.disconnect();
      return true;
    } catch {
      return false;
    }
  },
  dockerAnswers,
  async startContainer() {
    const { RedisContainer } = await import('@testcontainers/redis');
    const started = await new RedisContainer(REDIS_IMAGE).start();
    return { url: started.getConnectionUrl(), stop: async () => void (await started.stop()) };
  },
};

/**
 * Finds the Redis of a run: TEST_REDIS_URL when set (it must answer), else the Redis at
 * `localUrl` if one answers there, else, with `docker`, one started in a container when a Docker
 * engine answers. Without any, it fails with the message naming the three.
 */
export async function resolveTestRedis(
  options: { configured: string | undefined; localUrl?: string; docker: boolean },
  probes: RedisProbes = redisProbes,
): Promise<TestRedis> {
  const none = async (): Promise<void> => undefined;
  if (options.configured) {
    if (await probes.answers(options.configured)) {
      return { url: options.configured, source: 'TEST_REDIS_URL', stop: none };
    }
    throw new RedisUnavailableError(
      `TEST_REDIS_URL=${shownUrl(options.configured)} does not answer: start that Redis, or unset TEST_REDIS_URL ` +
        `to use the one at ${LOCAL_REDIS_URL} or one in Docker`,
    );
  }
  const local = options.localUrl ?? LOCAL_REDIS_URL;
  if (await probes.answers(local)) return { url: local, source: 'local', stop: none };
  if (options.docker && (await probes.dockerAnswers())) {
    const container = await probes.startContainer();
    return { url: container.url, source: 'docker', stop: () => container.stop() };
  }
  throw new RedisUnavailableError(NO_REDIS);
}

/**
 * A connection of the test's own to Redis, to look at what the service keeps there. A Redis that
 * does not answer fails the test that asked, naming the address.
 */
export async function connectTestRedis(url = testRedisUrl(), connectTimeoutMs = 2_000): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    return client;
  } catch (err) {
    client.disconnect();
    throw new Error(
      `this test needs a Redis at ${shownUrl(url)} (set TEST_REDIS_URL to use another): ${(err as Error).message}`,
      { cause: err },
    );
  }
}
