import { expect } from 'chai';
import {
  accessHistoryRepository as repo,
  PRINCIPAL_KEYS_PER_PART,
  readyPart,
  toStored,
  type AccessChange,
  type PrincipalRows,
  type ResourceAsOfChanges,
  type StoredPart,
} from '../../src/access-history/repository.js';
import { loadMigrations } from '../../src/db/migrations.js';
import { newId } from '../../src/ids.js';
import { holdingLease } from '../helpers/access-history.js';
import { cypher } from '../helpers/db.js';
import { namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';

/**
 * How access changes are stored (docs/access-history.md): one node per part of one cause, its
 * changes as columns, found by principal and resource through a full-text index once keyed. The
 * list and `as_of` read exactly the changes a part holds that match, whatever else it holds.
 */
describe('access changes stored in parts', () => {
  const fx = useApp();
  const { type } = namer();

  const changes = async (query: string): Promise<any> => {
    const res = await fx.api.get(`/v1/access-changes?${query}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  const grant = { policy_id: newId('policy'), policy_name: 'parts', via: 'principal' as const };

  /** One cause's part of the given changes (principal, identifier, gained, lost). */
  function partOf(
    t: string,
    rows: [principal: string, identifier: string, gained: string[], lost: string[]][],
    cause = {
      event_id: newId('event'),
      event_type: 'policy.created',
      actor: { type: 'system', id: 'system' },
    },
    at = new Date().toISOString(),
  ): StoredPart {
    const made: AccessChange[] = rows.map(([principal, identifier, gained, lost]) => ({
      id: newId('access_change'),
      at,
      principal: { id: principal, name: `name of ${principal}`, type: 'HUMAN' },
      resource: { type: t, identifier },
      actions_gained: gained,
      actions_lost: lost,
      via: gained.length + lost.length > 0 ? [grant] : [],
      cause,
    }));
    return {
      id: made[0]!.id,
      cause_id: cause.event_id,
      at,
      rows: made.map((c) =>
        toStored(
          c,
          c.actions_lost.length > 0 ? { actions: c.actions_lost, via: [grant], conditional: false } : null,
        ),
      ),
      message: null,
    };
  }

  /** Rows for every principal asked about (in the order asked), but `unknown`. */
  /** The changes `resourceAsOf` found, one object each. */
  const foundOf = (found: ResourceAsOfChanges) =>
    found.ids.map((id, k) => ({
      id,
      before: found.befores[k]!,
      named: found.named.get(id),
    }));
  const rowsOf = (unknown?: string): PrincipalRows => {
    const rows = new Map<string, number>();
    return {
      rows: 1_000,
      rowOf: (id) => {
        if (id === unknown) return -1;
        if (!rows.has(id)) rows.set(id, rows.size);
        return rows.get(id)!;
      },
    };
  };

  /** What a principal held a minute ago, as `as_of` reads it from the parts: identifiers. */
  const heldAMinuteAgo = async (principal: string): Promise<string[]> =>
    (await repo.principalAsOf(fx.app.runtime.db, principal, new Date(Date.now() - 60_000).toISOString())).map(
      (h) => h.identifier,
    );

  const summary = (data: any[]): string[] =>
    data.map(
      (c) =>
        `${c.principal.id} ${c.resource.identifier} ${[
          ...c.actions_gained.map((a: string) => `+${a}`),
          ...c.actions_lost.map((a: string) => `-${a}`),
        ].join(' ')}`,
    );

  it('lists exactly the changes of a part that match, with exact totals, and never its quiet ones', async () => {
    const t = type();
    const [a, b, c] = [newId('principal'), newId('principal'), newId('principal')];
    const part = partOf(t, [
      [a, 'x', ['read'], []],
      [b, 'x', ['read', 'write'], []],
      [a, 'y', [], ['read']],
      [c, 'x', [], []], // quiet: the same actions held otherwise
      [b, 'y"\\ odd', ['write'], []],
    ]);
    await repo.record(fx.app.runtime.db, [readyPart(part)], fx.app.runtime.instanceId);

    const all = await changes(`resource_type=${t}&limit=500`);
    expect(all.pagination.total).to.equal(4);
    expect(summary(all.data)).to.deep.equal([
      `${a} x +read`,
      `${b} x +read +write`,
      `${a} y -read`,
      `${b} y"\\ odd +write`,
    ]);
    const byA = await changes(`principal_id=${a}&limit=1`);
    expect(byA.pagination).to.include({ total: 2, pages: 2 });
    expect(summary(byA.data)).to.deep.equal([`${a} x +read`]);
    const next = await changes(`principal_id=${a}&limit=1&cursor=${byA.pagination.next_cursor}`);
    expect(summary(next.data)).to.deep.equal([`${a} y -read`]);
    expect((await changes(`principal_id=${c}`)).pagination.total).to.equal(0);
    const write = await changes(`resource_type=${t}&action=write`);
    expect(summary(write.data)).to.deep.equal([`${b} x +read +write`, `${b} y"\\ odd +write`]);
    const odd = await changes(`resource_type=${t}&identifier=${encodeURIComponent('y"\\ odd')}`);
    expect(summary(odd.data)).to.deep.equal([`${b} y"\\ odd +write`]);
    const onX = await changes(`resource_type=${t}&identifier=x&principal_id=${b}`);
    expect(onX.pagination.total).to.equal(1);
    expect((await changes(`event_id=${part.cause_id}&page=2&limit=3`)).data).to.have.length(1);

    // as_of reads the quiet change too: c's entry on x was held, and is `before` of nothing.
    const history = await repo.principalAsOf(
      fx.app.runtime.db,
      a,
      new Date(Date.now() - 60_000).toISOString(),
    );
    expect(
      history.map((h) => [h.identifier, h.changed_since, h.before?.actions ?? null]),
    ).to.have.deep.members([
      ['x', true, null],
      ['y', true, ['read']],
    ]);
  });

  it('stores a via or before that an earlier change of its part holds once, and reads every change whole', async () => {
    const t = type();
    const [a, b, c] = [newId('principal'), newId('principal'), newId('principal')];
    const part = partOf(t, [
      [a, 'x', ['read'], []],
      [b, 'x', ['read'], []],
      [a, 'y', [], ['read']],
      [c, 'y', [], ['read']],
      [b, 'z', [], ['read']],
    ]);
    await repo.record(fx.app.runtime.db, [readyPart(part)], fx.app.runtime.instanceId);

    const [node] = await cypher(
      fx.app.runtime.db,
      'MATCH (p:AccessChangePart {id: $id}) RETURN p.via AS via, p.before AS before',
      { id: part.id },
    );
    const via = JSON.stringify([grant]);
    const before = JSON.stringify({ actions: ['read'], via: [grant], conditional: false });
    expect(node!['via']).to.deep.equal([via, '=0', '=0', '=0', '=0']);
    expect(node!['before']).to.deep.equal(['', '', before, '=2', '=2']);

    const listed = await changes(`resource_type=${t}&limit=10`);
    expect(listed.data.map((x: any) => x.via)).to.deep.equal(Array(5).fill([grant]));
    const hour = new Date(Date.now() - 3_600_000).toISOString();
    for (const who of [a, c]) {
      const history = await repo.principalAsOf(fx.app.runtime.db, who, hour);
      expect(history.find((h) => h.identifier === 'y')?.before).to.deep.equal(JSON.parse(before));
    }
    const onY = await repo.resourceAsOf(fx.app.runtime.db, t, 'y', hour, rowsOf());
    expect(foundOf(onY).map((r) => [r.id, r.before])).to.have.deep.members([
      [a, JSON.parse(before)],
      [c, JSON.parse(before)],
    ]);
    // A resource of few of the part's changes: its repeated value is followed as it is read.
    const onZ = await repo.resourceAsOf(fx.app.runtime.db, t, 'z', hour, rowsOf());
    expect(foundOf(onZ).map((r) => [r.id, r.before])).to.deep.equal([[b, JSON.parse(before)]]);
    const onX = await repo.resourceAsOf(fx.app.runtime.db, t, 'x', hour, rowsOf());
    expect(foundOf(onX).map((r) => [r.id, r.before])).to.have.deep.members([
      [a, null],
      [b, null],
    ]);
  });

  it('reads who held a resource from the first change of each entry, where parts interleave, and names principals gone as the history did', async () => {
    const t = type();
    const [a, b, c] = [newId('principal'), newId('principal'), newId('principal')];
    // Two causes whose parts interleave: one holds the first and the last change, the other the
    // two between. a's first change on w is the other's (gained: nothing held before).
    const ids = Array.from({ length: 4 }, () => newId('access_change'));
    const outer = partOf(t, [
      [b, 'w', ['read'], []],
      [a, 'w', [], ['read']],
    ]);
    const inner = partOf(t, [
      [a, 'w', ['read'], []],
      [c, 'w', [], ['read']],
    ]);
    const withIds = (part: StoredPart, mine: string[]): StoredPart => {
      part.rows.forEach((row, k) => (row.id = mine[k]!));
      return { ...part, id: mine[0]! };
    };
    await repo.record(
      fx.app.runtime.db,
      [readyPart(withIds(outer, [ids[0]!, ids[3]!])), readyPart(withIds(inner, [ids[1]!, ids[2]!]))],
      fx.app.runtime.instanceId,
    );
    const hour = new Date(Date.now() - 3_600_000).toISOString();
    const held = await repo.resourceAsOf(fx.app.runtime.db, t, 'w', hour, rowsOf(c));
    expect(foundOf(held).map((r) => [r.id, r.before?.actions ?? null, r.named ?? null])).to.have.deep.members(
      [
        [a, null, null],
        [b, null, null],
        [c, ['read'], { name: `name of ${c}`, type: 'HUMAN' }],
      ],
    );
  });

  it('names a principal gone since whose access to a resource changed twice as its first change after the instant did', async () => {
    const t = type();
    const [a, d] = [newId('principal'), newId('principal')];
    const first = partOf(t, [
      [d, 'u', ['read'], []],
      [a, 'u', ['read'], []],
    ]);
    first.rows[0]!.principal_name = 'as first named';
    const second = partOf(t, [[d, 'u', [], ['read']]]);
    second.rows[0]!.principal_name = 'as named later';
    for (const part of [first, second])
      await repo.record(fx.app.runtime.db, [readyPart(part)], fx.app.runtime.instanceId);
    const hour = new Date(Date.now() - 3_600_000).toISOString();
    const held = await repo.resourceAsOf(fx.app.runtime.db, t, 'u', hour, rowsOf(d));
    expect(foundOf(held).map((r) => [r.id, r.before?.actions ?? null, r.named ?? null])).to.have.deep.members(
      [
        [a, null, null],
        [d, null, { name: 'as first named', type: 'HUMAN' }],
      ],
    );
  });

  it('reads every change of a part about the resource alone, and of others only those after the instant and not acting for another', async () => {
    const t = type();
    const [a, b, c, d, e, f] = [1, 2, 3, 4, 5, 6].map(() => newId('principal')) as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const lost = (who: string): [string, string, string[], string[]] => [who, 'v', [], ['read']];
    // All about v, after the instant, none acting for another: read whole.
    const whole = partOf(t, [lost(a), lost(b)]);
    // Also about v alone and after the instant, but one change acts for another.
    const acting = partOf(t, [lost(c), lost(d)]);
    acting.rows[1]!.on_behalf_of_id = newId('principal');
    acting.rows[1]!.on_behalf_of_name = 'the one acted for';
    acting.rows[1]!.on_behalf_of_type = 'HUMAN';
    // About v alone, but one change came before the instant.
    const earlier = partOf(t, [lost(e), lost(f)]);
    earlier.rows[0]!.at = new Date(Date.now() - 2 * 3_600_000).toISOString();
    await repo.record(
      fx.app.runtime.db,
      [whole, acting, earlier].map((part) => readyPart(part)),
      fx.app.runtime.instanceId,
    );
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const held = await repo.resourceAsOf(fx.app.runtime.db, t, 'v', since, rowsOf());
    expect(foundOf(held).map((r) => [r.id, r.before?.actions ?? null])).to.have.deep.members([
      [a, ['read']],
      [b, ['read']],
      [c, ['read']],
      [f, ['read']],
    ]);
  });

  it('reads back whole values holding every control character, and a via holding a private-use one', async () => {
    const t = type();
    const [a, b] = [newId('principal'), newId('principal')];
    const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
    const part = partOf(t, [
      [a, `x${controls}`, ['read'], []],
      [b, 'y\ue000', ['read'], []],
    ]);
    part.rows[0]!.principal_name = `odd${controls}`;
    const odd = { ...grant, policy_name: 'p\ue000\ue001' };
    part.rows[1]!.via = JSON.stringify([odd]);
    await repo.record(fx.app.runtime.db, [readyPart(part)], fx.app.runtime.instanceId);

    const listed = (await changes(`resource_type=${t}&limit=10`)).data;
    expect(
      listed.map((x: any) => [x.principal.id, x.principal.name, x.resource.identifier, x.via]),
    ).to.deep.equal([
      [a, `odd${controls}`, `x${controls}`, [grant]],
      [b, `name of ${b}`, 'y\ue000', [odd]],
    ]);
  });

  it('skips a part whose cause another recorder stored, and finds parts keyed or not yet', async () => {
    const t = type();
    const p = newId('principal');
    const first = partOf(t, [[p, 'one', ['read'], []]]);
    // Each stores as the holder of the lease would (only the holder's parts are stored).
    const as = (recorder: string, part: StoredPart): Promise<boolean> =>
      holdingLease(fx.app, recorder, () => repo.record(fx.app.runtime.db, [readyPart(part)], recorder));
    expect(await as('recorder-a', first)).to.equal(true);
    const again = partOf(t, [[p, 'two', ['read'], []]], {
      event_id: first.cause_id,
      event_type: 'policy.created',
      actor: { type: 'system', id: 'system' },
    });
    expect(await as('recorder-b', again)).to.equal(true);
    expect(summary((await changes(`resource_type=${t}`)).data)).to.deep.equal([`${p} one +read`]);
    expect([
      ...(await repo.recordedCauses(fx.app.runtime.db, [first.cause_id, newId('event')])),
    ]).to.deep.equal([first.cause_id]);
    // The same recorder stores the rest of its cause.
    expect(await as('recorder-a', again)).to.equal(true);
    expect((await changes(`resource_type=${t}`)).pagination.total).to.equal(2);

    // Parts keyed (as the recorder keys them once what waits is stored), and some stored after:
    // all found by principal and by resource.
    const many = Array.from({ length: 40 }, (_, i) => partOf(t, [[p, `k${i}`, ['read'], []]]));
    const store = (part: StoredPart): Promise<boolean> =>
      repo.record(fx.app.runtime.db, [readyPart(part)], 'recorder-a');
    // The app's own recorder keys every part stored unkeyed when it takes the lease: the lease is
    // held by another name throughout, once a keying the recorder began before is done.
    await fx.app.runtime.engine.recorder?.indexed();
    await holdingLease(fx.app, 'recorder-a', async () => {
      for (const part of many.slice(0, 32)) await store(part);
      expect(await repo.key(fx.app.runtime.db, 1_000)).to.be.at.least(32);
      for (const part of many.slice(32)) await store(part);
      const [labels] = await cypher(
        fx.app.runtime.db,
        `MATCH (x:AccessChangePart) WHERE x.cause_event_id IN $causes
         RETURN sum(CASE WHEN x:AccessChangeKeyed THEN 1 ELSE 0 END) AS keyed,
                sum(CASE WHEN x:AccessChangeUnkeyed THEN 1 ELSE 0 END) AS unkeyed`,
        { causes: many.map((m) => m.cause_id) },
      );
      expect(labels!['keyed']).to.be.greaterThan(0);
      expect(labels!['unkeyed']).to.be.greaterThan(0);
      expect((await changes(`principal_id=${p}`)).pagination.total).to.equal(42);
      expect((await changes(`resource_type=${t}&identifier=k39`)).pagination.total).to.equal(1);
      expect((await changes(`resource_type=${t}&identifier=k0`)).pagination.total).to.equal(1);

      // Settled once the full-text index holds them (its updates are applied beside the commits):
      // from then on they are read through the index alone, and found the same.
      await repo.settleKeys(fx.app.runtime.db);
      const [settled] = await cypher(
        fx.app.runtime.db,
        `MATCH (x:AccessChangePart) WHERE x.cause_event_id IN $causes
         RETURN sum(CASE WHEN x:AccessChangeUnkeyed THEN 1 ELSE 0 END) AS unkeyed`,
        { causes: many.map((m) => m.cause_id) },
      );
      expect(settled!['unkeyed'], 'the 8 stored after the keying').to.equal(8);
      expect((await changes(`principal_id=${p}`)).pagination.total).to.equal(42);
      expect((await changes(`resource_type=${t}&identifier=k0`)).pagination.total).to.equal(1);
      expect((await changes(`resource_type=${t}&identifier=k39`)).pagination.total).to.equal(1);
    });
  });

  it('finds a principal of a large part by a prefix it shares with its neighbours, and answers only its own changes', async () => {
    const t = type();
    // Forty neighbours in id order, and one more between them that the part does not hold: the
    // part is keyed by the prefixes they share, which the outsider shares too.
    const base = newId('principal').slice(0, -2);
    const digits = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const near = Array.from({ length: 41 }, (_, i) => `${base}${digits[i >> 4]}${digits[i & 15]}`);
    const outsider = near.splice(20, 1)[0]!;
    // Keyed by prefixes, as the part of a cause reaching a large share of the principals is.
    const large = {
      ...partOf(
        t,
        near.map((p) => [p, 'team', ['read'], []]),
      ),
      prefix_keys: true,
    };
    const own = partOf(t, [[outsider, 'own', ['write'], []]]);
    await holdingLease(fx.app, 'recorder-a', () =>
      repo.record(fx.app.runtime.db, [readyPart(large), readyPart(own)], 'recorder-a'),
    );
    const [row] = await cypher(
      fx.app.runtime.db,
      'MATCH (x:AccessChangePart {cause_event_id: $c}) RETURN x.principal_keys AS keys',
      { c: large.cause_id },
    );
    const keys = row!['keys'] as string[];
    expect(keys.length).to.be.within(1, PRINCIPAL_KEYS_PER_PART);
    expect(
      keys.some((k) => outsider.startsWith(k.slice(0, -1))),
      'the outsider shares a key',
    ).to.equal(true);
    // Unkeyed, then keyed and read through the index alone: the same answers.
    for (const keyed of [false, true]) {
      if (keyed) {
        await repo.key(fx.app.runtime.db, 1_000);
        await repo.settleKeys(fx.app.runtime.db);
      }
      for (const p of [near[0]!, near[19]!, near[20]!, near[39]!]) {
        expect(summary((await changes(`principal_id=${p}`)).data), `keyed: ${keyed}`).to.deep.equal([
          `${p} team +read`,
        ]);
      }
      expect(summary((await changes(`principal_id=${outsider}`)).data), `keyed: ${keyed}`).to.deep.equal([
        `${outsider} own +write`,
      ]);
      expect(await heldAMinuteAgo(outsider), `keyed: ${keyed}`).to.deep.equal(['own']);
    }
  });

  it('finds a principal of a part keyed by each principal, by the end of its id, and answers only its own changes where ids end alike', async () => {
    const t = type();
    const p = newId('principal');
    // Another id ending in the same six characters: the same key.
    const alike = `${p.slice(0, 4)}${p[4] === 'Z' ? 'Y' : 'Z'}${p.slice(5)}`;
    expect(alike).to.not.equal(p);
    const stored = partOf(t, [
      [p, 'mine', ['read'], []],
      [alike, 'theirs', ['write'], []],
    ]);
    const later = partOf(t, [[alike, 'theirs-too', [], ['write']]]);
    await holdingLease(fx.app, 'recorder-a', () =>
      repo.record(fx.app.runtime.db, [readyPart(stored), readyPart(later)], 'recorder-a'),
    );
    const [row] = await cypher(
      fx.app.runtime.db,
      'MATCH (x:AccessChangePart {cause_event_id: $c}) RETURN x.principal_keys AS keys',
      { c: stored.cause_id },
    );
    expect(row!['keys']).to.deep.equal([p.slice(-6)]);
    // Unkeyed, then keyed and read through the index alone: the same answers.
    for (const keyed of [false, true]) {
      if (keyed) {
        await repo.key(fx.app.runtime.db, 1_000);
        await repo.settleKeys(fx.app.runtime.db);
      }
      expect(summary((await changes(`principal_id=${p}`)).data), `keyed: ${keyed}`).to.deep.equal([
        `${p} mine +read`,
      ]);
      expect(summary((await changes(`principal_id=${alike}`)).data), `keyed: ${keyed}`).to.deep.equal([
        `${alike} theirs +write`,
        `${alike} theirs-too -write`,
      ]);
      expect(await heldAMinuteAgo(p), `keyed: ${keyed}`).to.deep.equal(['mine']);
    }
  });

  it('keys a part stored without principal keys, as a version before them stored it, by principal', async () => {
    const t = type();
    const p = newId('principal');
    const old = partOf(t, [[p, 'old', ['read'], []]]);
    await holdingLease(fx.app, 'recorder-a', () =>
      repo.record(fx.app.runtime.db, [readyPart(old)], 'recorder-a'),
    );
    await cypher(
      fx.app.runtime.db,
      'MATCH (x:AccessChangePart {cause_event_id: $c}) REMOVE x.principal_keys',
      {
        c: old.cause_id,
      },
    );
    await repo.key(fx.app.runtime.db, 1_000);
    await repo.settleKeys(fx.app.runtime.db);
    const [row] = await cypher(
      fx.app.runtime.db,
      'MATCH (x:AccessChangePart {cause_event_id: $c}) RETURN x.principal_keys AS keys, x:AccessChangeUnkeyed AS unkeyed',
      { c: old.cause_id },
    );
    expect(row).to.deep.equal({ keys: [p.slice(-6)], unkeyed: false });
    expect(summary((await changes(`principal_id=${p}`)).data)).to.deep.equal([`${p} old +read`]);
  });

  it('converts changes stored one node each into parts (migration 018), listed and read as of', async () => {
    const t = type();
    const p = newId('principal');
    const cause = newId('event');
    const ids = Array.from({ length: 3 }, () => newId('access_change'));
    const at = new Date(Date.now() - 120_000).toISOString();
    await cypher(
      fx.app.runtime.db,
      `UNWIND range(0, 2) AS n
       CREATE (:AccessChange {
         id: $ids[n], at: datetime($at), principal_id: $p, principal_name: 'old', principal_type: 'HUMAN',
         resource_type: $t, identifier: 'd' + n, pattern: n = 2,
         actions_gained: CASE WHEN n < 2 THEN ['read', 'write'] ELSE [] END, actions_lost: [],
         via: '[]', before: CASE WHEN n = 1 THEN '{"actions":["list"],"via":[],"conditional":false}' END,
         cause_event_id: $cause, cause_event_type: 'group.member_added', actor_type: 'system',
         actor_id: 'system', recorder: 'old-instance'})`,
      { ids, at, p, t, cause },
    );
    // As an upgrade runs them: 018, then 020 (the parts' principal keys, the index made again).
    for (const version of [18, 20]) {
      const migration = (await loadMigrations()).find((m) => m.version === version)!;
      for (const statement of migration.statements) await fx.app.runtime.db.schema(statement);
    }
    await fx.app.runtime.db.schema('CALL db.awaitIndexes(300)');

    expect(
      (await cypher(fx.app.runtime.db, 'MATCH (c:AccessChange) RETURN count(c) AS n'))[0]!['n'],
    ).to.equal(0);
    const listed = await changes(`event_id=${cause}`);
    expect(listed.pagination.total).to.equal(2);
    expect(listed.data.map((c: any) => [c.id, c.resource.identifier, c.actions_gained, c.at])).to.deep.equal([
      [ids[0], 'd0', ['read', 'write'], at],
      [ids[1], 'd1', ['read', 'write'], at],
    ]);
    expect((await changes(`principal_id=${p}&resource_type=${t}&identifier=d1`)).pagination.total).to.equal(
      1,
    );
    const history = await repo.principalAsOf(
      fx.app.runtime.db,
      p,
      new Date(Date.now() - 180_000).toISOString(),
    );
    expect(history.map((h) => [h.identifier, h.pattern, h.before?.actions ?? null])).to.have.deep.members([
      ['d0', false, null],
      ['d1', false, ['list']],
      ['d2', true, null],
    ]);
    expect([...(await repo.recordedCauses(fx.app.runtime.db, [cause]))]).to.deep.equal([cause]);
    // Its cause stays the old instance's: no other recorder stores it again.
    const [k] = await cypher(fx.app.runtime.db, 'MATCH (k:AccessCause {id: $cause}) RETURN k.recorder AS r', {
      cause,
    });
    expect(k!['r']).to.equal('old-instance');
  });

  it('purges whole parts past the retention, and their causes', async () => {
    const t = type();
    const old = partOf(
      t,
      [[newId('principal'), 'old', ['read'], []]],
      undefined,
      new Date(Date.now() - 500 * 86_400_000).toISOString(),
    );
    const kept = partOf(t, [[newId('principal'), 'new', ['read'], []]]);
    await repo.record(fx.app.runtime.db, [readyPart(old), readyPart(kept)], fx.app.runtime.instanceId);
    expect(await fx.app.runtime.services.accessHistory.purge()).to.be.at.least(1);
    expect(summary((await changes(`resource_type=${t}`)).data).map((s) => s.split(' ')[1])).to.deep.equal([
      'new',
    ]);
    expect([...(await repo.recordedCauses(fx.app.runtime.db, [old.cause_id, kept.cause_id]))]).to.deep.equal([
      kept.cause_id,
    ]);
  });
});
