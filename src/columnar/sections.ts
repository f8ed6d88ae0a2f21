import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { crc32 } from 'node:zlib';

/**
 * A file of named sections: typed arrays written as they are in memory and JSON values, each
 * with its CRC-32, behind a header that lists them. What the decision index's snapshot is made
 * of (src/decisions/snapshot.ts). Sections start on 8-byte boundaries, so that each can be read
 * back as a typed array over the file's bytes.
 *
 *   bytes 0-7    the magic: `PASSECT1`
 *   bytes 8-11   the header's length (little-endian)
 *   then         the header, JSON: { meta, sections: [{ name, kind, offset, length, crc }] }
 *   then         the sections
 */

const MAGIC = Buffer.from('PASSECT1', 'latin1');
/** Bytes checksummed between two turns of the event loop. */
const CRC_SLICE = 8 * 1024 * 1024;

type Kind = 'u8' | 'i32' | 'u32' | 'f64' | 'json';

interface Entry {
  name: string;
  kind: Kind;
  offset: number;
  length: number;
  crc: number;
}

/** Where a table writes its parts. */
export interface SectionSink {
  u8(name: string, view: Uint8Array): void;
  i32(name: string, view: Int32Array): void;
  u32(name: string, view: Uint32Array): void;
  f64(name: string, view: Float64Array): void;
  json(name: string, value: unknown): void;
}

/** Where a table reads its parts back (views over the file's bytes: copy what is kept). */
export interface SectionSource {
  u8(name: string): Uint8Array;
  i32(name: string): Int32Array;
  u32(name: string): Uint32Array;
  f64(name: string): Float64Array;
  json<T>(name: string): T;
}

/** Sections as `MemorySections` holds them: typed arrays, and JSON values as their text. */
export type HeldSections = [string, unknown][];

/** Sections held in memory, copied as they are written: a snapshot without a file. */
export class MemorySections implements SectionSink, SectionSource {
  private readonly held: Map<string, unknown>;

  constructor(held?: HeldSections) {
    this.held = new Map(held);
  }

  u8(name: string, view?: Uint8Array): Uint8Array {
    return this.take(name, view, (v) => v.slice());
  }
  i32(name: string, view?: Int32Array): Int32Array {
    return this.take(name, view, (v) => v.slice());
  }
  u32(name: string, view?: Uint32Array): Uint32Array {
    return this.take(name, view, (v) => v.slice());
  }
  f64(name: string, view?: Float64Array): Float64Array {
    return this.take(name, view, (v) => v.slice());
  }

  /**
   * What is held, to send to another thread, and the memory that can move there without a copy
   * (each array's own): `new MemorySections(held)` reads it back on the other side.
   */
  handOver(): { held: HeldSections; transfer: ArrayBuffer[] } {
    const held = [...this.held.entries()];
    const transfer: ArrayBuffer[] = [];
    for (const [, value] of held) {
      if (ArrayBuffer.isView(value)) transfer.push(value.buffer as ArrayBuffer);
    }
    return { held, transfer };
  }
  json<T>(name: string, value?: unknown): T {
    if (value !== undefined) this.held.set(name, JSON.stringify(value));
    const text = this.held.get(name);
    if (typeof text !== 'string') throw new SectionsRefused(`section ${name} is missing`);
    return JSON.parse(text) as T;
  }

  private take<V>(name: string, view: V | undefined, copy: (v: V) => V): V {
    if (view !== undefined) this.held.set(name, copy(view));
    const held = this.held.get(name);
    if (held === undefined) throw new SectionsRefused(`section ${name} is missing`);
    return held as V;
  }
}

/** Why a file could not be read as sections: missing, damaged, or of another format. */
export class SectionsRefused extends Error {}

/**
 * Collects sections, then writes them to `file` (through a temporary file renamed over it, so
 * that a reader never sees half a file). The views are read while the file is written: what
 * they show must not change until `write` settles.
 */
export class SectionWriter implements SectionSink {
  private readonly parts: { name: string; kind: Kind; bytes: Uint8Array }[] = [];

  u8(name: string, view: Uint8Array): void {
    this.add(name, 'u8', view);
  }
  i32(name: string, view: Int32Array): void {
    this.add(name, 'i32', view);
  }
  u32(name: string, view: Uint32Array): void {
    this.add(name, 'u32', view);
  }
  f64(name: string, view: Float64Array): void {
    this.add(name, 'f64', view);
  }
  json(name: string, value: unknown): void {
    this.parts.push({ name, kind: 'json', bytes: Buffer.from(JSON.stringify(value), 'utf8') });
  }

  /** Writes the sections and `meta`; answers the file's size in bytes. */
  async write(file: string, meta: unknown): Promise<number> {
    const entries: Entry[] = [];
    let offset = 0;
    for (const part of this.parts) {
      entries.push({
        name: part.name,
        kind: part.kind,
        offset,
        length: part.bytes.byteLength,
        crc: await checksum(part.bytes),
      });
      offset = align(offset + part.bytes.byteLength);
    }
    const header = Buffer.from(JSON.stringify({ meta, sections: entries }), 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.byteLength);
    const start = align(MAGIC.byteLength + 4 + header.byteLength);
    const temporary = `${file}.${process.pid}.${(written += 1)}.tmp`;
    await mkdir(path.dirname(file), { recursive: true });
    const handle = await open(temporary, 'w');
    try {
      let at = 0;
      const put = async (bytes: Uint8Array): Promise<void> => {
        for (let done = 0; done < bytes.byteLength;) {
          const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done, at + done);
          done += bytesWritten;
        }
        at += bytes.byteLength;
      };
      await put(MAGIC);
      await put(length);
      await put(header);
      at = start;
      for (let i = 0; i < this.parts.length; i += 1) {
        at = start + entries[i]!.offset;
        await put(this.parts[i]!.bytes);
      }
      await handle.sync();
    } catch (err) {
      await handle.close();
      await rm(temporary, { force: true });
      throw err;
    }
    await handle.close();
    await rename(temporary, file);
    return start + offset;
  }

  private add(name: string, kind: Kind, view: ArrayBufferView): void {
    this.parts.push({ name, kind, bytes: new Uint8Array(view.buffer, view.byteOffset, view.byteLength) });
  }
}

/**
 * A file of sections, its header read when opened and each section when asked for: read into
 * memory of its own (so that a file larger than a buffer can be, and no copy of the whole file,
 * is ever held) and its CRC checked before it is given. Reads block: for a start, before serving.
 */
export class SectionReader implements SectionSource {
  private constructor(
    private readonly fd: number,
    private readonly start: number,
    private readonly entries: Map<string, Entry>,
    readonly meta: unknown,
  ) {}

  static async open(file: string): Promise<SectionReader> {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (err) {
      throw new SectionsRefused(`cannot read ${file}: ${(err as Error).message}`);
    }
    try {
      const { size } = fstatSync(fd);
      const head = Buffer.alloc(MAGIC.byteLength + 4);
      readAt(fd, head, 0);
      if (size < head.byteLength || !head.subarray(0, MAGIC.byteLength).equals(MAGIC)) {
        throw new SectionsRefused('not a file of sections of this format');
      }
      const headerLength = head.readUInt32LE(MAGIC.byteLength);
      const headerEnd = head.byteLength + headerLength;
      if (headerEnd > size) throw new SectionsRefused('the header is cut short');
      const text = Buffer.alloc(headerLength);
      readAt(fd, text, head.byteLength);
      let header: { meta: unknown; sections: Entry[] };
      try {
        header = JSON.parse(text.toString('utf8')) as typeof header;
      } catch {
        throw new SectionsRefused('the header is not JSON');
      }
      const start = align(headerEnd);
      const entries = new Map<string, Entry>();
      for (const entry of header.sections) {
        if (start + entry.offset + entry.length > size)
          throw new SectionsRefused(`section ${entry.name} is cut short`);
        entries.set(entry.name, entry);
      }
      return await Promise.resolve(new SectionReader(fd, start, entries, header.meta));
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Reads a whole file's sections (the header, then each as it is asked for). */
  static read(file: string): Promise<SectionReader> {
    return SectionReader.open(file);
  }

  close(): void {
    closeSync(this.fd);
  }

  u8(name: string): Uint8Array {
    return new Uint8Array(this.section(name, 'u8'));
  }
  i32(name: string): Int32Array {
    return new Int32Array(this.section(name, 'i32'));
  }
  u32(name: string): Uint32Array {
    return new Uint32Array(this.section(name, 'u32'));
  }
  f64(name: string): Float64Array {
    return new Float64Array(this.section(name, 'f64'));
  }
  json<T>(name: string): T {
    return JSON.parse(Buffer.from(this.section(name, 'json')).toString('utf8')) as T;
  }

  /** A section's bytes, read and checked. */
  private section(name: string, kind: Kind): SharedArrayBuffer {
    const entry = this.entries.get(name);
    if (!entry || entry.kind !== kind) throw new SectionsRefused(`section ${name} (${kind}) is missing`);
    // Shared memory, which a table's column can take as it is (`Column.load`).
    const bytes = new Uint8Array(new SharedArrayBuffer(entry.length));
    readAt(this.fd, bytes, this.start + entry.offset);
    let crc = 0;
    for (let at = 0; at < bytes.byteLength; at += CRC_SLICE) {
      crc = crc32(bytes.subarray(at, Math.min(bytes.byteLength, at + CRC_SLICE)), crc);
    }
    if (crc !== entry.crc) throw new SectionsRefused(`section ${name} is damaged`);
    return bytes.buffer;
  }
}

const align = (n: number): number => Math.ceil(n / 8) * 8;

/** Fills `into` from the file at `position`. */
function readAt(fd: number, into: Uint8Array, position: number): void {
  for (let done = 0; done < into.byteLength;) {
    const read = readSync(fd, into, done, into.byteLength - done, position + done);
    if (read === 0) throw new SectionsRefused('the file is cut short');
    done += read;
  }
}

/** Files this process has begun to write: each writes through a temporary file of its own. */
let written = 0;

/** The CRC-32 of some bytes, a slice at a time, letting the event loop turn between slices. */
async function checksum(bytes: Uint8Array): Promise<number> {
  let crc = 0;
  for (let at = 0; at < bytes.byteLength; at += CRC_SLICE) {
    if (at > 0) await setImmediate();
    crc = crc32(bytes.subarray(at, Math.min(bytes.byteLength, at + CRC_SLICE)), crc);
  }
  return crc;
}
