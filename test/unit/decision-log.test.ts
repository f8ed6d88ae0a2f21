import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { encodeTime } from 'ulid';
import type { Database } from '../../src/db/database.js';
import { DecisionLog, MAX_BATCH_SPAN_MS, type DecisionRecord } from '../../src/decisions/records.js';
import { unavailable } from '../../src/errors/errors.js';
import { createLogger } from '../../src/logging/logger.js';
import { LogCapture } from '../helpers/app.js';

interface Written {
  first_id: string;
  last_id: string;
  count: number;
  allowed: number;
  lines: string[];
  body: string;
}

/**
 * A stand-in for Neo4j that keeps written batches in memory and answers the decision log's two
 * statements (write a batch, find the batches covering an id); `refuse` makes a write fail.
 */
function fakeDatabase(refuse: (batch: Written) => Error | undefined = () => undefined) {
  const batches: Written[] = [];
  const db = {
    write: async (_unit: string, work: (tx: unknown) => Promise<unknown>) =>
      work({
        run: async (_query: unknown, params: Record<string, unknown>) => {
          const lines = gunzipSync(Buffer.from(params['body'] as string, 'base64'))
            .toString('utf8')
            .split('\n')
            .filter(Boolean);
          const batch = { ...(params as unknown as Written), lines };
          const error = refuse(batch);
          if (error) throw error;
          batches.push(batch);
          return [];
        },
      }),
    run: async (_query: unknown, params: { id: string; from: string }) =>
      batches
        .filter((b) => b.first_id >= params.from && b.first_id <= params.id && b.last_id >= params.id)
        .map((b) => ({ body: b.body, record: null })),
  };
  return { db: db as unknown as Database, batches };
}

let sequence = 0;
/** A decision record made at `at` (epoch ms), with an id of that time. */
function decision(at = Date.now(), extra: Record<string, unknown> = {}): DecisionRecord {
  sequence += 1;
  return {
    id: `dec_${encodeTime(at, 10)}${String(sequence).padStart(16, '0')}`,
    decision: 'ALLOW',
    allowed: true,
    principal_id: 'prn_01JD0000000000000000000000',
    action: 'read',
    resource: { type: 'db', identifier: `r-${sequence}` },
    reasons: [{ code: 'NO_MATCHING_POLICY' }],
    granted_by: [],
    evaluated_at: new Date(at).toISOString(),
    ...extra,
  };
}

/** Records `d` as the decision service does: the answer, and its context as a request detail. */
function record(log: DecisionLog, d: DecisionRecord): void {
  const { context, ...answer } = d;
  log.record(answer, context === undefined ? undefined : { context });
}

function decisionLog(db: Database, options: { maxPending?: number; batchBytes?: number } = {}) {
  const capture = new LogCapture();
  const log = new DecisionLog(db, {
    logger: createLogger('info', capture),
    retentionDays: 30,
    maxPending: options.maxPending ?? 100_000,
    ...(options.batchBytes !== undefined ? { batchBytes: options.batchBytes } : {}),
  });
  return { log, capture };
}

describe('decision log', () => {
  it('answers a record from memory at once and from the store once written, unchanged', async () => {
    const { db, batches } = fakeDatabase();
    const { log } = decisionLog(db);
    const made = [decision(), decision(), decision(Date.now(), { context: { ip: '10.0.0.1' } })];
    for (const d of made) record(log, d);
    expect(log.pending).to.equal(3);
    expect(await log.get(made[2]!.id)).to.deep.equal(made[2]);
    await log.flush();
    expect(log.pending).to.equal(0);
    expect(batches).to.have.length(1);
    expect(batches[0]).to.include({ first_id: made[0]!.id, last_id: made[2]!.id, count: 3, allowed: 3 });
    for (const d of made) expect(await log.get(d.id)).to.deep.equal(d);
    expect(await log.get(decision().id)).to.equal(undefined);
  });

  it('writes a record made while a flush is under way when flush is called after it', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first = true;
    const { db, batches } = fakeDatabase();
    const slow = {
      ...db,
      // The first write waits until released: a periodic flush caught in the middle.
      write: async (unit: string, work: (tx: unknown) => Promise<unknown>) => {
        if (first) {
          first = false;
          await held;
        }
        return db.write(unit, work);
      },
    } as unknown as Database;
    const { log } = decisionLog(slow);
    const early = decision();
    record(log, early);
    const running = log.flush();
    const late = decision();
    record(log, late);
    const after = log.flush();
    const alsoAfter = log.flush();
    release();
    await Promise.all([running, after, alsoAfter]);
    expect(log.pending).to.equal(0);
    expect(batches.map((b) => b.lines.length)).to.deep.equal([1, 1]);
    expect(await log.get(late.id)).to.deep.equal(late);
  });

  it('starts another batch when the open one is full or has been open too long', async () => {
    const { db, batches } = fakeDatabase();
    const { log } = decisionLog(db, { batchBytes: 1_000 });
    const realNow = Date.now;
    let skew = 0;
    Date.now = () => realNow() + skew;
    try {
      // About 300 bytes each: three fill a batch of 1,000 bytes.
      const full = Array.from({ length: 4 }, () => decision());
      for (const d of full) record(log, d);
      skew = MAX_BATCH_SPAN_MS / 2 + 1;
      const later = decision(Date.now());
      const huge = decision(Date.now(), { context: { padding: 'x'.repeat(5_000) } });
      for (const d of [later, huge]) record(log, d);
      await log.flush();
      expect(batches.map((b) => b.count)).to.deep.equal([3, 1, 1, 1]);
      expect(batches[1]!.first_id, 'the fourth record, which did not fit the first batch').to.equal(
        full[3]!.id,
      );
      expect(batches[2]!.first_id, 'recorded after the second batch had been open too long').to.equal(
        later.id,
      );
      for (const d of [...full, later, huge]) expect(await log.get(d.id)).to.deep.equal(d);
    } finally {
      Date.now = realNow;
    }
  });

  it('keeps records while the database is away and writes them, in order, when it returns', async () => {
    let away = true;
    const { db, batches } = fakeDatabase(() => (away ? unavailable('down', 1) : undefined));
    const { log } = decisionLog(db, { batchBytes: 700 });
    const made = Array.from({ length: 6 }, () => decision());
    for (const d of made) record(log, d);
    for (let i = 0; i < 10; i += 1) await log.flush();
    expect(log.pending).to.equal(6);
    expect(batches).to.have.length(0);
    expect(await log.get(made[0]!.id), 'still served from memory').to.deep.equal(made[0]);
    away = false;
    await log.flush();
    expect(log.pending).to.equal(0);
    expect(batches.flatMap((b) => b.lines.map((l) => (JSON.parse(l) as DecisionRecord).id))).to.deep.equal(
      made.map((d) => d.id),
    );
  });

  it('gives up a batch the database keeps refusing, alone, and writes the others', async () => {
    const poisoned = decision();
    const { db, batches } = fakeDatabase((b) =>
      b.lines.some((l) => l.includes(poisoned.id)) ? new Error('refused') : undefined,
    );
    const { log, capture } = decisionLog(db, { batchBytes: 300 });
    const before = decision();
    const after = decision();
    for (const d of [before, poisoned, after]) record(log, d);
    await log.flush();
    expect(
      batches.map((b) => b.first_id),
      'the batch before it is written',
    ).to.deep.equal([before.id]);
    for (let i = 0; i < 4; i += 1) await log.flush();
    expect(batches.map((b) => b.first_id)).to.deep.equal([before.id, after.id]);
    expect(log.pending).to.equal(0);
    expect(await log.get(poisoned.id)).to.equal(undefined);
    const error = capture.entries().find((e) => e['level'] === 'error');
    expect(error?.['msg']).to.match(/given up/);
    expect(error).to.include({ first_id: poisoned.id, count: 1 });
  });

  it('drops the oldest records beyond its bound, never the newest', async () => {
    const { db } = fakeDatabase(() => unavailable('down', 1));
    const { log, capture } = decisionLog(db, { maxPending: 4, batchBytes: 300 });
    const made = Array.from({ length: 7 }, () => decision());
    for (const d of made) record(log, d);
    expect(log.pending).to.equal(4);
    expect(await log.get(made[0]!.id)).to.equal(undefined);
    expect(await log.get(made[6]!.id)).to.deep.equal(made[6]);
    expect(capture.text).to.match(/dropped/);
  });

  it('records a decision whose request details cannot be serialised without them', async () => {
    const { db } = fakeDatabase();
    const { log, capture } = decisionLog(db);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const d = decision(Date.now(), { context: cyclic });
    record(log, d);
    await log.flush();
    const got = await log.get(d.id);
    expect(got).to.include({ id: d.id, decision: 'ALLOW' });
    expect(got).to.not.have.property('context');
    expect(capture.text).to.match(/without its request details/);
  });
});
