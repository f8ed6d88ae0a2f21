/**
 * Growable typed arrays in shared memory: the storage of the decision index's tables. Their
 * contents live outside the JavaScript heap (the collector neither traces nor moves them), and
 * a worker thread can read them where they are.
 */

export type TypedArray =
  | Uint8Array<ArrayBufferLike>
  | Int32Array<ArrayBufferLike>
  | Uint32Array<ArrayBufferLike>
  | Float64Array<ArrayBufferLike>;

export interface TypedArrayKind<A extends TypedArray> {
  new (buffer: SharedArrayBuffer): A;
  readonly BYTES_PER_ELEMENT: number;
}

/** A typed array that grows (by half its length at least) when asked for more room. */
export class Column<A extends TypedArray> {
  array: A;

  constructor(
    private readonly kind: TypedArrayKind<A>,
    capacity = 1024,
    /** The value of elements never written (0 unless told). */
    private readonly fill = 0,
  ) {
    this.array = this.allocate(Math.max(16, capacity));
  }

  /** Makes room for elements 0 … length − 1. */
  ensure(length: number): void {
    if (length <= this.array.length) return;
    const next = this.allocate(Math.max(length, Math.ceil(this.array.length * 1.5)));
    next.set(this.array);
    this.array = next;
  }

  /** Bytes held (reserved, used or not). */
  get bytes(): number {
    return this.array.byteLength;
  }

  /** Replaces the contents with a copy of `source` (a snapshot being read back). */
  load(source: TypedArray, length: number): void {
    // Shared memory of its own (a section read from a snapshot) is taken as it is, not copied.
    if (
      source instanceof this.kind &&
      source.buffer instanceof SharedArrayBuffer &&
      source.byteOffset === 0 &&
      source.length === length &&
      length >= 16
    ) {
      this.array = source;
      return;
    }
    this.array = this.allocate(Math.max(16, length));
    this.array.set(source.subarray(0, length));
  }

  private allocate(length: number): A {
    const array = new this.kind(new SharedArrayBuffer(length * this.kind.BYTES_PER_ELEMENT));
    if (this.fill !== 0) array.fill(this.fill);
    return array;
  }
}

export const u8 = (capacity?: number, fill?: number) => new Column(Uint8Array, capacity, fill);
export const i32 = (capacity?: number, fill?: number) => new Column(Int32Array, capacity, fill);
export const u32 = (capacity?: number, fill?: number) => new Column(Uint32Array, capacity, fill);
export const f64 = (capacity?: number, fill?: number) => new Column(Float64Array, capacity, fill);
