import { globMatches } from '../policies/patterns.js';
import type { IxPolicy } from './model.js';

/** Resources whose candidates are remembered at most; the memory is emptied beyond. */
const CANDIDATE_CACHE_SIZE = 50_000;

/** The policies of one resource type, found by identifier. */
class TypeEntry {
  /** Policies naming an identifier exactly. */
  readonly exact = new Map<string, IxPolicy[]>();
  /** Glob policies by the literal prefix of their glob, and the distinct prefix lengths. */
  readonly globs = new Map<string, { policy: IxPolicy; index: number }[]>();
  private lengths: number[] = [];

  addGlob(prefix: string, entry: { policy: IxPolicy; index: number }): void {
    const list = this.globs.get(prefix);
    if (list) list.push(entry);
    else {
      this.globs.set(prefix, [entry]);
      this.refreshLengths();
    }
  }

  removePolicy(policy: IxPolicy): void {
    for (const r of policy.resources) {
      if (r.glob) {
        const list = this.globs.get(r.glob.prefix);
        if (!list) continue;
        const kept = list.filter((e) => e.policy.id !== policy.id);
        if (kept.length === 0) {
          this.globs.delete(r.glob.prefix);
          this.refreshLengths();
        } else if (kept.length !== list.length) this.globs.set(r.glob.prefix, kept);
      } else {
        const list = this.exact.get(r.identifier);
        if (!list) continue;
        const kept = list.filter((p) => p.id !== policy.id);
        if (kept.length === 0) this.exact.delete(r.identifier);
        else if (kept.length !== list.length) this.exact.set(r.identifier, kept);
      }
    }
  }

  /** Every policy of this type whose resources include `identifier`, exactly or by a glob. */
  collect(identifier: string, out: IxPolicy[]): void {
    const exact = this.exact.get(identifier);
    if (exact) for (const p of exact) out.push(p);
    for (const length of this.lengths) {
      if (length > identifier.length) break;
      const list = this.globs.get(length === identifier.length ? identifier : identifier.slice(0, length));
      if (!list) continue;
      for (const { policy, index } of list) {
        if (globMatches(policy.resources[index]!.glob!, identifier) && !out.includes(policy))
          out.push(policy);
      }
    }
  }

  get empty(): boolean {
    return this.exact.size === 0 && this.globs.size === 0;
  }

  private refreshLengths(): void {
    this.lengths = [...new Set([...this.globs.keys()].map((k) => k.length))].sort((a, b) => a - b);
  }
}

/**
 * Active policies by the resources they name: exact identifiers, and globs by their literal
 * prefix, so that the policies covering a resource are found without looking at the others.
 */
export class ResourcePolicies {
  private readonly byType = new Map<string, TypeEntry>();
  /**
   * Candidates by `type:identifier`, remembered until a policy changes: a resource asked about
   * again costs one lookup instead of a walk of the glob prefixes.
   */
  private readonly cache = new Map<string, IxPolicy[]>();

  /**
   * Active policies naming this resource (exactly or by a glob), in no particular order. The
   * list is shared: callers must not change it. A glob's own text asks for the globs covering it.
   */
  candidates(type: string, identifier: string): readonly IxPolicy[] {
    const key = `${type}:${identifier}`;
    let out = this.cache.get(key);
    if (out) return out;
    out = [];
    this.byType.get(type)?.collect(identifier, out);
    if (this.cache.size >= CANDIDATE_CACHE_SIZE) this.cache.clear();
    this.cache.set(key, out);
    return out;
  }

  add(policy: IxPolicy): void {
    this.cache.clear();
    policy.resources.forEach((r, index) => {
      let entry = this.byType.get(r.type);
      if (!entry) {
        entry = new TypeEntry();
        this.byType.set(r.type, entry);
      }
      if (r.glob) entry.addGlob(r.glob.prefix, { policy, index });
      else {
        const list = entry.exact.get(r.identifier);
        if (!list) entry.exact.set(r.identifier, [policy]);
        else if (!list.includes(policy)) list.push(policy);
      }
    });
  }

  remove(policy: IxPolicy): void {
    this.cache.clear();
    for (const type of new Set(policy.resources.map((r) => r.type))) {
      const entry = this.byType.get(type);
      entry?.removePolicy(policy);
      if (entry?.empty) this.byType.delete(type);
    }
  }

  clear(): void {
    this.byType.clear();
    this.cache.clear();
  }
}

/** Adds a value to the set of a key, making the set when it is the first. */
export function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(value);
}

/** Takes a value out of the set of a key, and the key out when its set empties. */
export function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
