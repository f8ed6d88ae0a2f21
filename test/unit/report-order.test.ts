import { expect } from 'chai';
import fc from 'fast-check';
import { MemorySections } from '../../src/columnar/sections.js';
import { StringPool } from '../../src/columnar/strings.js';
import { toIxPrincipal } from '../../src/decisions/model.js';
import { PolicyIndex } from '../../src/decisions/policy-index.js';
import { PrincipalOrder, sortRows } from '../../src/reports/principal-order.js';
import { managerOf, ownerRow } from '../../src/reports/principal-rows.js';

/** Text by code point, as UTF-8 bytes compare. */
const byCodePoint = (a: string, b: string): number => {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

const sign = (n: number): number => Math.sign(n);

function put(
  index: PolicyIndex,
  id: string,
  fields: { type?: string; status?: string; email?: string; attributes?: Record<string, string> } = {},
): void {
  index.putPrincipal(
    id,
    toIxPrincipal({
      id,
      type: fields.type ?? 'SERVICE_ACCOUNT',
      status: fields.status ?? 'active',
      name: id,
      email: fields.email ?? null,
      connector_source: null,
      connector_id: null,
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:00Z',
      last_login: null,
      risk_score: 0,
      privileges: null,
      fields: Object.entries(fields.attributes ?? {}).map(([k, v]): [string, unknown] => [`attr.${k}`, v]),
      groups: [],
    }),
  );
}

describe('reports: principals of the decision index in id order', () => {
  it('a string pool compares its strings, and any text, by code point', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.string({ unit: 'grapheme' }),
            fc.constantFrom('', 'a', 'é', '\uffff', '𝕏'),
          ),
          {
            minLength: 1,
            maxLength: 60,
          },
        ),
        fc.string({ unit: 'grapheme' }),
        (strings, other) => {
          const pool = new StringPool(16);
          const codes = strings.map((s) => pool.intern(s));
          for (let i = 0; i < strings.length; i += 1) {
            for (let j = 0; j < strings.length; j += 1) {
              expect(sign(pool.compare(codes[i]!, codes[j]!))).to.equal(
                sign(byCodePoint(strings[i]!, strings[j]!)),
              );
            }
            expect(sign(pool.compareText(codes[i]!, other))).to.equal(sign(byCodePoint(strings[i]!, other)));
          }
        },
      ),
    );
  });

  it('sorts rows, turning the event loop between slices', async () => {
    const n = 50_000;
    const keys = Float64Array.from({ length: n }, () => Math.random());
    const rows = Int32Array.from({ length: n }, (_, i) => i);
    let turns = 0;
    const sorted = await sortRows(
      rows,
      (a, b) => keys[a]! - keys[b]!,
      () => {
        turns += 1;
        return undefined;
      },
    );
    expect(turns).to.be.greaterThan(10);
    for (let i = 1; i < n; i += 1) expect(keys[sorted[i - 1]!]!).to.be.at.most(keys[sorted[i]!]!);
    expect(new Set(sorted).size).to.equal(n);
  });

  it('pages the principals it reads after an id, and makes its order again for a rebuilt index', async () => {
    const index = new PolicyIndex();
    // Rows in the order principals arrive, which is not the order of their ids.
    const ids = Array.from({ length: 500 }, (_, i) => `prn_${String((i * 7919) % 1000).padStart(4, '0')}`);
    for (const id of ids) put(index, id, { status: id.endsWith('3') ? 'deleted' : 'active' });
    const living = [...ids].filter((id) => !id.endsWith('3')).sort();
    const order = new PrincipalOrder(
      index,
      (table, row) => !table.isDeleted(row),
      () => undefined,
    );
    expect(await order.count()).to.equal(living.length);
    const read: string[] = [];
    for (let cursor: string | null = null; ;) {
      const page = await order.after(cursor, 7);
      read.push(...page.rows.map((row) => page.table.idOf(row)));
      if (page.rows.length < 7) break;
      cursor = page.table.idOf(page.rows[page.rows.length - 1]!);
    }
    expect(read).to.deep.equal(living);
    // After an id that is nobody's, and after the last.
    const after = await order.after('prn_0500x', 3);
    expect(after.rows.map((row) => after.table.idOf(row))).to.deep.equal(
      living.filter((id) => id > 'prn_0500x').slice(0, 3),
    );
    expect((await order.after(living[living.length - 1]!, 3)).rows).to.deep.equal([]);
    // A principal deleted meanwhile is left out.
    put(index, living[1]!, { status: 'deleted' });
    const next = await order.after(living[0]!, 2);
    expect(next.rows.map((row) => next.table.idOf(row))).to.deep.equal([living[2], living[3]]);
    // A full build numbers the rows anew: the order is made again, and paging goes on by id.
    const rebuilt = new PolicyIndex();
    for (const id of [...ids].reverse()) {
      put(rebuilt, id, { status: id.endsWith('3') || id === living[1] ? 'deleted' : 'active' });
    }
    const rowBefore = index.table.rowOf(living[2]!);
    index.replaceWith(rebuilt);
    expect(index.table.rowOf(living[2]!)).to.not.equal(rowBefore);
    const again = await order.after(living[0]!, 2);
    expect(again.table).to.equal(index.table);
    expect(again.rows.map((row) => again.table.idOf(row))).to.deep.equal([living[2], living[3]]);
    expect(await order.count()).to.equal(living.length - 1);
  });

  it('finds owners by exact email, deleted ones too, and keeps them through a snapshot', () => {
    const index = new PolicyIndex();
    put(index, 'prn_b', { type: 'USER', email: 'Pat@example.com' });
    put(index, 'prn_a', { type: 'USER', email: 'pat@example.com', status: 'deprovisioned' });
    put(index, 'prn_c', { type: 'USER', email: 'pat@example.com' });
    put(index, 'prn_0', { type: 'USER', email: 'pat@example.com' });
    put(index, 'prn_0', { type: 'USER', email: 'pat@example.com', status: 'deleted' });
    put(index, 'prn_d', { type: 'USER', email: 'gone@example.com', status: 'deleted' });
    put(index, 'prn_x', { type: 'SERVICE_ACCOUNT', email: 'svc@example.com' });
    const check = (ix: PolicyIndex) => {
      const { table } = ix;
      const idOf = (row: number) => (row < 0 ? null : table.idOf(row));
      expect(table.rowsWithExactEmail('pat@example.com').map(idOf).sort()).to.deep.equal([
        'prn_0',
        'prn_a',
        'prn_c',
      ]);
      expect(idOf(ownerRow(table, 'pat@example.com'))).to.equal('prn_c');
      expect(idOf(ownerRow(table, 'Pat@example.com'))).to.equal('prn_b');
      expect(idOf(ownerRow(table, 'PAT@example.com'))).to.equal(null);
      expect(idOf(ownerRow(table, 'gone@example.com'))).to.equal('prn_d');
      expect(idOf(ownerRow(table, 'prn_d'))).to.equal('prn_d');
      // Only USERs own by email.
      expect(idOf(ownerRow(table, 'svc@example.com'))).to.equal(null);
    };
    check(index);
    // Among the gone, the first by id: a deleted one before a deprovisioned one.
    put(index, 'prn_c', { type: 'USER', email: 'pat@example.com', status: 'deprovisioned' });
    expect(index.table.idOf(ownerRow(index.table, 'pat@example.com'))).to.equal('prn_0');
    put(index, 'prn_c', { type: 'USER', email: 'pat@example.com' });
    const sections = new MemorySections();
    index.save(sections);
    check(PolicyIndex.restore(sections));
  });

  it('names the manager of the REPORTS_TO edge: none once either side is deleted', () => {
    const index = new PolicyIndex();
    put(index, 'prn_boss');
    put(index, 'prn_left', { status: 'deprovisioned' });
    put(index, 'prn_a', { attributes: { manager_id: 'prn_boss' } });
    put(index, 'prn_b', { attributes: { manager_id: 'prn_left' } });
    put(index, 'prn_c', { attributes: { manager_id: 'prn_nobody' } });
    const { table } = index;
    const manager = (id: string) => managerOf(table, table.rowOf(id));
    expect([manager('prn_a'), manager('prn_b'), manager('prn_c')]).to.deep.equal([
      'prn_boss',
      'prn_left',
      null,
    ]);
    put(index, 'prn_boss', { status: 'deleted' });
    put(index, 'prn_b', { status: 'deleted', attributes: { manager_id: 'prn_left' } });
    expect([manager('prn_a'), manager('prn_b')]).to.deep.equal([null, null]);
  });
});
