import { actionCovers, compileGlob, globMatches, isGlob } from '../policies/patterns.js';
import type { AccessEntry } from './access.js';
import type { IxDelegation, IxResourceSpec } from './model.js';

/**
 * What an agent may reach for whom it acts (docs/api.md §10, `GET /v1/principals/{id}/access`
 * with `on_behalf_of`): the intersection of its own entries, the entries of every principal of
 * the chain, and what the delegations of each link hand on. A decision along the chain allows
 * exactly what every one of them allows, so the intersection is what such decisions would
 * allow.
 */

/**
 * The actions both lists allow, as patterns: of two that overlap, the narrower (`*` and `read`
 * give `read`; `repo:*` and `repo:push` give `repo:push`). None is covered by another.
 */
export function commonActions(a: readonly string[], b: readonly string[]): string[] {
  const out = new Set<string>();
  for (const x of a) {
    for (const y of b) {
      if (actionCovers(x, y)) out.add(y);
      else if (actionCovers(y, x)) out.add(x);
    }
  }
  const list = [...out];
  return list.filter((x) => !list.some((y) => y !== x && actionCovers(y, x))).sort();
}

/** Whether a resource spec (exact or a glob) takes in an entry's resource (an identifier or a glob). */
function specTakes(spec: IxResourceSpec, entry: AccessEntry): boolean {
  if (spec.type !== entry.resource.type) return false;
  if (entry.pattern) return spec.identifier === entry.resource.identifier || spec.identifier === '*';
  return spec.glob
    ? globMatches(spec.glob, entry.resource.identifier)
    : spec.identifier === entry.resource.identifier;
}

/** The actions the delegations of one link hand on for an entry's resource (any of them will do). */
function handedOn(link: readonly IxDelegation[], entry: AccessEntry): string[] {
  const actions: string[] = [];
  for (const d of link) {
    if (d.resources === null || d.resources.some((r) => specTakes(r, entry))) actions.push(...d.actions);
  }
  return actions;
}

/** The entries of another principal that stand for an entry's resource: the same one, or a glob taking it in. */
function matching(entry: AccessEntry, theirs: ReadonlyMap<string, AccessEntry[]>): AccessEntry[] {
  const sameType = theirs.get(entry.resource.type) ?? [];
  return sameType.filter((e) => {
    if (e.resource.identifier === entry.resource.identifier && Boolean(e.pattern) === Boolean(entry.pattern))
      return true;
    if (!e.pattern || entry.pattern) return false;
    const glob = isGlob(e.resource.identifier) ? compileGlob(e.resource.identifier) : null;
    return glob !== null && globMatches(glob, entry.resource.identifier);
  });
}

const byType = (entries: readonly AccessEntry[]): Map<string, AccessEntry[]> => {
  const out = new Map<string, AccessEntry[]>();
  for (const e of entries) {
    const list = out.get(e.resource.type);
    if (list) list.push(e);
    else out.set(e.resource.type, [e]);
  }
  return out;
};

const earliest = (...times: (string | undefined)[]): string | undefined =>
  times.reduce<string | undefined>(
    (a, b) => (b === undefined ? a : a === undefined || b < a ? b : a),
    undefined,
  );

/**
 * The agent's entries narrowed to what every delegator also reaches and every link hands on.
 * `delegators` are the chain's principals' entries; `links` each link's delegations in force
 * (an empty link leaves nothing). An entry keeps the actions all of them allow, the policies of
 * every side in `granted_by`, the latest `granted_at`, the earliest end (its own, a delegator's,
 * a delegation's expiry), and is `conditional` when any side is.
 */
export function intersectAccess(
  own: readonly AccessEntry[],
  delegators: readonly (readonly AccessEntry[])[],
  links: readonly (readonly IxDelegation[])[],
): AccessEntry[] {
  if (links.some((l) => l.length === 0)) return [];
  const theirs = delegators.map(byType);
  const out: AccessEntry[] = [];
  for (const entry of own) {
    let actions = entry.actions;
    const grantedBy = new Set(entry.granted_by);
    let grantedAt = entry.granted_at;
    let expiresAt = entry.expires_at;
    let conditional = entry.conditional;
    const denied = new Set(entry.denied_actions ?? []);
    for (const link of links) {
      actions = commonActions(actions, handedOn(link, entry));
      const ends = new Date(Math.max(...link.map((d) => d.expiresAt))).toISOString();
      expiresAt = earliest(expiresAt, ends);
    }
    for (const map of theirs) {
      if (actions.length === 0) break;
      const found = matching(entry, map);
      actions = commonActions(
        actions,
        found.flatMap((e) => e.actions),
      );
      for (const e of found) {
        for (const id of e.granted_by) grantedBy.add(id);
        for (const d of e.denied_actions ?? []) denied.add(d);
        if (e.granted_at !== null && (grantedAt === null || e.granted_at > grantedAt))
          grantedAt = e.granted_at;
        conditional ||= e.conditional;
      }
      // Their access to it ends when the last of their entries for it does, if all of them end.
      const ends = found.map((e) => e.expires_at);
      if (ends.length > 0 && !ends.includes(undefined)) expiresAt = earliest(expiresAt, ends.sort().at(-1));
    }
    // What any side denies outright is not reached through the chain, whoever allows it.
    actions = actions.filter((a) => ![...denied].some((d) => actionCovers(d, a)));
    if (actions.length === 0) continue;
    const deniedActions = [...denied]
      .filter((d) => actions.some((a) => a !== d && actionCovers(a, d)))
      .sort();
    out.push({
      resource: entry.resource,
      ...(entry.pattern ? { pattern: true as const } : {}),
      actions,
      ...(deniedActions.length > 0 ? { denied_actions: deniedActions } : {}),
      granted_by: [...grantedBy].sort(),
      granted_at: grantedAt,
      ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
      conditional,
    });
  }
  return out;
}
