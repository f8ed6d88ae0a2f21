/**
 * What recording a decision costs, by store: the CPU the service process spends (serialising,
 * the driver's encoding, the socket), the CPU the store spends (the Neo4j JVM or Redis, read
 * from /proc), and the longest stretch the calling thread is held by one batch, for records of
 * the shape the decision endpoint writes, written in batches as a flush would write them (the
 * writer's event-loop delay shows how long one batch holds the thread that writes it).
 * CPU time is what a decision pays for on a machine whose cores the service and its store share,
 * and it is far less sensitive to other load than elapsed time.
 *
 *   node --import tsx bench/decision-store.ts
 *
 * Knobs: BENCH_RECORDS (50000 per store and round), BENCH_BATCH (2500), BENCH_ROUNDS (3),
 * BENCH_WARMUP_S (120: every store writes this long before the rounds, until the JIT settles),
 * REDIS_URL (redis://127.0.0.1:6379; the Redis stores are skipped without one).
 */
import { execFileSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import neo4j, { type Driver } from 'neo4j-driver';
import { newId } from '../src/ids.js';
import { benchNeo4j, cpuSeconds, env, fmt, log, median, ResultTable } from './harness.js';

const RECORDS = env('BENCH_RECORDS', 50_000);
const BATCH = env('BENCH_BATCH', 2_500);
const ROUNDS = Math.max(1, env('BENCH_ROUNDS', 3));
const WARMUP_S = env('BENCH_WARMUP_S', 120);
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

function record(i: number): Record<string, unknown> {
  const allowed = i % 3 !== 0;
  return {
    id: newId('decision'),
    decision: allowed ? 'ALLOW' : 'DENY',
    allowed,
    principal_id: `prn_01JBENCH${String(i % 2000).padStart(18, '0')}`,
    action: ['read', 'write', 'query', 'deploy'][i % 4],
    resource: { type: 'database', identifier: `payments-prod-${i % 300}` },
    reasons: allowed
      ? [
          {
            code: 'POLICY_ALLOW',
            policy_id: `pol_01JBENCH${String(i % 300).padStart(18, '0')}`,
            policy_version: 1,
          },
        ]
      : [{ code: 'NO_MATCHING_POLICY' }],
    granted_by: allowed ? [`pol_01JBENCH${String(i % 300).padStart(18, '0')}`] : [],
    evaluated_at: new Date().toISOString(),
    context: { ip: `10.${i % 250}.${(i >> 8) % 250}.${i % 7}` },
  };
}

interface Store {
  name: string;
  prepare(): Promise<void>;
  /** Writes one batch; resolves when it is durable in the store. */
  write(batch: Record<string, unknown>[]): Promise<void>;
  /** Reads one record back by id (checks the store can answer GET by id). */
  get(id: string): Promise<string | undefined>;
  storePid: number;
}

function neo4jStores(driver: Driver, pid: number): Store[] {
  const write = async (text: string, params: Record<string, unknown>): Promise<void> => {
    await driver.executeQuery(text, params, { routing: 'WRITE' });
  };
  const one = async (text: string, id: string): Promise<string | undefined> => {
    const { records } = await driver.executeQuery(text, { id });
    return records[0]?.get('record') as string | undefined;
  };
  return [
    {
      name: 'Neo4j: a node per decision, rows as maps (as recorded before)',
      storePid: pid,
      prepare: () =>
        write(
          'CREATE CONSTRAINT bench_decision_id IF NOT EXISTS FOR (d:BenchDecision) REQUIRE d.id IS UNIQUE',
          {},
        ),
      write: (batch) =>
        write(
          `UNWIND $rows AS row
           CREATE (:BenchDecision {id: row.id, principal_id: row.principal_id, decision: row.decision,
             evaluated_at: datetime(row.evaluated_at), record: row.record})`,
          {
            rows: batch.map((d) => ({
              id: d['id'],
              principal_id: d['principal_id'],
              decision: d['decision'],
              evaluated_at: d['evaluated_at'],
              record: JSON.stringify(d),
            })),
          },
        ),
      get: (id) => one('MATCH (d:BenchDecision {id: $id}) RETURN d.record AS record', id),
    },
    {
      name: 'Neo4j: a node per decision, rows as parallel lists',
      storePid: pid,
      prepare: () =>
        write(
          'CREATE CONSTRAINT bench_decision2_id IF NOT EXISTS FOR (d:BenchDecision2) REQUIRE d.id IS UNIQUE',
          {},
        ),
      write: (batch) =>
        write(
          `UNWIND range(0, size($ids) - 1) AS i
           CREATE (:BenchDecision2 {id: $ids[i], principal_id: $principals[i], decision: $decisions[i],
             evaluated_at: datetime($times[i]), record: $records[i]})`,
          {
            ids: batch.map((d) => d['id']),
            principals: batch.map((d) => d['principal_id']),
            decisions: batch.map((d) => d['decision']),
            times: batch.map((d) => d['evaluated_at']),
            records: batch.map((d) => JSON.stringify(d)),
          },
        ),
      get: (id) => one('MATCH (d:BenchDecision2 {id: $id}) RETURN d.record AS record', id),
    },
    {
      name: 'Neo4j: a node per batch, records as a list of strings',
      storePid: pid,
      prepare: () =>
        write('CREATE INDEX bench_chunk_first IF NOT EXISTS FOR (c:BenchChunk) ON (c.first_id)', {}),
      write: (batch) => {
        const ids = batch.map((d) => d['id'] as string);
        return write(
          'CREATE (:BenchChunk {first_id: $first, last_id: $last, ids: $ids, records: $records})',
          { first: ids[0], last: ids.at(-1), ids, records: batch.map((d) => JSON.stringify(d)) },
        );
      },
      get: (id) =>
        one(
          `MATCH (c:BenchChunk) WHERE c.first_id <= $id AND c.last_id >= $id
           WITH c, [i IN range(0, size(c.ids) - 1) WHERE c.ids[i] = $id] AS at
           WHERE size(at) > 0 RETURN c.records[at[0]] AS record LIMIT 1`,
          id,
        ),
    },
    {
      name: 'Neo4j: a node per batch, records gzipped, base64 (as recorded now)',
      storePid: pid,
      prepare: () =>
        write('CREATE INDEX bench_zchunk_first IF NOT EXISTS FOR (c:BenchZChunk) ON (c.first_id)', {}),
      write: (batch) => {
        const ids = batch.map((d) => d['id'] as string);
        // In base64: the driver packs a byte array one byte at a time (milliseconds per batch).
        const body = gzipSync(batch.map((d) => JSON.stringify(d)).join('\n'), { level: 1 }).toString(
          'base64',
        );
        return write('CREATE (:BenchZChunk {first_id: $first, last_id: $last, count: $count, body: $body})', {
          first: ids[0],
          last: ids.at(-1),
          count: ids.length,
          body,
        });
      },
      get: async (id) => {
        const { records } = await driver.executeQuery(
          `MATCH (c:BenchZChunk) WHERE c.first_id <= $id AND c.last_id >= $id
           RETURN c.body AS body LIMIT 1`,
          { id },
        );
        const body = records[0]?.get('body') as string | undefined;
        if (!body) return undefined;
        return gunzipSync(Buffer.from(body, 'base64'))
          .toString('utf8')
          .split('\n')
          .find((line) => line.includes(`"${id}"`));
      },
    },
  ];
}

function redisStores(redis: Redis, pid: number): Store[] {
  return [
    {
      name: 'Redis: a stream entry per decision, trimmed by time',
      storePid: pid,
      prepare: async () => {
        await redis.del('bench:decisions', 'bench:decision-ids');
      },
      write: async (batch) => {
        const pipeline = redis.pipeline();
        for (const d of batch)
          pipeline.xadd('bench:decisions', '*', 'id', d['id'] as string, 'r', JSON.stringify(d));
        await pipeline.exec();
      },
      get: async () => undefined,
    },
    {
      name: 'Redis: a key per decision with a TTL',
      storePid: pid,
      prepare: async () => {},
      write: async (batch) => {
        const pipeline = redis.pipeline();
        for (const d of batch) pipeline.set(`bench:d:${d['id'] as string}`, JSON.stringify(d), 'EX', 3600);
        await pipeline.exec();
      },
      get: (id) => redis.get(`bench:d:${id}`).then((v) => v ?? undefined),
    },
  ];
}

interface Reading {
  clientUsPerRecord: number;
  storeUsPerRecord: number;
  heldMsMax: number;
  seconds: number;
}

async function measure(store: Store, count: number): Promise<Reading> {
  const records = Array.from({ length: count }, (_, i) => record(i));
  const client0 = ownCpu();
  const store0 = cpuSeconds(store.storePid);
  const t0 = performance.now();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  for (let i = 0; i < records.length; i += BATCH) await store.write(records.slice(i, i + BATCH));
  delay.disable();
  const heldMsMax = delay.max / 1e6;
  const seconds = (performance.now() - t0) / 1000;
  // The store may still be finishing work it acknowledged (a flush after commit): let it settle.
  await new Promise((r) => setTimeout(r, 300));
  const got = await store.get(records[Math.floor(count / 2)]!['id'] as string);
  if (store.name.includes('TTL') || store.name.startsWith('Neo4j')) {
    if (!got?.includes(records[Math.floor(count / 2)]!['id'] as string))
      throw new Error(`${store.name}: a written record cannot be read back`);
  }
  return {
    clientUsPerRecord: ((ownCpu() - client0) * 1e6) / count,
    storeUsPerRecord: ((cpuSeconds(store.storePid) - store0) * 1e6) / count,
    heldMsMax,
    seconds,
  };
}

function pidListening(port: number): number {
  const out = execFileSync('ss', ['-Htlnp', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`no process found listening on ${port}`);
  return Number(pid);
}

async function main(): Promise<void> {
  const endpoint = await benchNeo4j();
  const driver = neo4j.driver(endpoint.uri, undefined, { disableLosslessIntegers: true });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const stores = neo4jStores(driver, pidListening(Number(new URL(endpoint.uri).port)));
  try {
    await redis.connect();
    stores.push(...redisStores(redis, pidListening(Number(new URL(REDIS_URL).port || 6379))));
  } catch (err) {
    log(`Redis stores skipped: ${err instanceof Error ? err.message : String(err)}`);
  }
  const table = new ResultTable();
  try {
    const results = new Map<string, Reading[]>();
    for (const store of stores) await store.prepare();
    // Neo4j's JIT takes minutes to settle on a small machine (a write transaction's CPU falls
    // tenfold over the first minute or two): every store writes until the warm-up time is up.
    const warmUntil = Date.now() + WARMUP_S * 1000;
    log(`warming up for ${WARMUP_S} s`);
    while (Date.now() < warmUntil) for (const store of stores) await measure(store, Math.min(5_000, RECORDS));
    for (let round = 0; round < ROUNDS; round += 1) {
      // Each round visits the stores in another order, so that none always runs first or last.
      const order = round % 2 === 0 ? stores : [...stores].reverse();
      for (const store of order) {
        const reading = await measure(store, RECORDS);
        results.set(store.name, [...(results.get(store.name) ?? []), reading]);
        log(
          `round ${round + 1}: ${store.name}: client ${fmt(reading.clientUsPerRecord)} µs, store ${fmt(
            reading.storeUsPerRecord,
          )} µs per record; held ${fmt(reading.heldMsMax)} ms at most; ${fmt(reading.seconds)} s`,
        );
      }
    }
    for (const [name, readings] of results) {
      const client = readings.map((r) => r.clientUsPerRecord);
      const storeCpu = readings.map((r) => r.storeUsPerRecord);
      const both = readings.map((r) => r.clientUsPerRecord + r.storeUsPerRecord);
      table.add({
        scenario: `${name}: CPU per record, service + store`,
        unit: 'µs',
        median: median(both),
        rounds: both,
      });
      table.add({ scenario: `  service process`, unit: 'µs', median: median(client), rounds: client });
      table.add({ scenario: `  store process`, unit: 'µs', median: median(storeCpu), rounds: storeCpu });
      const held = readings.map((r) => r.heldMsMax);
      table.add({
        scenario: `  longest event-loop delay, batches of ${BATCH}`,
        unit: 'ms',
        median: median(held),
        rounds: held,
      });
    }
    table.print(80);
  } finally {
    redis.disconnect();
    await driver.close();
    await endpoint.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
