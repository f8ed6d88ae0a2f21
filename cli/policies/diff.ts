import {
  bodyFields,
  POLICY_BODY_FIELDS,
  policyNameKey,
  type Policy,
  type PolicyBody,
} from '../../src/policies/model.js';
import type { FolderPolicy } from './folder.js';

/**
 * What a folder of policies changes on the service: each policy of the folder against the live
 * policy of the same name (names are unique whatever their case), compared on the fields a file
 * controls only. What the service sets (id, version, activation, timestamps, who wrote it) is
 * never a difference, and neither is the order of a list the engine reads as a set (subjects,
 * actions, resources) nor the order of an object's keys.
 */

/** The fields a policy file controls: those of a policy body. */
export const CONTROLLED_FIELDS = POLICY_BODY_FIELDS;
export type ControlledField = (typeof CONTROLLED_FIELDS)[number];

/** A live policy, as far as the diff reads it. */
export type LivePolicy = Pick<Policy, 'id' | 'version' | ControlledField>;

/** One field that differs: its value on the service, and in the folder. */
export interface FieldChange {
  field: ControlledField;
  from: unknown;
  to: unknown;
}

/** Where a change stands on the service: the policy and the version the plan was made against. */
export interface LiveRef {
  id: string;
  version: number;
}

export type Change =
  | { action: 'create'; name: string; file: string; body: PolicyBody }
  | { action: 'update'; name: string; file: string; body: PolicyBody; live: LiveRef; fields: FieldChange[] }
  | { action: 'delete'; name: string; live: LiveRef };

export interface DiffOptions {
  /** Live policies the folder lacks are deleted. */
  prune?: boolean;
  /** Only the policy of this name (in the folder, or live with `prune`). */
  only?: string;
}

/**
 * The changes that make the live policies what the folder says, in name order, deletions last:
 * a policy of the folder that is not live is created, one that differs is updated, and with
 * `prune` a live policy the folder lacks is deleted. A policy that does not differ is no change.
 */
export function diffPolicies(
  folder: readonly FolderPolicy[],
  live: readonly LivePolicy[],
  options: DiffOptions = {},
): Change[] {
  const only = options.only === undefined ? undefined : policyNameKey(options.only);
  const liveByKey = new Map(live.map((p) => [policyNameKey(p.name), p]));
  const folderKeys = new Set(folder.map((p) => policyNameKey(p.name)));
  const changes: Change[] = [];
  for (const policy of [...folder].sort((a, b) => cmp(a.name, b.name))) {
    if (only !== undefined && policyNameKey(policy.name) !== only) continue;
    const current = liveByKey.get(policyNameKey(policy.name));
    if (!current) {
      changes.push({ action: 'create', name: policy.name, file: policy.file, body: policy.body });
      continue;
    }
    const fields = fieldChanges(current, policy.body);
    if (fields.length === 0) continue;
    changes.push({
      action: 'update',
      name: policy.name,
      file: policy.file,
      body: policy.body,
      live: { id: current.id, version: current.version },
      fields,
    });
  }
  if (options.prune) {
    const gone = live
      .filter((p) => !folderKeys.has(policyNameKey(p.name)))
      .filter((p) => only === undefined || policyNameKey(p.name) === only)
      .sort((a, b) => cmp(a.name, b.name));
    for (const p of gone)
      changes.push({ action: 'delete', name: p.name, live: { id: p.id, version: p.version } });
  }
  return changes;
}

/** The fields in which a live policy differs from a (checked) body, in the order of a body. */
export function fieldChanges(current: LivePolicy, body: PolicyBody): FieldChange[] {
  const wanted = bodyFields(body);
  const out: FieldChange[] = [];
  for (const field of CONTROLLED_FIELDS) {
    const from = current[field];
    const to = wanted[field];
    if (canonical(field, from) !== canonical(field, to)) out.push({ field, from, to });
  }
  return out;
}

/** A field's value as text that two equal values share: lists read as sets in order, keys sorted. */
function canonical(field: ControlledField, value: unknown): string {
  switch (field) {
    case 'subjects': {
      const s = value as Policy['subjects'];
      return stable({
        principals: [...s.principals].sort(),
        groups: [...s.groups].sort(),
        match: s.match ?? null,
      });
    }
    case 'actions':
      return stable([...(value as string[])].sort());
    case 'resources':
      return stable(
        [...new Set((value as Policy['resources']).map((r) => `${r.type}:${r.identifier}`))].sort(),
      );
    case 'valid_from':
    case 'valid_until':
      // Both sides are kept to the millisecond in UTC; compared as instants all the same.
      return value === null || value === undefined ? 'null' : String(Date.parse(value as string));
    default:
      return stable(value ?? null);
  }
}

/** JSON with every object's keys in order, so that key order is no difference. */
export function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => cmp(a, b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stable(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
