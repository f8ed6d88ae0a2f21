import { expect } from 'chai';
import fc from 'fast-check';
import { RowMarks } from '../../src/columnar/row-marks.js';

describe('row marks', () => {
  it('reads back the last mark of each row and 0 for the others, whether few or many rows are asked about', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2_000 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 1_000 })), { maxLength: 300 }),
        (rows, marks) => {
          const expected = new Map<number, number>();
          const asked = [new RowMarks(rows, marks.length), new RowMarks(rows, rows)];
          for (const [r, mark] of marks) {
            const row = r % rows;
            expected.set(row, mark);
            for (const m of asked) m.set(row, mark);
          }
          for (let row = 0; row < rows; row += 1)
            for (const m of asked) expect(m.get(row)).to.equal(expected.get(row) ?? 0);
        },
      ),
    );
  });
});
