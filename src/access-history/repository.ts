import { defineQueries } from '../db/catalogue.js';
import { composeQuery } from '../db/compose.js';
import type { Database, Reader } from '../db/database.js';
import type { WriteThread } from '../db/write-thread.js';
import type { GrantExplained } from '../decisions/access-service.js';
import type { EntryState, PrincipalSummary } from './changes.js';

const Q = defineQueries('access-history', [
  'record',
  'recorded_causes',
  'claim',
  'release',
  'page',
  'count',
  'purge',
  'purge_messages',
  'began',
  'principal_as_of',
  'resource_as_of',
]);

/**
 * A part made ready to store where it was computed (which may be a decision thread): its
 * parameter of the record statement as JSON text, and what the recorder keeps of it meanwhile.
 */
export interface ReadyPart {
  id: string;
  cause_id: string;
  /** How many changes it holds. */
  rows: number;
  /** JSON of the part as one element of the record statement's `$parts`. */
  json: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A part as the record statement takes it, as JSON text: a function of the part alone. */
export function readyPart(part: StoredPart): ReadyPart {
  return {
    id: part.id,
    cause_id: part.cause_id,
    rows: part.rows.length,
    json: encoder.encode(JSON.stringify(part)),
  };
}

/** The `$parts` of the record statement, as one JSON array. */
function partsArray(parts: readonly ReadyPart[]): Uint8Array {
  const size = parts.reduce((n, p) => n + p.json.length + 1, 2);
  const out = new Uint8Array(size);
  let at = 0;
  out[at++] = 0x5b; // [
  parts.forEach((p, i) => {
    if (i > 0) out[at++] = 0x2c; // ,
    out.set(p.json, at);
    at += p.json.length;
  });
  out[at++] = 0x5d; // ]
  return out.subarray(0, at);
}

/** One resource (or glob) of a principal's history around an instant (`principal_as_of`). */
export interface AsOfRow {
  type: string;
  identifier: string;
  pattern: boolean;
  /** A change was recorded after the instant: `before` is what held at it (null: nothing). */
  changed_since: boolean;
  before: EntryState | null;
  /** The last change at or before the instant that gained actions. */
  made_by: (AccessCause & { at: string }) | null;
}

/** Changes of one cause stored together, and announced as one `access.changed` message. */
export interface StoredPart {
  /** The message's id (the id of its first change): the `webhook-id` of its deliveries. */
  id: string;
  /** The event that caused its changes. */
  cause_id: string;
  at: string;
  rows: StoredAccessChange[];
  /** JSON of the `access.changed` data, `{ cause, changes, part, parts }`; null for quiet changes. */
  body: string | null;
}

/** What made an access change: the audit event of the committed change, and who made it. */
export interface AccessCause {
  event_id: string;
  event_type: string;
  actor: { type: string; id: string };
}

/** An access change as the API shows it (docs/api.md §11). */
export interface AccessChange {
  id: string;
  at: string;
  principal: PrincipalSummary;
  /** Access while acting for this principal, which a delegation moved. */
  on_behalf_of?: PrincipalSummary;
  resource: { type: string; identifier: string; pattern?: true };
  actions_gained: string[];
  actions_lost: string[];
  via: GrantExplained[];
  cause: AccessCause;
}

/** An access change as it is stored: flat, readable in Neo4j Browser, with both sides of the entry. */
export interface StoredAccessChange {
  id: string;
  at: string;
  principal_id: string;
  principal_name: string;
  principal_type: string;
  resource_type: string;
  identifier: string;
  pattern: boolean;
  actions_gained: string[];
  actions_lost: string[];
  /** JSON: `via` of the change. */
  via: string;
  /**
   * JSON: the whole entry before the change (`EntryState`), or null where there was none: what
   * `as_of` reads back. What it is after is the next change's `before`, or the index's now.
   */
  before: string | null;
  cause_event_id: string;
  cause_event_type: string;
  actor_type: string;
  actor_id: string;
  /** For access while acting for another principal (a delegation moved it): that principal. */
  on_behalf_of_id?: string;
  on_behalf_of_name?: string;
  on_behalf_of_type?: string;
}

export function toStored(change: AccessChange, before: EntryState | null): StoredAccessChange {
  return {
    id: change.id,
    at: change.at,
    principal_id: change.principal.id,
    principal_name: change.principal.name,
    principal_type: change.principal.type,
    resource_type: change.resource.type,
    identifier: change.resource.identifier,
    pattern: change.resource.pattern === true,
    actions_gained: change.actions_gained,
    actions_lost: change.actions_lost,
    via: JSON.stringify(change.via),
    before: before ? JSON.stringify(before) : null,
    cause_event_id: change.cause.event_id,
    cause_event_type: change.cause.event_type,
    actor_type: change.cause.actor.type,
    actor_id: change.cause.actor.id,
    ...(change.on_behalf_of
      ? {
          on_behalf_of_id: change.on_behalf_of.id,
          on_behalf_of_name: change.on_behalf_of.name,
          on_behalf_of_type: change.on_behalf_of.type,
        }
      : {}),
  };
}

export function fromStored(row: StoredAccessChange): AccessChange {
  return {
    id: row.id,
    at: row.at,
    principal: { id: row.principal_id, name: row.principal_name, type: row.principal_type },
    ...(row.on_behalf_of_id !== undefined && row.on_behalf_of_id !== null
      ? {
          on_behalf_of: {
            id: row.on_behalf_of_id,
            name: row.on_behalf_of_name ?? '',
            type: row.on_behalf_of_type ?? '',
          },
        }
      : {}),
    resource: {
      type: row.resource_type,
      identifier: row.identifier,
      ...(row.pattern ? { pattern: true as const } : {}),
    },
    actions_gained: row.actions_gained,
    actions_lost: row.actions_lost,
    via: JSON.parse(row.via) as GrantExplained[],
    cause: {
      event_id: row.cause_event_id,
      event_type: row.cause_event_type,
      actor: { type: row.actor_type, id: row.actor_id },
    },
  };
}

/** What a list of access changes is narrowed to; every value is checked before it comes here. */
export interface AccessChangeFilters {
  principalId?: string;
  resourceType?: string;
  identifier?: string;
  action?: string;
  eventId?: string;
  since?: string;
  until?: string;
  /** Only changes recorded after this one (a cursor). */
  after?: string;
}

/** Predicates for the given filters; each refers to its value only through a parameter. */
function predicates(filters: AccessChangeFilters): { fragments: string[]; params: Record<string, unknown> } {
  // Quiet changes (the same actions, held otherwise) are kept for `as_of` only.
  const fragments: string[] = ['size(c.actions_gained) > 0 OR size(c.actions_lost) > 0'];
  const params: Record<string, unknown> = {};
  const add = (fragment: string, name: string, value: unknown): void => {
    fragments.push(fragment);
    params[name] = value;
  };
  if (filters.principalId !== undefined)
    add('c.principal_id = $principalId', 'principalId', filters.principalId);
  if (filters.resourceType !== undefined)
    add('c.resource_type = $resourceType', 'resourceType', filters.resourceType);
  if (filters.identifier !== undefined) add('c.identifier = $identifier', 'identifier', filters.identifier);
  if (filters.action !== undefined)
    add('$action IN c.actions_gained OR $action IN c.actions_lost', 'action', filters.action);
  if (filters.eventId !== undefined) add('c.cause_event_id = $eventId', 'eventId', filters.eventId);
  if (filters.since !== undefined) add('c.at >= datetime($since)', 'since', filters.since);
  if (filters.until !== undefined) add('c.at < datetime($until)', 'until', filters.until);
  return { fragments, params };
}

export const accessHistoryRepository = {
  /** Stores parts as `recorder` (an instance id); a cause another recorder stored is skipped. */
  async record(db: Database, ready: readonly ReadyPart[], recorder: string): Promise<void> {
    const parts: unknown = JSON.parse(decoder.decode(partsArray(ready)));
    await db.write('access-history/record', (tx) => tx.run(Q.record, { parts, recorder }));
  },

  /**
   * A thread that stores parts with a driver of its own (`recordOn`), when the database's address
   * is known: the driver's packing of thousands of rows never runs on the thread that answers
   * requests.
   */
  recordThread(db: Database): WriteThread | undefined {
    return db.writeThread(Q.record);
  },

  async recordOn(thread: WriteThread, ready: readonly ReadyPart[], recorder: string): Promise<void> {
    await thread.write({ recorder }, {}, { parts: partsArray(ready) });
  },

  /** The ids among `ids` whose access changes are stored already. */
  async recordedCauses(db: Reader, ids: readonly string[]): Promise<Set<string>> {
    const rows = await db.run<{ id: string }>(Q.recorded_causes, { ids });
    return new Set(rows.map((r) => r.id));
  },

  /** Takes or renews the recorder's lease; true when `holder` holds it now. */
  async claim(db: Database, holder: string, leaseMs: number): Promise<boolean> {
    const rows = await db.write('access-history/claim', (tx) =>
      tx.run<{ holder: string }>(Q.claim, { holder, leaseMs, now: new Date().toISOString() }),
    );
    return rows[0]?.holder === holder;
  },

  /** When the history began (the first claim of the recorder's lease); null before. */
  async began(db: Reader): Promise<string | null> {
    const row = await db.first<{ began: string | null }>(Q.began);
    return row?.began ?? null;
  },

  async principalAsOf(db: Reader, principalId: string, at: string): Promise<AsOfRow[]> {
    const rows = await db.run<{
      type: string;
      identifier: string;
      pattern: boolean;
      changed_since: boolean;
      before: string | null;
      made_by: {
        at: string;
        cause_event_id: string;
        cause_event_type: string;
        actor_type: string;
        actor_id: string;
      } | null;
    }>(Q.principal_as_of, { principalId, at });
    return rows.map((r) => ({
      type: r.type,
      identifier: r.identifier,
      pattern: r.pattern,
      changed_since: r.changed_since,
      before: r.before === null ? null : (JSON.parse(r.before) as EntryState),
      made_by: r.made_by && {
        at: r.made_by.at,
        event_id: r.made_by.cause_event_id,
        event_type: r.made_by.cause_event_type,
        actor: { type: r.made_by.actor_type, id: r.made_by.actor_id },
      },
    }));
  },

  /**
   * For each principal with a change after `at` on the resource or on a glob of its type, per
   * entry, the first such change's `before` (null: nothing held).
   */
  async resourceAsOf(
    db: Reader,
    type: string,
    identifier: string,
    at: string,
  ): Promise<(PrincipalSummary & { identifier: string; pattern: boolean; before: EntryState | null })[]> {
    const rows = await db.run<
      PrincipalSummary & { identifier: string; pattern: boolean; before: string | null }
    >(Q.resource_as_of, { type, identifier, at });
    return rows.map((r) => ({
      ...r,
      before: r.before === null ? null : (JSON.parse(r.before) as EntryState),
    }));
  },

  async release(db: Database, holder: string): Promise<void> {
    await db.write('access-history/release', (tx) => tx.run(Q.release, { holder }));
  },

  async list(
    db: Database,
    filters: AccessChangeFilters,
    page: { skip: number; limit: number },
  ): Promise<{ total: number; rows: StoredAccessChange[] }> {
    const counted = predicates({ ...filters, after: undefined });
    const { fragments, params } = predicates(filters);
    if (filters.after !== undefined) {
      fragments.push('c.id > $after');
      params['after'] = filters.after;
    }
    const composed = (name: string, parts: string[]) => ({
      name,
      text: composeQuery(db.catalogue.get(name), '/*FILTERS*/', parts),
    });
    return db.read('access-history/list', async (tx) => {
      const [count] = await tx.run<{ total: number }>(composed(Q.count, counted.fragments), counted.params);
      const rows = await tx.run<{ change: StoredAccessChange }>(composed(Q.page, fragments), {
        ...params,
        skip: page.skip,
        limit: page.limit,
      });
      return { total: count?.total ?? 0, rows: rows.map((r) => r.change) };
    });
  },

  /** Deletes up to `limit` changes recorded before `before`; answers how many it deleted. */
  async purge(db: Database, before: string, limit: number): Promise<number> {
    const rows = await db.write('access-history/purge', (tx) =>
      tx.run<{ purged: number }>(Q.purge, { before, limit }),
    );
    return rows[0]?.purged ?? 0;
  },

  /** Deletes up to `limit` `access.changed` messages no outbox holds; answers how many. */
  async purgeMessages(db: Database, limit: number): Promise<number> {
    const rows = await db.write('access-history/purge_messages', (tx) =>
      tx.run<{ purged: number }>(Q.purge_messages, { limit }),
    );
    return rows[0]?.purged ?? 0;
  },
};
