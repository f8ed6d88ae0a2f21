import { expect } from 'chai';
import { freePort } from '../../src/dev/local-neo4j.js';
import {
  LOCAL_REDIS_URL,
  NO_REDIS,
  RedisUnavailableError,
  redisProbes,
  resolveTestRedis,
  testRedisUrl,
  type RedisProbes,
} from '../helpers/redis.js';

/**
 * How a test run finds its Redis (test/helpers/redis.ts): TEST_REDIS_URL, else the local one,
 * else a container when Docker answers, else a failure naming the three. The probes are replaced
 * where the machine's own Redis or Docker would decide the outcome.
 */

/** Probes that find what they are told, and say what they were asked. */
function probes(found: { answering?: string[]; docker?: boolean }): RedisProbes & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    answers: async (url) => {
      asked.push(`answers ${url}`);
      return (found.answering ?? []).includes(url);
    },
    dockerAnswers: async () => {
      asked.push('docker');
      return found.docker ?? false;
    },
    startContainer: async () => {
      asked.push('container');
      return { url: 'redis://127.0.0.1:32768', stop: async () => undefined };
    },
  };
}

async function failure(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('the test run’s Redis', () => {
  it('fails, with no Redis anywhere, naming the three ways to provide one', async () => {
    // A port where nothing listens, probed for real, and no Docker.
    const unused = `redis://127.0.0.1:${await freePort()}`;
    const err = await failure(
      resolveTestRedis(
        { configured: undefined, localUrl: unused, docker: true },
        { ...redisProbes, dockerAnswers: async () => false },
      ),
    );
    expect(err).to.be.instanceOf(RedisUnavailableError);
    expect(err.message).to.equal(NO_REDIS);
    expect(err.message).to.contain('TEST_REDIS_URL');
    expect(err.message).to.contain(LOCAL_REDIS_URL);
    expect(err.message).to.contain('Docker');
  });

  it('takes TEST_REDIS_URL first, and looks no further', async () => {
    const found = probes({ answering: ['redis://redis.test:6379', LOCAL_REDIS_URL], docker: true });
    const redis = await resolveTestRedis({ configured: 'redis://redis.test:6379', docker: true }, found);
    expect(redis).to.include({ url: 'redis://redis.test:6379', source: 'TEST_REDIS_URL' });
    expect(found.asked).to.deep.equal(['answers redis://redis.test:6379']);
  });

  it('fails when TEST_REDIS_URL does not answer, naming it, rather than use another', async () => {
    const found = probes({ answering: [LOCAL_REDIS_URL], docker: true });
    const err = await failure(
      resolveTestRedis({ configured: 'redis://gone.test:6379', docker: true }, found),
    );
    expect(err.message).to.contain('TEST_REDIS_URL=redis://gone.test:6379 does not answer');
    expect(found.asked).to.deep.equal(['answers redis://gone.test:6379']);
  });

  it('takes the local Redis next, before any container', async () => {
    const found = probes({ answering: [LOCAL_REDIS_URL], docker: true });
    const redis = await resolveTestRedis({ configured: undefined, docker: true }, found);
    expect(redis).to.include({ url: LOCAL_REDIS_URL, source: 'local' });
    expect(found.asked).to.deep.equal([`answers ${LOCAL_REDIS_URL}`]);
  });

  it('starts a container last, where Docker answers', async () => {
    const found = probes({ docker: true });
    const redis = await resolveTestRedis({ configured: undefined, docker: true }, found);
    expect(redis).to.include({ url: 'redis://127.0.0.1:32768', source: 'docker' });
    expect(found.asked).to.deep.equal([`answers ${LOCAL_REDIS_URL}`, 'docker', 'container']);
  });

  it('starts no container for a run that needs no Redis', async () => {
    const found = probes({ docker: true });
    const err = await failure(resolveTestRedis({ configured: undefined, docker: false }, found));
    expect(err.message).to.equal(NO_REDIS);
    expect(found.asked).to.deep.equal([`answers ${LOCAL_REDIS_URL}`]);
  });

  it('fails a test that asks for it in a run without one, with the same message', () => {
    const kept = process.env['TEST_REDIS_URL'];
    delete process.env['TEST_REDIS_URL'];
    try {
      expect(() => testRedisUrl()).to.throw(RedisUnavailableError, NO_REDIS);
    } finally {
      if (kept !== undefined) process.env['TEST_REDIS_URL'] = kept;
    }
  });
});
