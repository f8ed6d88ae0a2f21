/**
 * A set of row numbers, held as a sorted array while it is small and as a bitset once it is
 * dense (a bit per row costs less than four bytes per member beyond one member in 32 rows). It
 * never takes more than four bytes per member, or a bit per row, whichever is less; its storage
 * is a typed array, outside the JavaScript heap.
 */
export class RowSet {
  /** Sorted members (sparse), or null when `bits` holds them. */
  private list: Int32Array | null = new Int32Array(4);
  private bits: Uint32Array | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Bytes held. */
  get bytes(): number {
    return (this.list?.byteLength ?? 0) + (this.bits?.byteLength ?? 0);
  }

  has(row: number): boolean {
    const bits = this.bits;
    if (bits !== null) {
      const word = row >>> 5;
      return word < bits.length && (bits[word]! & (1 << (row & 31))) !== 0;
    }
    return this.position(row) >= 0;
  }

  /** Adds a row; true when it was not there. */
  add(row: number): boolean {
    const bits = this.bits;
    if (bits !== null) {
      const word = row >>> 5;
      if (word >= bits.length) this.growBits(word + 1);
      const mask = 1 << (row & 31);
      if ((this.bits![word]! & mask) !== 0) return false;
      this.bits![word]! |= mask;
      this.count += 1;
      return true;
    }
    const at = this.position(row);
    if (at >= 0) return false;
    const insert = -at - 1;
    let list = this.list!;
    if (this.count === list.length) {
      // Dense enough for a bitset: a word per 32 rows costs less than the list would.
      if (this.count >= 64 && (this.count + 1) * 32 > this.maxRow(row)) {
        this.toBits(row);
        return this.add(row);
      }
      const grown = new Int32Array(Math.max(4, list.length * 2));
      grown.set(list);
      list = this.list = grown;
    }
    list.copyWithin(insert + 1, insert, this.count);
    list[insert] = row;
    this.count += 1;
    return true;
  }

  /** Removes a row; true when it was there. */
  delete(row: number): boolean {
    const bits = this.bits;
    if (bits !== null) {
      const word = row >>> 5;
      const mask = 1 << (row & 31);
      if (word >= bits.length || (bits[word]! & mask) === 0) return false;
      bits[word]! &= ~mask;
      this.count -= 1;
      return true;
    }
    const at = this.position(row);
    if (at < 0) return false;
    this.list!.copyWithin(at, at + 1, this.count);
    this.count -= 1;
    return true;
  }

  /** Calls `visit` with each row, in increasing order. */
  forEach(visit: (row: number) => void): void {
    const bits = this.bits;
    if (bits === null) {
      const list = this.list!;
      for (let i = 0; i < this.count; i += 1) visit(list[i]!);
      return;
    }
    for (let word = 0; word < bits.length; word += 1) {
      let w = bits[word]!;
      while (w !== 0) {
        const low = w & -w;
        visit((word << 5) + 31 - Math.clz32(low));
        w ^= low;
      }
    }
  }

  /** The rows in increasing order. */
  toArray(): Int32Array {
    if (this.bits === null) return this.list!.slice(0, this.count);
    const out = new Int32Array(this.count);
    let i = 0;
    this.forEach((row) => {
      out[i++] = row;
    });
    return out;
  }

  /** Sets the bit of every member in `target` (a bitset of at least the largest member + 1 bits). */
  orInto(target: Uint32Array): void {
    const bits = this.bits;
    if (bits !== null) {
      const n = Math.min(bits.length, target.length);
      for (let word = 0; word < n; word += 1) target[word]! |= bits[word]!;
      return;
    }
    const list = this.list!;
    for (let i = 0; i < this.count; i += 1) {
      const row = list[i]!;
      target[row >>> 5]! |= 1 << (row & 31);
    }
  }

  /** A set of the given rows (any order, repeats allowed). */
  static of(rows: ArrayLike<number>): RowSet {
    const set = new RowSet();
    const sorted = Int32Array.from(rows).sort();
    let n = 0;
    for (let i = 0; i < sorted.length; i += 1)
      if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[n++] = sorted[i]!;
    const max = n > 0 ? sorted[n - 1]! : 0;
    if (n >= 64 && n * 32 > max) {
      set.list = null;
      set.bits = new Uint32Array((max >>> 5) + 1);
      for (let i = 0; i < n; i += 1) set.bits[sorted[i]! >>> 5]! |= 1 << (sorted[i]! & 31);
    } else {
      set.list = new Int32Array(Math.max(4, n));
      set.list.set(sorted.subarray(0, n));
    }
    set.count = n;
    return set;
  }

  /** Binary search: the index of `row`, or −(insertion point) − 1. */
  private position(row: number): number {
    const list = this.list!;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = list[mid]!;
      if (v < row) lo = mid + 1;
      else if (v > row) hi = mid - 1;
      else return mid;
    }
    return -lo - 1;
  }

  private maxRow(row: number): number {
    return this.count > 0 ? Math.max(row, this.list![this.count - 1]!) : row;
  }

  private toBits(row: number): void {
    const list = this.list!;
    const bits = new Uint32Array((this.maxRow(row) >>> 5) + 1 + 64);
    for (let i = 0; i < this.count; i += 1) bits[list[i]! >>> 5]! |= 1 << (list[i]! & 31);
    this.bits = bits;
    this.list = null;
  }

  private growBits(words: number): void {
    const grown = new Uint32Array(Math.max(words, Math.ceil(this.bits!.length * 1.5)));
    grown.set(this.bits!);
    this.bits = grown;
  }
}
