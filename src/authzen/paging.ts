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
 * empty on the last page. A token holds the offset and size of its page and a fingerprint of the
 * search that issued it. The size travels in the token, so that a follow-up may send
 * `page.token` alone; the fingerprint refuses a token sent with a changed search (the standard
 * asks every member but `page.token` to stay the same) instead of paging through a different
 * result.
 */

const TOKEN = /^([0-9]{1,15})\.([0-9]{1,4})\.([A-Za-z0-9_-]{22})$/;

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

function fingerprint(search: unknown): string {
  return createHash('sha256').update(canonical(search)).digest('base64url').slice(0, 22);
}

const sizeOf = (limit: number | undefined): number =>
  Math.min(limit ?? DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);

function refused(message: string, detail: string): never {
  throw validationFailed(`page.token ${message}`, [{ pointer: '/page/token', message: detail }]);
}

/** Where the page a request asks for starts, and how many results it holds. */
function windowOf(page: PageRequest | undefined, print: string): { offset: number; limit: number } {
  const token = page?.token;
  if (token === undefined || token === '') return { offset: 0, limit: sizeOf(page?.limit) };
  let text: string;
  try {
    text = Buffer.from(token, 'base64url').toString('utf8');
  } catch {
    text = '';
  }
  const match = TOKEN.exec(text);
  if (!match || Buffer.from(text, 'utf8').toString('base64url') !== token) {
    refused('is not a token of this service', 'is not a token of this service');
  }
  if (match[3] !== print) {
    refused(
      'belongs to another search: only page.token may change between pages',
      'belongs to another search',
    );
  }
  const limit = Number(match[2]);
  if (page?.limit !== undefined && sizeOf(page.limit) !== limit) {
    throw validationFailed('page.limit changed: only page.token may change between pages', [
      { pointer: '/page/limit', message: `must be left out or ${limit}, the size of the first page` },
    ]);
  }
  return { offset: Number(match[1]), limit };
}

/**
 * The page of `all` a search request asks for. `search` is what the request asks, without its
 * page: a token is valid only with the same search.
 */
export function pageOf<T>(
  all: readonly T[],
  search: unknown,
  page: PageRequest | undefined,
): { page: SearchPage; results: T[] } {
  const print = fingerprint(search);
  const { offset, limit } = windowOf(page, print);
  const results = all.slice(offset, offset + limit);
  const next = offset + results.length;
  // A page of size 0 only counts: a token could never get further.
  const more = limit > 0 && next < all.length;
  return {
    page: {
      next_token: more ? Buffer.from(`${next}.${limit}.${print}`, 'utf8').toString('base64url') : '',
      count: results.length,
      total: all.length,
    },
    results,
  };
}
