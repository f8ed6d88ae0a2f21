/**
 * How fast access changes are stored, one layout against another in the same run, on the same
 * Neo4j (docs/access-history.md, Costs): a cause of BENCH_REACH changes (50,000, one per
 * principal, as a policy reaching them records), cut in parts of 500 as the recorder cuts them,
 * written as the recorder writes them (about 1,000 changes a statement, one statement at a time,
 * from a write thread: src/db/write-thread.ts).
 *
 * - `node-per-change`: the layout before parts, one `(:AccessChange)` node per change with its
 *   five range indexes, written by the record statement of that time (kept below);
 * - `part-nodes`: one `(:AccessChangePart)` node per part, its changes as columns, with its cause
 *   node (cypher/access-history/record.cypher), from the write thread as the recorder sends it,
 *   then keyed for the full-text index (key.cypher, cypher/schema/018) as the recorder keys them
 *   once what waits is stored, timed apart; `part-nodes-main`: the same from this thread's driver.
 *
 * Each round writes one cause in each layout, alternately, on a graph that grows round by round
 * (both layouts' indexes hold what the rounds before wrote). Reported: changes per second of
 * each round, their median, and the time to make the parts ready (JSON), per layout. Then, on
 * what is stored, reads through the repository of parts: one page and count of the list, a page
 * filtered by principal, and a principal's history as of an instant.
 *
 *   node --import tsx bench/access-history-store.ts
 *
 * Knobs: BENCH_REACH (50,000), BENCH_ROUNDS (5), BENCH_ROWS_PER_WRITE (1,000).
 */
import {
  accessHistoryRepository as repo,
  fromStored,
  readyPart,
  toStored,
} from '../src/access-history/repository.js';
import type {
  AccessChange,
  ReadyPart,
  StoredAccessChange,
  StoredPart,
} from '../src/access-history/repository.js';
import { Catalogue } from '../src/db/catalogue.js';
import { Database } from '../src/db/database.js';
import { createDriver } from '../src/db/driver.js';
import { loadMigrations } from '../src/db/migrations.js';
import { WriteThread } from '../src/db/write-thread.js';
import type { Neo4jEndpoint } from '../src/dev/local-neo4j.js';
import { newId } from '../src/ids.js';
import { createLogger } from '../src/logging/logger.js';
import { createMetrics } from '../src/metrics.js';
import { benchMain, benchNeo4j, cypher, env, fmt, latencySummary, log, median } from './harness.js';

const REACH = env('BENCH_REACH', 50_000);
const ROUNDS = Math.max(1, env('BENCH_ROUNDS', 5));
const ROWS_PER_WRITE = env('BENCH_ROWS_PER_WRITE', 1_000);
const PER_PART = 500;

/** The record statement of one node per change, as it was before parts. */
const NODE_PER_CHANGE_RECORD = `
UNWIND $parts AS part
WITH part
WHERE NOT EXISTS {
  MATCH (other:AccessChange {cause_event_id: part.cause_id})
  WHERE other.recorder <> $recorder
}
CALL (part) {
  UNWIND part.rows AS r
  CREATE (c:AccessChange)
  SET c = r {.*, at: datetime(r.at), recorder: $recorder}
}
CALL (part) {
  MATCH (w:Webhook {status: 'active'})
  WHERE any(p IN w.events WHERE p IN ['*', 'access.*', 'access.changed'])
  WITH collect(w) AS hooks
  WHERE size(hooks) > 0 AND part.body IS NOT NULL
  CREATE (:AccessChangeMessage {id: part.id, occurred_at: datetime(part.at), body: part.body})
  WITH hooks
  UNWIND hooks AS w
  CREATE (:WebhookMessage {
    id: part.id + '/' + w.id, webhook_id: w.id, event_id: part.id, event_type: 'access.changed',
    occurred_at: datetime(part.at), attempt: 0, next_attempt_at: datetime(part.at)
  })
}
RETURN count(part) AS parts`;

/** Its indexes (cypher/schema/017), which the migration to parts drops. */
const NODE_PER_CHANGE_INDEXES = [
  'CREATE INDEX access_change_id IF NOT EXISTS FOR (c:AccessChange) ON (c.id)',
  'CREATE INDEX access_change_principal IF NOT EXISTS FOR (c:AccessChange) ON (c.principal_id)',
  'CREATE INDEX access_change_resource IF NOT EXISTS FOR (c:AccessChange) ON (c.resource_type, c.identifier)',
  'CREATE INDEX access_change_cause IF NOT EXISTS FOR (c:AccessChange) ON (c.cause_event_id)',
  'CREATE INDEX access_change_at IF NOT EXISTS FOR (c:AccessChange) ON (c.at)',
];

const encoder = new TextEncoder();

interface Layout {
  name: string;
  ready: (part: StoredPart) => ReadyPart;
  /** Stores the parts of one statement. */
  write: (parts: readonly ReadyPart[]) => Promise<unknown>;
  stored: string;
  /** What follows the store, apart from it: the parts made findable by principal and resource. */
  key?: () => Promise<unknown>;
}

/** The service's database on the bench's Neo4j, as the runtime opens it (without migrating). */
async function openDatabase(endpoint: Neo4jEndpoint): Promise<Database> {
  const connection = { uri: endpoint.uri, user: endpoint.user, password: endpoint.password };
  return new Database(createDriver(endpoint.uri, endpoint.user, endpoint.password), await Catalogue.load(), {
    database: 'neo4j',
    maxPoolSize: 10,
    logger: createLogger('warn'),
    metrics: createMetrics(),
    txTimeoutMs: 600_000,
    backgroundTxTimeoutMs: 600_000,
    connection,
  });
}

/** One cause reaching `REACH` principals, as the recorder cuts it: its parts, each with its message. */
function causeParts(round: number, principals: readonly string[]): StoredPart[] {
  const cause = {
    event_id: newId('event'),
    event_type: round % 2 === 0 ? 'policy.created' : 'policy.deleted',
    actor: { type: 'client', id: 'cli_01JBENCHBENCHBENCHBENCHBEN' },
  };
  const at = new Date().toISOString();
  const policy = {
    policy_id: 'pol_01JBENCHBENCHBENCHBENCHBEN',
    policy_name: `bench-reach-${round}`,
    via: 'match' as const,
  };
  const gained = round % 2 === 0;
  const changes: AccessChange[] = principals.map((id, i) => ({
    id: newId('access_change'),
    at,
    principal: { id, name: `principal ${i}`, type: 'HUMAN' },
    resource: { type: 'bench', identifier: `r${round}` },
    actions_gained: gained ? ['read'] : [],
    actions_lost: gained ? [] : ['read'],
    via: [policy],
    cause,
  }));
  const rows: StoredAccessChange[] = changes.map((c) =>
    toStored(c, gained ? null : { actions: ['read'], via: [policy], conditional: false }),
  );
  const parts: StoredPart[] = [];
  const count = Math.ceil(changes.length / PER_PART);
  for (let n = 0; n < count; n += 1) {
    parts.push({
      id: changes[n * PER_PART]!.id,
      cause_id: cause.event_id,
      at,
      rows: rows.slice(n * PER_PART, (n + 1) * PER_PART),
      message: { part: n + 1, parts: count },
    });
  }
  return parts;
}

/** Whole parts up to about `ROWS_PER_WRITE` changes a statement, as the recorder takes them. */
function statements(parts: readonly ReadyPart[]): ReadyPart[][] {
  const out: ReadyPart[][] = [];
  let current: ReadyPart[] = [];
  let rows = 0;
  for (const part of parts) {
    if (current.length > 0 && rows + part.rows > ROWS_PER_WRITE) {
      out.push(current);
      current = [];
      rows = 0;
    }
    current.push(part);
    rows += part.rows;
  }
  if (current.length > 0) out.push(current);
  return out;
}

function partsArray(parts: readonly ReadyPart[]): Uint8Array {
  return encoder.encode(`[${parts.map((p) => new TextDecoder().decode(p.json)).join(',')}]`);
}

async function main(): Promise<void> {
  const endpoint = await benchNeo4j();
  const db = await openDatabase(endpoint);
  // The old layout's statement on a write thread of its own; the new one's as the recorder has it.
  const old = new WriteThread(
    {
      connection: { uri: endpoint.uri, user: endpoint.user, password: endpoint.password, database: 'neo4j' },
      driver: {},
      txTimeoutMs: 600_000,
      statement: { name: 'bench/node-per-change', text: NODE_PER_CHANGE_RECORD },
    },
    async () => undefined,
  );
  const current = repo.recordThread(db)!;
  const LAYOUTS: Layout[] = [
    {
      name: 'node-per-change',
      // The part as it was sent then: the part itself, with its message's data.
      ready: (part) => ({
        id: part.id,
        cause_id: part.cause_id,
        rows: part.rows.length,
        json: encoder.encode(
          JSON.stringify({
            ...part,
            body: JSON.stringify({
              cause: fromStored(part.rows[0]!).cause,
              changes: part.rows.map(fromStored),
              ...part.message,
            }),
          }),
        ),
      }),
      write: (parts) => old.write({ recorder: 'bench' }, {}, { parts: partsArray(parts) }),
      stored: 'MATCH (c:AccessChange {cause_event_id: $cause}) RETURN count(c) AS n',
    },
    {
      name: 'part-nodes',
      ready: readyPart,
      write: (parts) => repo.recordOn(current, parts, 'bench'),
      key: () => repo.key(db, 1_000_000),
      stored: 'MATCH (p:AccessChangePart {cause_event_id: $cause}) RETURN sum(p.count) AS n',
    },
    {
      // The same statement sent by this thread's driver (repo.record): the write thread runs at a
      // lower priority than Neo4j, which it shares the cores with.
      name: 'part-nodes-main',
      ready: readyPart,
      write: (parts) => repo.record(db, parts, 'bench'),
      key: () => repo.key(db, 1_000_000),
      stored: 'MATCH (p:AccessChangePart {cause_event_id: $cause}) RETURN sum(p.count) AS n',
    },
  ];
  try {
    // Both layouts' schemas: the migrations (which drop the old indexes), then the old indexes.
    for (const m of await loadMigrations()) for (const s of m.statements) await cypher(db, s);
    for (const s of NODE_PER_CHANGE_INDEXES) await cypher(db, s);
    await cypher(db, 'CALL db.awaitIndexes(300)');
    const principals = Array.from({ length: REACH }, () => newId('principal'));
    const rates = new Map<string, number[]>(LAYOUTS.map((l) => [l.name, []]));
    const readyMs = new Map<string, number[]>(LAYOUTS.map((l) => [l.name, []]));
    const keyMs = new Map<string, number[]>(LAYOUTS.map((l) => [l.name, []]));
    // A first round of each, not counted: the JIT, the thread's start and the store's first pages.
    for (let round = 0; round <= ROUNDS; round += 1) {
      for (const layout of round % 2 === 0 ? LAYOUTS : [...LAYOUTS].reverse()) {
        const parts = causeParts(round, principals);
        const t0 = performance.now();
        const ready = parts.map(layout.ready);
        const t1 = performance.now();
        for (const some of statements(ready)) await layout.write(some);
        const seconds = (performance.now() - t1) / 1000;
        const [row] = await cypher(db, layout.stored, { cause: parts[0]!.cause_id });
        const stored = row!['n'];
        if (Number(stored) !== REACH)
          throw new Error(`${layout.name}: ${String(stored)} changes stored, not ${REACH}`);
        const t2 = performance.now();
        await layout.key?.();
        const keyedMs = performance.now() - t2;
        const label = round === 0 ? 'warm-up' : `round ${round}`;
        log(
          `${label}: ${layout.name.padEnd(16)} ${fmt(REACH / seconds, 0).padStart(8)} changes/s (${fmt(seconds)} s; parts made ready in ${fmt(t1 - t0)} ms${layout.key ? `; then keyed in ${fmt(keyedMs)} ms` : ''})`,
        );
        if (round > 0) {
          rates.get(layout.name)!.push(REACH / seconds);
          readyMs.get(layout.name)!.push(t1 - t0);
          if (layout.key) keyMs.get(layout.name)!.push(keyedMs);
        }
      }
    }
    await old.close();
    await current.close();
    log('');
    for (const layout of LAYOUTS) {
      log(
        `${layout.name.padEnd(16)} median ${fmt(median(rates.get(layout.name)!), 0).padStart(8)} changes/s over ${ROUNDS} rounds of ${REACH}; ready: median ${fmt(median(readyMs.get(layout.name)!))} ms${layout.key ? `; keyed after: median ${fmt(median(keyMs.get(layout.name)!))} ms` : ''}`,
      );
    }

    // Reads of what the part layout holds (ROUNDS + 1 causes of REACH changes).
    const timed = async (name: string, n: number, call: (i: number) => Promise<unknown>): Promise<void> => {
      const samples: number[] = [];
      for (let i = 0; i < n; i += 1) {
        const t0 = performance.now();
        await call(i);
        samples.push(performance.now() - t0);
      }
      const s = latencySummary(samples);
      log(`${name.padEnd(60)} p50 ${fmt(s.p50)} / p99 ${fmt(s.p99)} / max ${fmt(s.max)} ms`);
    };
    log('');
    log(`reads over ${(ROUNDS + 1) * REACH} changes in parts:`);
    await timed('list, page 1 of 50, with its total', 20, () => repo.list(db, {}, { skip: 0, limit: 50 }));
    await timed('list by principal (one change per cause), with its total', 50, (i) =>
      repo.list(db, { principalId: principals[(i * 7919) % REACH]! }, { skip: 0, limit: 50 }),
    );
    const now = new Date().toISOString();
    await timed('a principal as of now (its changes in every cause)', 50, (i) =>
      repo.principalAsOf(db, principals[(i * 104_729) % REACH]!, now),
    );
  } finally {
    await db.close();
    await endpoint.stop();
  }
}

benchMain(main);
