import { expect } from 'chai';
import { useApp, type AppFixture } from '../helpers/fixture.js';
import { cypher } from '../helpers/db.js';
import { engineApi, namer } from '../helpers/engine.js';
import { snapshotLines, syncSnapshot } from '../helpers/sync.js';
import { eventually, metricValue } from '../helpers/wait.js';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const USERS = 300;

let sequence = 0;
const uniq = (base: string): string => `${base}${Date.now().toString(36)}${(sequence += 1)}`;

/**
 * While it runs, this process's event loop is held for `holdMs` every `everyMs`, and requests are
 * served meanwhile: what a serving process sees when the cores it needs are taken.
 */
function holdingTheLoop(fx: AppFixture, holdMs: number, everyMs: number): { stop(): Promise<void> } {
  const hold = setInterval(() => {
    const from = performance.now();
    while (performance.now() - from < holdMs);
  }, everyMs);
  let requesting = true;
  const requests = (async () => {
    // One after another: each waits out the holds, as a request to a held-up process does.
    while (requesting) await fx.app.http.get('/healthz');
  })();
  return {
    stop: async () => {
      clearInterval(hold);
      requesting = false;
      await requests;
    },
  };
}

/** A connector's sync of USERS new users while the loop is held; answers what it counted. */
async function syncWhileHeld(fx: AppFixture): Promise<{ counts: Record<string, number>; prefix: string }> {
  const created = await fx.api.post('/v1/connectors', { name: uniq('paced-') });
  expect(created.status, created.text).to.equal(201);
  const prefix = uniq('paced');
  const lines = Array.from({ length: USERS }, (_, i) => ({
    schemas: [USER],
    userName: `${prefix}-${i}@example.com`,
    externalId: `${prefix}-${i}`,
    displayName: `Paced ${i}`,
  }));
  const held = holdingTheLoop(fx, 30, 60);
  try {
    const sync = await syncSnapshot(fx.api, created.body.id, snapshotLines(lines));
    return { counts: sync.counts, prefix };
  } finally {
    await held.stop();
  }
}

const pausedFor = (fx: AppFixture): Promise<number> =>
  metricValue(fx.app.http, 'background_paced_seconds_total{work="scim.sync"}', 0);

describe('background work gives way to requests', () => {
  describe('paced (the default of the service)', () => {
    const fx = useApp({ env: { BACKGROUND_PACING: 'on', BACKGROUND_PACING_DELAY_MS: '10' } });

    it('a sync slows down while requests are held up, and still writes every user', async function () {
      this.timeout(90_000);
      const before = await pausedFor(fx);
      const { counts, prefix } = await syncWhileHeld(fx);
      expect(counts).to.include({ lines: USERS, invalid: 0, users_created: USERS });
      const [row] = await cypher(
        fx.app.runtime.db,
        'MATCH (p:Principal) WHERE p.user_name STARTS WITH $prefix RETURN count(p) AS n',
        { prefix: `${prefix}-`.toLowerCase() },
      );
      expect(row).to.deep.equal({ n: USERS });
      // The pauses it made are counted, and the share of time it had fell below full speed.
      expect(await pausedFor(fx)).to.be.greaterThan(before);
      expect(fx.app.runtime.pacer.duty).to.be.lessThan(1);
    });

    it('stores the access history in paced steps while requests are held up; a read still gets every change', async function () {
      this.timeout(60_000);
      const { uniq, type } = namer();
      const world = engineApi(fx.api, uniq);
      const ids: string[] = [];
      for (let i = 0; i < 20; i += 1) ids.push((await world.principal()).id as string);
      const t = type();
      const stored = (): Promise<number> =>
        metricValue(fx.app.http, 'background_paced_seconds_total{work="access-history.store"}', 0);
      const before = await stored();
      const held = holdingTheLoop(fx, 30, 60);
      try {
        await eventually(
          async () => fx.app.runtime.pacer.duty,
          (duty) => duty < 1,
          20_000,
          50,
        );
        await world.policy({ subjects: { principals: ids }, resources: [{ type: t, identifier: 'doc' }] });
        // The store of the policy's changes paused after its step.
        await eventually(stored, (paused) => paused > before, 30_000, 100);
      } finally {
        await held.stop();
      }
      const listed = await fx.api.get(`/v1/access-changes?resource_type=${t}&limit=500`);
      expect(listed.status, listed.text).to.equal(200);
      expect(listed.body.data.map((c: { principal: { id: string } }) => c.principal.id).sort()).to.deep.equal(
        [...ids].sort(),
      );
    });

    it('is back to full speed once requests are served on time again', async function () {
      this.timeout(30_000);
      // The duty climbs back at each calm tick of the pacer. Watched from within: a scrape of
      // /metrics is itself work on the event loop, and scraping in a tight loop would hold it up.
      await eventually(
        async () => fx.app.runtime.pacer.duty,
        (duty) => duty === 1,
        20_000,
        200,
      );
      // Its gauge says where it stands.
      expect(await metricValue(fx.app.http, 'background_pacing_duty')).to.equal(1);
    });
  });

  describe('BACKGROUND_PACING=off', () => {
    const fx = useApp({ env: { BACKGROUND_PACING: 'off' } });

    it('a sync never pauses, however held up requests are', async function () {
      this.timeout(90_000);
      const { counts } = await syncWhileHeld(fx);
      expect(counts).to.include({ lines: USERS, invalid: 0, users_created: USERS });
      expect(await pausedFor(fx)).to.equal(0);
      expect(fx.app.runtime.pacer.duty).to.equal(1);
    });
  });
});
