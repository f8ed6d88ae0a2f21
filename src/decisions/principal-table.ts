import { Chains } from '../columnar/chains.js';
import { f64, i32, u8, u32, type Column } from '../columnar/column.js';
import type { SectionSink, SectionSource } from '../columnar/sections.js';
import { NONE, StringPool, codes } from '../columnar/strings.js';
import type { Subject } from '../principals/search/evaluate.js';
import { PRINCIPAL_STATUSES, PRINCIPAL_TYPES } from '../vocabulary/principals.js';
import { nameOrder, type Instant, type IxPrincipal, type PrincipalFields } from './model.js';

/**
 * The principals of the decision index as columns: each principal is a row (a dense number that
 * its id keeps for the life of the table), each field a typed array indexed by row, every string
 * a code of one string pool, attributes and metadata runs of key/value codes in one arena. All
 * of it is off the JavaScript heap: a million principals are a few dozen typed arrays, not forty
 * million small objects. A decision reads a principal through a `TablePrincipal`, which decodes a
 * field from the columns only when it is read (most decisions read the id, the status, the type
 * and the groups); `principal(row)` makes a whole `IxPrincipal` for those that want every field.
 */

const META = 1 << 30;
const LIST = 1 << 29;
const KEY = LIST - 1;
/** Status code of a row that holds no principal (never written, or removed). */
const ABSENT = 0;
const ACTIVE = 1 + PRINCIPAL_STATUSES.indexOf('active');
const DELETED = 1 + PRINCIPAL_STATUSES.indexOf('deleted');

/** A small vocabulary (types, statuses) as codes 1, 2, …; 0 is none. */
class Vocabulary {
  readonly names: string[] = [''];
  private readonly codes = new Map<string, number>();

  constructor(known: readonly string[]) {
    for (const name of known) this.code(name);
  }

  code(name: string): number {
    let code = this.codes.get(name);
    if (code === undefined) {
      code = this.names.length;
      if (code > 255) throw new Error('too many distinct principal types or statuses');
      this.names.push(name);
      this.codes.set(name, code);
    }
    return code;
  }

  find(name: string): number {
    return this.codes.get(name) ?? -1;
  }
}

const NO_TIME: Instant = [NaN, 0];

/** An instant key (`instantKey`) as epoch seconds and nanoseconds; NaN seconds when it is not one. */
export function instantOf(key: string | null): Instant {
  if (key === null || key === '') return NO_TIME;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z?$/.exec(key);
  if (!m) return NO_TIME;
  const date = new Date(0);
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  date.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  return [date.getTime() / 1000, Number((m[7] ?? '').padEnd(9, '0'))];
}

/** Epoch seconds and nanoseconds as an instant key; null for none. */
export function keyOfInstant(seconds: number, nanos: number): string | null {
  if (Number.isNaN(seconds)) return null;
  const whole = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${whole}.${String(nanos).padStart(9, '0')}`;
}

export class PrincipalTable {
  /** Ids: the code of an id is its row. */
  readonly ids = new StringPool(1 << 20);
  /** Every other string: names, emails, connector ids, attribute keys and values, risk factors. */
  readonly strings = new StringPool(1 << 20);
  private readonly types = new Vocabulary(PRINCIPAL_TYPES);
  /** `active` is code 1, `deleted` code 4 (PRINCIPAL_STATUSES' order). */
  private readonly statuses = new Vocabulary(PRINCIPAL_STATUSES);

  private readonly type = u8();
  private readonly status = u8();
  private readonly name = codes();
  private readonly email = codes();
  /** The email lower-cased, which is how standard interfaces look principals up. */
  private readonly emailLower = codes();
  private readonly source = codes();
  private readonly connectorId = codes();
  private readonly privileges = codes();
  private readonly clientId = codes();
  private readonly risk = f64();
  private readonly order = f64();
  private readonly times: Column<Float64Array>[] = [f64(1024, NaN), f64(1024, NaN), f64(1024, NaN)];
  private readonly nanos: Column<Int32Array>[] = [i32(), i32(), i32()];
  private readonly attrStart = u32();
  private readonly attrLength = u32();
  private attrs = i32(1 << 16);
  private attrUsed = 0;
  private attrUnused = 0;

  readonly byEmail = new Chains();
  /**
   * Deleted principals by their email as it is (case kept): they are not found by name, but the
   * owner an email names may be one of them (a report says so).
   */
  readonly deletedByEmail = new Chains();
  readonly byConnectorId = new Chains();
  readonly byClientId = new Chains();

  /** Rows holding a principal. */
  private live = 0;

  get size(): number {
    return this.live;
  }

  /** Rows ever given out (removed principals keep theirs). */
  get rows(): number {
    return this.ids.size;
  }

  /** Bytes held off the heap. */
  get bytes(): number {
    let n = this.ids.bytesHeld + this.strings.bytesHeld + this.attrs.bytes;
    for (const [, column] of this.columns()) n += column.bytes;
    return (
      n + this.byEmail.bytes + this.deletedByEmail.bytes + this.byConnectorId.bytes + this.byClientId.bytes
    );
  }

  /** Every column, with the name of its section (made once: the columns stay the same objects). */
  private columnList: [string, Column<Uint8Array | Int32Array | Uint32Array | Float64Array>][] | undefined;
  private columns(): [string, Column<Uint8Array | Int32Array | Uint32Array | Float64Array>][] {
    return (this.columnList ??= [
      ['type', this.type],
      ['status', this.status],
      ['name', this.name],
      ['email', this.email],
      ['emailLower', this.emailLower],
      ['source', this.source],
      ['connectorId', this.connectorId],
      ['privileges', this.privileges],
      ['clientId', this.clientId],
      ['risk', this.risk],
      ['order', this.order],
      ['attrStart', this.attrStart],
      ['attrLength', this.attrLength],
      ...this.times.map((c, i): [string, Column<Float64Array>] => [`time${i}`, c]),
      ...this.nanos.map((c, i): [string, Column<Int32Array>] => [`nanos${i}`, c]),
    ]);
  }

  /** Writes the table as sections named `principals.*`. */
  save(out: SectionSink): void {
    const rows = this.ids.size;
    this.ids.save(out, 'principals.ids');
    this.strings.save(out, 'principals.strings');
    for (const [name, column] of this.columns()) {
      const view = column.array.subarray(0, rows);
      if (view instanceof Uint8Array) out.u8(`principals.${name}`, view);
      else if (view instanceof Int32Array) out.i32(`principals.${name}`, view);
      else if (view instanceof Uint32Array) out.u32(`principals.${name}`, view);
      else out.f64(`principals.${name}`, view);
    }
    out.i32('principals.attrs', this.attrs.array.subarray(0, this.attrUsed));
    this.byEmail.save(out, 'principals.byEmail');
    this.deletedByEmail.save(out, 'principals.deletedByEmail');
    this.byConnectorId.save(out, 'principals.byConnectorId');
    this.byClientId.save(out, 'principals.byClientId');
    out.json('principals.counts', {
      live: this.live,
      attrUnused: this.attrUnused,
      types: this.types.names,
      statuses: this.statuses.names,
    });
  }

  /** Reads back what `save` wrote, into an empty table. */
  restore(source: SectionSource): void {
    this.ids.restore(source, 'principals.ids');
    this.strings.restore(source, 'principals.strings');
    const rows = this.ids.size;
    for (const [name, column] of this.columns()) {
      const section = `principals.${name}`;
      const view =
        column.array instanceof Uint8Array
          ? source.u8(section)
          : column.array instanceof Int32Array
            ? source.i32(section)
            : column.array instanceof Uint32Array
              ? source.u32(section)
              : source.f64(section);
      if (view.length !== rows) throw new Error(`${section} holds ${view.length} rows, not ${rows}`);
      column.load(view, rows);
    }
    const attrs = source.i32('principals.attrs');
    this.attrs.load(attrs, attrs.length);
    this.attrUsed = attrs.length;
    this.byEmail.restore(source, 'principals.byEmail');
    this.deletedByEmail.restore(source, 'principals.deletedByEmail');
    this.byConnectorId.restore(source, 'principals.byConnectorId');
    this.byClientId.restore(source, 'principals.byClientId');
    const counts = source.json<{ live: number; attrUnused: number; types: string[]; statuses: string[] }>(
      'principals.counts',
    );
    this.live = counts.live;
    this.attrUnused = counts.attrUnused;
    for (const name of counts.types.slice(1)) this.types.code(name);
    for (const name of counts.statuses.slice(1)) this.statuses.code(name);
    if (
      this.types.names.join() !== counts.types.join() ||
      this.statuses.names.join() !== counts.statuses.join()
    )
      throw new Error('principal types or statuses are numbered differently');
  }

  /** The row of a principal, or −1 when the table does not hold it. */
  rowOf(id: string): number {
    const row = this.ids.find(id);
    return row >= 0 && this.status.array[row] !== ABSENT ? row : -1;
  }

  /** The row an id was given, whether or not it holds a principal now; −1 when it never had one. */
  rowOfAny(id: string): number {
    return this.ids.find(id);
  }

  /** The row an id has or will have, whether or not it holds a principal now. */
  rowFor(id: string): number {
    const row = this.ids.intern(id);
    if (row >= this.capacity) this.ensure(row + 1);
    return row;
  }

  has(row: number): boolean {
    return row >= 0 && row < this.ids.size && this.status.array[row] !== ABSENT;
  }

  idOf(row: number): string {
    return this.ids.text(row);
  }

  statusOf(row: number): string {
    return this.statuses.names[this.status.array[row]!]!;
  }

  isActive(row: number): boolean {
    return this.status.array[row] === ACTIVE;
  }

  isDeleted(row: number): boolean {
    return this.status.array[row] === DELETED;
  }

  typeOf(row: number): string {
    return this.types.names[this.type.array[row]!]!;
  }

  nameOf(row: number): string {
    return this.strings.text(this.name.array[row]!);
  }

  emailOf(row: number): string | null {
    return this.strings.textOrNull(this.email.array[row]!);
  }

  connectorSourceOf(row: number): string | null {
    return this.strings.textOrNull(this.source.array[row]!);
  }

  privilegesOf(row: number): string {
    return this.strings.text(this.privileges.array[row]!);
  }

  setPrivileges(row: number, text: string): void {
    this.privileges.array[row] = this.strings.intern(text);
  }

  /** The packed start of the name (`nameOrder`): what orders principals by name, mostly. */
  orderOf(row: number): number {
    return this.order.array[row]!;
  }

  /** Principals by name, then id, as `compareNames` orders them. */
  compareRows(a: number, b: number): number {
    const oa = this.order.array[a]!;
    const ob = this.order.array[b]!;
    if (oa !== ob) return oa - ob;
    // The names, then the ids, compared where they are held (a row is its id's code).
    return this.strings.order(this.name.array[a]!, this.name.array[b]!) || this.ids.order(a, b);
  }

  /** Rows of the principals (deleted ones aside) whose lower-cased email is `lower`. */
  rowsWithEmail(lower: string): number[] {
    const code = this.strings.find(lower);
    return code < 0 ? [] : this.byEmail.rows(code);
  }

  /**
   * Rows of the principals whose email is exactly `email` (case counts, as Neo4j compares text),
   * deleted ones included.
   */
  rowsWithExactEmail(email: string): number[] {
    const out: number[] = [];
    const lower = this.strings.find(email.toLowerCase());
    if (lower >= 0)
      for (const row of this.byEmail.rows(lower)) if (this.emailOf(row) === email) out.push(row);
    const exact = this.strings.find(email);
    if (exact >= 0) out.push(...this.deletedByEmail.rows(exact));
    return out;
  }

  rowsWithConnectorId(ref: string): number[] {
    const code = this.strings.find(ref);
    return code < 0 ? [] : this.byConnectorId.rows(code);
  }

  /** AI agents (deleted ones aside) whose `attributes.client_id` is `clientId`. */
  rowsWithClientId(clientId: string): number[] {
    const code = this.strings.find(clientId);
    return code < 0 ? [] : this.byClientId.rows(code);
  }

  /** Writes a principal; returns its row. */
  put(p: PrincipalFields, row = this.rowFor(p.id)): number {
    const was = this.status.array[row] !== ABSENT;
    if (was) this.unlinkNames(row);
    else this.live += 1;
    const s = this.strings;
    this.type.array[row] = this.types.code(p.type);
    this.status.array[row] = this.statuses.code(p.status);
    this.name.array[row] = s.intern(p.name);
    const email = p.email === null ? NONE : s.intern(p.email);
    const lower = p.email === null ? null : p.email.toLowerCase();
    this.email.array[row] = email;
    this.emailLower.array[row] = lower === null ? NONE : lower === p.email ? email : s.intern(lower);
    this.source.array[row] = p.connector_source === null ? NONE : s.intern(p.connector_source);
    this.connectorId.array[row] = p.connector_id === null ? NONE : s.intern(p.connector_id);
    this.privileges.array[row] = s.intern(p.privileges);
    this.risk.array[row] = p.risk_score;
    this.order.array[row] = nameOrder(p.name);
    const times = [p.created, p.updated, p.last_login];
    for (let i = 0; i < 3; i += 1) {
      this.times[i]!.array[row] = times[i]![0];
      this.nanos[i]!.array[row] = times[i]![1];
    }
    this.writeAttributes(row, p.attributes, p.metadata);
    const clientId = p.type === 'AI_AGENT' ? p.attributes['client_id'] : undefined;
    this.clientId.array[row] = typeof clientId === 'string' && clientId !== '' ? s.intern(clientId) : NONE;
    this.linkNames(row);
    return row;
  }

  /** Takes a principal out; its row stays its id's, empty. */
  remove(row: number): void {
    if (!this.has(row)) return;
    this.unlinkNames(row);
    this.status.array[row] = ABSENT;
    this.attrUnused += this.attrLength.array[row]!;
    this.attrLength.array[row] = 0;
    this.live -= 1;
  }

  /** The principal of a row as the engine reads it, with its direct groups. */
  principal(row: number, groups: string[]): IxPrincipal {
    const s = this.strings;
    const attributes: Record<string, string | readonly string[]> = {};
    const metadata: Record<string, string> = {};
    this.readAttributes(row, attributes, metadata);
    return {
      id: this.ids.text(row),
      type: this.typeOf(row),
      status: this.statusOf(row),
      name: s.text(this.name.array[row]!),
      email: s.textOrNull(this.email.array[row]!),
      connector_source: s.textOrNull(this.source.array[row]!),
      connector_id: s.textOrNull(this.connectorId.array[row]!),
      created_at: this.timeKey(row, 0) ?? '',
      updated_at: this.timeKey(row, 1) ?? '',
      last_login: this.timeKey(row, 2),
      risk_score: this.risk.array[row]!,
      attributes,
      metadata,
      groups,
      privileges: s.text(this.privileges.array[row]!),
      order: this.order.array[row]!,
    };
  }

  /** The code of a principal type (created when new), as `typeCodeOf` gives it for a row. */
  typeCode(name: string): number {
    return this.types.code(name);
  }

  typeCodeOf(row: number): number {
    return this.type.array[row]!;
  }

  /**
   * Calls `visit` with the key and value codes of each of a principal's attributes (each element
   * of a list on its own; metadata aside), straight from the arena.
   */
  forEachAttributeCode(row: number, visit: (key: number, value: number) => void): void {
    const data = this.attrs.array;
    const end = this.attrStart.array[row]! + this.attrLength.array[row]!;
    for (let at = this.attrStart.array[row]!; at < end;) {
      const head = data[at]!;
      if ((head & LIST) !== 0) {
        const n = data[at + 1]!;
        if ((head & META) === 0) for (let i = 0; i < n; i += 1) visit(head & KEY, data[at + 2 + i]!);
        at += 2 + n;
      } else {
        if ((head & META) === 0) visit(head & KEY, data[at + 1]!);
        at += 2;
      }
    }
  }

  /** One attribute of a principal; undefined when it has none. */
  attributeOf(row: number, key: string): string | readonly string[] | undefined {
    const code = this.strings.find(key);
    return code < 0 ? undefined : this.attributeByCode(row, code);
  }

  /** One metadata value of a principal; undefined when it has none. */
  metadataOf(row: number, key: string): string | undefined {
    const code = this.strings.find(key);
    if (code < 0) return undefined;
    const data = this.attrs.array;
    const end = this.attrStart.array[row]! + this.attrLength.array[row]!;
    for (let at = this.attrStart.array[row]!; at < end;) {
      const head = data[at]!;
      if ((head & LIST) !== 0) {
        at += 2 + data[at + 1]!;
        continue;
      }
      if ((head & META) !== 0 && (head & KEY) === code) return this.strings.text(data[at + 1]!);
      at += 2;
    }
    return undefined;
  }

  /** One attribute of a principal, by the code of its key; undefined when it has none. */
  attributeByCode(row: number, keyCode: number): string | readonly string[] | undefined {
    const s = this.strings;
    const data = this.attrs.array;
    const end = this.attrStart.array[row]! + this.attrLength.array[row]!;
    for (let at = this.attrStart.array[row]!; at < end;) {
      const head = data[at]!;
      const list = (head & LIST) !== 0;
      if ((head & KEY) === keyCode && (head & META) === 0) {
        if (!list) return s.text(data[at + 1]!);
        const n = data[at + 1]!;
        const out = new Array<string>(n);
        for (let i = 0; i < n; i += 1) out[i] = s.text(data[at + 2 + i]!);
        return out;
      }
      at += list ? 2 + data[at + 1]! : 2;
    }
    return undefined;
  }

  /** A principal's attributes (and metadata, when asked), decoded from the arena. */
  readAttributes(
    row: number,
    attributes: Record<string, string | readonly string[]>,
    metadata?: Record<string, string>,
  ): void {
    const s = this.strings;
    const data = this.attrs.array;
    const end = this.attrStart.array[row]! + this.attrLength.array[row]!;
    for (let at = this.attrStart.array[row]!; at < end;) {
      const head = data[at]!;
      const key = s.text(head & KEY);
      if ((head & LIST) !== 0) {
        const n = data[at + 1]!;
        const list = new Array<string>(n);
        for (let i = 0; i < n; i += 1) list[i] = s.text(data[at + 2 + i]!);
        at += 2 + n;
        if ((head & META) === 0) attributes[key] = list;
      } else {
        if ((head & META) === 0) attributes[key] = s.text(data[at + 1]!);
        else if (metadata) metadata[key] = s.text(data[at + 1]!);
        at += 2;
      }
    }
  }

  connectorIdOf(row: number): string | null {
    return this.strings.textOrNull(this.connectorId.array[row]!);
  }

  /** When the principal was created, in epoch milliseconds (NaN: unknown). */
  createdMs(row: number): number {
    return this.timeMs(row, 0);
  }

  /**
   * A timestamp in epoch milliseconds, what lies below a millisecond dropped (as the driver makes
   * a JavaScript date of it); NaN when there is none. 0 created, 1 updated, 2 last login.
   */
  timeMs(row: number, which: 0 | 1 | 2): number {
    return this.times[which]!.array[row]! * 1000 + Math.floor(this.nanos[which]!.array[row]! / 1e6);
  }

  riskOf(row: number): number {
    return this.risk.array[row]!;
  }

  /** A timestamp as an instant key: 0 created, 1 updated, 2 last login. */
  timeKey(row: number, which: 0 | 1 | 2): string | null {
    return keyOfInstant(this.times[which]!.array[row]!, this.nanos[which]!.array[row]!);
  }

  private ensure(rows: number): void {
    for (const [, column] of this.columns()) column.ensure(rows);
    this.capacity = Infinity;
    for (const [, column] of this.columns()) this.capacity = Math.min(this.capacity, column.array.length);
  }

  /** Rows every column has room for. */
  private capacity = 0;
  /** Codes of attribute and metadata keys: a few dozen names, written for every principal. */
  private readonly keyCodes = new Map<string, number>();

  private keyCode(key: string): number {
    let code = this.keyCodes.get(key);
    if (code === undefined) {
      code = this.strings.intern(key);
      if (this.keyCodes.size >= 4_096) this.keyCodes.clear();
      this.keyCodes.set(key, code);
    }
    return code;
  }

  private writeAttributes(
    row: number,
    attributes: Readonly<Record<string, string | readonly string[]>>,
    metadata: Readonly<Record<string, string>>,
  ): void {
    let need = 0;
    for (const key in attributes) {
      const v = attributes[key]!;
      need += typeof v === 'string' ? 2 : 2 + v.length;
    }
    for (const _ in metadata) need += 2;
    this.attrUnused += this.attrLength.array[row]!;
    if (this.attrUnused > 1 << 16 && this.attrUnused > this.attrUsed - this.attrUnused)
      this.compactAttributes();
    this.attrs.ensure(this.attrUsed + need);
    const data = this.attrs.array;
    const s = this.strings;
    let at = this.attrUsed;
    for (const key in attributes) {
      const v = attributes[key]!;
      const code = this.keyCode(key);
      if (typeof v === 'string') {
        data[at++] = code;
        data[at++] = s.intern(v);
      } else {
        data[at++] = code | LIST;
        data[at++] = v.length;
        for (const item of v) data[at++] = s.intern(item);
      }
    }
    for (const key in metadata) {
      data[at++] = this.keyCode(key) | META;
      data[at++] = s.intern(metadata[key]!);
    }
    this.attrStart.array[row] = this.attrUsed;
    this.attrLength.array[row] = need;
    this.attrUsed = at;
  }

  /** Copies every live run of the attribute arena into a fresh one. */
  private compactAttributes(): void {
    const live = this.attrUsed - this.attrUnused;
    const next = i32(Math.max(1 << 16, live * 2));
    let at = 0;
    for (let row = 0; row < this.ids.size; row += 1) {
      const n = this.attrLength.array[row]!;
      if (n === 0) continue;
      const from = this.attrStart.array[row]!;
      next.array.set(this.attrs.array.subarray(from, from + n), at);
      this.attrStart.array[row] = at;
      at += n;
    }
    this.attrs = next;
    this.attrUsed = at;
    this.attrUnused = 0;
  }

  /**
   * Deleted principals are not found by name: a name that comes back belongs to someone new. Only
   * their email is kept, on a lookup of its own.
   */
  private linkNames(row: number): void {
    if (this.status.array[row] === DELETED) {
      if (this.email.array[row] !== NONE) this.deletedByEmail.add(this.email.array[row]!, row);
      return;
    }
    if (this.emailLower.array[row] !== NONE) this.byEmail.add(this.emailLower.array[row]!, row);
    if (this.connectorId.array[row] !== NONE) this.byConnectorId.add(this.connectorId.array[row]!, row);
    if (this.clientId.array[row] !== NONE) this.byClientId.add(this.clientId.array[row]!, row);
  }

  private unlinkNames(row: number): void {
    if (this.status.array[row] === DELETED) {
      if (this.email.array[row] !== NONE) this.deletedByEmail.remove(this.email.array[row]!, row);
      return;
    }
    if (this.emailLower.array[row] !== NONE) this.byEmail.remove(this.emailLower.array[row]!, row);
    if (this.connectorId.array[row] !== NONE) this.byConnectorId.remove(this.connectorId.array[row]!, row);
    if (this.clientId.array[row] !== NONE) this.byClientId.remove(this.clientId.array[row]!, row);
  }
}

/** The fields of a principal row, each read from the table's columns when asked for. */
abstract class RowFields {
  constructor(
    readonly table: PrincipalTable,
    protected rowNow: number,
  ) {}

  get id(): string {
    return this.table.idOf(this.rowNow);
  }
  get type(): string {
    return this.table.typeOf(this.rowNow);
  }
  get status(): string {
    return this.table.statusOf(this.rowNow);
  }
  get name(): string {
    return this.table.nameOf(this.rowNow);
  }
  get email(): string | null {
    return this.table.emailOf(this.rowNow);
  }
  get connector_source(): string | null {
    return this.table.connectorSourceOf(this.rowNow);
  }
  get connector_id(): string | null {
    return this.table.connectorIdOf(this.rowNow);
  }
  get created_at(): string {
    return this.table.timeKey(this.rowNow, 0) ?? '';
  }
  get updated_at(): string {
    return this.table.timeKey(this.rowNow, 1) ?? '';
  }
  get last_login(): string | null {
    return this.table.timeKey(this.rowNow, 2);
  }
  get risk_score(): number {
    return this.table.riskOf(this.rowNow);
  }
}

/**
 * A principal of the table as a `Subject`, read field by field from the columns: what `match`
 * queries are evaluated on when the index computes whom they select, one row after another,
 * without making an object per principal. Its attributes are decoded once per row, when first read.
 */
export class RowSubject extends RowFields implements Subject {
  private decoded: Record<string, string | readonly string[]> | null = null;
  /** Codes of the attribute keys asked for. */
  private readonly keyCodes = new Map<string, number>();

  constructor(table: PrincipalTable) {
    super(table, -1);
  }

  at(row: number): this {
    this.rowNow = row;
    this.decoded = null;
    return this;
  }

  get attributes(): Readonly<Record<string, string | readonly string[]>> {
    if (this.decoded === null) {
      this.decoded = {};
      this.table.readAttributes(this.rowNow, this.decoded);
    }
    return this.decoded;
  }

  attribute(key: string): string | readonly string[] | undefined {
    if (this.decoded !== null) return this.decoded[key];
    let code = this.keyCodes.get(key);
    if (code === undefined) {
      code = this.table.strings.find(key);
      // A key no principal has yet is not remembered: one may have it later.
      if (code >= 0) this.keyCodes.set(key, code);
    }
    return code < 0 ? undefined : this.table.attributeByCode(this.rowNow, code);
  }
}

/**
 * A principal of the table as the engine reads it, each field decoded from the columns when it is
 * first read: a decision reads a principal's id, status, type and groups, and its attributes,
 * metadata or timestamps only when a condition or the agents' guardrail asks for them. Its
 * fields are getters, so it is read field by field (never spread or serialised whole); it stands
 * for the row as it was made, and is made again for each decision.
 */
export class TablePrincipal extends RowFields implements IxPrincipal {
  private idText: string | undefined;
  private groupIds: string[] | undefined;
  private decoded: Record<string, string | readonly string[]> | undefined;
  private meta: Record<string, string> | undefined;

  constructor(
    table: PrincipalTable,
    row: number,
    private readonly directGroups: (row: number) => string[],
  ) {
    super(table, row);
  }

  get row(): number {
    return this.rowNow;
  }
  override get id(): string {
    return (this.idText ??= this.table.idOf(this.row));
  }
  get privileges(): string {
    return this.table.privilegesOf(this.row);
  }
  get order(): number {
    return this.table.orderOf(this.row);
  }
  get groups(): string[] {
    return (this.groupIds ??= this.directGroups(this.row));
  }
  get attributes(): Readonly<Record<string, string | readonly string[]>> {
    this.decode();
    return this.decoded!;
  }
  get metadata(): Readonly<Record<string, string>> {
    this.decode();
    return this.meta!;
  }

  private decode(): void {
    if (this.decoded !== undefined) return;
    this.decoded = {};
    this.meta = {};
    this.table.readAttributes(this.row, this.decoded, this.meta);
  }
}

/** A principal made in memory (tests, simulations) as the fields the table writes. */
export function fieldsOf(p: IxPrincipal): PrincipalFields {
  return {
    id: p.id,
    type: p.type,
    status: p.status,
    name: p.name,
    email: p.email,
    connector_source: p.connector_source,
    connector_id: p.connector_id,
    created: instantOf(p.created_at),
    updated: instantOf(p.updated_at),
    last_login: instantOf(p.last_login),
    risk_score: p.risk_score,
    privileges: p.privileges,
    attributes: p.attributes,
    metadata: p.metadata,
  };
}
