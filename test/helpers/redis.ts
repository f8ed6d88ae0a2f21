import { Redis } from 'ioredis';

/** The Redis the tests that need one use: TEST_REDIS_URL, else the local one. */
export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/**
 * A connection of the test's own to Redis, to look at what the service keeps there. A Redis that
 * does not answer fails the test that asked, naming the address: tests never skip for want of one.
 */
export async function connectTestRedis(url = TEST_REDIS_URL): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
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
      `this test needs a Redis at ${url} (set TEST_REDIS_URL to use another): ${(err as Error).message}`,
      { cause: err },
    );
  }
}
