/**
 * Pages of every list: defaults, bounds and offsets live here only. A page is bounded so that
 * its offset, (page - 1) * limit, stays an exact integer in JavaScript and in Cypher.
 */
export const DEFAULT_PAGE = 1;
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;
export const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / MAX_LIMIT);

export interface PageRequest {
  page?: number | undefined;
  limit?: number | undefined;
}

export interface Page {
  page: number;
  limit: number;
  /** How many items come before this page. */
  skip: number;
}

export function pageOf(request: PageRequest = {}): Page {
  const page = request.page ?? DEFAULT_PAGE;
  const limit = request.limit ?? DEFAULT_LIMIT;
  return { page, limit, skip: (page - 1) * limit };
}

/** One page of a list with the number of items in the whole list. */
export interface Paged<T> {
  total: number;
  items: T[];
  page: Page;
}
