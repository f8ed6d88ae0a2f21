import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { decide } from '../../src/decisions/engine.js';
import { decisionRepository } from '../../src/decisions/repository.js';
import { writeSnapshot } from '../../src/decisions/snapshot.js';
import type { TestApp } from '../helpers/app.js';
import { engineApi, namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';

/**
 * The decision index started from its snapshot (src/decisions/snapshot.ts): written at a graceful
 * stop, read at the next start and caught up with every change committed while the service was
 * down; refused, for a full build, when it is damaged, of another database, or ahead of the
 * database. And a full build made beside the index in use while writes go on: decisions never
 * see a partial index, and the index swapped in holds every write.
 */
describe('decision index snapshots and reloads', function () {
  this.timeout(120_000);
  const { uniq } = namer();
  let dir: string;
  let file: string;
  const snapshotEnv = (): Record<string, string> => ({ INDEX_SNAPSHOT: 'on', NEO4J_DATA_DIR: dir });

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pas-index-'));
    file = path.join(dir, 'index', 'decision-index.snapshot');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** How the app's index started, from its log. */
  const startOf = (app: TestApp): Record<string, unknown> => {
    const line = app.logs
      .entries()
      .find(
        (e) => e['msg'] === 'decision index read from its snapshot' || e['msg'] === 'decision index built',
      );
    expect(line, app.logs.text).to.not.equal(undefined);
    return line!;
  };
  const decision = async (api: HttpClient, principalId: string, type: string): Promise<string> => {
    const res = await api.post('/v1/decisions/evaluate', {
      principal_id: principalId,
      action: 'read',
      resource: { type, identifier: 'x' },
    });
    expect(res.status, res.text).to.equal(200);
    return res.body.decision as string;
  };

  /** A principal allowed to read `<type>:x` by a policy naming it. */
  const allowed = async (api: HttpClient, type: string): Promise<{ id: string; policy: string }> => {
    const world = engineApi(api, uniq);
    const p = await world.principal();
    const policy = await world.policy({
      subjects: { principals: [p.id] },
      resources: [{ type, identifier: 'x' }],
    });
    return { id: p.id as string, policy: policy.id as string };
  };

  describe('with snapshots on', () => {
    // An emptied store and a new app for each test, which restarts it on the same data.
    const fx = useApp({ fresh: true, env: snapshotEnv });

    it('writes one at a graceful stop and starts from it, caught up with what changed while it was down', async () => {
      const type = 'snapshotted';
      expect(startOf(fx.app)['from']).to.equal('database');
      const before = await allowed(fx.api, type);

      // Changes another instance (without snapshots) makes while the first is down.
      await fx.restart({});
      expect((await stat(file)).size, 'the snapshot written at the stop').to.be.greaterThan(0);
      const added = await allowed(fx.api, type);
      const res = await fx.api.patch(`/v1/principals/${before.id}`, { status: 'suspended' });
      expect(res.status, res.text).to.equal(200);
      const suspended = before.id;

      const again = await fx.restart();
      const started = startOf(again);
      expect(started['from'], again.logs.text).to.equal('snapshot');
      expect(started['replayed']).to.be.greaterThan(0);
      expect(await decision(fx.api, added.id, type)).to.equal('ALLOW');
      expect(await decision(fx.api, suspended, type)).to.equal('DENY');
      // The snapshot's own contents answer too: the first principal's policy is there.
      const { index } = again.runtime.engine;
      expect(index.policies.get(before.policy)?.principals.has(before.id)).to.equal(true);
    });

    it('computes again, from the snapshot, the access changes of what changed while none was recorded', async () => {
      const type = 'replayed';
      const before = await allowed(fx.api, type);
      // Down; meanwhile an instance that records no access history (as one whose recorder
      // crashed before storing) grants a principal, and suspends the one granted before.
      await fx.restart({ env: { ACCESS_HISTORY: 'off' } });
      const unrecorded = await allowed(fx.api, type);
      const suspended = await fx.api.patch(`/v1/principals/${before.id}`, { status: 'suspended' });
      expect(suspended.status, suspended.text).to.equal(200);

      const again = await fx.restart();
      expect(startOf(again)['from'], again.logs.text).to.equal('snapshot');
      const list = await fx.api.get(`/v1/access-changes?resource_type=${type}&limit=500`);
      expect(list.status, list.text).to.equal(200);
      const seen = list.body.data.map((c: any) => [
        c.principal.id,
        c.actions_gained,
        c.actions_lost,
        c.cause.event_type,
      ]);
      expect(seen).to.deep.include.members([
        [unrecorded.id, ['read'], [], 'policy.created'],
        [before.id, [], ['read'], 'principal.status_changed'],
      ]);
      // Each once: those recorded before the stop are not recorded again.
      expect(list.body.data.filter((c: any) => c.principal.id === before.id)).to.have.length(2);
    });

    it('builds from the database when the snapshot is damaged', async () => {
      const type = 'damaged';
      const p = await allowed(fx.api, type);
      const again = await fx.restart(undefined, async () => {
        const bytes = await readFile(file);
        bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0xff;
        await writeFile(file, bytes);
      });
      const started = startOf(again);
      expect(started['from']).to.equal('database');
      expect(started['refused']).to.match(/damaged/);
      expect(await decision(fx.api, p.id, type)).to.equal('ALLOW');
    });

    it('builds from the database when the snapshot is of another database, or ahead of this one', async () => {
      const type = 'foreign';
      const app = fx.app;
      const p = await allowed(fx.api, type);
      {
        const { index, sync } = app.runtime.engine;
        // After the one the service writes as it starts (each write waits for the one before).
        await sync.writeSnapshot(file, app.runtime.feed);
        await writeSnapshot(index, file, {
          database: 'another database',
          feed: app.runtime.feed.delivered(),
          privilegesPending: false,
        });
        // No snapshot at this stop: the one written above stays.
        app.config.index.snapshotFile = undefined;
      }
      const again = await fx.restart();
      expect(startOf(again)['refused']).to.match(/another database/);
      expect(await decision(fx.api, p.id, type)).to.equal('ALLOW');
      {
        const { index, sync } = again.runtime.engine;
        await sync.writeSnapshot(file, again.runtime.feed);
        const database = await decisionRepository.databaseId(again.runtime.db);
        const ahead = again.runtime.feed
          .delivered()
          .map(([shard, seq]): [number, number] => [shard, seq + 1_000]);
        await writeSnapshot(index, file, { database, feed: ahead, privilegesPending: false });
        again.config.index.snapshotFile = undefined;
      }
      const third = await fx.restart();
      expect(startOf(third)['refused']).to.match(/ahead of the database/);
      expect(await decision(fx.api, p.id, type)).to.equal('ALLOW');
    });
  });

  describe('full builds', () => {
    // On the data the tests above left.
    const fx = useApp({ keepData: true });

    it('reads the principals over id ranges in worker threads exactly as in one stream', async () => {
      const app = fx.app;
      const world = engineApi(fx.api, uniq);
      const group = await world.group();
      for (let i = 0; i < 160; i += 10) {
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            const p = await world.principal('SERVICE_ACCOUNT', { team: `t${i % 3}` });
            await world.addMember(group, p.id);
          }),
        );
      }
      const db = app.runtime.db.background();
      expect(db.readsInParallel).to.equal(true);
      const read = async (ranges: number): Promise<{ pages: number; rows: Map<string, unknown> }> => {
        const rows = new Map<string, unknown>();
        let pages = 0;
        await decisionRepository.principals(
          db,
          (page) => {
            pages += 1;
            for (const row of page) {
              const id = row.p['id'] as string;
              expect(rows.has(id), `${id} read twice`).to.equal(false);
              rows.set(id, row);
            }
          },
          { batch: 10, ranges },
        );
        return { pages, rows };
      };
      const streamed = await read(1);
      const ranged = await read(3);
      expect(streamed.rows.size).to.be.at.least(160);
      expect(ranged.pages).to.be.greaterThan(3);
      expect(new Map([...ranged.rows].sort(([a], [b]) => (a < b ? -1 : 1)))).to.deep.equal(
        new Map([...streamed.rows].sort(([a], [b]) => (a < b ? -1 : 1))),
      );
    });

    it('swaps a full build in while writes go on: decisions never see it partial, and it holds every write', async () => {
      const app = fx.app;
      const world = engineApi(fx.api, uniq);
      const type = 'reloaded';
      const group = await world.group();
      const known: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const p = await world.principal();
        await world.addMember(group, p.id);
        known.push(p.id);
      }
      await world.policy({ subjects: { groups: [group] }, resources: [{ type, identifier: 'x' }] });
      const { index, sync } = app.runtime.engine;
      const request = (id: string) => ({
        principal_id: id,
        action: 'read',
        resource: { type, identifier: 'x' },
      });
      // Writes, and decisions checked on every turn of the event loop, while the index is built
      // again three times.
      let writing = true;
      const written: string[] = [];
      const writes = (async () => {
        while (writing) {
          const p = await world.principal();
          await world.addMember(group, p.id);
          written.push(p.id);
        }
      })();
      let checked = 0;
      let watching = true;
      const watcher = (async () => {
        while (watching) {
          for (const id of known)
            expect(decide(index, request(id)).allowed, `${id} during a reload`).to.equal(true);
          checked += 1;
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      for (let i = 0; i < 3; i += 1) await sync.load();
      writing = false;
      await writes;
      watching = false;
      await watcher;
      expect(checked).to.be.greaterThan(3);
      expect(written.length).to.be.greaterThan(0);
      for (const id of [...known, ...written]) {
        expect(decide(index, request(id)).allowed, `${id} after the reloads`).to.equal(true);
      }
      // And what was swapped in matches a build made now from the database.
      const version = index.version;
      await sync.load();
      expect(index.version).to.be.greaterThan(version);
      for (const id of [...known, ...written]) expect(decide(index, request(id)).allowed).to.equal(true);
    });
  });
});
