import { f64, i32, u32, type Column } from './column.js';
import type { SectionSink, SectionSource } from './sections.js';

/**
 * Many small sorted lists of integers in one arena: an adjacency (a principal's groups, a group's
 * members) with a list per owner. Each list is a run of the arena with room to grow; a list that
 * outgrows its run moves to the end of the arena with twice the room, leaving its old run unused
 * until the arena is compacted (when the unused part passes the used one). Lists stay sorted,
 * so membership is a binary search. An arena made `timed` keeps a number beside each value (when
 * a membership began), given by `set` and moved with its value.
 */
export class ListArena {
  private times: Column<Float64Array> | null;

  constructor(timed = false) {
    this.times = timed ? f64(4096, NaN) : null;
  }

  private readonly start = u32(1024);
  private readonly length = u32(1024);
  private readonly capacity = u32(1024);
  private data = i32(4096);
  private used = 0;
  private unused = 0;
  /** Owners with a list: every owner below this number has a slot. */
  private owners = 0;

  /** Bytes held off the heap. */
  get bytes(): number {
    return (
      this.start.bytes + this.length.bytes + this.capacity.bytes + this.data.bytes + (this.times?.bytes ?? 0)
    );
  }

  /** The number kept beside the `i`th value of `owner`'s list (NaN: none). */
  timeAt(owner: number, i: number): number {
    return this.times ? this.times.array[this.start.array[owner]! + i]! : NaN;
  }

  /** How many values the list of `owner` holds. */
  size(owner: number): number {
    return owner < this.owners ? this.length.array[owner]! : 0;
  }

  /** The `i`th value of `owner`'s list (no bounds check). */
  at(owner: number, i: number): number {
    return this.data.array[this.start.array[owner]! + i]!;
  }

  /** The list of `owner` as a fresh array. */
  values(owner: number): number[] {
    const n = this.size(owner);
    const out = new Array<number>(n);
    const base = n > 0 ? this.start.array[owner]! : 0;
    for (let i = 0; i < n; i += 1) out[i] = this.data.array[base + i]!;
    return out;
  }

  has(owner: number, value: number): boolean {
    return this.position(owner, value) >= 0;
  }

  /** Adds a value to a list; true when it was not there. */
  add(owner: number, value: number): boolean {
    this.own(owner);
    const at = this.position(owner, value);
    if (at >= 0) return false;
    const insert = -at - 1;
    const n = this.length.array[owner]!;
    if (n === this.capacity.array[owner]) this.move(owner, Math.max(2, n * 2));
    const base = this.start.array[owner]!;
    const data = this.data.array;
    data.copyWithin(base + insert + 1, base + insert, base + n);
    data[base + insert] = value;
    if (this.times) {
      this.times.array.copyWithin(base + insert + 1, base + insert, base + n);
      this.times.array[base + insert] = NaN;
    }
    this.length.array[owner] = n + 1;
    return true;
  }

  /** Removes a value from a list; true when it was there. */
  delete(owner: number, value: number): boolean {
    const at = this.position(owner, value);
    if (at < 0) return false;
    const base = this.start.array[owner]!;
    const n = this.length.array[owner]!;
    this.data.array.copyWithin(base + at, base + at + 1, base + n);
    this.times?.array.copyWithin(base + at, base + at + 1, base + n);
    this.length.array[owner] = n - 1;
    return true;
  }

  /**
   * Replaces a list with these values (any order, repeats dropped), with the number each keeps
   * beside it in a timed arena (`times[i]` for `values[i]`; the first of repeats wins).
   */
  set(owner: number, values: ArrayLike<number>, times?: ArrayLike<number>): void {
    this.own(owner);
    const order = Array.from({ length: values.length }, (_, i) => i).sort(
      (a, b) => values[a]! - values[b]! || a - b,
    );
    let n = 0;
    for (let k = 0; k < order.length; k += 1) {
      if (k === 0 || values[order[k]!] !== values[order[n - 1]!]) order[n++] = order[k]!;
    }
    if (n > this.capacity.array[owner]!) this.move(owner, n, false);
    const base = this.start.array[owner]!;
    for (let k = 0; k < n; k += 1) {
      this.data.array[base + k] = values[order[k]!]!;
      if (this.times) this.times.array[base + k] = times?.[order[k]!] ?? NaN;
    }
    this.length.array[owner] = n;
  }

  /** Whether the list of `owner` holds exactly these values and numbers (sorted as `set` sorts them). */
  same(owner: number, values: ArrayLike<number>, times?: ArrayLike<number>): boolean {
    const n = this.size(owner);
    if (n !== values.length) return false;
    const base = n > 0 ? this.start.array[owner]! : 0;
    for (let i = 0; i < n; i += 1) {
      if (this.data.array[base + i] !== values[i]) return false;
      if (this.times && !Object.is(this.times.array[base + i], times?.[i] ?? NaN)) return false;
    }
    return true;
  }

  clear(owner: number): void {
    if (owner < this.owners) this.length.array[owner] = 0;
  }

  /** Writes the arena as sections named `<name>.*`. */
  save(out: SectionSink, name: string): void {
    out.u32(`${name}.start`, this.start.array.subarray(0, this.owners));
    out.u32(`${name}.length`, this.length.array.subarray(0, this.owners));
    out.u32(`${name}.capacity`, this.capacity.array.subarray(0, this.owners));
    out.i32(`${name}.data`, this.data.array.subarray(0, this.used));
    if (this.times) out.f64(`${name}.times`, this.times.array.subarray(0, this.used));
  }

  /** Reads back what `save` wrote, into an empty arena. */
  restore(source: SectionSource, name: string): void {
    const start = source.u32(`${name}.start`);
    const owners = start.length;
    this.start.load(start, owners);
    this.length.load(source.u32(`${name}.length`), owners);
    this.capacity.load(source.u32(`${name}.capacity`), owners);
    const data = source.i32(`${name}.data`);
    this.data.load(data, data.length);
    this.times?.load(source.f64(`${name}.times`), data.length);
    this.owners = owners;
    this.used = data.length;
    let live = 0;
    for (let o = 0; o < owners; o += 1) {
      if (
        this.start.array[o]! + this.capacity.array[o]! > this.used ||
        this.length.array[o]! > this.capacity.array[o]!
      )
        throw new Error(`list arena ${name}: list ${o} lies outside its data`);
      live += this.capacity.array[o]!;
    }
    this.unused = this.used - live;
  }

  private own(owner: number): void {
    if (owner < this.owners) return;
    const n = owner + 1;
    this.start.ensure(n);
    this.length.ensure(n);
    this.capacity.ensure(n);
    for (let o = this.owners; o < n; o += 1) {
      this.start.array[o] = 0;
      this.length.array[o] = 0;
      this.capacity.array[o] = 0;
    }
    this.owners = n;
  }

  private position(owner: number, value: number): number {
    if (owner >= this.owners) return -1;
    const data = this.data.array;
    const base = this.start.array[owner]!;
    let lo = 0;
    let hi = this.length.array[owner]! - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = data[base + mid]!;
      if (v < value) lo = mid + 1;
      else if (v > value) hi = mid - 1;
      else return mid;
    }
    return -lo - 1;
  }

  /** Gives a list a run of `room` values at the end of the arena, its values copied when `keep`. */
  private move(owner: number, room: number, keep = true): void {
    if (this.unused > 1024 && this.unused > this.used - this.unused) this.compact();
    this.data.ensure(this.used + room);
    this.times?.ensure(this.used + room);
    const from = this.start.array[owner]!;
    const n = this.length.array[owner]!;
    if (keep && n > 0) {
      this.data.array.copyWithin(this.used, from, from + n);
      this.times?.array.copyWithin(this.used, from, from + n);
    }
    this.unused += this.capacity.array[owner]!;
    this.start.array[owner] = this.used;
    this.capacity.array[owner] = room;
    this.used += room;
  }

  /** Copies every list into a fresh arena, with no unused runs between them. */
  private compact(): void {
    let live = 0;
    for (let o = 0; o < this.owners; o += 1) live += this.length.array[o]!;
    const next = i32(Math.max(4096, live * 2));
    const times = this.times && f64(Math.max(4096, live * 2), NaN);
    let at = 0;
    for (let o = 0; o < this.owners; o += 1) {
      const n = this.length.array[o]!;
      const from = this.start.array[o]!;
      next.array.set(this.data.array.subarray(from, from + n), at);
      times?.array.set(this.times!.array.subarray(from, from + n), at);
      this.start.array[o] = at;
      this.capacity.array[o] = n;
      at += n;
    }
    this.data = next;
    this.times = times;
    this.used = at;
    this.unused = 0;
  }
}
