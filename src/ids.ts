import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

export const ID_PREFIXES = {
  principal: 'prn',
  group: 'grp',
  policy: 'pol',
  client: 'cli',
  connector: 'con',
  decision: 'dec',
  event: 'evt',
  report: 'rpt',
  webhook: 'whk',
  delivery: 'dlv',
  job: 'job',
  delegation: 'dlg',
  access_change: 'acc',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/**
 * Cryptographic randomness drawn a few kilobytes at a time: the ULID factory asks for one random
 * number per character, and a system call for each would cost more than the rest of a decision.
 */
const pool = new Uint32Array(2048);
let drawn = pool.length;
function pooledRandom(): number {
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  return pool[drawn++]! / 0x1_0000_0000;
}

const nextUlid = monotonicFactory(pooledRandom);

/** Crockford base32 ULID: 26 characters, the first of which is at most 7. */
export const ULID_PATTERN = '[0-7][0-9A-HJKMNP-TV-Z]{25}';

export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_${ULID_PATTERN}$`;
}

const matchers = Object.fromEntries(
  Object.keys(ID_PREFIXES).map((k) => [k, new RegExp(idPattern(k as IdKind))]),
) as Record<IdKind, RegExp>;

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${nextUlid()}`;
}

export function isId(kind: IdKind, value: unknown): value is string {
  return typeof value === 'string' && matchers[kind].test(value);
}
