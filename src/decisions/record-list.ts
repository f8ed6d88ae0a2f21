import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Static } from '@sinclair/typebox';
import { decodeTime, encodeTime } from 'ulid';
import type { Reader } from '../db/database.js';
import { validationFailed } from '../errors/errors.js';
import { ID_PREFIXES, isId } from '../ids.js';
import { parseInstant } from '../time.js';
import {
  DEFAULT_DECISIONS_PAGE,
  type DecisionListRequest,
  type DecisionRecordList,
  type DecisionRecordSchema,
} from '../schemas/decisions.js';
import { decisionRepository as repo } from './repository.js';

type DecisionRecord = Static<typeof DecisionRecordSchema>;

const gunzipAsync = promisify(gunzip);

/**
 * What the settle window adds to the flush interval. A record reaches the database at most a
 * flush interval after its decision, plus the time its batch takes to be written (a statement on
 * the write thread, a decision thread handing its records over first, and for an instance's first
 * batch the start of that thread): this margin covers that write, and clocks of instances a
 * little apart.
 */
export const SETTLE_MARGIN_MS = 2_000;

/**
 * How long a decision waits before a list includes it: every instance writes its batches on its
 * own, each within about a flush interval of its decisions, so a batch written late may hold ids
 * below ones another batch has already given a list. Listing only decisions older than this lets
 * a client that follows the cursor see each one: by then, every batch holding a decision that old
 * has been written.
 */
export function settleWindowMs(flushIntervalMs: number): number {
  return flushIntervalMs + SETTLE_MARGIN_MS;
}

/** Batches read per statement: most pages end within the first few. */
const BATCHES_PER_READ = 4;
/**
 * Batches (each up to a mebibyte of records) read for one page at most, once the page can move
 * its cursor: a follower with a filter that matches little gets an empty page that moves past
 * them, rather than one request reading the whole retention.
 */
export const MAX_BATCHES_PER_LIST = 16;

const PREFIX = `${ID_PREFIXES.decision}_`;
/** How a record's line begins: its id comes first (src/decisions/records.ts). */
const LINE_START = '{"id":"';
const ID_LENGTH = PREFIX.length + 26;
const NEWLINE = 0x0a;

/** The smallest decision id made at `ms`: an id is below it exactly when it was made before. */
const firstIdAt = (ms: number): string => `${PREFIX}${encodeTime(ms, 10)}${'0'.repeat(16)}`;
/** The largest decision id made before `ms`: an id is above it exactly when it was made at or after. */
const lastIdBefore = (ms: number): string => `${PREFIX}${encodeTime(ms - 1, 10)}${'Z'.repeat(16)}`;
const later = (a: string, b: string): string => (a > b ? a : b);

const encodeCursor = (id: string): string => Buffer.from(id).toString('base64url');

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!isId('decision', id))
    throw validationFailed('not a cursor of this list', [
      { pointer: '/query/cursor', message: 'is not a next_cursor this list gave' },
    ]);
  return id;
}

function instantMs(text: string, name: string): number {
  const parsed = parseInstant(text);
  if (parsed === undefined || Number.isNaN(Date.parse(parsed)))
    throw validationFailed('not a timestamp', [
      { pointer: `/query/${name}`, message: `${text} is not an RFC 3339 instant` },
    ]);
  return Date.parse(parsed);
}

/** The decisions a list asks for, beyond where it starts. */
function filterOf(query: DecisionListRequest): ((record: DecisionRecord) => boolean) | undefined {
  const { principal_id: principal, decision, action, resource_type: type } = query;
  if (principal === undefined && decision === undefined && action === undefined && type === undefined)
    return undefined;
  return (record) =>
    (principal === undefined || record.principal_id === principal) &&
    (decision === undefined || record.decision === decision) &&
    (action === undefined || record.action === action) &&
    (type === undefined || record.resource.type === type);
}

export interface ListWindow {
  now: number;
  /** Decisions younger than this wait for a later list (`settleWindowMs`). */
  settleMs: number;
  /** Decisions made before this instant (epoch ms) are past retention. */
  cutoffMs: number;
  /** The most decision time one batch spans (`MAX_BATCH_SPAN_MS`). */
  spanMs: number;
}

/**
 * A page of recorded decisions in id order, after the cursor (or `since`, or the retention
 * cut-off), read from the database alone: the records an instance still holds in memory are
 * younger than the settle window (unless the database has been away), and another instance's are
 * out of reach, so leaving them to a later list is what keeps the order the same on every
 * instance.
 *
 * Batches of several instances overlap in ids, so they are read in the order they start: once
 * the reader has every batch starting below some id (the first id of the next batch, or the
 * settle bound when none is left), it knows every decision below it. It reads batches until it
 * knows `limit` matching decisions that way, it has seen every batch up to the settle bound, or
 * it has read `MAX_BATCHES_PER_LIST` batches; the cursor it answers is then the last decision it
 * gives, or past every decision it has looked at, so that a follower never reads them again.
 * Decisions stored as nodes of their own, before batches, are not listed.
 */
export async function listRecords(
  db: Reader,
  query: DecisionListRequest,
  window: ListWindow,
): Promise<DecisionRecordList> {
  const limit = query.limit ?? DEFAULT_DECISIONS_PAGE;
  const settledMs = window.now - window.settleMs;
  let after = lastIdBefore(window.cutoffMs);
  if (query.since !== undefined)
    after = later(after, lastIdBefore(Math.max(instantMs(query.since, 'since'), window.cutoffMs)));
  if (query.cursor !== undefined) after = later(after, decodeCursor(query.cursor));
  const until = firstIdAt(settledMs);
  const page = (data: DecisionRecord[], next: string, more: boolean): DecisionRecordList => ({
    data,
    pagination: {
      per_page: limit,
      next_cursor: encodeCursor(next),
      has_more: more,
      settled_until: new Date(settledMs).toISOString(),
      horizon: new Date(window.cutoffMs).toISOString(),
    },
  });
  if (after >= until) return page([], after, false);

  const matches = filterOf(query);
  /** Decisions between `after` and `until` that match: their lines, parsed once needed. */
  const found = new Map<string, Buffer | DecisionRecord>();
  /** Every decision id between `after` and `until` read, matching or not. */
  const seen: string[] = [];
  const take = (lines: Buffer): void => {
    for (let start = 0; start < lines.length;) {
      const newline = lines.indexOf(NEWLINE, start);
      const end = newline < 0 ? lines.length : newline;
      const line = lines.subarray(start, end);
      start = end + 1;
      if (line.length === 0) continue;
      // Every line begins with its id: most are passed over without being parsed.
      let id = line.toString('latin1', LINE_START.length, LINE_START.length + ID_LENGTH);
      let record: DecisionRecord | undefined;
      if (line.toString('latin1', 0, LINE_START.length) !== LINE_START || !id.startsWith(PREFIX)) {
        record = JSON.parse(line.toString('utf8')) as DecisionRecord;
        id = record.id;
      }
      if (id <= after || id >= until) continue;
      seen.push(id);
      if (matches) {
        record ??= JSON.parse(line.toString('utf8')) as DecisionRecord;
        if (!matches(record)) continue;
      }
      found.set(id, record ?? line);
    }
  };

  const base = decodeTime(after.slice(PREFIX.length));
  let from = `${PREFIX}${encodeTime(Math.max(0, base - window.spanMs), 10)}`;
  let read = 0;
  let known = until;
  for (;;) {
    const batches = await repo.list(db, { after, from, until, batches: BATCHES_PER_READ });
    for (const { body } of batches.slice(0, BATCHES_PER_READ)) {
      if (body === null) continue;
      take(await gunzipAsync(body));
      read += 1;
    }
    const next = batches[BATCHES_PER_READ]?.first_id;
    // Every decision below the next batch's first id has been read.
    known = next ?? until;
    if (next === undefined) break;
    let ready = 0;
    for (const id of found.keys()) if (id < known) ready += 1;
    if (ready >= limit) break;
    if (read >= MAX_BATCHES_PER_LIST && seen.some((id) => id < known)) break;
    from = next;
  }

  const ids = [...found.keys()].filter((id) => id < known).sort();
  const data = ids.slice(0, limit).map((id) => {
    const held = found.get(id)!;
    return Buffer.isBuffer(held) ? (JSON.parse(held.toString('utf8')) as DecisionRecord) : held;
  });
  if (data.length === limit) return page(data, ids[limit - 1]!, true);
  // Everything below what is known has been read and every match in it given.
  if (known === until) return page(data, lastIdBefore(settledMs), false);
  let last = after;
  for (const id of seen) if (id < known && id > last) last = id;
  return page(data, last, true);
}
