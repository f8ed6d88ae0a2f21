import { RowMarks } from '../columnar/row-marks.js';
import { defineQueries } from '../db/catalogue.js';
import { fillMarkers, fragmentOf } from '../db/compose.js';
import type { Database, Reader } from '../db/database.js';
import type { WriteThread } from '../db/write-thread.js';
import type { GrantExplained } from '../decisions/access-service.js';
import type { EntryState, PrincipalSummary } from './changes.js';

const Q = defineQueries('access-history', [
  'record',
  'key',
  'settle_keys',
  'close_open',
  'recorded_causes',
  'adopt',
  'claim',
  'release',
  'page',
  'count',
  'count_rows',
  'keyed',
  'purge',
  'purge_messages',
  'began',
  'principal_as_of',
  'resource_as_of',
  'resource_as_of_ids',
  'resource_as_of_names',
  'messages',
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

/**
 * A part as the `(:AccessChangePart)` node that holds it (cypher/access-history/record.cypher):
 * its cause and instant, and its changes as columns, one value per change in id order.
 */
export interface PartNode {
  id: string;
  cause_event_id: string;
  cause_event_type: string;
  actor_type: string;
  actor_id: string;
  /** The instant of its changes (the earliest, should they differ). */
  at: string;
  /** The latest instant of its changes: `at` but where they differ. */
  at_last: string;
  /** Each change's instant, only where they differ (else null). */
  instants: string[] | null;
  count: number;
  /** How many of its changes are listed (not quiet). */
  listed: number;
  first_id: string;
  last_id: string;
  ids: string[];
  principals: string[];
  principal_names: string[];
  principal_types: string[];
  resource_types: string[];
  identifiers: string[];
  patterns: boolean[];
  /** Actions gained, space-separated (action names hold no space). */
  gained: string[];
  lost: string[];
  /**
   * JSON of each change's `via`; a value an earlier change of the part holds already is written
   * `=k`, k the index of its first holder (`repeats`): most changes of a cause share it.
   */
  via: string[];
  /** JSON of each change's entry before it; '' where there was none; `=k` as for `via`. */
  before: string[];
  /**
   * For access while acting for another principal (a delegation moved it): that principal's id,
   * name and type; '' for the principal's own access.
   */
  on_behalf_ids: string[];
  on_behalf_names: string[];
  on_behalf_types: string[];
  /** What the full-text index finds the part by: `type:identifier`, `type`, and `type*` for a glob. */
  resources: string[];
  /** And by principal: `principalKeys` or `principalIdKey`s, as its cause has them. */
  principal_keys: string[];
}

/** At most this many principal keys a part keyed by prefixes. */
export const PRINCIPAL_KEYS_PER_PART = 16;

/**
 * The share of all principals a cause reaches from which its parts are keyed by prefixes
 * (`principalKeys`) rather than by each principal (`principalIdKey`).
 */
export const PREFIX_KEYED_SHARE = 1 / 4;

/** Whether the parts of a cause reaching `reached` of `everyone` principals are keyed by prefixes. */
export const keyedByPrefixes = (reached: number, everyone: number): boolean =>
  reached > PRINCIPAL_KEYS_PER_PART && reached >= everyone * PREFIX_KEYED_SHARE;

/**
 * The keys a part of a large cause is found by principal: a few prefixes of its principals' ids,
 * each written `<prefix>*` ("every id that starts so"), as long as they can be with at most
 * `PRINCIPAL_KEYS_PER_PART` of them (the whole ids where the part has that many principals or
 * fewer). A cause's changes are made in principal id order, so a part holds neighbours, which
 * share long prefixes. Every principal of the part has one of its keys; a principal outside it
 * that shares one is a false match, which a read drops when it checks each change's principal.
 * The parts of a cause hold disjoint ranges of ids, so a principal matches about one of them: a
 * waste where the cause reaches few principals, but a cause reaching a large share of them
 * (`keyedByPrefixes`) holds changes of a good share of those who read it anyway, and one key per
 * principal made the full-text index's terms (and each of its refreshes and segment merges) as
 * many as its changes.
 */
export function principalKeys(principalIds: Iterable<string>): string[] {
  const ids = [...new Set(principalIds)].sort();
  let length = Infinity;
  if (ids.length > PRINCIPAL_KEYS_PER_PART) {
    // In id order, the ids have as many distinct prefixes of length L as there are neighbours
    // sharing fewer than L characters, plus one: L is the largest length that keeps them few.
    const shared = new Array<number>(ids.length - 1);
    for (let i = 1; i < ids.length; i += 1) shared[i - 1] = sharedPrefix(ids[i - 1]!, ids[i]!);
    shared.sort((a, b) => a - b);
    length = shared[PRINCIPAL_KEYS_PER_PART - 1]!;
  }
  return [...new Set(ids.map((id) => `${id.slice(0, length)}*`))];
}

function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
  return i;
}

/**
 * The key a part of any other cause is found by for each of its principals: the last six
 * characters of its id (of the random part of a generated one). A whole id would be a long term
 * sharing `prn_` with every other, which the index compresses block by block at every refresh and
 * merge (schema 020); two principals whose ids end alike share a key, so a read checks each
 * change's principal after.
 */
export const principalIdKey = (principalId: string): string => principalId.slice(-6);

/** A part as the node that stores it: a function of the part alone. */
export function partNode(part: StoredPart): PartNode {
  const rows = inIdOrder(part.rows);
  const first = rows[0]!;
  const n = rows.length;
  const instants: string[] = new Array<string>(n);
  let earliest: string | undefined;
  let latest: string | undefined;
  // The changes of a part mostly share one instant: each text is normalised once.
  let text: string | undefined;
  let normal = '';
  const resources = new Set<string>();
  let resourceOfLast: StoredAccessChange | undefined;
  let listed = 0;
  const ids = new Array<string>(n);
  const principals = new Array<string>(n);
  const principalNames = new Array<string>(n);
  const principalTypes = new Array<string>(n);
  const resourceTypes = new Array<string>(n);
  const identifiers = new Array<string>(n);
  const patterns = new Array<boolean>(n);
  const gained = new Array<string>(n);
  const lost = new Array<string>(n);
  const via = new Array<string>(n);
  const before = new Array<string>(n);
  const onBehalfIds = new Array<string>(n);
  const onBehalfNames = new Array<string>(n);
  const onBehalfTypes = new Array<string>(n);
  for (let i = 0; i < n; i += 1) {
    const r = rows[i]!;
    if (r.at !== text) {
      text = r.at;
      normal = new Date(Date.parse(r.at)).toISOString();
    }
    instants[i] = normal;
    if (earliest === undefined || normal < earliest) earliest = normal;
    if (latest === undefined || normal > latest) latest = normal;
    if (
      !resourceOfLast ||
      resourceOfLast.resource_type !== r.resource_type ||
      resourceOfLast.identifier !== r.identifier ||
      resourceOfLast.pattern !== r.pattern
    ) {
      resources.add(`${r.resource_type}:${r.identifier}`);
      resources.add(r.resource_type);
      if (r.pattern) resources.add(`${r.resource_type}*`);
      resourceOfLast = r;
    }
    if (r.actions_gained.length + r.actions_lost.length > 0) listed += 1;
    ids[i] = r.id;
    principals[i] = r.principal_id;
    principalNames[i] = r.principal_name;
    principalTypes[i] = r.principal_type;
    resourceTypes[i] = r.resource_type;
    identifiers[i] = r.identifier;
    patterns[i] = r.pattern;
    gained[i] = r.actions_gained.join(' ');
    lost[i] = r.actions_lost.join(' ');
    via[i] = r.via;
    before[i] = r.before ?? '';
    onBehalfIds[i] = r.on_behalf_of_id ?? '';
    onBehalfNames[i] = r.on_behalf_of_name ?? '';
    onBehalfTypes[i] = r.on_behalf_of_type ?? '';
  }
  return {
    id: part.id,
    cause_event_id: part.cause_id,
    cause_event_type: first.cause_event_type,
    actor_type: first.actor_type,
    actor_id: first.actor_id,
    at: earliest!,
    at_last: latest!,
    instants: earliest === latest ? null : instants,
    count: n,
    listed,
    first_id: first.id,
    last_id: rows[n - 1]!.id,
    ids,
    principals,
    principal_names: principalNames,
    principal_types: principalTypes,
    resource_types: resourceTypes,
    identifiers,
    patterns,
    gained,
    lost,
    via: repeats(via),
    before: repeats(before),
    on_behalf_ids: onBehalfIds,
    on_behalf_names: onBehalfNames,
    on_behalf_types: onBehalfTypes,
    resources: [...resources],
    principal_keys: part.prefix_keys
      ? principalKeys(principals)
      : [...new Set(principals.map(principalIdKey))],
  };
}

/** The changes of a part in id order (as they are made, mostly: then they are not copied). */
function inIdOrder(rows: readonly StoredAccessChange[]): readonly StoredAccessChange[] {
  for (let i = 1; i < rows.length; i += 1) {
    if (rows[i - 1]!.id > rows[i]!.id)
      return [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
  return rows;
}

/**
 * A column of JSON values (or '') with each value an earlier one repeats written `=k`, k the index
 * of the first (JSON text never starts with `=`): what `unrepeated` and the statements that read
 * the column one value at a time undo. Values too short to gain from it ('', `[]`) stay as they are.
 */
function repeats(values: readonly string[]): string[] {
  const first = new Map<string, number>();
  return values.map((v, i) => {
    if (v.length < 4) return v;
    const k = first.get(v);
    if (k !== undefined) return `=${k}`;
    first.set(v, i);
    return v;
  });
}

/** Value `i` of a column `repeats` wrote (a column written before it has no repeats). */
export function unrepeated(column: readonly string[], i: number): string {
  const v = column[i]!;
  if (v.charCodeAt(0) !== 0x3d) return v;
  // `=k`: k read digit by digit, as it is read for every change of a part.
  let k = 0;
  for (let j = 1; j < v.length; j += 1) k = k * 10 + v.charCodeAt(j) - 0x30;
  return column[k]!;
}

/** The columns of a part node: one value per change. */
const COLUMNS = [
  'ids',
  'principals',
  'principal_names',
  'principal_types',
  'resource_types',
  'identifiers',
  'gained',
  'lost',
  'via',
  'before',
  'on_behalf_ids',
  'on_behalf_names',
  'on_behalf_types',
] as const;

/** The columns of JSON values (`separatorFor` looks in them last), and the others. */
const JSON_COLUMNS = ['via', 'before'] as const;
const TEXT_COLUMNS = COLUMNS.filter((c) => !(JSON_COLUMNS as readonly string[]).includes(c));

/**
 * A character no value of `lists` and `json` holds: the separator of a part's columns joined as
 * one string each. JSON (via, before) never holds a raw control character, and ids, names and
 * identifiers hardly ever do: a control character is looked for in `lists` alone, and only where
 * each is taken, another is looked for in both. (Each list is joined apart: one array of every
 * value would cost more than the rest of a part's making.)
 */
function separatorFor(lists: readonly (readonly string[])[], json: readonly (readonly string[])[]): string {
  const texts = lists.map((list) => list.join(''));
  const free = (sep: string, among: readonly string[]): boolean => !among.some((t) => t.includes(sep));
  for (let code = 0x1f; code > 0; code -= 1) {
    const sep = String.fromCharCode(code);
    if (free(sep, texts)) return sep;
  }
  const all = [...texts, ...json.map((list) => list.join(''))];
  for (let code = 0xe000; ; code += 1) {
    const sep = String.fromCharCode(code);
    if (free(sep, all)) return sep;
  }
}

/**
 * A part as the record statement takes it, as JSON text: the node that stores it, its columns
 * each joined as one string (split by the statement: a few long strings cost the driver far less
 * to send than thousands of short ones), and what its `access.changed` message needs. A function
 * of the part alone.
 */
export function readyPart(part: StoredPart): ReadyPart {
  const node = partNode(part);
  const sep = separatorFor(
    [...TEXT_COLUMNS.map((c) => node[c]), node.resources],
    JSON_COLUMNS.map((c) => node[c]),
  );
  const { patterns, resources, principal_keys: keys, ...rest } = node;
  const columns: Record<string, string> = {
    resources: resources.join(sep),
    principal_keys: keys.join(sep),
    patterns: patterns.map((p) => (p ? '1' : '0')).join(sep),
  };
  for (const c of COLUMNS) columns[c] = node[c].join(sep);
  const scalars = Object.fromEntries(
    Object.entries(rest).filter(([k]) => !(COLUMNS as readonly string[]).includes(k)),
  );
  const element = { id: part.id, at: part.at, message: part.message, store: scalars, columns, sep };
  return {
    id: part.id,
    cause_id: part.cause_id,
    rows: part.rows.length,
    json: encoder.encode(JSON.stringify(element)),
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

/**
 * Where the caller holds principals (the decision index's rows): `rowOf` gives a row below
 * `rows`, or a negative number for a principal it does not hold.
 */
export interface PrincipalRows {
  rows: number;
  rowOf(principalId: string): number;
}

/**
 * The first change after an instant of each principal's entry about a resource (`resourceAsOf`),
 * column by column: change k's principal, where the caller holds it, its glob and its `before`.
 */
export interface ResourceAsOfChanges {
  /** How many: one per principal and entry. */
  size: number;
  /** The principals. */
  ids: string[];
  /** Where the caller holds each (`PrincipalRows`; negative: it does not). */
  rows: Int32Array;
  /** The glob each is about, null for the resource itself; null where none is about a glob. */
  globs: (string | null)[] | null;
  /** What each entry held before its change (null: nothing); one object per distinct value. */
  befores: (EntryState | null)[];
  /** As the history named the principals the caller does not hold, by id. */
  named: Map<string, { name: string; type: string }>;
}

/**
 * A part as `resource_as_of` gives it: the changes it found, each at `found[k]` in the part
 * (`found` null: every change of the part, in order).
 */
interface AsOfPart {
  first_id: string;
  last_id: string;
  found: number[] | null;
  principals: string[];
  globs: (string | null)[] | null;
  column: string[] | null;
  followed: string[] | null;
}

/** One change `resource_as_of` found. */
interface AsOfChange {
  part: AsOfPart;
  /** Where it stands in its part (whose changes are in id order). */
  at: number;
  principal: string;
  glob: string | null;
  before: string;
}

/**
 * The ids of the parts' changes where the changes of one entry lie in parts whose bounds
 * overlap (by `last_id`): only then do their ids tell which came first.
 */
async function idsWhereOverlapping(
  db: Reader,
  several: readonly AsOfChange[][],
): Promise<Map<string, string[]>> {
  const parts = new Set<string>();
  for (const changes of several) {
    for (const a of changes)
      for (const b of changes)
        if (a.part !== b.part && a.part.first_id <= b.part.last_id && b.part.first_id <= a.part.last_id)
          parts.add(a.part.last_id);
  }
  const ids = new Map<string, string[]>();
  if (parts.size === 0) return ids;
  const rows = await db.run<{ part: string; ids: string[] }>(Q.resource_as_of_ids, { parts: [...parts] });
  for (const r of rows) ids.set(r.part, r.ids);
  return ids;
}

/** The first recorded of one entry's changes: by part bounds, by place in a part, else by id. */
function firstOf(changes: readonly AsOfChange[], ids: ReadonlyMap<string, string[]>): AsOfChange {
  const earlier = (a: AsOfChange, b: AsOfChange): boolean => {
    if (a.part === b.part) return a.at < b.at;
    if (a.part.last_id < b.part.first_id) return true;
    if (b.part.last_id < a.part.first_id) return false;
    return ids.get(a.part.last_id)![a.at]! < ids.get(b.part.last_id)![b.at]!;
  };
  return changes.reduce((first, c) => (earlier(c, first) ? c : first));
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
  /**
   * Which of its cause's `access.changed` messages it is (`part` of `parts`); null for quiet
   * changes, which are not announced. The message's data is read from the part when it is
   * delivered (`messages`). `parts` is null while the count is not known yet (a cause cut in parts
   * as it is computed): its message is not due until its cause's last part, which says the count,
   * is stored (record.cypher).
   */
  message: { part: number; parts: number | null } | null;
  /** Keyed by prefixes of its principals' ids (`keyedByPrefixes`); by each principal otherwise. */
  prefix_keys?: boolean;
}

/** The data of one `access.changed` message (docs/api.md §11). */
export interface AccessChangedData {
  cause: AccessCause;
  changes: AccessChange[];
  part: number;
  parts: number;
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

export function toStored(
  change: AccessChange,
  before: EntryState | null,
  /** The JSON of `via` and `before`, when the caller made it already. */
  json?: { via: string; before: string | null },
): StoredAccessChange {
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
    via: json?.via ?? JSON.stringify(change.via),
    before: json ? json.before : before ? JSON.stringify(before) : null,
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
    // A part's own access is '' in its column, and absent from parts converted from before.
    ...(row.on_behalf_of_id
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

/** A term of the full-text index of parts' keys: one exact keyword token of a field. */
const term = (field: 'principal_keys' | 'resources', token: string): string =>
  `${field}:"${token.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/**
 * The full-text search of the parts that may hold a principal's changes: its key in parts keyed
 * by principal (`principalIdKey`), and every prefix of its id, which a part keyed by prefixes may
 * have (`principalKeys`).
 */
export const principalSearch = (principalId: string): string => {
  const terms = [term('principal_keys', principalIdKey(principalId))];
  for (let length = 0; length <= principalId.length; length += 1)
    terms.push(term('principal_keys', `${principalId.slice(0, length)}*`));
  return `(${terms.join(' OR ')})`;
};

/** The full-text search of the parts holding changes on a resource, or on a glob of its type. */
export const resourceSearch = (type: string, identifier: string): string =>
  `${term('resources', `${type}:${identifier}`)} OR ${term('resources', `${type}*`)}`;

/**
 * What a list's statements are given for the filters: predicates on parts, on each change (over
 * the columns `page.cypher` binds, at index `i`), and the full-text search that finds the parts
 * of a principal or resource (null: every part). Each refers to its value only through a
 * parameter.
 */
function predicates(filters: AccessChangeFilters): {
  parts: string[];
  rows: string[];
  search: string | null;
  params: Record<string, unknown>;
} {
  const parts: string[] = [];
  const rows: string[] = [];
  const terms: string[] = [];
  const params: Record<string, unknown> = {};
  const { principalId, resourceType, identifier, action, eventId, since, until, after } = filters;
  if (principalId !== undefined) {
    terms.push(principalSearch(principalId));
    rows.push('principals[i] = $principalId');
    params['principalId'] = principalId;
  }
  if (resourceType !== undefined) {
    terms.push(term('resources', identifier !== undefined ? `${resourceType}:${identifier}` : resourceType));
    rows.push('types[i] = $resourceType');
    params['resourceType'] = resourceType;
  }
  if (identifier !== undefined) {
    rows.push('identifiers[i] = $identifier');
    params['identifier'] = identifier;
  }
  if (action !== undefined) {
    rows.push("$action IN split(gained[i], ' ') OR $action IN split(lost[i], ' ')");
    params['action'] = action;
  }
  if (eventId !== undefined) {
    parts.push('p.cause_event_id = $eventId');
    params['eventId'] = eventId;
  }
  if (since !== undefined) {
    parts.push('p.at_last >= datetime($since)');
    rows.push('coalesce(instants[i], p.at) >= datetime($since)');
    params['since'] = since;
  }
  if (until !== undefined) {
    parts.push('p.at < datetime($until)');
    rows.push('coalesce(instants[i], p.at) < datetime($until)');
    params['until'] = until;
  }
  if (after !== undefined) {
    parts.push('p.last_id > $after');
    rows.push('ids[i] > $after');
    params['after'] = after;
  }
  const search = terms.length > 0 ? terms.join(' AND ') : null;
  if (search !== null) params['search'] = search;
  return { parts, rows, search, params };
}

/** A change as `page.cypher` reads it from its part. */
interface PageRow extends Omit<StoredAccessChange, 'actions_gained' | 'actions_lost' | 'before'> {
  gained: string;
  lost: string;
}

const actionsOf = (text: string): string[] => (text === '' ? [] : text.split(' '));

/** A change read as `page.cypher` reads it, as stored (its `before` is not read). */
const changeOf = ({ gained, lost, ...rest }: PageRow): StoredAccessChange => ({
  ...rest,
  actions_gained: actionsOf(gained),
  actions_lost: actionsOf(lost),
  before: null,
});

/** The columns of a part that a message announcing it reads (`messages.cypher`). */
type AnnouncedPart = Pick<
  PartNode,
  | 'at'
  | 'instants'
  | 'ids'
  | 'principals'
  | 'principal_names'
  | 'principal_types'
  | 'resource_types'
  | 'identifiers'
  | 'patterns'
  | 'gained'
  | 'lost'
  | 'via'
  | 'cause_event_id'
  | 'cause_event_type'
  | 'actor_type'
  | 'actor_id'
> &
  Partial<Pick<PartNode, 'on_behalf_ids' | 'on_behalf_names' | 'on_behalf_types'>>;

/** The changes a part holds, in id order, from its columns (the inverse of `partNode`). */
function changesOf(p: AnnouncedPart): StoredAccessChange[] {
  return p.ids.map((id, i) =>
    changeOf({
      id,
      at: p.instants?.[i] ?? p.at,
      principal_id: p.principals[i]!,
      principal_name: p.principal_names[i]!,
      principal_type: p.principal_types[i]!,
      resource_type: p.resource_types[i]!,
      identifier: p.identifiers[i]!,
      pattern: p.patterns[i]!,
      gained: p.gained[i]!,
      lost: p.lost[i]!,
      via: unrepeated(p.via, i),
      on_behalf_of_id: p.on_behalf_ids?.[i] ?? '',
      on_behalf_of_name: p.on_behalf_names?.[i] ?? '',
      on_behalf_of_type: p.on_behalf_types?.[i] ?? '',
      cause_event_id: p.cause_event_id,
      cause_event_type: p.cause_event_type,
      actor_type: p.actor_type,
      actor_id: p.actor_id,
    }),
  );
}

export const accessHistoryRepository = {
  /**
   * Stores parts as `recorder` (an instance id); a cause another recorder stored is skipped. False
   * when another instance holds the recorder's lease: then nothing was stored (record.cypher).
   */
  async record(db: Database, ready: readonly ReadyPart[], recorder: string): Promise<boolean> {
    const parts: unknown = JSON.parse(decoder.decode(partsArray(ready)));
    const rows = await db.write('access-history/record', (tx) =>
      tx.run<{ held: boolean }>(Q.record, { parts, recorder }),
    );
    return rows[0]?.held === true;
  },

  /**
   * Announces the causes a previous recorder left without their last part, as far as they were
   * stored (close_open.cypher); answers how many.
   */
  async closeOpen(db: Database): Promise<number> {
    const rows = await db.write('access-history/close_open', (tx) =>
      tx.run<{ closed: number }>(Q.close_open),
    );
    return rows[0]?.closed ?? 0;
  },

  /**
   * Makes at most `parts` of the parts stored unkeyed findable through the full-text index
   * (key.cypher), in one transaction; answers how many it keyed.
   */
  async key(db: Database, parts: number): Promise<number> {
    const rows = await db.write('access-history/key', (tx) => tx.run<{ keyed: number }>(Q.key, { parts }));
    return rows[0]?.keyed ?? 0;
  },

  /**
   * Waits until the full-text index holds the parts keyed so far (its updates are applied beside
   * the commits), then has reads find them through it alone (settle_keys.cypher); answers how many.
   */
  async settleKeys(db: Database): Promise<number> {
    const rows = await db.write('access-history/settle-keys', (tx) =>
      tx.run<{ settled: number }>(Q.settle_keys),
    );
    return rows[0]?.settled ?? 0;
  },

  /**
   * A thread that stores parts with a driver of its own (`recordOn`), when the database's address
   * is known: the driver's packing of thousands of rows never runs on the thread that answers
   * requests.
   */
  recordThread(db: Database): WriteThread | undefined {
    return db.writeThread(Q.record);
  },

  /** `record` from the thread `recordThread` gave. */
  async recordOn(thread: WriteThread, ready: readonly ReadyPart[], recorder: string): Promise<boolean> {
    const row = await thread.write({ recorder }, {}, { parts: partsArray(ready) });
    return row?.['held'] === true;
  },

  /**
   * Takes over, for `recorder`, the causes another recorder left stored in part, where
   * `recorder` computed more of them (`rows` changes) and none of their messages is due yet: the
   * other's parts and messages go, and `recorder` stores its own (adopt.cypher). Answers the ids
   * taken over.
   */
  async adopt(
    db: Database,
    recorder: string,
    causes: readonly { id: string; rows: number }[],
  ): Promise<Set<string>> {
    if (causes.length === 0) return new Set();
    const rows = await db.write('access-history/adopt', (tx) =>
      tx.run<{ id: string }>(Q.adopt, { recorder, causes }),
    );
    return new Set(rows.map((r) => r.id));
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
    }>(Q.principal_as_of, { principalId, at, search: principalSearch(principalId) });
    return rows.map((r) => ({
      type: r.type,
      identifier: r.identifier,
      pattern: r.pattern,
      changed_since: r.changed_since,
      before: r.before === null || r.before === '' ? null : (JSON.parse(r.before) as EntryState),
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
   * entry, the first such change's `before` (null: nothing held). Each comes with where the
   * caller holds the principal (`principals`); those it does not (a negative row) come as the
   * history named them.
   */
  async resourceAsOf(
    db: Reader,
    type: string,
    identifier: string,
    at: string,
    principals: PrincipalRows,
  ): Promise<ResourceAsOfChanges> {
    const parts = await db.run<AsOfPart>(Q.resource_as_of, {
      type,
      identifier,
      at,
      search: resourceSearch(type, identifier),
    });
    // Per principal and entry, the first of its changes found (most often its only one): by the
    // caller's row for a principal's entry for the resource itself, else by principal and glob.
    // Column by column, with the others found kept apart to pick the first from.
    const total = parts.reduce((n, p) => n + p.principals.length, 0);
    const rows = new Int32Array(total);
    const ids: string[] = new Array<string>(total);
    const globs: (string | null)[] = new Array<string | null>(total);
    const texts: string[] = new Array<string>(total);
    const partOf = new Int32Array(total);
    const atOf = new Int32Array(total);
    const others = new Map<number, AsOfChange[]>();
    const byRow = new RowMarks(principals.rows, total);
    const byKey = new Map<string, number>();
    let size = 0;
    let anyGlob = false;
    parts.forEach((part, p) => {
      for (let k = 0; k < part.principals.length; k += 1) {
        const principal = part.principals[k]!;
        const glob = part.globs?.[k] ?? null;
        const at = part.found ? part.found[k]! : k;
        const before = part.followed ? part.followed[k]! : unrepeated(part.column!, at);
        const row = principals.rowOf(principal);
        const keyed = row < 0 || glob !== null ? `${principal}\u0000${glob ?? ''}` : null;
        const seen = keyed === null ? byRow.get(row) : (byKey.get(keyed) ?? 0);
        if (seen > 0) {
          const change: AsOfChange = { part, at, principal, glob, before };
          const more = others.get(seen - 1);
          if (more) more.push(change);
          else others.set(seen - 1, [change]);
          continue;
        }
        rows[size] = row;
        ids[size] = principal;
        globs[size] = glob;
        texts[size] = before;
        partOf[size] = p;
        atOf[size] = at;
        size += 1;
        if (glob !== null) anyGlob = true;
        if (keyed === null) byRow.set(row, size);
        else byKey.set(keyed, size);
      }
    });
    if (others.size > 0) {
      const kept = (i: number): AsOfChange => ({
        part: parts[partOf[i]!]!,
        at: atOf[i]!,
        principal: ids[i]!,
        glob: globs[i]!,
        before: texts[i]!,
      });
      const several = [...others].map(([i, more]) => ({ i, changes: [kept(i), ...more] }));
      const overlapping = await idsWhereOverlapping(
        db,
        several.map((s) => s.changes),
      );
      const partIndex = new Map(parts.map((part, p) => [part, p]));
      for (const { i, changes } of several) {
        const first = firstOf(changes, overlapping);
        texts[i] = first.before;
        partOf[i] = partIndex.get(first.part)!;
        atOf[i] = first.at;
      }
    }
    // Per part, where the first changes of the principals the caller does not know stand.
    const wanted = new Map<string, number[]>();
    for (let i = 0; i < size; i += 1) {
      if (rows[i]! >= 0) continue;
      const part = parts[partOf[i]!]!.last_id;
      const at = wanted.get(part);
      if (at) at.push(atOf[i]!);
      else wanted.set(part, [atOf[i]!]);
    }
    const named = new Map<string, { name: string; type: string }>();
    if (wanted.size > 0) {
      const found = await db.run<{ ids: string[]; names: string[]; types: string[] }>(
        Q.resource_as_of_names,
        {
          wanted: [...wanted].map(([part, at]) => ({ part, at })),
        },
      );
      for (const r of found)
        r.ids.forEach((id, k) => named.set(id, { name: r.names[k]!, type: r.types[k]! }));
    }
    // Each distinct `before` is parsed once, and shared by the changes giving it.
    const parsed = new Map<string, EntryState | null>([['', null]]);
    const befores = new Array<EntryState | null>(size);
    for (let i = 0; i < size; i += 1) {
      const text = texts[i]!;
      let state = parsed.get(text);
      if (state === undefined) {
        state = JSON.parse(text) as EntryState;
        parsed.set(text, state);
      }
      befores[i] = state;
    }
    ids.length = size;
    globs.length = size;
    return { size, ids, rows: rows.subarray(0, size), globs: anyGlob ? globs : null, befores, named };
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
    const listed = predicates(filters);
    const keyed = fragmentOf(db.catalogue.get(Q.keyed));
    const composed = (name: string, p: ReturnType<typeof predicates>) => ({
      name,
      text: fillMarkers(db.catalogue.get(name), {
        '/*KEYED*/': p.search !== null ? keyed : '',
        '/*PARTS*/': p.parts.map((f) => ` AND (${f})`).join(''),
        ...(name === Q.count ? {} : { '/*ROWS*/': p.rows.map((f) => ` AND (${f})`).join('') }),
      }),
    });
    // Whole parts are counted by what they hold; changes one by one only when they are filtered so.
    const count = counted.rows.length > 0 ? Q.count_rows : Q.count;
    return db.read('access-history/list', async (tx) => {
      const [total] = await tx.run<{ total: number }>(composed(count, counted), counted.params);
      const rows = await tx.run<{ change: PageRow }>(composed(Q.page, listed), {
        ...listed.params,
        skip: page.skip,
        limit: page.limit,
      });
      return {
        total: total?.total ?? 0,
        rows: rows.map((r) => changeOf(r.change)),
      };
    });
  },

  /**
   * Deletes the parts (up to `limit`) whose changes were all recorded before `before`, and the
   * causes left with none; answers how many parts and changes it deleted.
   */
  async purge(db: Database, before: string, limit: number): Promise<{ parts: number; changes: number }> {
    const rows = await db.write('access-history/purge', (tx) =>
      tx.run<{ parts: number; purged: number }>(Q.purge, { before, limit }),
    );
    return { parts: rows[0]?.parts ?? 0, changes: rows[0]?.purged ?? 0 };
  },

  /**
   * The data of the `access.changed` messages among `ids`, by id, read from the parts they
   * announce; a message whose part is gone (past the retention) is left out.
   */
  async messages(db: Reader, ids: readonly string[]): Promise<Map<string, AccessChangedData>> {
    const rows = await db.run<{ id: string; part: number; parts: number; announced: AnnouncedPart }>(
      Q.messages,
      { ids },
    );
    const out = new Map<string, AccessChangedData>();
    for (const { id, part, parts, announced } of rows) {
      const changes = changesOf(announced).map(fromStored);
      if (changes.length > 0) out.set(id, { cause: changes[0]!.cause, changes, part, parts });
    }
    return out;
  },

  /** Deletes up to `limit` `access.changed` messages no outbox holds; answers how many. */
  async purgeMessages(db: Database, limit: number): Promise<number> {
    const rows = await db.write('access-history/purge_messages', (tx) =>
      tx.run<{ purged: number }>(Q.purge_messages, { limit }),
    );
    return rows[0]?.purged ?? 0;
  },
};
