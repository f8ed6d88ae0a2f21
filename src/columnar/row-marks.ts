/**
 * A positive number per row, for a pass that asks about some of a table's rows: an array over
 * every row where it asks about a good share of them, else a map of those it asks about. A row
 * never given a number reads 0.
 */
export class RowMarks {
  private readonly array: Int32Array | null;
  private readonly map: Map<number, number> | null;

  /** `rows`: the table's rows; `asked`: about how many of them the pass will mark. */
  constructor(rows: number, asked: number) {
    const dense = asked * 16 >= rows;
    this.array = dense ? new Int32Array(rows) : null;
    this.map = dense ? null : new Map();
  }

  get(row: number): number {
    return this.array ? this.array[row]! : (this.map!.get(row) ?? 0);
  }

  set(row: number, mark: number): void {
    if (this.array) this.array[row] = mark;
    else this.map!.set(row, mark);
  }
}
