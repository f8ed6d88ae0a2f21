import { defineQueries } from '../db/catalogue.js';
import type { Database } from '../db/database.js';
import { ATTR_PREFIX, prefixed, type Attributes, type PrincipalRow } from '../principals/model.js';
import { PrincipalWrites, type PrincipalBatchWriter } from '../principals/writes.js';
import { assessRisk } from '../risk/score.js';
import { checkPolicyBody, nodeProperties, type PolicyBody } from '../policies/model.js';

const Q = defineQueries('seed', [
  'delegations',
  'managers',
  'groups',
  'memberships',
  'nesting',
  'policies',
  'resources',
]);

/** A principal the loader writes: the batch write's row (src/principals/model.ts). */
export type SeedPrincipal = PrincipalRow;

export interface SeedGroup {
  id: string;
  name: string;
  description?: string;
  createdAt: string;
}

export interface SeedMembership {
  groupId: string;
  memberId: string;
}

export interface SeedPolicy {
  id: string;
  /** Checked as the API checks it: a body the API would refuse is refused here too. */
  body: PolicyBody;
  createdAt: string;
}

export interface SeedDelegation {
  id: string;
  delegatorId: string;
  delegateId: string;
  actions: string[];
  /** `type:identifier` texts; null: every resource. */
  resources: string[] | null;
  expiresAt: string;
  createdAt: string;
}

export interface SeedResource {
  type: string;
  identifier: string;
  attributes: Attributes;
  ownerId?: string | null;
  createdAt: string;
}

/**
 * Loads an already-consistent identity graph in batches, one transaction per batch, bypassing
 * the per-request checks (manager existence, cycles) and the audit trail. For benchmarks and
 * bulk imports of trusted data only; the API never takes this path.
 */
export class BulkLoader {
  private readonly db: Database;

  /** Batches of tens of thousands of rows outlast a request's timeout: loads are background work. */
  constructor(
    db: Database,
    private readonly actor = 'seed',
    /** Principals are written by their owner, which scores their risk (src/principals/writes.ts). */
    private readonly writer: PrincipalBatchWriter = new PrincipalWrites(assessRisk),
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
      await this.db.write('seed/principals', (tx) => this.writer.createMany(tx, rows, this.actor)),
    );
    return rows.filter((p) => pending.has(p.id));
  }

  /** REPORTS_TO edges for rows whose attributes name a manager; run once every manager exists. */
  async managers(rows: SeedPrincipal[]): Promise<void> {
    const links = rows
      .filter((p) => typeof p.attributes['manager_id'] === 'string')
      .map((p) => ({ id: p.id, managerId: p.attributes['manager_id'] as string }));
    if (links.length > 0) await this.db.write(Q.managers, (tx) => tx.run(Q.managers, { rows: links }));
  }

  async groups(rows: SeedGroup[]): Promise<void> {
    const params = rows.map((g) => ({ ...g, description: g.description ?? null, createdBy: this.actor }));
    await this.db.write(Q.groups, (tx) => tx.run(Q.groups, { rows: params }));
  }

  async memberships(rows: SeedMembership[], createdAt: string): Promise<void> {
    const params = rows.map((m) => ({ ...m, addedAt: createdAt, addedBy: this.actor }));
    await this.db.write(Q.memberships, (tx) => tx.run(Q.memberships, { rows: params }));
  }

  async nesting(rows: SeedMembership[], createdAt: string): Promise<void> {
    const params = rows.map((m) => ({ ...m, addedAt: createdAt, addedBy: this.actor }));
    await this.db.write(Q.nesting, (tx) => tx.run(Q.nesting, { rows: params }));
  }

  /**
   * Policies at their first version, with their subject and resource edges. Batches naming the
   * same new resource must not run concurrently (each would create it).
   */
  async policies(rows: SeedPolicy[]): Promise<void> {
    const params = rows.map((p) => {
      // As the API stores it: the schema's default status filled in.
      const body = checkPolicyBody({ ...p.body, status: p.body.status ?? 'active' });
      const { props, exact, window } = nodeProperties(body);
      return { id: p.id, props, exact, window, body: JSON.stringify(body), createdAt: p.createdAt };
    });
    await this.db.write(Q.policies, (tx) => tx.run(Q.policies, { rows: params, actor: this.actor }));
  }

  /** Active delegations between principals that exist. */
  async delegations(rows: SeedDelegation[]): Promise<void> {
    const params = rows.map((d) => ({
      delegatorId: d.delegatorId,
      delegateId: d.delegateId,
      expiresAt: d.expiresAt,
      createdAt: d.createdAt,
      props: { id: d.id, actions: d.actions, resources: d.resources, reason: null, created_by: this.actor },
    }));
    await this.db.write(Q.delegations, (tx) => tx.run(Q.delegations, { rows: params }));
  }

  /** Registered resources with their attributes and owner. */
  async resources(rows: SeedResource[]): Promise<void> {
    const params = rows.map((r) => ({
      props: {
        ...prefixed(ATTR_PREFIX, r.attributes),
        type: r.type,
        identifier: r.identifier,
        owner_id: r.ownerId ?? null,
      },
      createdAt: r.createdAt,
    }));
    await this.db.write(Q.resources, (tx) => tx.run(Q.resources, { rows: params }));
  }
}
