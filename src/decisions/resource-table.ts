import { u8 } from '../columnar/column.js';
import { RowSet } from '../columnar/row-set.js';
import type { SectionSink, SectionSource } from '../columnar/sections.js';
import { codes, StringPool } from '../columnar/strings.js';
import { globMatches, type Glob } from '../policies/patterns.js';
import type { IxResource } from './model.js';

/**
 * The registered resources of the decision index: each a row named by `type`, NUL, identifier;
 * its identifier and attributes (as JSON text) codes of a string pool. Per type, the rows sorted
 * by identifier, made again after a change of that type when next asked for, so that a glob looks
 * only at the identifiers that start with its literal prefix.
 */
export class ResourceTable {
  private readonly keys = new StringPool(1 << 16);
  private readonly strings = new StringPool(1 << 16);
  private readonly live = u8();
  private readonly identifier = codes();
  private readonly attributes = codes();
  private readonly byType = new Map<string, { rows: RowSet; sorted: Int32Array | null }>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return (
      this.keys.bytesHeld +
      this.strings.bytesHeld +
      this.live.bytes +
      this.identifier.bytes +
      this.attributes.bytes
    );
  }

  /** Writes the table as sections named `resources.*`. */
  save(out: SectionSink): void {
    const n = this.keys.size;
    this.keys.save(out, 'resources.keys');
    this.strings.save(out, 'resources.strings');
    out.u8('resources.live', this.live.array.subarray(0, n));
    out.i32('resources.identifier', this.identifier.array.subarray(0, n));
    out.i32('resources.attributes', this.attributes.array.subarray(0, n));
  }

  /** Reads back what `save` wrote, into an empty table. */
  restore(source: SectionSource): void {
    this.keys.restore(source, 'resources.keys');
    this.strings.restore(source, 'resources.strings');
    const n = this.keys.size;
    this.live.load(source.u8('resources.live'), n);
    this.identifier.load(source.i32('resources.identifier'), n);
    this.attributes.load(source.i32('resources.attributes'), n);
    for (let row = 0; row < n; row += 1) {
      if (this.live.array[row] !== 1) continue;
      const key = this.keys.text(row);
      const type = key.slice(0, key.indexOf('\u0000'));
      let entry = this.byType.get(type);
      if (!entry) this.byType.set(type, (entry = { rows: new RowSet(), sorted: null }));
      entry.rows.add(row);
      this.count += 1;
    }
  }

  get(type: string, identifier: string): IxResource | undefined {
    const row = this.keys.find(`${type}\u0000${identifier}`);
    if (row < 0 || this.live.array[row] !== 1) return undefined;
    return {
      type,
      identifier,
      attributes: JSON.parse(this.strings.text(this.attributes.array[row]!)) as Record<string, unknown>,
    };
  }

  has(type: string, identifier: string): boolean {
    const row = this.keys.find(`${type}\u0000${identifier}`);
    return row >= 0 && this.live.array[row] === 1;
  }

  put(type: string, identifier: string, resource: IxResource | undefined): void {
    const key = `${type}\u0000${identifier}`;
    if (!resource) {
      const row = this.keys.find(key);
      if (row < 0 || this.live.array[row] !== 1) return;
      this.live.array[row] = 0;
      this.count -= 1;
      const entry = this.byType.get(type)!;
      entry.rows.delete(row);
      entry.sorted = null;
      if (entry.rows.size === 0) this.byType.delete(type);
      return;
    }
    const row = this.keys.intern(key);
    this.live.ensure(row + 1);
    this.identifier.ensure(row + 1);
    this.attributes.ensure(row + 1);
    this.identifier.array[row] = this.strings.intern(identifier);
    this.attributes.array[row] = this.strings.intern(JSON.stringify(resource.attributes));
    if (this.live.array[row] === 1) return;
    this.live.array[row] = 1;
    this.count += 1;
    let entry = this.byType.get(type);
    if (!entry) this.byType.set(type, (entry = { rows: new RowSet(), sorted: null }));
    entry.rows.add(row);
    entry.sorted = null;
  }

  /** Registered identifiers of a type that a glob matches, in identifier order. */
  matching(type: string, glob: Glob): string[] {
    const entry = this.byType.get(type);
    if (!entry) return [];
    const sorted = (entry.sorted ??= this.sort(entry.rows));
    const prefix = glob.prefix;
    // The first identifier not below the prefix: matches are in the run that starts there.
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.identifierOf(sorted[mid]!) < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < sorted.length; i += 1) {
      const identifier = this.identifierOf(sorted[i]!);
      if (!identifier.startsWith(prefix)) break;
      if (globMatches(glob, identifier)) out.push(identifier);
    }
    return out;
  }

  /** Every registered resource of a type. */
  *ofType(type: string): Iterable<IxResource> {
    const entry = this.byType.get(type);
    if (!entry) return;
    for (const row of entry.rows.toArray()) {
      yield {
        type,
        identifier: this.identifierOf(row),
        attributes: JSON.parse(this.strings.text(this.attributes.array[row]!)) as Record<string, unknown>,
      };
    }
  }

  /** Every registered resource. */
  *all(): Iterable<IxResource> {
    for (const type of this.byType.keys()) yield* this.ofType(type);
  }

  private identifierOf(row: number): string {
    return this.strings.text(this.identifier.array[row]!);
  }

  private sort(rows: RowSet): Int32Array {
    const list = Array.from(rows.toArray(), (row) => ({ row, identifier: this.identifierOf(row) }));
    list.sort((a, b) => (a.identifier < b.identifier ? -1 : a.identifier > b.identifier ? 1 : 0));
    return Int32Array.from(list, (e) => e.row);
  }
}
