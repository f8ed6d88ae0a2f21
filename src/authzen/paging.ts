import { createHash } from 'node:crypto';
import { validationFailed } from '../errors/errors.js';
import {
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  type PageRequest,
  type SearchPage,
} from '../schemas/authzen.js';

/**
 * Pages of the AuthZEN search APIs (§8.2 of the standard): opaque tokens, a `next_token` that is
 * empty on the last page. A token holds the offset of its page and a fingerprint of the search
 * that issued it, so that a token sent with a changed search is refused (the standard asks every
 * member but `page.token` to stay the same) instead of paging through a different result.
 */

const TOKEN = /^([0-9]{1,15})\.([A-Za-z0-9_-]{22})$/;

/** JSON with object keys sorted at every level: equal values, equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprint(search: unknown, page: PageRequest | undefined): string {
  return createHash('sha256')
    .update(canonical({ search, limit: page?.limit ?? null, properties: page?.properties ?? null }))
    .digest('base64url')
    .slice(0, 22);
}

function offsetOf(token: string | undefined, print: string): number {
  if (token === undefined || token === '') return 0;
  let text: string;
  try {
    text = Buffer.from(token, 'base64url').toString('utf8');
  } catch {
    text = '';
  }
  const match = TOKEN.exec(text);
  if (!match || Buffer.from(text, 'utf8').toString('base64url') !== token) {
    throw validationFailed('page.token is not a token of this service', [
      { pointer: '/page/token', message: 'is not a token of this service' },
    ]);
  }
  if (match[2] !== print) {
    throw validationFailed('page.token belongs to another search: only page.token may change between pages', [
      { pointer: '/page/token', message: 'belongs to another search' },
    ]);
  }
  return Number(match[1]);
}

/**
 * The page of `all` a search request asks for. `search` is what the request asks, without its
 * page: a token is valid only with the same search and page size.
 */
export function pageOf<T>(
  all: readonly T[],
  search: unknown,
  page: PageRequest | undefined,
): { page: SearchPage; results: T[] } {
  const print = fingerprint(search, page);
  const offset = offsetOf(page?.token, print);
  const limit = Math.min(page?.limit ?? DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
  const results = all.slice(offset, offset + limit);
  const next = offset + results.length;
  // A page of size 0 only counts: a token could never get further.
  const more = limit > 0 && next < all.length;
  return {
    page: {
      next_token: more ? Buffer.from(`${next}.${print}`, 'utf8').toString('base64url') : '',
      count: results.length,
      total: all.length,
    },
    results,
  };
}
