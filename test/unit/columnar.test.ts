import { expect } from 'chai';
import fc from 'fast-check';
import { Chains } from '../../src/columnar/chains.js';
import { ListArena } from '../../src/columnar/lists.js';
import { RowSet } from '../../src/columnar/row-set.js';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  MemorySections,
  SectionReader,
  SectionsRefused,
  SectionWriter,
} from '../../src/columnar/sections.js';
import { NONE, StringPool } from '../../src/columnar/strings.js';

/**
 * The typed-array structures the decision index is made of, each against the plain JavaScript
 * collection it stands for, under random operations.
 */
describe('columnar structures', () => {
  it('a string pool gives each distinct string one code and gives it back', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('', 'a', 'é', '日本', '𝕏')),
          { maxLength: 300 },
        ),
        (strings) => {
          const pool = new StringPool(16);
          const codes = new Map<string, number>();
          for (const s of strings) {
            const code = pool.intern(s);
            if (codes.has(s)) expect(code).to.equal(codes.get(s));
            else {
              expect(code).to.equal(codes.size);
              codes.set(s, code);
            }
          }
          expect(pool.size).to.equal(codes.size);
          for (const [s, code] of codes) {
            expect(pool.text(code)).to.equal(s);
            expect(pool.find(s)).to.equal(code);
          }
          expect(pool.find('never interned \u0000')).to.equal(NONE);
          const sections = new MemorySections();
          pool.save(sections, 'pool');
          const copy = new StringPool(16);
          copy.restore(sections, 'pool');
          for (const [s, code] of codes) {
            expect(copy.find(s)).to.equal(code);
            expect(copy.text(code)).to.equal(s);
          }
          expect(copy.intern('after the copy')).to.equal(codes.size);
        },
      ),
    );
  });

  it("a string pool orders two of its strings as JavaScript's < does, ASCII or not", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string({ unit: 'binary-ascii' }),
            fc.string({ unit: 'grapheme' }),
            fc.string({ unit: 'binary' }),
            fc.constantFrom('', 'a', 'ab', 'b', 'é', '\uffff', '𝕏', '\ue000'),
          ),
          { minLength: 2, maxLength: 60 },
        ),
        (strings) => {
          const pool = new StringPool(16);
          const codes = strings.map((s) => pool.intern(s));
          const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
          strings.forEach((a, i) =>
            strings.forEach((b, j) =>
              expect(sign(pool.order(codes[i]!, codes[j]!)), `${a} against ${b}`).to.equal(
                a < b ? -1 : a > b ? 1 : 0,
              ),
            ),
          );
        },
      ),
    );
  });

  it('a row set holds what a Set holds, sparse or dense', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 10, max: 5_000 })
          .chain((range) =>
            fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: range })), { maxLength: 3_000 }),
          ),
        (ops) => {
          const set = new RowSet();
          const model = new Set<number>();
          for (const [add, row] of ops) {
            if (add) expect(set.add(row)).to.equal(!model.has(row));
            else expect(set.delete(row)).to.equal(model.has(row));
            if (add) model.add(row);
            else model.delete(row);
          }
          expect(set.size).to.equal(model.size);
          const expected = [...model].sort((a, b) => a - b);
          expect([...set.toArray()]).to.deep.equal(expected);
          for (const [, row] of ops) expect(set.has(row)).to.equal(model.has(row));
          const bits = new Uint32Array(200);
          set.orInto(bits);
          for (const row of expected) expect((bits[row >>> 5]! >>> (row & 31)) & 1).to.equal(1);
          expect([...RowSet.of([...model, ...model]).toArray()]).to.deep.equal(expected);
        },
      ),
    );
  });

  it('a list arena holds sorted lists, however they grow, shrink and move', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.tuple(
              fc.constant('add' as const),
              fc.integer({ min: 0, max: 20 }),
              fc.integer({ min: 0, max: 60 }),
            ),
            fc.tuple(
              fc.constant('delete' as const),
              fc.integer({ min: 0, max: 20 }),
              fc.integer({ min: 0, max: 60 }),
            ),
            fc.tuple(
              fc.constant('set' as const),
              fc.integer({ min: 0, max: 20 }),
              fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }),
            ),
          ),
          { maxLength: 2_000 },
        ),
        (ops) => {
          const arena = new ListArena();
          const model = new Map<number, Set<number>>();
          const of = (owner: number): Set<number> => {
            let set = model.get(owner);
            if (!set) model.set(owner, (set = new Set()));
            return set;
          };
          for (const [op, owner, value] of ops) {
            if (op === 'add')
              (expect(arena.add(owner, value)).to.equal(!of(owner).has(value)), of(owner).add(value));
            else if (op === 'delete') expect(arena.delete(owner, value)).to.equal(of(owner).delete(value));
            else {
              arena.set(owner, value);
              model.set(owner, new Set(value));
            }
          }
          for (let owner = 0; owner <= 21; owner += 1) {
            const expected = [...of(owner)].sort((a, b) => a - b);
            expect(arena.values(owner), `list ${owner}`).to.deep.equal(expected);
            expect(arena.same(owner, expected)).to.equal(true);
            for (const v of expected) expect(arena.has(owner, v)).to.equal(true);
          }
        },
      ),
    );
  });

  it('sections written to a file read back as written, and a damaged or cut one is refused', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pas-sections-'));
    try {
      const file = path.join(dir, 'nested', 'sections');
      const out = new SectionWriter();
      const big = Float64Array.from({ length: 100_000 }, (_, i) => i / 3);
      out.u8('bytes', Uint8Array.of(1, 2, 3));
      out.i32('ints', Int32Array.of(-1, 0, 2 ** 31 - 1));
      out.f64('floats', big);
      out.json('meta', { é: ['x', 1] });
      await out.write(file, { kind: 'test' });
      const back = await SectionReader.open(file);
      try {
        expect(back.meta).to.deep.equal({ kind: 'test' });
        expect([...back.u8('bytes')]).to.deep.equal([1, 2, 3]);
        expect([...back.i32('ints')]).to.deep.equal([-1, 0, 2 ** 31 - 1]);
        expect(back.f64('floats')).to.deep.equal(big);
        expect(back.json('meta')).to.deep.equal({ é: ['x', 1] });
        expect(() => back.u32('ints')).to.throw(SectionsRefused, /missing/);
      } finally {
        back.close();
      }
      const bytes = await readFile(file);
      const middle = Math.floor(bytes.length / 2);
      bytes[middle] = bytes[middle]! ^ 1;
      await writeFile(file, bytes);
      const damaged = await SectionReader.open(file);
      try {
        expect(() => damaged.f64('floats')).to.throw(SectionsRefused, /damaged/);
      } finally {
        damaged.close();
      }
      await writeFile(file, bytes.subarray(0, bytes.length - 1000));
      let refused: unknown;
      await SectionReader.open(file).catch((err: unknown) => (refused = err));
      expect(refused).to.be.instanceOf(SectionsRefused);
      await writeFile(file, 'not sections');
      refused = undefined;
      await SectionReader.open(file).catch((err: unknown) => (refused = err));
      expect(String(refused)).to.match(/not a file of sections/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('chains find every row under a key', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 300 }),
            fc.option(fc.integer({ min: 0, max: 40 }), { nil: null }),
          ),
          { maxLength: 1_000 },
        ),
        (ops) => {
          const chains = new Chains();
          const keyOf = new Map<number, number>();
          for (const [row, key] of ops) {
            const old = keyOf.get(row);
            if (old !== undefined) chains.remove(old, row);
            keyOf.delete(row);
            if (key !== null) {
              chains.add(key, row);
              keyOf.set(row, key);
            }
          }
          for (let key = 0; key <= 40; key += 1) {
            const expected = [...keyOf]
              .filter(([, k]) => k === key)
              .map(([row]) => row)
              .sort((a, b) => a - b);
            expect(
              chains.rows(key).sort((a, b) => a - b),
              `key ${key}`,
            ).to.deep.equal(expected);
          }
        },
      ),
    );
  });
});
