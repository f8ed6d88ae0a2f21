import { i32, u32, u8, type Column } from './column.js';
import type { SectionSink, SectionSource } from './sections.js';

/** Node's own slicing methods of a Buffer, which its typings leave out. */
type SliceableBuffer = Buffer & {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
};

/** No string: the code of a null. */
export const NONE = -1;

/**
 * Interned strings: each distinct string is stored once, as UTF-8 bytes in one growing arena,
 * and named by a dense code (0, 1, 2, … in the order they were first seen). Codes never change
 * and strings are never removed; a table of the decision index that stops using a string leaves
 * it here until the index is built anew. Lookup is an open-addressing hash table of codes, each
 * slot holding a code and its hash side by side, so that a probe reads one place in memory.
 */
export class StringPool {
  /** The bytes of every string, one after another. */
  private readonly bytes: Column<Uint8Array>;
  /** Where each code's bytes start; they end where the next code's start (`ends` of the last). */
  private readonly starts = u32(1024);
  private readonly hashes = u32(1024);
  /** 1 where the string is ASCII: it decodes as Latin-1, which is quicker. */
  private readonly ascii = u8(1024);
  private used = 0;
  private count = 0;
  /** Slots of [code, hash] (code −1: empty); as many slots as a power of two, at most half full. */
  private table: Int32Array;
  private mask = 511;
  private view: SliceableBuffer;
  private scratch = Buffer.allocUnsafe(256);

  constructor(capacityBytes = 64 * 1024) {
    this.bytes = u8(capacityBytes);
    this.view = Buffer.from(this.bytes.array.buffer) as SliceableBuffer;
    this.table = new Int32Array(1024).fill(NONE);
  }

  /** The slot for a hash: a code that holds the string, or an empty one. */
  private probe(hash: number, length: number): number {
    const table = this.table;
    const mask = this.mask;
    const h = hash | 0;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const code = table[slot * 2]!;
      if (code === NONE || (table[slot * 2 + 1] === h && this.equals(code, length))) return slot;
    }
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held off the heap (reserved, used or not). */
  get bytesHeld(): number {
    return (
      this.bytes.bytes + this.starts.bytes + this.hashes.bytes + this.ascii.bytes + this.table.byteLength
    );
  }

  /** The code of a string, interning it when it is new. */
  intern(text: string): number {
    const length = this.encode(text);
    const hash = hashBytes(this.scratch, length);
    const slot = this.probe(hash, length);
    const code = this.table[slot * 2]!;
    return code === NONE ? this.append(slot, hash, length) : code;
  }

  /** The code of a string, or NONE when it was never interned. */
  find(text: string): number {
    const length = this.encode(text);
    return this.table[this.probe(hashBytes(this.scratch, length), length) * 2]!;
  }

  /** The string of a code. */
  text(code: number): string {
    const start = this.starts.array[code]!;
    const end = code + 1 < this.count ? this.starts.array[code + 1]! : this.used;
    // The slices themselves, without the checks `toString` makes of its arguments.
    return this.ascii.array[code] === 1 ? this.view.latin1Slice(start, end) : this.view.utf8Slice(start, end);
  }

  /** The string of a code, or null for NONE. */
  textOrNull(code: number): string | null {
    return code === NONE ? null : this.text(code);
  }

  /**
   * The order of two strings by code point, as their UTF-8 bytes compare, read in place: negative
   * when `a` comes first, 0 when they are the same string. For ASCII text (ids), the order in
   * which JavaScript and Neo4j compare strings too.
   */
  compare(a: number, b: number): number {
    const bytes = this.bytes.array;
    const startA = this.starts.array[a]!;
    const startB = this.starts.array[b]!;
    const lengthA = (a + 1 < this.count ? this.starts.array[a + 1]! : this.used) - startA;
    const lengthB = (b + 1 < this.count ? this.starts.array[b + 1]! : this.used) - startB;
    const n = Math.min(lengthA, lengthB);
    for (let i = 0; i < n; i += 1) {
      const d = bytes[startA + i]! - bytes[startB + i]!;
      if (d !== 0) return d;
    }
    return lengthA - lengthB;
  }

  /**
   * The order JavaScript's `<` gives the strings of two codes (by UTF-16 code unit): negative
   * when `a`'s comes first, 0 for the same string (the same code). Compared in place where both
   * are ASCII, whose bytes order as their code units do; decoded otherwise.
   */
  order(a: number, b: number): number {
    if (a === b) return 0;
    if (this.ascii.array[a] === 1 && this.ascii.array[b] === 1) return this.compare(a, b);
    const [ta, tb] = [this.text(a), this.text(b)];
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  }

  /** `compare` of the string of a code with any text, interned or not. */
  compareText(code: number, text: string): number {
    const length = this.encode(text);
    const bytes = this.bytes.array;
    const scratch = this.scratch;
    const start = this.starts.array[code]!;
    const own = (code + 1 < this.count ? this.starts.array[code + 1]! : this.used) - start;
    const n = Math.min(own, length);
    for (let i = 0; i < n; i += 1) {
      const d = bytes[start + i]! - scratch[i]!;
      if (d !== 0) return d;
    }
    return own - length;
  }

  /** Writes the pool as sections named `<name>.*`. */
  save(out: SectionSink, name: string): void {
    out.u8(`${name}.bytes`, this.bytes.array.subarray(0, this.used));
    out.u32(`${name}.starts`, this.starts.array.subarray(0, this.count));
    out.u32(`${name}.hashes`, this.hashes.array.subarray(0, this.count));
    out.u8(`${name}.ascii`, this.ascii.array.subarray(0, this.count));
    out.i32(`${name}.table`, this.table);
  }

  /** Reads back what `save` wrote, into an empty pool. */
  restore(source: SectionSource, name: string): void {
    const bytes = source.u8(`${name}.bytes`);
    const starts = source.u32(`${name}.starts`);
    this.bytes.load(bytes, bytes.length);
    this.view = Buffer.from(this.bytes.array.buffer) as SliceableBuffer;
    this.starts.load(starts, starts.length);
    this.hashes.load(source.u32(`${name}.hashes`), starts.length);
    this.ascii.load(source.u8(`${name}.ascii`), starts.length);
    this.table = Int32Array.from(source.i32(`${name}.table`));
    this.mask = this.table.length / 2 - 1;
    this.used = bytes.length;
    this.count = starts.length;
    const slots = this.table.length / 2;
    if ((slots & (slots - 1)) !== 0 || this.count * 2 > slots) {
      throw new Error(`string pool ${name}: its table does not fit its strings`);
    }
  }

  /** Writes the string's UTF-8 bytes into the scratch buffer; returns their count. */
  private encode(text: string): number {
    const n = text.length;
    if (n * 3 > this.scratch.length)
      this.scratch = Buffer.allocUnsafe(Math.max(n * 3, this.scratch.length * 2));
    const scratch = this.scratch;
    // Most strings here are ASCII: copied by hand, short ones skip the native call.
    for (let i = 0; i < n; i += 1) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) return scratch.write(text, 0, 'utf8');
      scratch[i] = c;
    }
    return n;
  }

  private equals(code: number, length: number): boolean {
    const start = this.starts.array[code]!;
    const end = code + 1 < this.count ? this.starts.array[code + 1]! : this.used;
    if (end - start !== length) return false;
    const bytes = this.bytes.array;
    const scratch = this.scratch;
    for (let i = 0; i < length; i += 1) if (bytes[start + i] !== scratch[i]) return false;
    return true;
  }

  private append(slot: number, hash: number, length: number): number {
    const code = this.count;
    this.bytes.ensure(this.used + length);
    if (this.bytes.array.buffer !== this.view.buffer)
      this.view = Buffer.from(this.bytes.array.buffer) as SliceableBuffer;
    this.bytes.array.set(this.scratch.subarray(0, length), this.used);
    this.starts.ensure(code + 1);
    this.hashes.ensure(code + 1);
    this.ascii.ensure(code + 1);
    this.starts.array[code] = this.used;
    this.hashes.array[code] = hash;
    let ascii = 1;
    for (let i = 0; i < length; i += 1) if (this.scratch[i]! >= 0x80) ascii = 0;
    this.ascii.array[code] = ascii;
    this.used += length;
    this.count += 1;
    this.table[slot * 2] = code;
    this.table[slot * 2 + 1] = hash | 0;
    if (this.count * 4 > this.table.length) this.rehash();
    return code;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2).fill(NONE);
    const mask = table.length / 2 - 1;
    for (let code = 0; code < this.count; code += 1) {
      const hash = this.hashes.array[code]!;
      let slot = hash & mask;
      while (table[slot * 2] !== NONE) slot = (slot + 1) & mask;
      table[slot * 2] = code;
      table[slot * 2 + 1] = hash | 0;
    }
    this.table = table;
    this.mask = mask;
  }
}

/** FNV-1a over bytes, mixed at the end so that the low bits (the slot) depend on every byte. */
function hashBytes(bytes: Uint8Array, length: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < length; i += 1) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h >>> 0;
}

/** The Int32 column type used for codes (NONE when unset). */
export const codes = (capacity?: number) => i32(capacity, NONE);
