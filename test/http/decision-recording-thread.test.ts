import type { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { encodeTime } from 'ulid';
import { WriteThread } from '../../src/db/write-thread.js';
import { ThreadRecordWriter, type RecordWriter } from '../../src/decisions/record-writer.js';
import { DecisionLog, type DecisionRecord } from '../../src/decisions/records.js';
import { createLogger } from '../../src/logging/logger.js';
import { LogCapture } from '../helpers/app.js';
import { cypher } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';

let sequence = 0;
function decision(): DecisionRecord {
  sequence += 1;
  return {
    id: `dec_${encodeTime(Date.now(), 10)}${String(sequence).padStart(16, '0')}`,
    decision: 'DENY',
    allowed: false,
    principal_id: 'prn_01JD0000000000000000000000',
    action: 'read',
    resource: { type: 'db', identifier: `thread-${sequence}` },
    reasons: [{ code: 'NO_MATCHING_POLICY' }],
    granted_by: [],
    evaluated_at: new Date().toISOString(),
  };
}

/** The thread a writer runs, if it has started one. */
const threadOf = (writer: RecordWriter): Worker | undefined =>
  ((writer as ThreadRecordWriter).thread as unknown as { worker?: Worker }).worker;

describe('decision records written from a thread of their own', function () {
  this.timeout(60_000);
  const fixture = useApp();

  function logOn(writer: RecordWriter, batchBytes?: number) {
    const capture = new LogCapture();
    const log = new DecisionLog(fixture.app.runtime.db, {
      logger: createLogger('info', capture),
      retentionDays: 30,
      maxPending: 10_000,
      writer,
      ...(batchBytes !== undefined ? { batchBytes } : {}),
    });
    return { log, capture };
  }

  const storedIds = async (ids: string[]): Promise<number> => {
    const rows = await cypher(
      fixture.app.runtime.db,
      'MATCH (b:DecisionBatch) WHERE b.first_id <= $last AND b.last_id >= $first RETURN sum(b.count) AS n',
      { first: ids[0], last: ids[ids.length - 1] },
    );
    return Number(rows[0]!['n'] ?? 0);
  };

  it('writes each batch as one node, which a read that follows finds', async () => {
    const writer = ThreadRecordWriter.for(fixture.app.runtime.db);
    expect(writer).to.be.instanceOf(ThreadRecordWriter);
    const { log } = logOn(writer);
    try {
      const made = [decision(), decision(), decision()];
      for (const d of made) log.record(d);
      const before = fixture.app.runtime.db.committedBookmarks().version;
      await log.flush();
      expect(log.pending).to.equal(0);
      expect(threadOf(writer), 'a thread did the write').to.not.equal(undefined);
      expect(fixture.app.runtime.db.committedBookmarks().version, 'its bookmark adopted').to.be.greaterThan(
        before,
      );
      expect(await storedIds(made.map((d) => d.id))).to.equal(3);
      const [stored] = await cypher(
        fixture.app.runtime.db,
        'MATCH (b:DecisionBatch {first_id: $id}) RETURN valueType(b.count) AS count, valueType(b.allowed) AS allowed',
        { id: made[0]!.id },
      );
      expect(stored, 'counts stored as integers').to.deep.equal({
        count: 'INTEGER NOT NULL',
        allowed: 'INTEGER NOT NULL',
      });
      // No longer in memory: read back from the node the thread wrote.
      for (const d of made) expect(await log.get(d.id)).to.deep.equal(d);
    } finally {
      await log.close();
    }
    expect(threadOf(writer), 'closed with the log').to.equal(undefined);
  });

  it('loses nothing when its thread stops mid-write: the next flush starts another', async () => {
    const writer = ThreadRecordWriter.for(fixture.app.runtime.db);
    const { log } = logOn(writer, 600);
    try {
      const made = Array.from({ length: 8 }, () => decision());
      for (const d of made) log.record(d);
      const pending = log.pending;
      const flushing = log.flush();
      await threadOf(writer)!.terminate();
      await flushing;
      expect(log.pending, 'the batch under way went back to wait').to.be.greaterThan(0);
      expect(log.pending).to.be.at.most(pending);
      for (const d of made) expect(await log.get(d.id), 'every record still answered').to.deep.equal(d);
      await log.flush();
      expect(log.pending).to.equal(0);
      expect(await storedIds(made.map((d) => d.id)), 'each record written once').to.equal(made.length);
    } finally {
      await log.close();
    }
  });

  it('keeps its records while the database cannot be reached, never giving them up', async () => {
    const unreachable = new ThreadRecordWriter(
      new WriteThread(
        {
          connection: { uri: 'bolt://127.0.0.1:1', user: 'neo4j', password: '', database: 'neo4j' },
          driver: { connectionTimeoutMs: 500, txRetryMs: 0 },
          txTimeoutMs: 5_000,
          statement: {
            name: 'decisions/record',
            text: fixture.app.runtime.db.catalogue.get('decisions/record'),
          },
        },
        async () => undefined,
      ),
    );
    const { log, capture } = logOn(unreachable);
    try {
      const made = [decision(), decision()];
      for (const d of made) log.record(d);
      for (let i = 0; i < 6; i += 1) await log.flush();
      expect(log.pending).to.equal(2);
      expect(await log.get(made[1]!.id)).to.deep.equal(made[1]);
      expect(capture.text).to.match(/decision records wait/);
      expect(capture.text).to.not.match(/given up/);
    } finally {
      await unreachable.close();
    }
  });
});
