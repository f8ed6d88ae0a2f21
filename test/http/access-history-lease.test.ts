import { expect } from 'chai';
import { AccessHistoryRecorder } from '../../src/access-history/recorder.js';
import { readyPart, toStored, type ReadyPart } from '../../src/access-history/repository.js';
import { holdingLease } from '../helpers/access-history.js';
import { Receiver, verifyDelivery } from '../helpers/receiver.js';
import { eventually } from '../helpers/wait.js';
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
  const fx = useApp({
    env: { ACCESS_HISTORY: 'off', WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' },
  });
  const receiver = new Receiver();
  before(() => receiver.start());
  after(() => receiver.stop());

  /** A recorder beside the instance, with a name of its own (it takes the lease once it can). */
  const ownRecorder = (name = uniq('recorder')): AccessHistoryRecorder =>
    new AccessHistoryRecorder(fx.app.runtime.db.background(), {
      logger: fx.app.runtime.logger,
      instanceId: name,
      leaseMs: 30_000,
      maxPending: 100_000,
    });

  interface Cause {
    event_id: string;
    event_type: string;
    actor: { type: string; id: string };
  }
  const newCause = (): Cause => ({
    event_id: newId('event'),
    event_type: 'policy.created',
    actor: { type: 'client', id: 'cli_x' },
  });
  /** A part of one change of `cause`, to `t`:`identifier`; `message` says which of its messages it is. */
  const changePart = (
    t: string,
    cause: Cause,
    identifier: string,
    message: { part: number; parts: number | null } | null,
  ): ReadyPart => {
    const at = new Date().toISOString();
    const id = newId('principal');
    const change = {
      id: newId('access_change'),
      at,
      principal: { id, name: `name of ${id}`, type: 'HUMAN' },
      resource: { type: t, identifier },
      actions_gained: ['read'],
      actions_lost: [],
      via: [{ policy_id: newId('policy'), policy_name: 'recorded', via: 'principal' as const }],
      cause,
    };
    return readyPart({
      id: change.id,
      cause_id: cause.event_id,
      at,
      rows: [toStored(change, null)],
      message,
    });
  };

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
    const part = (): ReadyPart => changePart(t, newCause(), 'x', null);
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
      // The keying runs beside the stores: waited for apart.
      await recorder.indexed();
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

  /** A cause's part of one change: `part` of `parts` (null: cut as it was computed). */
  const causePart = (t: string, cause: Cause, part: number, parts: number | null): ReadyPart =>
    changePart(t, cause, `r${part}`, { part, parts });
  /** The ids of the changes listed for a cause, and which recorders stored its parts. */
  const storedOf = async (cause: string): Promise<{ changes: string[]; recorders: string[] }> => {
    const list = await fx.api.get(`/v1/access-changes?event_id=${cause}&limit=100`);
    expect(list.status, list.text).to.equal(200);
    const rows = await cypher(
      fx.app.runtime.db,
      `MATCH (:AccessChangePart)-[:CAUSED_BY]->(k:AccessCause {id: $cause}) RETURN DISTINCT k.recorder AS r`,
      { cause },
    );
    return { changes: list.body.data.map((c: any) => c.id), recorders: rows.map((r) => String(r['r'])) };
  };
  const idsOf = (parts: readonly ReadyPart[]): string[] => parts.map((p) => p.id);

  it('stores nothing once another instance took the lease, and keeps what it computed', async () => {
    const recorder = ownRecorder();
    const t = type();
    try {
      const cause = newCause();
      const first = causePart(t, cause, 1, 1);
      recorder.take([first], true);
      await recorder.settle();
      expect((await storedOf(cause.event_id)).changes).to.deep.equal([first.id]);
      // It stalls past its lease and another instance takes it: what it computes after is not stored.
      await holdingLease(fx.app, 'another instance', async () => {
        const late = newCause();
        recorder.take([causePart(t, late, 1, 1)], true);
        await recorder.settle();
        expect((await storedOf(late.event_id)).changes, 'stored by no one yet').to.deep.equal([]);
        expect(recorder.pending, 'kept for the holder, as any instance that does not hold it').to.equal(1);
      });
    } finally {
      await recorder.stop();
    }
  });

  it('takes over a cause stored in part by a recorder that lost its lease, and stores it whole', async () => {
    const stalled = ownRecorder();
    const nextName = uniq('recorder');
    const next = ownRecorder(nextName);
    const t = type();
    const cause = newCause();
    // Both compute the same cause, cut in three parts as it was computed (the count said by the last).
    const theirs = [causePart(t, cause, 1, null), causePart(t, cause, 2, null), causePart(t, cause, 3, 3)];
    const ours = [causePart(t, cause, 1, null), causePart(t, cause, 2, null), causePart(t, cause, 3, 3)];
    const hook = await fx.api.post('/v1/webhooks', { url: receiver.url, events: ['access.changed'] });
    expect(hook.status, hook.text).to.equal(201);
    const before = receiver.received.length;
    try {
      // The first stores its first part, then stalls past its lease.
      stalled.take([theirs[0]!], false);
      await stalled.settle();
      expect((await storedOf(cause.event_id)).changes).to.deep.equal([theirs[0]!.id]);
      await cypher(
        fx.app.runtime.db,
        `MATCH (l:AccessHistoryLease {name: 'recorder'}) SET l.until = datetime() - duration('PT1S')`,
      );
      // The next has computed the whole cause, takes the lease and stores it whole, in place of that part.
      next.take(ours, true);
      await next.settle();
      // The first comes back with the rest: nothing of it is stored.
      stalled.take(theirs.slice(1), true);
      await stalled.settle();
      const stored = await storedOf(cause.event_id);
      expect(stored.changes).to.deep.equal(idsOf(ours));
      expect(stored.recorders, 'every part stored by the next').to.deep.equal([nextName]);
      expect(stalled.pending, 'the stalled one stored nothing more').to.equal(2);
      // The replaced part's message and outbox entries are gone, so nothing of it can go out...
      const [left] = await cypher(
        fx.app.runtime.db,
        `OPTIONAL MATCH (m:AccessChangeMessage {id: $id})
         OPTIONAL MATCH (w:WebhookMessage {event_id: $id})
         RETURN count(DISTINCT m) + count(DISTINCT w) AS n`,
        { id: theirs[0]!.id },
      );
      expect(Number(left!['n']), 'no message of the part replaced is left').to.equal(0);
      // ...and the cause is announced once, whole: three messages of three.
      await eventually(
        async () => receiver.received.slice(before),
        (r) => r.length >= 3,
        15_000,
      );
      const announced = receiver.received
        .slice(before)
        .map((r) => verifyDelivery<any>(hook.body.secret, r))
        .map((x) => [x.data.part, x.data.parts, x.data.changes[0].id]);
      expect(announced).to.deep.equal(ours.map((p, i) => [i + 1, 3, p.id]));
    } finally {
      await stalled.stop();
      await next.stop();
      await fx.api.delete(`/v1/webhooks/${hook.body.id}`);
    }
  });

  it('leaves a cause stored whole, and one with no message to tell, as the recorder before stored it', async () => {
    const t = type();
    /** The next recorder takes the lease once the one before stored `theirs`, holding `ours`. */
    const handOver = async (theirs: ReadyPart[], ours: ReadyPart[]): Promise<AccessHistoryRecorder> => {
      const before = ownRecorder();
      try {
        before.take(theirs, true);
        await before.settle();
      } finally {
        await before.stop();
      }
      const next = ownRecorder();
      next.take(ours, true);
      await next.settle();
      return next;
    };
    // Stored whole, its messages due: not taken over, though the next holds more of it.
    const hook = await fx.api.post('/v1/webhooks', { url: receiver.url, events: ['access.changed'] });
    expect(hook.status, hook.text).to.equal(201);
    const whole = newCause();
    const theirs = [causePart(t, whole, 1, null), causePart(t, whole, 2, 2)];
    const ours = [causePart(t, whole, 1, null), causePart(t, whole, 2, null), causePart(t, whole, 3, 3)];
    let next = await handOver(theirs, ours);
    try {
      expect((await storedOf(whole.event_id)).changes).to.deep.equal(idsOf(theirs));
      expect(next.pending, 'its own copy dropped').to.equal(0);
    } finally {
      await next.stop();
      await fx.api.delete(`/v1/webhooks/${hook.body.id}`);
    }
    // With no webhook, a cause has no message to say whether its last part came: it stays.
    const cut = newCause();
    const first = causePart(t, cut, 1, null);
    next = await handOver([first], [causePart(t, cut, 1, null), causePart(t, cut, 2, 2)]);
    try {
      expect((await storedOf(cut.event_id)).changes).to.deep.equal([first.id]);
    } finally {
      await next.stop();
    }
  });
});
