import type { Database } from '../db/database.js';
import { delegationLoader, type DelegationLoader, type LoadedDelegation } from '../delegations/writes.js';
import { groupLoader, type GroupLoader, type LoadedGroup, type LoadedMembership } from '../groups/writes.js';
import { policyLoader, type LoadedPolicy, type PolicyLoader } from '../policies/writes.js';
import type { PrincipalRow } from '../principals/model.js';
import { PrincipalWrites, type PrincipalBatchWriter } from '../principals/writes.js';
import { resourceLoader, type LoadedResource, type ResourceLoader } from '../resources/writes.js';
import { assessRisk } from '../risk/score.js';

/** A principal the loader writes: the batch write's row (src/principals/model.ts). */
export type SeedPrincipal = PrincipalRow;
export type SeedGroup = LoadedGroup;
export type SeedMembership = LoadedMembership;
/** Checked as the API checks it: a body the API would refuse is refused here too. */
export type SeedPolicy = LoadedPolicy;
export type SeedDelegation = LoadedDelegation;
export type SeedResource = LoadedResource;

/** Who writes each kind of record: its owner's bulk load. */
export interface BulkWriters {
  principals: PrincipalBatchWriter;
  groups: GroupLoader;
  policies: PolicyLoader;
  delegations: DelegationLoader;
  resources: ResourceLoader;
}

/**
 * Loads an already-consistent identity graph in batches, one transaction per batch, bypassing
 * the per-request checks (manager existence, cycles) and the audit trail. For benchmarks and
 * bulk imports of trusted data only; the API never takes this path. Each kind of record is
 * written by its owner (the `writes.ts` of its feature), with the same nodes and edges the API
 * leaves.
 */
export class BulkLoader {
  private readonly db: Database;

  /** Batches of tens of thousands of rows outlast a request's timeout: loads are background work. */
  constructor(
    db: Database,
    private readonly actor = 'seed',
    private readonly writers: BulkWriters = {
      principals: new PrincipalWrites(assessRisk),
      groups: groupLoader,
      policies: policyLoader,
      delegations: delegationLoader,
      resources: resourceLoader,
    },
  ) {
    this.db = db.background();
  }

  /**
   * Writes principals with their attribute links and manager edges. Returns the principals whose
   * manager was not in the graph yet (a later batch, or one still being written): link those with
   * `managers()` once everything is loaded.
   */
  async principals(rows: SeedPrincipal[]): Promise<SeedPrincipal[]> {
    const pending = new Set(
      await this.db.write('seed/principals', (tx) =>
        this.writers.principals.createMany(tx, rows, this.actor),
      ),
    );
    return rows.filter((p) => pending.has(p.id));
  }

  /** REPORTS_TO edges for rows whose attributes name a manager; run once every manager exists. */
  async managers(rows: SeedPrincipal[]): Promise<void> {
    const links = rows
      .filter((p) => typeof p.attributes['manager_id'] === 'string')
      .map((p) => ({ id: p.id, managerId: p.attributes['manager_id'] as string }));
    if (links.length > 0) {
      await this.db.write('seed/managers', (tx) => this.writers.principals.loadManagers(tx, links));
    }
  }

  async groups(rows: SeedGroup[]): Promise<void> {
    await this.db.write('seed/groups', (tx) => this.writers.groups.load(tx, rows, this.actor));
  }

  async memberships(rows: SeedMembership[], createdAt: string): Promise<void> {
    await this.db.write('seed/memberships', (tx) =>
      this.writers.groups.loadMemberships(tx, rows, createdAt, this.actor),
    );
  }

  async nesting(rows: SeedMembership[], createdAt: string): Promise<void> {
    await this.db.write('seed/nesting', (tx) =>
      this.writers.groups.loadNesting(tx, rows, createdAt, this.actor),
    );
  }

  /**
   * Policies at their first version, with their subject and resource edges. Batches naming the
   * same new resource must not run concurrently (each would create it).
   */
  async policies(rows: SeedPolicy[]): Promise<void> {
    await this.db.write('seed/policies', (tx) => this.writers.policies.load(tx, rows, this.actor));
  }

  /** Active delegations between principals that exist. */
  async delegations(rows: SeedDelegation[]): Promise<void> {
    await this.db.write('seed/delegations', (tx) => this.writers.delegations.load(tx, rows, this.actor));
  }

  /** Registered resources with their attributes and owner. */
  async resources(rows: SeedResource[]): Promise<void> {
    await this.db.write('seed/resources', (tx) => this.writers.resources.load(tx, rows));
  }
}
