import type { Static } from '@sinclair/typebox';
import type { Database } from '../db/database.js';
import { validationFailed } from '../errors/errors.js';
import { DEFAULT_LIMIT } from '../pagination.js';
import type { AccessChangeListQuery } from '../schemas/access-history.js';
import { parseInstant } from '../time.js';
import {
  accessHistoryRepository as repo,
  fromStored,
  type AccessChange,
  type AccessChangedData,
} from './repository.js';

/** What a list of access changes asks for (the query of `GET /v1/access-changes`). */
export type AccessChangeQuery = Static<typeof AccessChangeListQuery>;

export interface AccessChangePage {
  data: AccessChange[];
  pagination: {
    total: number;
    page?: number;
    per_page: number;
    pages: number;
    next_cursor: string | null;
    horizon: string;
  };
}

const DAY_MS = 86_400_000;

/** Messages purged per statement. */
const PURGE_SLICE = 10_000;

/** Parts of access changes purged per statement (up to 500 changes each). */
const PURGE_PARTS = 100;

const encodeCursor = (id: string): string => Buffer.from(id).toString('base64url');

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!/^acc_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))
    throw validationFailed('not a cursor of this list', [
      { pointer: '/query/cursor', message: 'is not a next_cursor this list gave' },
    ]);
  return id;
}

function instant(text: string, name: string): string {
  const parsed = parseInstant(text);
  if (parsed === undefined)
    throw validationFailed('not a timestamp', [
      { pointer: `/query/${name}`, message: `${text} is not an RFC 3339 instant` },
    ]);
  return parsed;
}

/**
 * The access history (docs/access-history.md): the access changes recorded, read in the order
 * they were recorded, and forgotten past the retention.
 */
export class AccessHistoryService {
  constructor(
    private readonly db: Database,
    private readonly options: {
      retentionDays: number;
      /** Settles once the changes this instance computed so far are stored (when it stores them). */
      settled?: () => Promise<void>;
    },
  ) {}

  /** The oldest instant the history still answers for. */
  horizon(now = Date.now()): string {
    return new Date(now - this.options.retentionDays * DAY_MS).toISOString();
  }

  async list(query: AccessChangeQuery): Promise<AccessChangePage> {
    if (query.page !== undefined && query.cursor !== undefined)
      throw validationFailed('page and cursor together', [
        { pointer: '/query/cursor', message: 'pages by cursor or by page number, not both' },
      ]);
    const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
    const limit = query.limit ?? DEFAULT_LIMIT;
    const page = query.page ?? 1;
    await this.options.settled?.();
    const { total, rows } = await repo.list(
      this.db,
      {
        ...(query.principal_id !== undefined ? { principalId: query.principal_id } : {}),
        ...(query.resource_type !== undefined ? { resourceType: query.resource_type } : {}),
        ...(query.identifier !== undefined ? { identifier: query.identifier } : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
        ...(query.event_id !== undefined ? { eventId: query.event_id } : {}),
        ...(query.since !== undefined ? { since: instant(query.since, 'since') } : {}),
        ...(query.until !== undefined ? { until: instant(query.until, 'until') } : {}),
        ...(after !== undefined ? { after } : {}),
      },
      { skip: after !== undefined ? 0 : (page - 1) * limit, limit },
    );
    const last = rows.at(-1);
    return {
      data: rows.map(fromStored),
      pagination: {
        total,
        ...(after === undefined ? { page } : {}),
        per_page: limit,
        pages: Math.ceil(total / limit),
        next_cursor: last ? encodeCursor(last.id) : (query.cursor ?? null),
        horizon: this.horizon(),
      },
    };
  }

  /** The data of the `access.changed` messages among `ids`, by id (what the webhooks deliver). */
  messages(ids: readonly string[]): Promise<Map<string, AccessChangedData>> {
    return repo.messages(this.db, ids);
  }

  /**
   * Forgets the changes past the retention, and the `access.changed` messages no webhook outbox
   * holds any more; answers how many changes.
   */
  async purge(): Promise<number> {
    const before = this.horizon();
    const all = async (slice: () => Promise<number>): Promise<number> => {
      let purged = 0;
      for (let n = PURGE_SLICE; n === PURGE_SLICE; purged += n) n = await slice();
      return purged;
    };
    await all(() => repo.purgeMessages(this.db, PURGE_SLICE));
    let changes = 0;
    for (let parts = PURGE_PARTS; parts === PURGE_PARTS;) {
      const purged = await repo.purge(this.db, before, PURGE_PARTS);
      parts = purged.parts;
      changes += purged.changes;
    }
    return changes;
  }
}
