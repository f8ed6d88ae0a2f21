import type { ChangeEvent } from '../events/feed.js';
import { resourceOf } from '../policies/model.js';
import { timeSlices } from '../time.js';
import type { PolicyIndex } from './policy-index.js';
import {
  compilePolicy,
  fieldsOfRow,
  type IxDelegation,
  type IxPolicy,
  type IxResource,
  type StoredPrincipalRow,
} from './model.js';
import type { GroupRow, MembershipRow, StoredPolicy } from './repository.js';

/**
 * How a batch of changes read from the database goes into a decision index: the same steps for
 * the index in use, for one built beside it, and for a replica on a decision thread
 * (src/decisions/decision-thread.ts), which is sent each batch the index in use applied.
 */

/** The longest the event loop waits while an index is built from the database. */
export const BUILD_SLICE_MS = 5;

/**
 * The longest it waits while a batch of changes goes into the index in use (a sync's thousands
 * of principals, a new `match` query evaluated over every principal): decisions arrive meanwhile,
 * and each waits for the slice under way, so this is what such a batch adds to their latency.
 */
export const APPLY_SLICE_MS = 1;

/** The keys a batch of changes names. */
export interface Pending {
  principals: Set<string>;
  /** Principals whose group memberships alone changed: only those are read again. */
  memberships: Set<string>;
  groups: Set<string>;
  removedGroups: Set<string>;
  policies: Set<string>;
  resources: Set<string>;
  delegations: Set<string>;
}

export const nothing = (): Pending => ({
  principals: new Set(),
  memberships: new Set(),
  groups: new Set(),
  removedGroups: new Set(),
  policies: new Set(),
  resources: new Set(),
  delegations: new Set(),
});

export const isEmpty = (work: Pending): boolean =>
  Object.values(work).every((set: Set<string>) => set.size === 0);

/**
 * Principals sent to a decision thread's replica per message when a batch names many (a
 * connector's sync names tens of thousands at once), instead of all in one.
 */
export const PRINCIPAL_SLICE = 250;

/**
 * The latest change event that named each key of a batch, keyed `<set of Pending>:<id>`
 * (`principals:prn_…`, `groups:grp_…`, `resources:doc:1`, …): what made the batch.
 */
export type BatchCauses = ReadonlyMap<string, ChangeEvent>;

/** Watches the batches the index in use applies (the access history does). */
export interface BatchObserver {
  /**
   * Called once a batch has been read and before it is applied; the function it answers is
   * called once the batch is in the index, before any other batch changes it.
   */
  before(index: PolicyIndex, work: Pending, causes: BatchCauses): Promise<() => Promise<void>>;
  /**
   * Whether it holds what it computed from batches applied so far and has not stored: a snapshot
   * of the index written now would not bring those batches back after a crash, so it waits.
   */
  unstored(): boolean;
}

/** What one batch read of the keys it names. */
export interface Fetched {
  policies: StoredPolicy[];
  groups: GroupRow[];
  principals: StoredPrincipalRow[];
  memberships: MembershipRow[];
  resources: IxResource[];
  delegations: { delegation: IxDelegation; active: boolean }[];
}

/** What changed since the privilege factors of the risk were last brought up to date. */
export interface Dirty {
  /** Everything: the index was (re)built. */
  all: boolean;
  principals: Set<string>;
  /** Versions of policies that changed, before and after (active ones only). */
  policies: IxPolicy[];
}

/**
 * Puts what a batch read into an index (the one in use, one built beside it, or a replica on a
 * decision thread). With `dirty`, notes what the privilege risk must look
 * at again (the index in use; a build beside it is looked at whole once swapped in).
 */
export async function applyChanges(
  index: PolicyIndex,
  work: Pending,
  fetched: Fetched,
  dirty: Dirty | null,
): Promise<void> {
  const touched = (ids: Iterable<string>): void => {
    if (dirty) for (const id of ids) dirty.principals.add(id);
  };
  for (const id of work.removedGroups) touched(index.removeGroup(id));
  const foundGroups = new Set<string>();
  for (const g of fetched.groups) {
    foundGroups.add(g.id);
    if (putGroupRow(index, g) && dirty) touched(index.membersOf(g.id));
  }
  for (const id of work.groups) if (!foundGroups.has(id)) touched(index.removeGroup(id));
  const foundPrincipals = new Set<string>();
  // A batch of thousands (a connector's sync) is put in slices of a millisecond, the event
  // loop turning between them: each principal goes in whole.
  const turn = timeSlices(APPLY_SLICE_MS);
  for (const row of fetched.principals) {
    await turn();
    foundPrincipals.add(putPrincipalRow(index, row));
  }
  for (const id of work.principals) if (!foundPrincipals.has(id)) index.putFields(id, undefined, []);
  touched(work.principals);
  for (const row of fetched.memberships) {
    await turn();
    index.putMemberships(
      row.id,
      row.groups.map(([id]) => id),
      row.groups.map(([, since]) => since),
    );
    touched([row.id]);
  }
  const replacePolicy = (id: string, next: IxPolicy | undefined): void => {
    const old = index.policies.get(id);
    if (old?.active) dirty?.policies.push(old);
    if (next) index.putPolicy(next);
    else index.removePolicy(id);
    if (next?.active) dirty?.policies.push(next);
  };
  const foundPolicies = new Set<string>();
  const compiled: IxPolicy[] = [];
  for (const { policy, since } of fetched.policies) {
    foundPolicies.add(policy.id);
    if (policy.status !== 'deleted') compiled.push(compilePolicy(policy, since));
  }
  // A new `match` query is evaluated over every principal here, in slices, before any
  // decision can ask about it.
  await index.prepareMatches(compiled, turn);
  for (const { policy } of fetched.policies) {
    if (policy.status === 'deleted') replacePolicy(policy.id, undefined);
  }
  for (const policy of compiled) replacePolicy(policy.id, policy);
  for (const id of work.policies) if (!foundPolicies.has(id)) replacePolicy(id, undefined);
  const foundResources = new Set<string>();
  for (const r of fetched.resources) {
    foundResources.add(`${r.type}:${r.identifier}`);
    index.putResource(r.type, r.identifier, r);
  }
  for (const key of work.resources) {
    if (!foundResources.has(key)) {
      const { type, identifier } = resourceOf(key);
      index.putResource(type, identifier, undefined);
    }
  }
  const foundDelegations = new Set<string>();
  for (const { delegation, active } of fetched.delegations) {
    foundDelegations.add(delegation.id);
    index.putDelegation(delegation.id, active ? delegation : undefined);
  }
  for (const id of work.delegations) if (!foundDelegations.has(id)) index.putDelegation(id, undefined);
  index.version += 1;
}

/** A principal as read from the database into an index; answers its id. */
export function putPrincipalRow(index: PolicyIndex, row: StoredPrincipalRow): string {
  const fields = fieldsOfRow(row);
  index.putFields(
    fields.id,
    fields,
    row.groups.map(([id]) => id),
    row.groups.map(([, since]) => since),
  );
  return fields.id;
}

/** A group as read from the database into an index; true when its nesting changed. */
export function putGroupRow(index: PolicyIndex, g: GroupRow): boolean {
  return index.putGroup(
    g.id,
    g.name,
    g.parents.map(([id]) => id),
    g.parents.map(([, since]) => since),
  );
}
