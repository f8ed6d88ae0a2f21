import { defineQueries } from '../db/catalogue.js';
import type { Database } from '../db/database.js';
import {
  ATTR_PREFIX,
  attributeEntries,
  META_PREFIX,
  optionalProperties,
  prefixed,
  STATUS_LABEL,
  TYPE_LABEL,
  type Attributes,
  type Metadata,
} from '../principals/model.js';
import { assessRisk } from '../risk/score.js';
import { checkPolicyBody, type PolicyBody } from '../policies/model.js';
import { nodeProperties } from '../policies/repository.js';
import { type PrincipalType } from '../vocabulary/principals.js';

const Q = defineQueries('seed', [
  'delegations',
  'principals',
  'managers',
  'groups',
  'memberships',
  'nesting',
  'policies',
  'resources',
]);

export interface SeedPrincipal {
  id: string;
  type: PrincipalType;
  name: string;
  email?: string;
  description?: string;
  attributes: Attributes;
  metadata: Metadata;
  connectorSource?: string;
  connectorId?: string;
  createdAt: string;
  lastLogin?: string | null;
  /** `active` unless said otherwise. */
  status?: 'active' | 'suspended';
  /** Further node properties (a SCIM user's user_name and scim). */
  extra?: Record<string, unknown>;
}

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
 * The parameters of the bulk principal statement (cypher/seed/principals.cypher) for a batch:
 * each row's node properties and labels, and the batch's attribute values once each, which the
 * rows' links point into by position.
 */
export function principalRows(
  rows: SeedPrincipal[],
  actor: string,
): { rows: Record<string, unknown>[]; vocabulary: { key: string; value: string }[] } {
  const vocabulary: { key: string; value: string }[] = [];
  const positions = new Map<string, number>();
  const positionOf = (key: string, value: string): number => {
    const id = `${key}\u0000${value}`;
    let at = positions.get(id);
    if (at === undefined) {
      at = vocabulary.length;
      vocabulary.push({ key, value });
      positions.set(id, at);
    }
    return at;
  };
  const params = rows.map((p) => {
    const status = p.status ?? 'active';
    const risk = assessRisk({
      type: p.type,
      status,
      attributes: p.attributes,
      metadata: p.metadata,
      last_login: p.lastLogin ?? null,
    });
    const props: Record<string, unknown> = {
      ...prefixed(ATTR_PREFIX, p.attributes),
      ...prefixed(META_PREFIX, p.metadata),
      id: p.id,
      type: p.type,
      name: p.name,
      status,
      created_by: actor,
      version: 1,
      risk_score: risk.score,
      risk_factors: JSON.stringify(risk.factors),
    };
    Object.assign(props, optionalProperties(p), p.extra ?? {});
    const managerId = p.attributes['manager_id'];
    return {
      labels: ['Principal', TYPE_LABEL[p.type], STATUS_LABEL[status]],
      managerId: typeof managerId === 'string' ? managerId : null,
      createdAt: Date.parse(p.createdAt),
      lastLogin: p.lastLogin ? Date.parse(p.lastLogin) : null,
      props,
      links: attributeEntries(p.attributes).map((e) => ({
        at: positionOf(e.key, e.value),
        array: e.array,
      })),
    };
  });
  return { rows: params, vocabulary };
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
  ) {
    this.db = db.background();
  }

  /**
   * Writes principals with their attribute links and manager edges. Returns the principals whose
   * manager was not in the graph yet (a later batch, or one still being written): link those with
   * `managers()` once everything is loaded.
   */
  async principals(rows: SeedPrincipal[]): Promise<SeedPrincipal[]> {
    const params = principalRows(rows, this.actor);
    const [result] = await this.db.write(Q.principals, (tx) =>
      tx.run<{ pending: string[] }>(Q.principals, params),
    );
    const pending = new Set(result?.pending ?? []);
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
