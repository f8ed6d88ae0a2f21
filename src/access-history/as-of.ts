import { RowMarks } from '../columnar/row-marks.js';
import {
  pageBy,
  principalAt,
  resourceRow,
  type HolderEntry,
  type AccessRecord,
  type AccessService,
  type GrantExplained,
  type ResourceAccess,
} from '../decisions/access-service.js';
import { compareEntries, entryGrants, type AccessEntry } from '../decisions/access.js';
import type { Database } from '../db/database.js';
import type { PolicyIndex } from '../decisions/policy-index.js';
import { notFound, validationFailed } from '../errors/errors.js';
import { newId } from '../ids.js';
import type { Page } from '../pagination.js';
import { globsMatching } from '../policies/patterns.js';
import { parseInstant } from '../time.js';
import {
  accessView,
  keyOf,
  type AccessView,
  rewind,
  touchedOn,
  type EntryBefore,
  type EntryState,
} from './changes.js';
import { accessHistoryRepository as repo, type AccessCause } from './repository.js';

/**
 * Access as it held at an instant (docs/access-history.md): what the decision index holds now,
 * with each entry that changed since read back from the first access change recorded after the
 * instant (its `before`). No history is replayed: one principal's changes are read, once.
 */

/** An entry as it held at the instant, with the change that made it true. */
export type EntryAsOf = Omit<AccessEntry, 'granted_at'> & {
  granted_at: string | null;
  granted_by_event: AccessCause | null;
  grants?: GrantExplained[];
};

export interface AccessRecordAsOf extends Omit<AccessRecord, 'access'> {
  as_of: string;
  access: EntryAsOf[];
}

/** One entry of a principal's access at the instant, keyed as the history keys it. */
interface Held {
  type: string;
  identifier: string;
  pattern: boolean;
  state: EntryState;
  /** The change that made it true, when the history holds it. */
  madeBy?: AccessCause & { at: string };
}

export interface AsOfDecision {
  id: string;
  decision: 'ALLOW' | 'DENY';
  allowed: boolean;
  principal_id: string;
  action: string;
  resource: { type: string; identifier: string };
  reasons: { code: 'POLICY_ALLOW' | 'NO_MATCHING_POLICY'; policy_id?: string; message?: string }[];
  granted_by: string[];
  evaluated_at: string;
  as_of: string;
}

export class AccessAsOf {
  constructor(
    private readonly db: Database,
    private readonly index: PolicyIndex,
    private readonly access: AccessService,
    private readonly options: {
      /** The oldest instant kept by the retention alone. */
      retained: () => string;
      /** Settles once the changes this instance computed so far are stored (when it stores them). */
      settled?: (() => Promise<void>) | undefined;
    },
  ) {}

  /**
   * The oldest instant `as_of` answers for: the later of the retention's and the history's
   * beginning (the first recording instance's start); now, before any began.
   */
  async horizon(): Promise<string> {
    const began = await repo.began(this.db);
    const retained = this.options.retained();
    if (began === null) return new Date().toISOString();
    return began > retained ? began : retained;
  }

  /** Checks `as_of` (RFC 3339): within the history, not in the future; answers it normalised. */
  async instant(text: string, pointer: string): Promise<string> {
    const parsed = parseInstant(text);
    if (parsed === undefined)
      throw validationFailed('as_of is not a timestamp', [
        { pointer, message: `${text} is not an RFC 3339 instant` },
      ]);
    const at = new Date(Date.parse(parsed)).toISOString();
    if (Date.parse(at) > Date.now())
      throw validationFailed('as_of is in the future', [{ pointer, message: `${at} has not happened yet` }]);
    const horizon = await this.horizon();
    if (at < horizon)
      throw validationFailed('as_of is before the access history', [
        {
          pointer,
          message: `access is known from ${horizon} on (the horizon: ACCESS_HISTORY_DAYS, or when the history began)`,
        },
      ]);
    await this.options.settled?.();
    return at;
  }

  /** `GET /v1/principals/{id}/access` as it answered at `at` (already checked by `instant`). */
  async principalAccess(
    id: string,
    at: string,
    filter: { resourceType?: string | undefined; action?: string | undefined },
    page: Page | undefined,
    explain: boolean,
  ): Promise<AccessRecordAsOf> {
    const held = await this.heldAt(id, at);
    const access: EntryAsOf[] = [];
    for (const h of held.values()) {
      if (filter.resourceType !== undefined && h.type !== filter.resourceType) continue;
      const entry = entryOf(h);
      if (filter.action !== undefined && !entryGrants(entry, filter.action)) continue;
      access.push(explain ? { ...entry, grants: h.state.via } : entry);
    }
    access.sort(compareEntries);
    const shown = page ? access.slice(page.skip, page.skip + page.limit) : access;
    return {
      principal_id: id,
      as_of: at,
      access: shown,
      total_resources: access.length,
      ...(page
        ? {
            pagination: {
              total: access.length,
              page: page.page,
              per_page: page.limit,
              pages: Math.ceil(access.length / page.limit),
            },
          }
        : {}),
    };
  }

  /**
   * `GET /v1/resources/access` as it answered at `at`: the principals who can reach it now, with
   * those whose access to it (or to a glob of its type matching it) changed since read back.
   */
  async resourceAccess(
    type: string,
    identifier: string,
    action: string | undefined,
    page: Page,
    at: string,
  ): Promise<ResourceAccess & { as_of: string }> {
    const { table } = this.index;
    const covers = globsMatching(identifier);
    // Per principal with a change since, the first change after `at` of each entry about the
    // resource: those entries as they held, the others about it as the index holds them now. By
    // row where the index holds the principal, else by id.
    const history = await repo.resourceAsOf(this.db, type, identifier, at, table);
    const { ids, rows, globs, befores } = history;
    // Per principal, its changes (most often one): the first kept by place (a principal's place:
    // its row, else its id), any others apart.
    const firsts: number[] = [];
    const others = new Map<number, number[]>();
    const byRow = new RowMarks(table.rows, history.size);
    const byId = new Map<string, number>();
    for (let k = 0; k < history.size; k += 1) {
      const glob = globs?.[k] ?? null;
      if (glob !== null && !covers(glob)) continue;
      const row = rows[k]!;
      const seen = row >= 0 ? byRow.get(row) : (byId.get(ids[k]!) ?? 0);
      if (seen > 0) {
        const more = others.get(seen - 1);
        if (more) more.push(k);
        else others.set(seen - 1, [k]);
        continue;
      }
      firsts.push(k);
      if (row >= 0) byRow.set(row, firsts.length);
      else byId.set(ids[k]!, firsts.length);
    }
    // Who holds it then, column by column: principals of the index by row (with their entry now,
    // or as it held), and those the index holds no more as the history named them (by place in
    // the columns). Only the page is made into principal objects.
    const heldRows: number[] = [];
    const heldEntries: HolderEntry[] = [];
    const heldNamed = new Map<number, ResourceAccess['principals'][number]['principal']>();
    const live = this.access.reach(type, identifier, action);
    live.rows.forEach((row, i) => {
      if (byRow.get(row) > 0) return;
      heldRows.push(row);
      heldEntries.push(live.entries[i]!);
    });
    // Of each principal's entries, only those bearing on the resource are made, and only where
    // its changes leave it to them; none at all where no policy names it now.
    const touched = touchedOn(this.index, type, identifier);
    const noneNow = touched.among?.length === 0;
    // What the answer says of an entry as it held, made once for the many principals whose one
    // entry about the resource was the same (the history's `before`, read once).
    const said = new Map<EntryState, HolderEntry | null>();
    const sayOf = (covering: readonly EntryState[]): HolderEntry | null => {
      const actions = [...new Set(covering.flatMap((e) => e.actions))].sort();
      if (actions.length === 0) return null;
      const entry: HolderEntry = {
        actions,
        granted_by: [...new Set(covering.flatMap((e) => e.via.map((v) => v.policy_id)))],
        conditional: covering.some((e) => e.conditional),
      };
      return action === undefined ||
        entryGrants({ ...entry, resource: { type, identifier }, granted_at: null }, action)
        ? entry
        : null;
    };
    firsts.forEach((first, g) => {
      const id = ids[first]!;
      const row = rows[first]!;
      const afters = [first, ...(others.get(g) ?? [])].map((k) => ({
        identifier: globs?.[k] ?? identifier,
        pattern: (globs?.[k] ?? null) !== null,
        before: befores[k]!,
      }));
      const nowOf = (): AccessView =>
        noneNow ? NOTHING : accessView(this.index, id, undefined, undefined, undefined, touched);
      const covering = coveringThen(nowOf, afters, type, identifier, covers);
      let entry: HolderEntry | null | undefined;
      if (covering.length === 1 && afters.some((a) => a.before === covering[0])) {
        entry = said.get(covering[0]!);
        if (entry === undefined) said.set(covering[0]!, (entry = sayOf(covering)));
      } else entry = covering.length === 0 ? null : sayOf(covering);
      if (!entry) return;
      if (row < 0) {
        // As the history named it, where the index holds it no more.
        const named = history.named.get(id);
        heldNamed.set(heldRows.length, { id, name: named?.name ?? id, type: named?.type ?? '', email: null });
      }
      heldRows.push(row);
      heldEntries.push(entry);
    });
    const principalOf = (h: number): ResourceAccess['principals'][number]['principal'] =>
      heldNamed.get(h) ?? principalAt(table, heldRows[h]!);
    const nameOf = (h: number): string => heldNamed.get(h)?.name ?? table.nameOf(heldRows[h]!);
    const idOf = (h: number): string => heldNamed.get(h)?.id ?? table.idOf(heldRows[h]!);
    const shown = pageBy(Array.from(heldRows.keys()), page, (a, b) => {
      if (heldRows[a]! >= 0 && heldRows[b]! >= 0) return table.compareRows(heldRows[a]!, heldRows[b]!);
      const [na, nb] = [nameOf(a), nameOf(b)];
      if (na !== nb) return na < nb ? -1 : 1;
      const [ia, ib] = [idOf(a), idOf(b)];
      return ia < ib ? -1 : ia > ib ? 1 : 0;
    });
    return {
      resource: live.resource,
      as_of: at,
      principals: shown.map((h) => resourceRow(principalOf(h), heldEntries[h]!)),
      pagination: {
        total: heldRows.length,
        page: page.page,
        per_page: page.limit,
        pages: Math.ceil(heldRows.length / page.limit),
      },
    };
  }

  /**
   * `POST /v1/decisions/evaluate` as it would have answered at `at`: ALLOW when the principal's
   * entry for the resource then (or, for a resource no entry names, a glob entry matching it)
   * granted the action. Not recorded.
   */
  async decide(
    request: { principal_id: string; action: string; resource: { type: string; identifier: string } },
    at: string,
  ): Promise<AsOfDecision> {
    const held = await this.heldAt(request.principal_id, at, false);
    const { type, identifier } = request.resource;
    const granting = coveringIn(held, type, identifier).filter((h) =>
      entryGrants(entryOf(h), request.action),
    );
    const policies = [...new Set(granting.flatMap((h) => h.state.via.map((v) => v.policy_id)))];
    const allowed = policies.length > 0;
    const conditional = granting.some((h) => h.state.conditional);
    return {
      id: newId('decision'),
      decision: allowed ? 'ALLOW' : 'DENY',
      allowed,
      principal_id: request.principal_id,
      action: request.action,
      resource: { type, identifier },
      reasons: allowed
        ? policies.map((policy_id) => ({
            code: 'POLICY_ALLOW' as const,
            policy_id,
            ...(conditional
              ? {
                  message:
                    'the grant depended on the request then; its conditions are not evaluated as of a past instant',
                }
              : {}),
          }))
        : [{ code: 'NO_MATCHING_POLICY' as const, message: `no policy allowed ${request.action} at ${at}` }],
      granted_by: policies,
      evaluated_at: new Date().toISOString(),
      as_of: at,
    };
  }

  /**
   * A principal's entries at `at`: as the index holds them now, each that changed since as the
   * first change after `at` found it. 404 for a principal neither known now nor in the history.
   */
  private async heldAt(id: string, at: string, mustExist = true): Promise<Map<string, Held>> {
    const rows = await repo.principalAsOf(this.db, id, at);
    if (mustExist && rows.length === 0 && this.index.table.rowOf(id) < 0) throw notFound('principal', id);
    const firstAfter = new Map<string, EntryBefore>();
    const made = new Map<string, NonNullable<Held['madeBy']>>();
    for (const r of rows) {
      const key = keyOf(r.type, r.identifier, r.pattern);
      if (r.made_by) made.set(key, r.made_by);
      if (r.changed_since) firstAfter.set(key, r);
    }
    const held = new Map<string, Held>();
    for (const [key, e] of rewind(accessView(this.index, id), firstAfter)) {
      const by = made.get(key);
      held.set(key, {
        type: e.type,
        identifier: e.identifier,
        pattern: e.pattern,
        state: e,
        ...(by ? { madeBy: by } : {}),
      });
    }
    return held;
  }
}

/** The entries of `held` about a resource: its own, else the globs of its type matching it. */
function coveringIn(held: ReadonlyMap<string, Held>, type: string, identifier: string): Held[] {
  const exact = held.get(keyOf(type, identifier, false));
  if (exact) return [exact];
  const covers = globsMatching(identifier);
  return [...held.values()].filter((h) => h.pattern && h.type === type && covers(h.identifier));
}

/**
 * What covered a resource at an instant for one principal (`coveringIn` of its view rewound):
 * `now`, its entries now, with those `afters` names (the first change after the instant of each
 * entry about the resource, globs already matched) as they held before it. Entries keep the order
 * the rewound view gives them.
 */
function coveringThen(
  nowOf: () => AccessView,
  afters: readonly { identifier: string; pattern: boolean; before: EntryState | null }[],
  type: string,
  identifier: string,
  covers: (glob: string) => boolean,
): EntryState[] {
  const own = afters.find((a) => !a.pattern);
  // Its own entry, where it held one, answers alone: the view now is made only where it does not.
  if (own?.before) return [own.before];
  const now = nowOf();
  const exact = own ? own.before : now.get(keyOf(type, identifier, false));
  if (exact) return [exact];
  const out: EntryState[] = [];
  for (const e of now.values()) {
    if (!e.pattern || e.type !== type || !covers(e.identifier)) continue;
    const after = afters.find((a) => a.pattern && a.identifier === e.identifier);
    if (!after) out.push(e);
    else if (after.before) out.push(after.before);
  }
  for (const a of afters)
    if (a.pattern && a.before && !now.has(keyOf(type, a.identifier, true))) out.push(a.before);
  return out;
}

/** A view with no entries, shared: nothing changes it. */
const NOTHING: AccessView = new Map();

function entryOf(h: Held): EntryAsOf {
  const { state, madeBy } = h;
  return {
    resource: { type: h.type, identifier: h.identifier },
    ...(h.pattern ? { pattern: true as const } : {}),
    actions: state.actions,
    ...(state.denied_actions ? { denied_actions: state.denied_actions } : {}),
    granted_by: state.via.map((v) => v.policy_id),
    granted_at: madeBy ? madeBy.at : null,
    granted_by_event: madeBy
      ? { event_id: madeBy.event_id, event_type: madeBy.event_type, actor: madeBy.actor }
      : null,
    conditional: state.conditional,
  };
}
