import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { unavailable, validationFailed } from '../errors/errors.js';
import type { FeedPosition } from '../events/feed.js';

/** What a token records: the database's bookmarks and the change feed's places. */
export interface Freshness {
  bookmarks: readonly string[];
  places: readonly FeedPosition[];
}

/** What tokens are made from and waited for: the database and the change feed of this instance. */
export interface FreshnessSource {
  committedBookmarks(): { version: number; bookmarks: readonly string[] };
  catchUp(bookmarks: readonly string[], waitMs: number): Promise<boolean>;
}

export interface FeedSource {
  position(): { version: number; places: readonly FeedPosition[] };
  reach(places: readonly FeedPosition[], waitMs: number): Promise<boolean>;
}

export interface ConsistencyOptions {
  /** The key-encryption key every instance shares; tokens are signed with a key derived from it. */
  kek: Buffer;
  /** How long a request waits for this instance to catch up with a token. */
  waitMs: number;
}

/** The longest token accepted: far above what one holds, well below the header limit. */
export const MAX_TOKEN_LENGTH = 2_048;
const VERSION = 'ct1';
const MAC_BYTES = 16;
const MAX_BOOKMARKS = 32;
const MAX_BOOKMARK_LENGTH = 512;
const MAX_PLACES = 64;
const TOKEN_SHAPE = /^ct1\.[A-Za-z0-9_-]{1,2000}\.[A-Za-z0-9_-]{22}$/;
/** Seconds a client is told to wait when an instance could not catch up in time. */
const RETRY_AFTER_S = 1;

const malformed = (message: string) =>
  validationFailed(`Consistency-Token ${message}`, [{ pointer: '/headers/Consistency-Token', message }]);

/**
 * Consistency tokens: what a write answers so that a later request, to any instance, is answered
 * at least as fresh as that write. A token holds the Neo4j bookmarks of what this instance had
 * committed and, per shard of the change feed, the last change it had committed, signed so that
 * no client can make an instance wait for a state that never was. Reading one back waits (within
 * a bound) for the database to have those transactions, so that every statement of the request
 * sees them, and for the change feed to have delivered those changes here, so that the decision
 * index (and everything else that follows the feed) holds them.
 */
export class ConsistencyTokens {
  private readonly key: Buffer;
  private cached = { bookmarks: -1, places: -1, token: '' };

  constructor(
    private readonly db: FreshnessSource,
    private readonly feed: FeedSource,
    private readonly options: ConsistencyOptions,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', options.kek, Buffer.alloc(0), 'consistency-token', 32));
  }

  /** A token for everything this instance has committed so far. */
  issue(): string {
    const bookmarks = this.db.committedBookmarks();
    const position = this.feed.position();
    const cached = this.cached;
    if (cached.bookmarks === bookmarks.version && cached.places === position.version) return cached.token;
    const token = this.encode({ bookmarks: bookmarks.bookmarks, places: position.places });
    this.cached = { bookmarks: bookmarks.version, places: position.version, token };
    return token;
  }

  /**
   * Waits until this instance is at least as fresh as the token says: 400 for a token that is
   * not one of this service's, 503 (with Retry-After) when it cannot catch up within the bound.
   */
  async await(token: string): Promise<void> {
    const freshness = this.decode(token);
    const deadline = Date.now() + this.options.waitMs;
    if (
      freshness.bookmarks.length > 0 &&
      !(await this.db.catchUp(freshness.bookmarks, this.options.waitMs))
    ) {
      throw this.behind();
    }
    if (!(await this.feed.reach(freshness.places, Math.max(0, deadline - Date.now())))) throw this.behind();
  }

  encode(freshness: Freshness): string {
    const payload = Buffer.from(
      JSON.stringify({ b: freshness.bookmarks, p: freshness.places.flat() }),
    ).toString('base64url');
    return `${VERSION}.${payload}.${this.mac(payload)}`;
  }

  decode(token: string): Freshness {
    if (token.length > MAX_TOKEN_LENGTH || !TOKEN_SHAPE.test(token)) {
      throw malformed('is not a consistency token this service issued');
    }
    const [, payload, mac] = token.split('.') as [string, string, string];
    // Compared as text: base64url leaves spare bits in the last character, which must not let a
    // second spelling of the same bytes through.
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw malformed('was not issued by this service');
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw malformed('is not a consistency token this service issued');
    }
    const freshness = parseFreshness(body);
    if (!freshness) throw malformed('is not a consistency token this service issued');
    return freshness;
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key)
      .update(`${VERSION}.${payload}`)
      .digest()
      .subarray(0, MAC_BYTES)
      .toString('base64url');
  }

  private behind() {
    return unavailable(
      `this instance could not catch up with the consistency token within ${this.options.waitMs} ms; retry shortly`,
      RETRY_AFTER_S,
    );
  }
}

function parseFreshness(body: unknown): Freshness | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { b, p } = body as { b?: unknown; p?: unknown };
  if (!Array.isArray(b) || b.length > MAX_BOOKMARKS) return undefined;
  if (!Array.isArray(p) || p.length % 2 !== 0 || p.length > MAX_PLACES * 2) return undefined;
  const bookmarks: string[] = [];
  for (const bookmark of b) {
    if (typeof bookmark !== 'string' || bookmark.length === 0 || bookmark.length > MAX_BOOKMARK_LENGTH)
      return undefined;
    bookmarks.push(bookmark);
  }
  const places: FeedPosition[] = [];
  for (let i = 0; i < p.length; i += 2) {
    const shard: unknown = p[i];
    const seq: unknown = p[i + 1];
    if (!Number.isSafeInteger(shard) || !Number.isSafeInteger(seq)) return undefined;
    if ((shard as number) < 0 || (seq as number) < 0) return undefined;
    places.push([shard as number, seq as number]);
  }
  return { bookmarks, places };
}
