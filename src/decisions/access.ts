import type { CompiledCondition } from '../policies/conditions.js';
import {
  actionCovers,
  actionMatches,
  compileGlob,
  globMatches,
  isGlob,
  type Glob,
} from '../policies/patterns.js';

/**
 * Effective access from the grants that reach a principal (docs/api.md §2, the access endpoint): one
 * place that turns "these policies select this principal" into entries, whether the policies
 * were found by the Cypher traversal (src/decisions/access-repository.ts) or by the in-memory
 * index (reverse lookup, simulation, risk). Both agree because both end here.
 */

/** An active policy that selects the principal, with what it says about resources. */
export interface Grant {
  policyId: string;
  effect: 'allow' | 'deny';
  actions: readonly string[];
  /** The policy has conditions: what it grants or denies depends on the request. */
  conditional: boolean;
  /** Its resources as written: exact identifiers and globs. */
  resources: readonly { type: string; identifier: string }[];
  /** When the grant took effect for the principal (the traversal knows; the index does not). */
  grantedAt: string | null;
  /** When the policy's window closes (RFC 3339); null when it does not end. */
  validUntil: string | null;
  /** The policy's compiled conditions, when the grant comes from a policy at hand. */
  conditions?: readonly CompiledCondition[] | null;
}

export interface AccessEntry {
  resource: { type: string; identifier: string };
  pattern?: true;
  actions: string[];
  denied_actions?: string[];
  granted_by: string[];
  granted_at: string | null;
  /** When the entry's grants end, if they all do: the last close of their windows. */
  expires_at?: string;
  conditional: boolean;
}

/** A resource an entry may be about: an identifier, or a policy glob standing for what it matches. */
export interface Candidate {
  type: string;
  identifier: string;
  pattern: boolean;
}

interface Spec {
  type: string;
  identifier: string;
  glob: Glob | null;
}

const specsCache = new WeakMap<Grant, Spec[]>();

function specsOf(grant: Grant): Spec[] {
  let specs = specsCache.get(grant);
  if (!specs) {
    specs = grant.resources.map((r) => ({
      type: r.type,
      identifier: r.identifier,
      glob: isGlob(r.identifier) ? compileGlob(r.identifier) : null,
    }));
    specsCache.set(grant, specs);
  }
  return specs;
}

/**
 * Whether a grant's resources include the candidate: an identifier equal to it or a glob
 * matching it; for a pattern candidate, a glob standing for all it stands for.
 */
export function grantCovers(grant: Grant, candidate: Candidate): boolean {
  for (const spec of specsOf(grant)) {
    if (spec.type !== candidate.type) continue;
    if (
      spec.glob
        ? globMatches(spec.glob, candidate.identifier)
        : !candidate.pattern && spec.identifier === candidate.identifier
    )
      return true;
  }
  return false;
}

/** Keeps some candidates, given as their type, identifier and whether they are a glob. */
export interface CandidateFilter {
  keeps(type: string, identifier: string, pattern: boolean): boolean;
  /** The types of every candidate it keeps. */
  readonly types: ReadonlySet<string>;
}

/**
 * The candidates some of `grants` covers (as `grantCovers` says), answered from their resources
 * gathered by type: an exact identifier is looked up, a glob matched.
 */
export function coveredBy(grants: readonly Grant[]): CandidateFilter {
  const byType = new Map<string, { exact: Set<string>; globs: Glob[] }>();
  for (const grant of grants) {
    for (const spec of specsOf(grant)) {
      let named = byType.get(spec.type);
      if (!named) {
        named = { exact: new Set(), globs: [] };
        byType.set(spec.type, named);
      }
      if (spec.glob) named.globs.push(spec.glob);
      else named.exact.add(spec.identifier);
    }
  }
  return {
    types: new Set(byType.keys()),
    keeps: (type, identifier, pattern) => {
      const named = byType.get(type);
      if (!named) return false;
      if (!pattern && named.exact.has(identifier)) return true;
      return named.globs.some((glob) => globMatches(glob, identifier));
    },
  };
}

/**
 * Whether a grant may cover a candidate the filter keeps: one of its exact resources is kept, or
 * one of its globs is of a type the filter keeps. (A grant that covers a kept candidate names it
 * exactly, or has a glob of its type.) Worked out once per grant and filter.
 */
function mayCover(only: CandidateFilter, grant: Grant): boolean {
  const cache = cacheOf(mayCoverCache, only);
  let may = cache.get(grant);
  if (may === undefined) {
    may = specsOf(grant).some((spec) =>
      spec.glob ? only.types.has(spec.type) : only.keeps(spec.type, spec.identifier, false),
    );
    cache.set(grant, may);
  }
  return may;
}

/**
 * The resources entries are computed for: what allow grants (or, with `any`, all grants) name
 * exactly, their globs as pattern entries, and the registered resources those globs match
 * (`registered` lists them).
 */
export function candidatesOf(
  grants: readonly Grant[],
  registered: (type: string, glob: Glob) => Iterable<string>,
  effects: 'allow' | 'any' = 'allow',
  /**
   * Only the candidates it keeps. What a grant yields under it is worked out once per grant and
   * filter: a filter serves many principals of one index as it stands.
   */
  only?: CandidateFilter,
): Candidate[] {
  const seen = new Set<string>();
  const out: Candidate[] = [];
  const add = (type: string, identifier: string, pattern: boolean): void => {
    const key = `${pattern ? 'p' : 'r'}${type}:${identifier}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ type, identifier, pattern });
  };
  const kept = only && cacheOf(keptCache, only);
  for (const grant of grants) {
    if (effects === 'allow' && grant.effect !== 'allow') continue;
    if (kept) {
      let yields = kept.get(grant);
      if (!yields) {
        const list: Candidate[] = [];
        eachYield(grant, registered, (type, identifier, pattern) => {
          if (only.keeps(type, identifier, pattern)) list.push({ type, identifier, pattern });
        });
        kept.set(grant, list);
        yields = list;
      }
      for (const c of yields) add(c.type, c.identifier, c.pattern);
    } else eachYield(grant, registered, add);
  }
  return out;
}

/** Each candidate one grant yields: what it names exactly, its globs, and what they match. */
function eachYield(
  grant: Grant,
  registered: (type: string, glob: Glob) => Iterable<string>,
  emit: (type: string, identifier: string, pattern: boolean) => void,
): void {
  for (const spec of specsOf(grant)) {
    if (!spec.glob) emit(spec.type, spec.identifier, false);
    else {
      emit(spec.type, spec.identifier, true);
      for (const identifier of registered(spec.type, spec.glob)) emit(spec.type, identifier, false);
    }
  }
}

/** Per filter, what each grant yields under it, and whether it may cover what the filter keeps. */
const keptCache = new WeakMap<CandidateFilter, WeakMap<Grant, Candidate[]>>();
const mayCoverCache = new WeakMap<CandidateFilter, WeakMap<Grant, boolean>>();

function cacheOf<T>(
  caches: WeakMap<CandidateFilter, WeakMap<Grant, T>>,
  only: CandidateFilter,
): WeakMap<Grant, T> {
  let cache = caches.get(only);
  if (!cache) {
    cache = new WeakMap();
    caches.set(only, cache);
  }
  return cache;
}

/**
 * The entry of one resource: the union of the actions allowed on it, less those an
 * unconditional deny removes (deny patterns narrower than a remaining wildcard are listed as
 * `denied_actions`); `conditional` when some remaining action depends on the request (granted
 * only conditionally, or touched by a conditional deny). Undefined when nothing remains.
 */
export function entryFor(
  candidate: Candidate,
  grants: readonly Grant[],
  /** The caller knows every grant covers the candidate (it found them by the resource). */
  covered = false,
): AccessEntry | undefined {
  const allows: Grant[] = [];
  const hardDenies: string[] = [];
  const softDenies: string[] = [];
  for (const grant of grants) {
    if (!covered && !grantCovers(grant, candidate)) continue;
    if (grant.effect === 'allow') allows.push(grant);
    else (grant.conditional ? softDenies : hardDenies).push(...grant.actions);
  }
  if (allows.length === 0) return undefined;
  const removed = (action: string): boolean => hardDenies.some((d) => actionCovers(d, action));
  const actions = new Set<string>();
  const grantedBy: Grant[] = [];
  for (const grant of allows) {
    const kept = grant.actions.filter((a) => !removed(a));
    if (kept.length === 0) continue;
    grantedBy.push(grant);
    for (const a of kept) actions.add(a);
  }
  if (actions.size === 0) return undefined;
  const sorted = [...actions].sort();
  const unconditional = grantedBy.filter((g) => !g.conditional).flatMap((g) => g.actions);
  const overlaps = (a: string, b: string): boolean => actionCovers(a, b) || actionCovers(b, a);
  const conditional = sorted.some(
    (a) => !unconditional.some((u) => actionCovers(u, a)) || softDenies.some((d) => overlaps(d, a)),
  );
  const denied = [
    ...new Set(hardDenies.filter((d) => sorted.some((a) => a !== d && actionCovers(a, d)))),
  ].sort();
  const times = grantedBy.map((g) => g.grantedAt).filter((t): t is string => t !== null);
  // An entry ends only if each of its grants does, when the last of their windows closes (until
  // then some grant still gives access to the resource). Every close is a UTC timestamp of one
  // form: as text, it orders in time.
  let expiresAt: string | undefined;
  for (const g of grantedBy) {
    if (g.validUntil === null) {
      expiresAt = undefined;
      break;
    }
    if (expiresAt === undefined || g.validUntil > expiresAt) expiresAt = g.validUntil;
  }
  return {
    resource: { type: candidate.type, identifier: candidate.identifier },
    ...(candidate.pattern ? { pattern: true as const } : {}),
    actions: sorted,
    ...(denied.length > 0 ? { denied_actions: denied } : {}),
    granted_by: grantedBy.map((g) => g.policyId).sort(),
    granted_at: times.length > 0 ? times.reduce((a, b) => (a < b ? a : b)) : null,
    ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
    conditional,
  };
}

/** Whether an entry grants an action (through its actions, and no unconditional deny of it). */
export function entryGrants(entry: AccessEntry, action: string): boolean {
  return (
    entry.actions.some((a) => actionMatches(a, action)) &&
    !(entry.denied_actions ?? []).some((d) => actionMatches(d, action))
  );
}

type ToolHolder = { type: string; attributes: Readonly<Record<string, string | readonly string[]>> };

/**
 * The tools an AI agent may use: its `allowed_tools`, `*` for any; undefined for other principals.
 * It is all of the principal that `accessEntries` reads.
 */
export function toolsOf(principal: ToolHolder): readonly string[] | '*' | undefined {
  if (principal.type !== 'AI_AGENT') return undefined;
  const raw = principal.attributes['allowed_tools'];
  const tools = raw === undefined ? [] : typeof raw === 'string' ? [raw] : raw;
  return tools.includes('*') ? '*' : tools;
}

/** The AI-agent guardrail on access: only the tools in `allowed_tools` (or all with `*`). */
export function toolFilter(principal: ToolHolder): (entry: AccessEntry) => boolean {
  const tools = toolsOf(principal);
  if (tools === undefined || tools === '*') return () => true;
  return (entry) =>
    entry.resource.type !== 'tool' || (!entry.pattern && tools.includes(entry.resource.identifier));
}

export const compareEntries = (a: AccessEntry, b: AccessEntry): number =>
  a.resource.type < b.resource.type
    ? -1
    : a.resource.type > b.resource.type
      ? 1
      : a.resource.identifier < b.resource.identifier
        ? -1
        : a.resource.identifier > b.resource.identifier
          ? 1
          : 0;

/**
 * Every entry of a principal from its grants, sorted by resource type then identifier, filtered
 * by type and action when asked.
 */
export function accessEntries(
  grants: readonly Grant[],
  registered: (type: string, glob: Glob) => Iterable<string>,
  principal: ToolHolder,
  filter: {
    resourceType?: string | undefined;
    action?: string | undefined;
    /** Only the entries of the candidates it keeps (the others are not computed). */
    only?: CandidateFilter | undefined;
  } = {},
): AccessEntry[] {
  const tools = toolFilter(principal);
  const entries: AccessEntry[] = [];
  const candidates = candidatesOf(grants, registered, 'allow', filter.only);
  // An agent limited to some tools sees a tool glob as the allowed tools it covers (the glob
  // itself would promise tools it may not use), registered or not.
  const allowed = toolsOf(principal);
  if (allowed !== undefined && allowed !== '*') {
    const listed = new Set(
      candidates.filter((c) => c.type === 'tool' && !c.pattern).map((c) => c.identifier),
    );
    for (const tool of allowed) {
      if (!listed.has(tool) && (!filter.only || filter.only.keeps('tool', tool, false)))
        candidates.push({ type: 'tool', identifier: tool, pattern: false });
    }
  }
  // Under a filter, the grants that cover none of what it keeps are left out of every entry.
  const { only } = filter;
  const covering = only ? grants.filter((g) => mayCover(only, g)) : grants;
  for (const candidate of candidates) {
    if (filter.resourceType !== undefined && candidate.type !== filter.resourceType) continue;
    const entry = entryFor(candidate, covering);
    if (!entry || !tools(entry)) continue;
    if (filter.action !== undefined && !entryGrants(entry, filter.action)) continue;
    entries.push(entry);
  }
  return entries.sort(compareEntries);
}
