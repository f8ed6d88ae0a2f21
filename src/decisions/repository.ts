import { defineQueries } from '../db/catalogue.js';
import type { Database, Reader } from '../db/database.js';
import type { WriteThread } from '../db/write-thread.js';
import { fromProperties as policyFromProperties, type Policy } from '../policies/model.js';
import { compileGlob, globMatches as matchesGlob } from '../policies/patterns.js';
import type { Grant } from './access.js';
import {
  toIxDelegation,
  type DelegationRow,
  type IxDelegation,
  type IxResource,
  type StoredPrincipalRow,
  type SubjectVia,
} from './model.js';

const Q = defineQueries('decisions', [
  'index_principals',
  'principals_by_id',
  'memberships_by_id',
  'index_groups',
  'groups_by_id',
  'index_policies',
  'policies_by_id',
  'index_resources',
  'resources_by_key',
  'index_delegations',
  'delegations_by_id',
  'record',
  'get',
  'list',
  'purge',
  'database_id',
  'principal_count',
  'principal_at',
]);
const A = defineQueries('access', ['principal']);

export interface GroupRow {
  id: string;
  name: string;
  /** The groups it is nested in directly, each with when it was nested (epoch ms; null: unknown). */
  parents: [string, number | null][];
}

/** A principal's direct groups, each with when it was joined (epoch ms; null: unknown). */
export interface MembershipRow {
  id: string;
  groups: [string, number | null][];
}

/** A batch of decision records as stored: JSON lines, gzip-compressed, base64, with their id range. */
export interface StoredBatch {
  first_id: string;
  last_id: string;
  first_at: string;
  last_at: string;
  count: number;
  allowed: number;
  body: string;
}

export interface PrincipalGrants {
  status: string;
  type: string;
  allowedTools: string | string[] | null;
  grants: Grant[];
  /** Registered identifiers each allow glob matched, by `type:glob`. */
  globMatches: Map<string, string[]>;
  /** Each granting policy's name and how it selects the principal, by policy id. */
  subjects: Map<string, { name: string; via: SubjectVia }>;
}

/** Above every id (ids are ASCII): the end of the last range of principals. */
const LAST_ID = '\uffff';

/** A registered resource as decisions/index_resources reads it. */
interface ResourceRow {
  type: string;
  identifier: string;
  attributes: [string, unknown][];
}

function toResource(row: ResourceRow): IxResource {
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of row.attributes.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    attributes[key] = value;
  return { type: row.type, identifier: row.identifier, attributes };
}

/** A policy as the index reads it, with when each subject came to it (epoch ms; null: unknown). */
export interface StoredPolicy {
  policy: Policy;
  since: [string, number | null][];
}

interface PolicyRow {
  props: Record<string, unknown>;
  since: [string, number | null][];
}

const storedPolicy = (row: PolicyRow): StoredPolicy => ({ policy: policyOf(row.props), since: row.since });

/** Policy timestamps the index reads as epoch milliseconds. */
const POLICY_TIMES = ['activated_at', 'valid_from', 'valid_until', 'created_at', 'updated_at', 'deleted_at'];

/** A policy as decisions/index_policies reads it (timestamps as epoch milliseconds) → the policy. */
function policyOf(props: Record<string, unknown>): Policy {
  for (const key of POLICY_TIMES) {
    const ms = props[key];
    props[key] = typeof ms === 'number' ? new Date(ms).toISOString() : null;
  }
  return policyFromProperties(props);
}

/** What the decision index reads from the graph, and the decision records it writes. */
export const decisionRepository = {
  /**
   * Every principal, a page of `batch` at a time, to `take` (one page at a time). With many
   * principals and a database whose address is known, the id order is cut into `ranges` read side
   * by side by worker threads (what the database sends is decoded off this thread); otherwise in
   * id order here, the next page asked for as soon as a page arrives, so that the database reads
   * it while this one is taken in.
   */
  async principals(
    db: Database,
    take: (rows: StoredPrincipalRow[]) => void | Promise<void>,
    options: { batch?: number; ranges?: number } = {},
  ): Promise<void> {
    const batch = options.batch ?? 5_000;
    const wanted = options.ranges ?? 1;
    if (wanted > 1 && db.readsInParallel) {
      const count = (await db.first<{ n: number }>(Q.principal_count))?.n ?? 0;
      if (count >= wanted * batch * 4) {
        const bounds: string[] = [];
        for (let k = 1; k < wanted; k += 1) {
          const at = await db.first<{ id: string }>(Q.principal_at, {
            skip: Math.floor((count * k) / wanted),
          });
          if (at && (bounds.length === 0 || at.id > bounds[bounds.length - 1]!)) bounds.push(at.id);
        }
        const ranges = [...bounds, LAST_ID].map((upTo, k): [string, string] => [
          k === 0 ? '' : bounds[k - 1]!,
          upTo,
        ]);
        await db.readRanges<StoredPrincipalRow>(
          Q.index_principals,
          ranges,
          { batch, key: ['p', 'id'] },
          take,
        );
        return;
      }
    }
    // Every value of the statement is text, a number or a list of them: no conversion needed.
    const page = (after: string) =>
      db.runPlain<StoredPrincipalRow>(Q.index_principals, { after, upTo: LAST_ID, batch });
    let next: Promise<StoredPrincipalRow[]> | undefined = page('');
    while (next) {
      const rows: StoredPrincipalRow[] = await next;
      next = rows.length === batch ? page(rows[rows.length - 1]!.p['id'] as string) : undefined;
      if (rows.length > 0) await take(rows);
    }
  },

  /** Principals by id as they are now; ids that no longer exist give no row. */
  principalsById(db: Database, ids: readonly string[]): Promise<StoredPrincipalRow[]> {
    return db.runPlain<StoredPrincipalRow>(Q.principals_by_id, { ids: [...ids] });
  },

  /** The direct groups of principals by id, each with when it was joined (epoch ms). */
  membershipsById(db: Database, ids: readonly string[]): Promise<MembershipRow[]> {
    return db.runPlain<MembershipRow>(Q.memberships_by_id, { ids: [...ids] });
  },

  groups(db: Reader): Promise<GroupRow[]> {
    return db.run<GroupRow>(Q.index_groups);
  },

  groupsById(db: Reader, ids: readonly string[]): Promise<GroupRow[]> {
    return db.run<GroupRow>(Q.groups_by_id, { ids: [...ids] });
  },

  async policies(db: Database): Promise<StoredPolicy[]> {
    return (await db.runPlain<PolicyRow>(Q.index_policies)).map(storedPolicy);
  },

  async policiesById(db: Database, ids: readonly string[]): Promise<StoredPolicy[]> {
    return (await db.runPlain<PolicyRow>(Q.policies_by_id, { ids: [...ids] })).map(storedPolicy);
  },

  /** Every active delegation. */
  async delegations(db: Database): Promise<IxDelegation[]> {
    return (await db.runPlain<DelegationRow>(Q.index_delegations)).map(toIxDelegation);
  },

  /** Delegations by id as they now are, whatever their status. */
  async delegationsById(
    db: Database,
    ids: readonly string[],
  ): Promise<{ delegation: IxDelegation; active: boolean }[]> {
    return (await db.runPlain<DelegationRow>(Q.delegations_by_id, { ids: [...ids] })).map((row) => ({
      delegation: toIxDelegation(row),
      active: row.status === 'active',
    }));
  },

  async resources(db: Database): Promise<IxResource[]> {
    return (await db.runPlain<ResourceRow>(Q.index_resources)).map(toResource);
  },

  async resourcesByKey(
    db: Database,
    refs: readonly { type: string; identifier: string }[],
  ): Promise<IxResource[]> {
    return (await db.runPlain<ResourceRow>(Q.resources_by_key, { refs: [...refs] })).map(toResource);
  },

  /**
   * A principal's grants at `now` found by walking the graph, with `matched` the policies
   * selecting it by `match`. Undefined when the principal does not exist.
   */
  async principalGrants(
    db: Reader,
    id: string,
    matched: readonly string[],
    now: string,
  ): Promise<PrincipalGrants | undefined> {
    const row = await db.first<{
      status: string;
      type: string;
      allowed_tools: string | string[] | null;
      grants:
        | {
            id: string;
            name: string;
            via: SubjectVia;
            effect: 'allow' | 'deny';
            actions: string[];
            conditional: boolean;
            exact: [string, string][];
            glob_types: string[];
            glob_patterns: string[];
            /** Registered identifiers holding each run of a glob, in any order. */
            candidates: [string, string, string][];
            granted_at: string;
            valid_until: string | null;
          }[]
        | null;
    }>(A.principal, { id, matched: [...matched], now });
    if (!row) return undefined;
    const globMatches = new Map<string, string[]>();
    const subjects = new Map<string, { name: string; via: SubjectVia }>();
    const grants: Grant[] = (row.grants ?? []).map((g) => {
      subjects.set(g.id, { name: g.name, via: g.via });
      for (const [type, pattern, identifier] of g.candidates) {
        if (!matchesGlob(compileGlob(pattern), identifier)) continue;
        const key = `${type}:${pattern}`;
        const list = globMatches.get(key);
        if (list) list.push(identifier);
        else globMatches.set(key, [identifier]);
      }
      return {
        policyId: g.id,
        effect: g.effect,
        actions: g.actions,
        conditional: g.conditional,
        resources: [
          ...g.exact.map(([type, identifier]) => ({ type, identifier })),
          ...g.glob_types.map((type, i) => ({ type, identifier: g.glob_patterns[i]! })),
        ],
        grantedAt: g.granted_at,
        validUntil: g.valid_until,
      };
    });
    return {
      status: row.status,
      type: row.type,
      allowedTools: row.allowed_tools,
      grants,
      globMatches,
      subjects,
    };
  },

  /** What names this database: a snapshot of the index records it, and is read only on the same. */
  async databaseId(db: Reader): Promise<string> {
    const row = await db.first<{ id: string }>(Q.database_id);
    return row?.id ?? '';
  },

  /**
   * A thread that writes batches with a driver of its own (`recordOn`), when the database's
   * address is known.
   */
  recordThread(db: Database): WriteThread | undefined {
    return db.writeThread(Q.record);
  },

  /** `record` on a thread: the JSON lines are compressed and encoded there. */
  async recordOn(thread: WriteThread, lines: Uint8Array, batch: Omit<StoredBatch, 'body'>): Promise<void> {
    await thread.write({ ...batch }, { body: lines });
  },

  async record(db: Database, batch: StoredBatch): Promise<void> {
    await db.write(Q.record, (tx) => tx.run(Q.record, { ...batch }));
  },

  /**
   * What may hold decision `id`: the compressed bodies of the batches whose id range covers it
   * (batches start at most their span before it: `from`), or a record stored on its own.
   */
  async get(db: Reader, id: string, from: string): Promise<{ bodies: Buffer[]; record?: string }> {
    const rows = await db.run<{ body: string | null; record: string | null }>(Q.get, { id, from });
    const bodies: Buffer[] = [];
    let record: string | undefined;
    for (const row of rows) {
      if (row.body !== null) bodies.push(Buffer.from(row.body, 'base64'));
      if (row.record !== null) record = row.record;
    }
    return { bodies, ...(record !== undefined ? { record } : {}) };
  },

  /**
   * The batches that may hold decisions after `after` and before `until`, in the order they start
   * from `from` on: the first `batches` with their compressed bodies, then the first id of one more
   * (its `body` null), when there is one.
   */
  async list(
    db: Reader,
    range: { after: string; from: string; until: string; batches: number },
  ): Promise<{ first_id: string; body: Buffer | null }[]> {
    const rows = await db.run<{ first_id: string; body: string | null }>(Q.list, { ...range });
    return rows.map((row) => ({
      first_id: row.first_id,
      body: row.body === null ? null : Buffer.from(row.body, 'base64'),
    }));
  },

  async purge(db: Database, before: string, batch: number): Promise<number> {
    const row = await db.write(Q.purge, (tx) => tx.first<{ removed: number }>(Q.purge, { before, batch }));
    return row?.removed ?? 0;
  },
};
