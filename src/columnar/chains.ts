import { i32 } from './column.js';
import type { SectionSink, SectionSource } from './sections.js';

const EMPTY = -1;

/**
 * A lookup of rows by an integer key (a string's code), where several rows may share a key: a
 * hash table from each key to the first of its rows, and a link from each row to the next row
 * of the same key. A row is under one key at a time.
 */
export class Chains {
  private keys = new Int32Array(1024).fill(EMPTY);
  private heads = new Int32Array(1024).fill(EMPTY);
  private filled = 0;
  /** Per row: the next row of its key (−1: the last). */
  private readonly next = i32(1024, EMPTY);

  /** Bytes held off the heap. */
  get bytes(): number {
    return this.keys.byteLength + this.heads.byteLength + this.next.bytes;
  }

  /** Writes the lookup as sections named `<name>.*`. */
  save(out: SectionSink, name: string): void {
    out.i32(`${name}.keys`, this.keys);
    out.i32(`${name}.heads`, this.heads);
    out.i32(`${name}.next`, this.next.array);
  }

  /** Reads back what `save` wrote, into an empty lookup. */
  restore(source: SectionSource, name: string): void {
    this.keys = Int32Array.from(source.i32(`${name}.keys`));
    this.heads = Int32Array.from(source.i32(`${name}.heads`));
    const next = source.i32(`${name}.next`);
    this.next.load(next, next.length);
    if (this.keys.length !== this.heads.length || (this.keys.length & (this.keys.length - 1)) !== 0)
      throw new Error(`chains ${name}: keys and heads do not fit`);
    this.filled = 0;
    for (const key of this.keys) if (key !== EMPTY) this.filled += 1;
  }

  add(key: number, row: number): void {
    this.next.ensure(row + 1);
    const slot = this.slot(key, true);
    this.next.array[row] = this.heads[slot]!;
    this.heads[slot] = row;
  }

  remove(key: number, row: number): void {
    const slot = this.slot(key, false);
    if (slot < 0) return;
    const next = this.next.array;
    let at = this.heads[slot]!;
    if (at === row) {
      this.heads[slot] = next[row]!;
      next[row] = EMPTY;
      return;
    }
    while (at !== EMPTY) {
      const after = next[at]!;
      if (after === row) {
        next[at] = next[row]!;
        next[row] = EMPTY;
        return;
      }
      at = after;
    }
  }

  /** The rows under a key, most recently added first. */
  rows(key: number): number[] {
    const out: number[] = [];
    const slot = this.slot(key, false);
    if (slot < 0) return out;
    for (let at = this.heads[slot]!; at !== EMPTY; at = this.next.array[at]!) out.push(at);
    return out;
  }

  private slot(key: number, create: boolean): number {
    const mask = this.keys.length - 1;
    for (let slot = mix(key) & mask; ; slot = (slot + 1) & mask) {
      const k = this.keys[slot]!;
      if (k === key) return slot;
      if (k === EMPTY) {
        if (!create) return -1;
        // A key whose rows all left keeps its slot (its head empty) until the index is rebuilt.
        if ((this.filled + 1) * 2 > this.keys.length) {
          this.grow();
          return this.slot(key, true);
        }
        this.keys[slot] = key;
        this.filled += 1;
        return slot;
      }
    }
  }

  private grow(): void {
    const keys = this.keys;
    const heads = this.heads;
    this.keys = new Int32Array(keys.length * 2).fill(EMPTY);
    this.heads = new Int32Array(keys.length * 2).fill(EMPTY);
    const mask = this.keys.length - 1;
    for (let i = 0; i < keys.length; i += 1) {
      if (keys[i] === EMPTY) continue;
      let slot = mix(keys[i]!) & mask;
      while (this.keys[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.keys[slot] = keys[i]!;
      this.heads[slot] = heads[i]!;
    }
  }
}

function mix(key: number): number {
  let h = Math.imul(key ^ (key >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) >>> 0;
}
