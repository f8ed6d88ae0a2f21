import type { BatchCauses, Pending } from '../decisions/apply.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { ChangeEvent } from '../events/feed.js';
import { newId } from '../ids.js';
import { timeSlices } from '../time.js';
import { AccessChangeTracker, sameHold, sameVia, type AccessDelta } from './changes.js';
import {
  keyedByPrefixes,
  readyPart,
  toStored,
  type AccessChange,
  type ReadyPart,
  type StoredAccessChange,
  type StoredPart,
} from './repository.js';

/**
 * What one batch of changes to the decision index moved in who can reach what, as parts ready
 * to store (docs/access-history.md). It runs where the batch is applied: on the index in use, or
 * on a decision thread's replica (src/access-history/thread-worker.ts), which applies the same
 * batches in the same order and so holds the same access before and after each.
 */

/** How long a slice of the computation runs before its thread's event loop turns. */
const SLICE_MS = 5;

/** Changes per `access.changed` message, at most. */
export const CHANGES_PER_PART = 500;

/**
 * Changes handed on at a time while a batch's are computed, about (whole parts): the store of
 * the first begins while the rest are computed (the recorder stores about this many a statement).
 * The first part goes alone, as soon as it is made: the store's first statement is a small one
 * anyway (src/pacing), and it need not wait for ten parts to be computed on a busy host.
 */
const HANDED_ON_ROWS = 5_000;

/** Takes parts of a batch's changes as they are made, in order, before the last of them. */
export type HandOn = (parts: ReadyPart[]) => void;

/**
 * Takes the access of the principals a batch can reach before it is applied; the function it
 * answers, called once the batch is in the index and before any other changes it, answers the
 * batch's changes as parts, grouped by the event that caused each, in the order of those events:
 * with `handOn`, those made first go there, a few thousand changes at a time, and the rest are
 * answered. A batch of one cause (a policy, a delegation, a window) is cut in parts as its
 * principals' access is read, so the first parts are stored while the rest are read; its
 * messages but the last then go out without their count (`parts: null`), which the last gives.
 */
export async function watchBatch(
  index: PolicyIndex,
  work: Pending,
  causes: BatchCauses,
  /** When the batch was applied to the index in use (epoch ms): what its windows are read at. */
  at = Date.now(),
): Promise<(handOn?: HandOn) => Promise<ReadyPart[]>> {
  const edges = windowEdges(index, causes, at);
  const beforeAt = edges.size > 0 ? Math.min(...edges.values()) - 1 : undefined;
  const tracker = new AccessChangeTracker(index, work, timeSlices(SLICE_MS), beforeAt, at);
  await tracker.before();
  return async (handOn) => {
    const turn = timeSlices(SLICE_MS);
    const parts = new PartsOut(handOn);
    const sole = soleCause(causes);
    if (handOn && sole) {
      const cut = new CauseParts(sole, edges.get(sole.id), null, parts, () =>
        keyedByPrefixes(tracker.reached, index.principals.size),
      );
      const take = async (deltas: readonly AccessDelta[]): Promise<void> => {
        for (const delta of deltas) await cut.add(delta, turn);
      };
      await take(await tracker.after(take));
      await cut.finish(turn);
      return parts.rest();
    }
    const deltas = await tracker.after();
    if (deltas.length > 0) await readyParts(deltas, causes, edges, turn, parts, index.principals.size);
    return parts.rest();
  };
}

/** Whether a change is listed and announced: it gains or loses actions (else it is quiet). */
const listed = (d: AccessDelta): boolean => d.actions_gained.length + d.actions_lost.length > 0;

/** The one event every key of a batch names, when there is one. */
function soleCause(causes: BatchCauses): ChangeEvent | undefined {
  let sole: ChangeEvent | undefined;
  for (const event of causes.values()) {
    if (!event || (sole && sole.id !== event.id)) return undefined;
    sole = event;
  }
  return sole;
}

/** Parts made ready, handed on a few thousand changes at a time when there is where to. */
class PartsOut {
  private out: ReadyPart[] = [];
  private rows = 0;
  /** Rows to gather before the next hand-on: the first part goes alone. */
  private next = 1;

  constructor(private readonly handOn: HandOn | undefined) {}

  push(part: StoredPart): void {
    this.out.push(readyPart(part));
    this.rows += part.rows.length;
    if (this.handOn && this.rows >= this.next) {
      this.handOn(this.out);
      this.out = [];
      this.rows = 0;
      this.next = HANDED_ON_ROWS;
    }
  }

  /** What was not handed on. */
  rest(): ReadyPart[] {
    return this.out;
  }
}

/** The JSON of values, made once for each run of equal ones. */
class JsonOfRuns<T> {
  private last: T | undefined;
  private json = '';

  constructor(private readonly same: (a: T, b: T) => boolean) {}

  of(value: T): string {
    if (this.last === undefined || (this.last !== value && !this.same(this.last, value))) {
      this.json = JSON.stringify(value);
      this.last = value;
    }
    return this.json;
  }
}

/**
 * One cause's changes cut in parts of at most `CHANGES_PER_PART`, as they come: its listed
 * changes, each part one `access.changed` message, then its quiet ones. With the count of its
 * messages known (`messages`), each says it; otherwise a full part is held until the next listed
 * change shows it is not the last, goes out with `parts: null`, and the last says the count.
 */
class CauseParts {
  private loud: StoredAccessChange[] = [];
  private held: StoredAccessChange[] | undefined;
  private readonly quiet: StoredAccessChange[] = [];
  private announced = 0;
  private readonly at: string;
  /** Most changes of a cause share their `via`, and many their `before`: each made once a run. */
  private readonly viaJson = new JsonOfRuns(sameVia);
  private readonly beforeJson = new JsonOfRuns(sameHold);

  constructor(
    private readonly cause: ChangeEvent,
    /** The instant of the window or expiry it records (epoch ms), when it records one. */
    edge: number | undefined,
    private readonly messages: number | null,
    private readonly out: PartsOut,
    /** Whether its parts are keyed by prefixes (`keyedByPrefixes`): asked as each is made. */
    private readonly prefixKeys: () => boolean,
  ) {
    this.at = edge === undefined ? cause.occurred_at : new Date(edge).toISOString();
  }

  async add(delta: AccessDelta, turn: () => Promise<void> | undefined): Promise<void> {
    const { cause } = this;
    const change: AccessChange = {
      id: newId('access_change'),
      at: this.at,
      principal: delta.principal,
      ...(delta.on_behalf_of ? { on_behalf_of: delta.on_behalf_of } : {}),
      resource: delta.resource,
      actions_gained: delta.actions_gained,
      actions_lost: delta.actions_lost,
      via: delta.via,
      cause: { event_id: cause.id, event_type: cause.type, actor: cause.actor },
    };
    const row = toStored(change, delta.before, {
      via: this.viaJson.of(delta.via),
      before: delta.before && this.beforeJson.of(delta.before),
    });
    if (!listed(delta)) this.quiet.push(row);
    else {
      // A listed change after a held part: that part was not the last.
      if (this.held) this.announce(this.held, null);
      this.held = undefined;
      this.loud.push(row);
      if (this.loud.length === CHANGES_PER_PART) {
        if (this.messages === null) this.held = this.loud;
        else this.announce(this.loud, this.messages);
        this.loud = [];
      }
    }
    await turn();
  }

  /** Makes the rest of its parts ready: the last message, then the quiet changes. */
  async finish(turn: () => Promise<void> | undefined): Promise<void> {
    // A held part and listed changes after it are never both there.
    const last = this.loud.length > 0 ? this.loud : this.held;
    if (last) this.announce(last, this.messages ?? this.announced + 1);
    // Entries held otherwise with the same actions: kept for `as_of`, announced to no one.
    for (let n = 0; n < this.quiet.length; n += CHANGES_PER_PART) {
      this.out.push(this.part(this.quiet.slice(n, n + CHANGES_PER_PART), null));
      await turn();
    }
  }

  private announce(rows: StoredAccessChange[], parts: number | null): void {
    this.announced += 1;
    this.out.push(this.part(rows, { part: this.announced, parts }));
  }

  private part(rows: StoredAccessChange[], message: StoredPart['message']): StoredPart {
    return {
      id: rows[0]!.id,
      cause_id: this.cause.id,
      at: this.cause.occurred_at,
      rows,
      message,
      prefix_keys: this.prefixKeys(),
    };
  }
}

/**
 * The changes of one batch, grouped by the event that caused each and cut in parts (`CauseParts`,
 * the count of each cause's messages known), in the order of those events; the event loop turns
 * between slices of them (a cause may have 50,000).
 */
async function readyParts(
  deltas: readonly AccessDelta[],
  causes: BatchCauses,
  edges: ReadonlyMap<string, number>,
  turn: () => Promise<void> | undefined,
  out: PartsOut,
  /** How many principals there are. */
  everyone: number,
): Promise<void> {
  const latest = latestOf(causes.values());
  const groups = new Map<string, { cause: ChangeEvent; deltas: AccessDelta[] }>();
  for (const delta of deltas) {
    const cause = causeOf(delta, causes) ?? latest;
    if (!cause) continue;
    let g = groups.get(cause.id);
    if (!g) {
      g = { cause, deltas: [] };
      groups.set(cause.id, g);
    }
    g.deltas.push(delta);
  }
  // Ids are handed out in the order of the causes: the order the list reads them in.
  for (const { cause, deltas: some } of [...groups.values()].sort((a, b) =>
    compareEvents(a.cause, b.cause),
  )) {
    const messages = Math.ceil(some.filter(listed).length / CHANGES_PER_PART);
    const prefixKeys = keyedByPrefixes(new Set(some.map((d) => d.principal_id)).size, everyone);
    const cut = new CauseParts(cause, edges.get(cause.id), messages, out, () => prefixKeys);
    for (const delta of some) await cut.add(delta, turn);
    await cut.finish(turn);
  }
}

/**
 * The instants (epoch ms) of the windows a batch records opening or closing (and of the delegations
 * it records expiring), by the id of the
 * event recording it: what the access moved at is that instant, not when the sweep noticed it.
 */
function windowEdges(index: PolicyIndex, causes: BatchCauses, at: number): Map<string, number> {
  const edges = new Map<string, number>();
  for (const [key, event] of causes) {
    const id = key.slice(key.indexOf(':') + 1);
    const policy = key.startsWith('policies:') ? index.policies.get(id) : undefined;
    const edge =
      event.type === 'policy.expired'
        ? policy?.validUntil
        : event.type === 'policy.window_opened'
          ? policy?.validFrom
          : event.type === 'delegation.expired' && key.startsWith('delegations:')
            ? index.delegations.get(id)?.expiresAt
            : null;
    if (edge !== null && edge !== undefined && edge <= at) edges.set(event.id, edge);
  }
  return edges;
}

const compareEvents = (a: ChangeEvent, b: ChangeEvent): number =>
  a.occurred_at < b.occurred_at
    ? -1
    : a.occurred_at > b.occurred_at
      ? 1
      : a.id < b.id
        ? -1
        : a.id > b.id
          ? 1
          : 0;

function latestOf(events: Iterable<ChangeEvent | undefined>): ChangeEvent | undefined {
  let latest: ChangeEvent | undefined;
  for (const e of events) if (e && (!latest || compareEvents(latest, e) < 0)) latest = e;
  return latest;
}

/**
 * The event of a batch that moved one principal's access to one resource: of those naming the
 * principal itself, a policy behind the change, a group on the path of its grant, or the
 * resource, the latest. Undefined when none does (the batch's latest event is named then).
 */
function causeOf(delta: AccessDelta, causes: BatchCauses): ChangeEvent | undefined {
  const id = delta.principal_id;
  const named: (ChangeEvent | undefined)[] = [
    causes.get(`principals:${id}`),
    causes.get(`memberships:${id}`),
  ];
  for (const v of delta.via) {
    named.push(causes.get(`policies:${v.policy_id}`));
    for (const step of v.path ?? []) {
      named.push(causes.get(`groups:${step.id}`), causes.get(`removedGroups:${step.id}`));
    }
  }
  named.push(causes.get(`resources:${delta.resource.type}:${delta.resource.identifier}`));
  for (const key of delta.named_by ?? []) named.push(causes.get(key));
  return latestOf(named);
}
