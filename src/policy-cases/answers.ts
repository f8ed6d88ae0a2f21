import type { Reason } from '../schemas/decisions.js';
import type { EngineCase } from './format.js';

/**
 * Whether an answer is the one a case expects: its decision, and its reasons compared as the
 * cases write them. The answer may come from the engine in memory or from a live service.
 */

/** What a reason is shown by: its code, and the policy and principal it names, if any. */
export type ShownReason = Pick<Reason, 'code' | 'policy_id' | 'principal_id'>;

/** An answer to a case: the decision and its reasons. */
export interface Answer {
  allowed: boolean;
  reasons: readonly ShownReason[];
}

/** A reason as the cases write it: `CODE`, ` <policy_id>`, ` @<principal_id>`. */
export const shownReason = (r: ShownReason): string =>
  [r.code, r.policy_id, r.principal_id === undefined ? undefined : `@${r.principal_id}`]
    .filter((part) => part !== undefined)
    .join(' ');

const sorted = (list: readonly string[]): string[] => [...list].sort();

/**
 * The reasons a case expects of an answer whose reasons (as shown) are `got`, sorted: the list of
 * `or` they equal if they equal one, else the case's own `reasons` (so that a mismatch is shown
 * against those).
 */
export function expectedReasons(c: EngineCase, got: readonly string[]): string[] {
  const answer = sorted(got).join('\n');
  return sorted([c.reasons, ...(c.or ?? [])].find((list) => sorted(list).join('\n') === answer) ?? c.reasons);
}

/** What is wrong with an answer to a case: its decision or its reasons; undefined when nothing is. */
export function answerProblem(c: EngineCase, answer: Answer): string | undefined {
  const got = answer.reasons.map(shownReason);
  if (answer.allowed !== c.allowed) {
    return `${c.allowed ? 'DENY' : 'ALLOW'} where ${c.allowed ? 'ALLOW' : 'DENY'} was expected (${got.join(', ')})`;
  }
  const expected = expectedReasons(c, got);
  if (sorted(got).join('\n') !== expected.join('\n')) {
    return `reasons ${JSON.stringify(sorted(got))} where ${JSON.stringify(expected)} were expected`;
  }
  return undefined;
}
