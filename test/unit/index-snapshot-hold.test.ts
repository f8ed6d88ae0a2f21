import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Database } from '../../src/db/database.js';
import type { ChangeFeed } from '../../src/events/feed.js';
import { createLogger } from '../../src/logging/logger.js';
import { PolicyIndex } from '../../src/decisions/policy-index.js';
import { IndexSync } from '../../src/decisions/sync.js';

/**
 * A snapshot of the decision index is where a start catches up from, and what the access
 * history computes again from; one written while the history holds changes it has not stored
 * would lose them at a crash, so it waits (a few rounds at most).
 */
describe('decision index snapshots while access changes wait to be stored', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pas-hold-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('holds the snapshot back while the observer has unstored changes, five rounds at most', async () => {
    const db = { first: async () => ({ id: 'db-1' }) } as unknown as Database;
    const feed = { delivered: () => [] } as unknown as ChangeFeed;
    const index = new PolicyIndex();
    index.version = 1;
    const sync = new IndexSync(db, index, createLogger('silent'));
    let unstored = true;
    sync.observe({ before: async () => async () => undefined, unstored: () => unstored });
    const file = path.join(dir, 'held.snapshot');

    for (let round = 0; round < 5; round += 1) {
      expect(await sync.writeSnapshot(file, feed), `round ${round + 1}`).to.equal(undefined);
    }
    // Not held for ever: the sixth is written whatever waits.
    expect(await sync.writeSnapshot(file, feed)).to.be.greaterThan(0);

    // Once nothing waits, written as soon as something changed.
    index.version = 2;
    unstored = false;
    expect(await sync.writeSnapshot(file, feed)).to.be.greaterThan(0);
    // And not again while nothing changes.
    expect(await sync.writeSnapshot(file, feed)).to.equal(0);
  });
});
