import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import { groupNameKey } from '../groups/repository.js';
import { fromProperties, type Principal } from '../principals/model.js';
import { principalRows, type SeedPrincipal } from '../seed/bulk.js';

const Q = defineQueries('scim', [
  'sync_groups_create',
  'sync_users',
  'sync_release',
  'sync_deprovision',
  'sync_managers',
]);
const SEED = defineQueries('seed', ['principals']);

/** A user of the connector as a snapshot is reconciled against it. */
export interface ExistingUser {
  principal: Principal;
  /** The stored SCIM resource, as JSON. */
  scim: string;
  /** Lower-cased. */
  userName: string | undefined;
  managerId: string | null;
  /** The manager reference it waits on, if any. */
  managerRef: string | null;
}

/** A deprovisioned user's new risk assessment, its factors as JSON. */
export interface DeprovisionRow {
  id: string;
  score: number;
  factors: string;
}

/** A user's manager link as a snapshot has it. */
export interface ManagerLink {
  id: string;
  /** The manager it reports to, or none. */
  managerId: string | null;
  /** The manager reference it waits on when its manager is not among the connector's users. */
  ref: string | null;
}

/** A new group of a snapshot with its members (users of the connector). */
export interface NewSyncGroup {
  id: string;
  name: string;
  externalId: string | null;
  /** The attributes its client sent, as JSON. */
  scim: string;
  members: string[];
}

/** Named queries of the bulk reconciliation of a connector with a snapshot (src/scim/sync.ts). */
export const scimSyncRepository = {
  /** Every user of the connector that SCIM still sees, with its manager. */
  async users(tx: Reader, source: string): Promise<ExistingUser[]> {
    const rows = await tx.run<{ props: Record<string, unknown>; managerId: string | null }>(Q.sync_users, {
      source,
    });
    const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
    return rows.map((r) => ({
      principal: fromProperties(r.props),
      scim: text(r.props['scim']) ?? '',
      userName: text(r.props['user_name']),
      managerId: r.managerId,
      managerRef: text(r.props['manager_ref']) ?? null,
    }));
  },

  /** Deprovisioned users give up the externalIds a snapshot provisions again. */
  async releaseExternalIds(tx: Tx, source: string, externalIds: string[]): Promise<void> {
    await tx.run(Q.sync_release, { source, externalIds });
  },

  /**
   * Creates a batch of users as the bulk load does (cypher/seed/principals.cypher); answers
   * those whose manager is not there yet.
   */
  async createUsers(tx: Tx, rows: SeedPrincipal[], createdBy: string): Promise<string[]> {
    const [result] = await tx.run<{ pending: string[] }>(SEED.principals, principalRows(rows, createdBy));
    return result?.pending ?? [];
  },

  /** Users missing from a snapshot: deprovisioned (they stay for history). */
  async deprovision(tx: Tx, rows: DeprovisionRow[], now: string): Promise<void> {
    await tx.run(Q.sync_deprovision, { rows, now });
  },

  /** Sets each user's manager link (and the reference it waits on) as given. */
  async linkManagers(tx: Tx, rows: ManagerLink[], now: string): Promise<void> {
    await tx.run(Q.sync_managers, { rows, now });
  },

  /**
   * New groups with their members, a batch at once; the group name constraint refuses a name
   * the connector already uses.
   */
  async createGroups(
    tx: Tx,
    source: string,
    actor: string,
    groups: NewSyncGroup[],
    now: string,
  ): Promise<void> {
    const rows = groups.map((g) => ({
      id: g.id,
      name: g.name,
      nameKey: groupNameKey(g.name, source),
      externalId: g.externalId,
      scim: g.scim,
      members: g.members,
    }));
    await tx.run(Q.sync_groups_create, { rows, source, actor, now });
  },
};
