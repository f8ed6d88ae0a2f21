import type { BatchCauses, Pending } from '../decisions/apply.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import type { ChangeEvent } from '../events/feed.js';
import { newId } from '../ids.js';
import { timeSlices } from '../time.js';
import { AccessChangeTracker, type AccessDelta } from './changes.js';
import {
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
 */
const HANDED_ON_ROWS = 5_000;

/** Takes parts of a batch's changes as they are made, in order, before the last of them. */
export type HandOn = (parts: ReadyPart[]) => void;

/**
 * Takes the access of the principals a batch can reach before it is applied; the function it
 * answers, called once the batch is in the index and before any other changes it, answers the
 * batch's changes as parts, grouped by the event that caused each, in the order of those events:
 * with `handOn`, those made first go there, a few thousand changes at a time, and the rest are
 * answered.
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
    const deltas = await tracker.after();
    return deltas.length > 0 ? readyParts(deltas, causes, edges, timeSlices(SLICE_MS), handOn) : [];
  };
}

/**
 * A cause's changes as parts of at most `CHANGES_PER_PART`: its listed changes, each part one
 * `access.changed` message, then its quiet ones.
 */
function partsOf(cause: ChangeEvent, rows: readonly StoredAccessChange[]): StoredPart[] {
  const parts: StoredPart[] = [];
  const loud: StoredAccessChange[] = [];
  const quiet: StoredAccessChange[] = [];
  for (const r of rows) (r.actions_gained.length + r.actions_lost.length > 0 ? loud : quiet).push(r);
  const count = Math.ceil(loud.length / CHANGES_PER_PART);
  const part = (some: StoredAccessChange[], message: StoredPart['message']): StoredPart => ({
    id: some[0]!.id,
    cause_id: cause.id,
    at: cause.occurred_at,
    rows: some,
    message,
  });
  for (let n = 0; n < count; n += 1) {
    parts.push(
      part(loud.slice(n * CHANGES_PER_PART, (n + 1) * CHANGES_PER_PART), { part: n + 1, parts: count }),
    );
  }
  // Entries held otherwise with the same actions: kept for `as_of`, announced to no one.
  for (let n = 0; n < quiet.length; n += CHANGES_PER_PART) {
    parts.push(part(quiet.slice(n, n + CHANGES_PER_PART), null));
  }
  return parts;
}

/**
 * The changes of one batch, grouped by the event that caused each and cut in parts, in the order
 * of those events; the event loop turns between slices of them (a cause may have 50,000).
 */
async function readyParts(
  deltas: readonly AccessDelta[],
  causes: BatchCauses,
  edges: ReadonlyMap<string, number>,
  turn: () => Promise<void> | undefined,
  handOn?: HandOn,
): Promise<ReadyPart[]> {
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
  let out: ReadyPart[] = [];
  let rows = 0;
  // Ids are handed out in the order of the causes: the order the list reads them in.
  for (const { cause, deltas: some } of [...groups.values()].sort((a, b) =>
    compareEvents(a.cause, b.cause),
  )) {
    const stored: StoredAccessChange[] = [];
    for (const delta of some) {
      const edge = edges.get(cause.id);
      const change: AccessChange = {
        id: newId('access_change'),
        at: edge === undefined ? cause.occurred_at : new Date(edge).toISOString(),
        principal: delta.principal,
        ...(delta.on_behalf_of ? { on_behalf_of: delta.on_behalf_of } : {}),
        resource: delta.resource,
        actions_gained: delta.actions_gained,
        actions_lost: delta.actions_lost,
        via: delta.via,
        cause: { event_id: cause.id, event_type: cause.type, actor: cause.actor },
      };
      stored.push(toStored(change, delta.before));
      await turn();
    }
    for (const part of partsOf(cause, stored)) {
      out.push(readyPart(part));
      rows += part.rows.length;
      if (handOn && rows >= HANDED_ON_ROWS) {
        handOn(out);
        out = [];
        rows = 0;
      }
      await turn();
    }
  }
  return out;
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
