import { expect } from 'chai';
import { AccessHistoryRecorder } from '../../src/access-history/recorder.js';
import { readyPart, toStored, type ReadyPart } from '../../src/access-history/repository.js';
import { newId } from '../../src/ids.js';
import { cypher } from '../helpers/db.js';
import { engineApi, namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';

/**
 * A recorder of its own (src/access-history/recorder.ts), beside an instance that records
 * nothing. A read of the access history that must see it (`settle`), made before the recorder
 * first tried its lease (as right after a start whose catch-up computed changes), tries the lease
 * then and stores what waits before the read answers. Parts it stores are keyed for the full-text
 * index in bulk, once enough wait, a few dozen a transaction.
 */
describe('an access-history recorder of its own', function () {
  this.timeout(60_000);
  const { uniq, type } = namer();
  // An instance that records nothing itself: the recorder below is the only one, and no periodic
  // renewal claims the lease for it.
  const fx = useApp({ env: { ACCESS_HISTORY: 'off' } });

  /** A recorder beside the instance, with a name of its own (it takes the lease once it can). */
  const ownRecorder = (): AccessHistoryRecorder =>
    new AccessHistoryRecorder(fx.app.runtime.db.background(), {
      logger: fx.app.runtime.logger,
      instanceId: uniq('recorder'),
      leaseMs: 30_000,
      maxPending: 100_000,
    });

  it('claims the lease when read before it tried it, and stores what the batches applied so far moved', async () => {
    const { runtime } = fx.app;
    const recorder = ownRecorder();
    runtime.engine.sync.observe(recorder);
    try {
      const world = engineApi(fx.api, uniq);
      const t = type();
      const p = await world.principal();
      await world.policy({ subjects: { principals: [p.id] }, resources: [{ type: t, identifier: 'x' }] });
      // The index has applied the policy (and the recorder computed what it moved) once a read
      // after it sees it.
      const access = await fx.api.get(`/v1/principals/${p.id}/access`);
      expect(access.status, access.text).to.equal(200);
      expect(access.body.access.map((e: any) => e.resource.type)).to.include(t);
      expect(recorder.pending, 'computed, waiting for the lease').to.equal(1);

      await recorder.settle();
      expect(recorder.pending).to.equal(0);
      const list = await fx.api.get(`/v1/access-changes?resource_type=${t}`);
      expect(list.status, list.text).to.equal(200);
      expect(list.body.data.map((c: any) => [c.principal.id, c.actions_gained])).to.deep.equal([
        [p.id, ['read']],
      ]);
    } finally {
      await recorder.stop();
    }
  });

  it('keys the parts it stored for the full-text index once 32 wait unkeyed, not before, 20 a transaction', async () => {
    const { runtime } = fx.app;
    const recorder = ownRecorder();
    const t = type();
    /** A part of one change, of a cause of its own. */
    const part = (): ReadyPart => {
      const at = new Date().toISOString();
      const cause = {
        event_id: newId('event'),
        event_type: 'policy.created',
        actor: { type: 'system', id: 'system' },
      };
      const id = newId('principal');
      const change = {
        id: newId('access_change'),
        at,
        principal: { id, name: `name of ${id}`, type: 'HUMAN' },
        resource: { type: t, identifier: 'x' },
        actions_gained: ['read'],
        actions_lost: [],
        via: [{ policy_id: newId('policy'), policy_name: 'keyed', via: 'principal' as const }],
        cause,
      };
      return readyPart({
        id: change.id,
        cause_id: cause.event_id,
        at,
        rows: [toStored(change, null)],
        message: null,
      });
    };
    const keyed = async (): Promise<[number, number]> => {
      const [row] = await cypher(
        runtime.db,
        `MATCH (x:AccessChangePart) WHERE $t IN x.resource_types
         RETURN sum(CASE WHEN x:AccessChangeKeyed THEN 1 ELSE 0 END) AS keyed,
                sum(CASE WHEN x:AccessChangeUnkeyed THEN 1 ELSE 0 END) AS unkeyed`,
        { t },
      );
      return [Number(row!['keyed']), Number(row!['unkeyed'])];
    };
    /** Transactions that keyed parts, so far (`neo4j_transactions_total`, an operator reads). */
    const keyings = async (): Promise<number> => {
      const { values } = await runtime.metrics.dbTransactions.get();
      return values
        .filter((v) => v.labels.unit === 'access-history/key' && v.labels.outcome === 'ok')
        .reduce((n, v) => n + v.value, 0);
    };
    // What other recorders of this database left unkeyed is keyed first: only these are counted.
    await cypher(
      runtime.db,
      'MATCH (u:AccessChangeUnkeyed) REMOVE u:AccessChangeUnkeyed SET u:AccessChangeKeyed',
    );
    try {
      recorder.take(Array.from({ length: 31 }, part), true);
      await recorder.settle();
      expect(await keyed(), '31 stored, none keyed').to.deep.equal([0, 31]);
      const before = await keyings();
      recorder.take(Array.from({ length: 14 }, part), true);
      await recorder.settle();
      expect(await keyed(), 'past 32, all are keyed').to.deep.equal([45, 0]);
      // A write beside the keying waits for one of its transactions, not for all 45 parts.
      expect((await keyings()) - before, 'keyed 20, 20 and 5 a transaction').to.equal(3);
      // Found by resource either way.
      const list = await fx.api.get(`/v1/access-changes?resource_type=${t}&limit=100`);
      expect(list.status, list.text).to.equal(200);
      expect(list.body.pagination.total).to.equal(45);
    } finally {
      await recorder.stop();
    }
  });
});
