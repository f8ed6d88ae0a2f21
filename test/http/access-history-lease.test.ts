import { expect } from 'chai';
import { AccessHistoryRecorder } from '../../src/access-history/recorder.js';
import { engineApi, namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';

/**
 * A read of the access history that must see it (src/access-history/recorder.ts `settle`), made
 * before the recorder first tried its lease: as right after a start whose catch-up computed
 * changes. It tries the lease then and stores what waits before the read answers.
 */
describe('access history read before the lease was tried', function () {
  this.timeout(60_000);
  const { uniq, type } = namer();
  // An instance that records nothing itself: the recorder below is the only one, and no periodic
  // renewal claims the lease for it.
  const fx = useApp({ env: { ACCESS_HISTORY: 'off' } });

  it('claims the lease and stores what the batches applied so far moved', async () => {
    const { runtime } = fx.app;
    const recorder = new AccessHistoryRecorder(runtime.db.background(), {
      logger: runtime.logger,
      instanceId: uniq('recorder'),
      leaseMs: 30_000,
      maxPending: 100_000,
    });
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
});
