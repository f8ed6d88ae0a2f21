import { Chains } from '../columnar/chains.js';
import { f64, u8 } from '../columnar/column.js';
import type { SectionSink, SectionSource } from '../columnar/sections.js';
import { codes, NONE, StringPool } from '../columnar/strings.js';
import { compileGlob, isGlob } from '../policies/patterns.js';
import type { IxDelegation, IxResourceSpec } from './model.js';
import type { PrincipalTable } from './principal-table.js';

const NO_DELEGATIONS: readonly IxDelegation[] = Object.freeze([]);

/**
 * The active delegations of the decision index as a table outside the heap: each delegation a row
 * (its id's code), its delegator and delegate the rows the principals' table gives their ids, its
 * expiry a number, its actions and resources the code of their text (the same few lists recur
 * across thousands of delegations, each compiled once). Rows are found by delegate and by
 * delegator through chains; a delegation is made into an `IxDelegation` when asked for. An
 * organisation whose agents act for people holds about as many delegations as agents: at ten
 * million principals, nearly two million, which as objects would be most of the heap.
 */
export class DelegationTable {
  private readonly ids = new StringPool(1 << 16);
  /** Actions and resources as JSON text. */
  private readonly lists = new StringPool(1 << 12);
  private readonly live = u8();
  private readonly delegator = codes();
  private readonly delegate = codes();
  private readonly expires = f64();
  private readonly actions = codes();
  private readonly resources = codes();
  private readonly byDelegate = new Chains();
  private readonly byDelegator = new Chains();
  private count = 0;
  /** Lists compiled once per code. */
  private readonly actionLists = new Map<number, readonly string[]>();
  private readonly resourceLists = new Map<number, readonly IxResourceSpec[]>();

  constructor(private readonly principals: PrincipalTable) {}

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    let n = this.ids.bytesHeld + this.lists.bytesHeld + this.byDelegate.bytes + this.byDelegator.bytes;
    for (const column of this.columns()) n += column.bytes;
    return n;
  }

  /** The active delegation of an id. */
  get(id: string): IxDelegation | undefined {
    const row = this.rowOf(id);
    return row < 0 ? undefined : this.delegation(row);
  }

  has(id: string): boolean {
    return this.rowOf(id) >= 0;
  }

  /** Every active delegation, in the order they came. */
  *values(): IterableIterator<IxDelegation> {
    for (let row = 0; row < this.ids.size; row += 1)
      if (this.live.array[row] === 1) yield this.delegation(row);
  }

  /** The active delegations from `delegatorId` to `delegateId` (expired ones may still be held). */
  between(delegatorId: string, delegateId: string): readonly IxDelegation[] {
    const to = this.principals.rowOfAny(delegateId);
    const from = this.principals.rowOfAny(delegatorId);
    if (to < 0 || from < 0) return NO_DELEGATIONS;
    const rows = this.byDelegate.rows(to).filter((row) => this.delegator.array[row] === from);
    return rows.length === 0 ? NO_DELEGATIONS : inOrder(rows).map((row) => this.delegation(row));
  }

  /** The active delegations a principal receives. */
  *received(delegateId: string): Iterable<IxDelegation> {
    const to = this.principals.rowOfAny(delegateId);
    if (to < 0) return;
    for (const row of inOrder(this.byDelegate.rows(to))) yield this.delegation(row);
  }

  /** The active delegations a principal gives. */
  given(delegatorId: string): ReadonlySet<IxDelegation> {
    const from = this.principals.rowOfAny(delegatorId);
    if (from < 0) return new Set();
    return new Set(inOrder(this.byDelegator.rows(from)).map((row) => this.delegation(row)));
  }

  /** Puts an active delegation, or takes one out (undefined: revoked, expired or gone). */
  put(id: string, next: IxDelegation | undefined): void {
    if (!next) {
      const row = this.rowOf(id);
      if (row < 0) return;
      this.unlink(row);
      this.live.array[row] = 0;
      this.count -= 1;
      return;
    }
    const row = this.ids.intern(id);
    for (const column of this.columns()) column.ensure(row + 1);
    if (this.live.array[row] === 1) this.unlink(row);
    else this.count += 1;
    this.live.array[row] = 1;
    this.delegator.array[row] = this.principals.rowFor(next.delegatorId);
    this.delegate.array[row] = this.principals.rowFor(next.delegateId);
    this.expires.array[row] = next.expiresAt;
    this.actions.array[row] = this.lists.intern(JSON.stringify(next.actions));
    this.resources.array[row] =
      next.resources === null
        ? NONE
        : this.lists.intern(JSON.stringify(next.resources.map((r) => [r.type, r.identifier])));
    this.byDelegate.add(this.delegate.array[row], row);
    this.byDelegator.add(this.delegator.array[row], row);
  }

  /** Writes the table as sections named `delegations.*`. */
  save(out: SectionSink): void {
    const n = this.ids.size;
    this.ids.save(out, 'delegations.ids');
    this.lists.save(out, 'delegations.lists');
    out.u8('delegations.live', this.live.array.subarray(0, n));
    out.i32('delegations.delegator', this.delegator.array.subarray(0, n));
    out.i32('delegations.delegate', this.delegate.array.subarray(0, n));
    out.f64('delegations.expires', this.expires.array.subarray(0, n));
    out.i32('delegations.actions', this.actions.array.subarray(0, n));
    out.i32('delegations.resources', this.resources.array.subarray(0, n));
  }

  /** Reads back what `save` wrote, into an empty table (the principals' table read first). */
  restore(source: SectionSource): void {
    this.ids.restore(source, 'delegations.ids');
    this.lists.restore(source, 'delegations.lists');
    const n = this.ids.size;
    this.live.load(source.u8('delegations.live'), n);
    this.delegator.load(source.i32('delegations.delegator'), n);
    this.delegate.load(source.i32('delegations.delegate'), n);
    this.expires.load(source.f64('delegations.expires'), n);
    this.actions.load(source.i32('delegations.actions'), n);
    this.resources.load(source.i32('delegations.resources'), n);
    for (let row = 0; row < n; row += 1) {
      if (this.live.array[row] !== 1) continue;
      this.count += 1;
      this.byDelegate.add(this.delegate.array[row]!, row);
      this.byDelegator.add(this.delegator.array[row]!, row);
    }
  }

  private columns() {
    return [this.live, this.delegator, this.delegate, this.expires, this.actions, this.resources];
  }

  private rowOf(id: string): number {
    const row = this.ids.find(id);
    return row >= 0 && this.live.array[row] === 1 ? row : -1;
  }

  private unlink(row: number): void {
    this.byDelegate.remove(this.delegate.array[row]!, row);
    this.byDelegator.remove(this.delegator.array[row]!, row);
  }

  /** The delegation of a row as the engine reads it. */
  private delegation(row: number): IxDelegation {
    return {
      id: this.ids.text(row),
      delegatorId: this.principals.idOf(this.delegator.array[row]!),
      delegateId: this.principals.idOf(this.delegate.array[row]!),
      actions: this.actionsOf(this.actions.array[row]!),
      resources: this.resourcesOf(this.resources.array[row]!),
      expiresAt: this.expires.array[row]!,
    };
  }

  private actionsOf(code: number): readonly string[] {
    let list = this.actionLists.get(code);
    if (!list) {
      list = Object.freeze(JSON.parse(this.lists.text(code)) as string[]);
      this.actionLists.set(code, list);
    }
    return list;
  }

  private resourcesOf(code: number): readonly IxResourceSpec[] | null {
    if (code === NONE) return null;
    let list = this.resourceLists.get(code);
    if (!list) {
      list = Object.freeze(
        (JSON.parse(this.lists.text(code)) as [string, string][]).map(([type, identifier]) => ({
          type,
          identifier,
          glob: isGlob(identifier) ? compileGlob(identifier) : null,
        })),
      );
      this.resourceLists.set(code, list);
    }
    return list;
  }
}

/** Rows in the order they were first given: delegations in the order they came. */
const inOrder = (rows: number[]): number[] => rows.sort((a, b) => a - b);
