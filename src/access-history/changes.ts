import { grantsOf, registeredMatching, settleFor } from '../decisions/access-service.js';
import { accessEntries } from '../decisions/access.js';
import type { Pending } from '../decisions/apply.js';
import type { Overlay } from '../decisions/engine.js';
import type { IxPolicy } from '../decisions/model.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import { resourceOf } from '../policies/model.js';

/**
 * Access changes computed from the decision index (docs/api.md §11): for each principal a batch
 * of committed changes can have touched, what `GET /v1/principals/{id}/access` answers before
 * the batch is applied and after, compared entry by entry. Only the principals a batch can reach
 * are looked at — those it names, the members of the groups it names, the subjects of the
 * policies it names (old and new versions), and the subjects of the policies covering the
 * resources it names — never everyone.
 */

/** One principal's access to one resource (or policy glob) that a batch moved. */
export interface AccessDelta {
  principal_id: string;
  resource: { type: string; identifier: string; pattern?: true };
  actions_gained: string[];
  actions_lost: string[];
  /** The policies behind the gains (as they are after) and the losses (as they were before). */
  policy_ids: string[];
}

/** What `/access` answers for one principal, keyed by resource. */
type AccessView = Map<
  string,
  { type: string; identifier: string; pattern: boolean; actions: string[]; by: string[] }
>;

const keyOf = (type: string, identifier: string, pattern: boolean): string =>
  `${type}\u0000${identifier}\u0000${pattern ? 1 : 0}`;

/**
 * A principal's access as the index holds it now (an inactive or unknown principal has none),
 * through `overlay` when given: the policies it names as they were.
 */
export function accessView(index: PolicyIndex, id: string, overlay?: Overlay): AccessView {
  const view: AccessView = new Map();
  const row = index.table.rowOf(id);
  if (row < 0) return view;
  const p = index.principalAt(row);
  if (p.status !== 'active') return view;
  const entries = accessEntries(
    settleFor(index, p, grantsOf(index, p, overlay)),
    registeredMatching(index),
    p,
  );
  for (const e of entries) {
    const pattern = e.pattern === true;
    view.set(keyOf(e.resource.type, e.resource.identifier, pattern), {
      type: e.resource.type,
      identifier: e.resource.identifier,
      pattern,
      actions: e.actions,
      by: e.granted_by,
    });
  }
  return view;
}

/** The entries of one principal that differ between two views, in resource order. */
export function diffViews(id: string, before: AccessView, after: AccessView): AccessDelta[] {
  const out: AccessDelta[] = [];
  for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const was = before.get(key);
    const now = after.get(key);
    const had = new Set(was?.actions ?? []);
    const has = new Set(now?.actions ?? []);
    const gained = [...has].filter((a) => !had.has(a)).sort();
    const lost = [...had].filter((a) => !has.has(a)).sort();
    if (gained.length === 0 && lost.length === 0) continue;
    const entry = (now ?? was)!;
    out.push({
      principal_id: id,
      resource: {
        type: entry.type,
        identifier: entry.identifier,
        ...(entry.pattern ? { pattern: true as const } : {}),
      },
      actions_gained: gained,
      actions_lost: lost,
      policy_ids: [
        ...new Set([
          ...(gained.length > 0 ? (now?.by ?? []) : []),
          ...(lost.length > 0 ? (was?.by ?? []) : []),
        ]),
      ].sort(),
    });
  }
  return out;
}

/** The principals a batch naming `work` can move the access of, as the index stands. */
function reached(
  index: PolicyIndex,
  work: Pending,
  policies: Iterable<IxPolicy | null | undefined>,
): Set<string> {
  const out = new Set<string>([...work.principals, ...work.memberships]);
  const add = (ids: Iterable<string>): void => {
    for (const id of ids) out.add(id);
  };
  for (const g of [...work.groups, ...work.removedGroups]) add(index.membersOf(g));
  for (const policy of policies) if (policy) add(index.subjectsOf(policy));
  for (const key of work.resources) {
    const { type, identifier } = resourceOf(key);
    for (const policy of index.candidates(type, identifier)) add(index.subjectsOf(policy));
  }
  return out;
}

/**
 * Follows one batch through an index: `before` is called before the batch is applied, `after`
 * once it is, and answers the access the batch moved.
 */
export class AccessChangeTracker {
  private readonly views = new Map<string, AccessView>();
  private readonly previous = new Map<string, IxPolicy | null>();

  constructor(
    private readonly index: PolicyIndex,
    private readonly work: Pending,
  ) {}

  /** Notes what the principals the batch can reach have now, and the policies it names as they are. */
  before(): void {
    const { index, work } = this;
    for (const id of work.policies) this.previous.set(id, index.policies.get(id) ?? null);
    for (const id of reached(index, work, this.previous.values())) this.views.set(id, accessView(index, id));
  }

  /**
   * What moved. A principal the batch reaches only now (a new policy selects it) had, before, what
   * it has now with the policies the batch names as they were: nothing else of it changed, or it
   * would have been reached before.
   */
  after(): AccessDelta[] {
    const { index, work } = this;
    const now = [...work.policies].map((id) => index.policies.get(id));
    const ids = new Set([...this.views.keys(), ...reached(index, work, now)]);
    const overlay: Overlay = this.previous;
    const out: AccessDelta[] = [];
    for (const id of [...ids].sort()) {
      const before = this.views.get(id) ?? accessView(index, id, overlay);
      out.push(...diffViews(id, before, accessView(index, id)));
    }
    return out;
  }
}
