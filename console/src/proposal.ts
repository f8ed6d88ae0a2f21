/**
 * A proposed policy edit handed to the what-if page: a JSON merge patch (RFC 7396) of the policy's
 * body, and the version it was worked out on. It travels in the address when it is small enough
 * (a proposal can then be bookmarked or sent to a colleague) and in the history entry's state
 * otherwise, so that a policy naming thousands of principals does not make an address no server
 * or browser accepts.
 */

import type { Location } from './router';

/** Past this many characters of the encoded patch, the proposal travels in the history state. */
export const MAX_PATCH_IN_ADDRESS = 2000;

export interface Proposal {
  patch: Record<string, unknown>;
  /** The policy version the patch was worked out on, when known. */
  at?: number;
}

/** What the what-if page received: a proposal, or why the one in the address is unusable. */
export type Received = { proposal: Proposal } | { error: string } | null;

interface InState {
  policy: string;
  proposal: Proposal;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * RFC 7396: objects merge key by key, a null removes the key, anything else replaces the value.
 * Keys are defined rather than assigned, so a `__proto__` key in a patch stays a plain key.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isObject(target)) {
    for (const [key, value] of Object.entries(target)) {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else {
      const merged = mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value);
      Object.defineProperty(out, key, {
        value: merged,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return out;
}

/** Where to go to try `proposal` on policy `policyId`: the console path and the history state. */
export function proposalTarget(policyId: string, proposal: Proposal): { to: string; state?: InState } {
  const base = `/what-if?policy=${encodeURIComponent(policyId)}${proposal.at !== undefined ? `&at=${proposal.at}` : ''}`;
  const patch = encodeURIComponent(JSON.stringify(proposal.patch));
  if (patch.length <= MAX_PATCH_IN_ADDRESS) return { to: `${base}&patch=${patch}` };
  return { to: base, state: { policy: policyId, proposal } };
}

/** The proposal the what-if page was opened with for `policyId`, if any. */
export function receivedProposal(location: Location, policyId: string): Received {
  const at = Number(location.query.get('at'));
  const version = Number.isInteger(at) && at > 0 ? { at } : {};
  const text = location.query.get('patch');
  if (text !== null) {
    let patch: unknown;
    try {
      patch = JSON.parse(text);
    } catch {
      return { error: 'The proposed change in the address is not valid JSON.' };
    }
    if (!isObject(patch)) return { error: 'The proposed change in the address is not a JSON object.' };
    return { proposal: { patch, ...version } };
  }
  const state = location.state as Partial<InState> | null;
  if (
    isObject(state) &&
    state.policy === policyId &&
    isObject(state.proposal) &&
    isObject(state.proposal.patch)
  ) {
    return { proposal: { patch: state.proposal.patch, ...version } };
  }
  return null;
}
