import { defineQueries } from '../db/catalogue.js';
import type { Params, Reader, Tx } from '../db/database.js';
import {
  ATTR_PREFIX,
  attributeEntries,
  fromProperties,
  META_PREFIX,
  optionalProperties,
  prefixed,
  RISK_READS,
  STATUS_LABEL,
  TYPE_LABEL,
  type Attributes,
  type AttributeValue,
  type Card,
  type DelegationState,
  type Metadata,
  type OwnerState,
  type Principal,
  type RiskFactor,
  type ManagerLink,
  type PrincipalRow,
  type RiskInput,
  type RiskRule,
} from './model.js';
import { type PrincipalStatus, type PrincipalType } from '../vocabulary/principals.js';

const Q = defineQueries('principals', [
  'create',
  'get',
  'lock',
  'update',
  'delete',
  'manager_check',
  'relationships',
  'lock_risk_inputs',
  'set_privileges',
  'dormant_candidates',
  'set_risk',
  'owner_states',
  'owned_page',
  'set_owner_state',
  'delegation_states',
  'delegating_page',
  'set_delegation_state',
  'create_many',
  'deprovision_many',
  'set_managers',
  'load_managers',
]);

/**
 * The templates of the search statements: the search compiler (src/principals/search/) fills
 * their markers with generated predicates (search_scoped has none: it is one text), and
 * `search` / `planSearch` below run the result.
 */
export const SEARCH_TEMPLATES = defineQueries('principals', [
  'search',
  'search_filter',
  'shaped_search',
  'search_scoped',
]);

/**
 * A search statement: the text is assembled from a catalogue template (src/query) and named
 * after it, with every value in the parameters.
 */
export interface SearchStatement {
  name: string;
  text: string;
  params: Params;
}

export interface NewPrincipal {
  id: string;
  type: PrincipalType;
  name: string;
  description?: string | null;
  email?: string | null;
  attributes: Attributes;
  metadata: Metadata;
  status: PrincipalStatus;
  connectorSource?: string | null;
  connectorId?: string | null;
  lastLogin?: string | null;
  createdBy: string;
  risk: { score: number; factors: RiskFactor[] };
  /** Further node properties a provisioning source keeps (SCIM: user_name, scim, manager_ref). */
  extra?: Record<string, unknown>;
}

export interface PrincipalChanges {
  name?: string;
  description?: string | null;
  status?: PrincipalStatus;
  email?: string | null;
  /** Keys to set, or to remove when `null`. */
  attributes?: Record<string, AttributeValue | null>;
  metadata?: Record<string, string | null>;
  /** The manager after the change, when it changes (`null`: no manager any more). */
  manager?: { id: string | null };
  risk: { score: number; factors: RiskFactor[] };
  /** Further node properties to set (`null` removes one), as for NewPrincipal. */
  extra?: Record<string, unknown>;
}

export interface RelatedPrincipal {
  id: string;
  name: string;
  type: string;
  email: string | null;
}

export interface RelationshipRows {
  managers: { depth: number; principal: RelatedPrincipal }[];
  reports: { depth: number; count: number; principals: (RelatedPrincipal & { manager_id: string })[] }[];
  groups: { depth: number; count: number; groups: { id: string; name: string; via: string[] }[] }[];
}

/**
 * The parameters of the batch principal statement (cypher/principals/create_many.cypher): each
 * row's node properties and labels, and the batch's attribute values once each, which the rows'
 * links point into by position.
 */
export function principalRows(
  rows: PrincipalRow[],
  actor: string,
  assessRisk: RiskRule,
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

/** Named queries over principal nodes, in the caller's transaction or on the database. */
export const principalRepository = {
  async create(tx: Tx, p: NewPrincipal, now: string): Promise<Principal> {
    const props: Record<string, unknown> = {
      ...prefixed(ATTR_PREFIX, p.attributes),
      ...prefixed(META_PREFIX, p.metadata),
    };
    Object.assign(props, optionalProperties(p), p.extra ?? {});
    const managerId = p.attributes['manager_id'];
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.create, {
      id: p.id,
      type: p.type,
      labels: [TYPE_LABEL[p.type], STATUS_LABEL[p.status]],
      name: p.name,
      status: p.status,
      now,
      createdBy: p.createdBy,
      lastLogin: p.lastLogin ?? null,
      riskScore: p.risk.score,
      riskFactors: JSON.stringify(p.risk.factors),
      props,
      entries: attributeEntries(p.attributes),
      managerId: typeof managerId === 'string' ? managerId : null,
    });
    return fromProperties(row!.props);
  },

  async get(tx: Reader, id: string): Promise<Principal | undefined> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.get, { id });
    return row ? fromProperties(row.props) : undefined;
  },

  /** Reads the principal and holds its write lock until the transaction ends. */
  async lock(tx: Tx, id: string): Promise<Principal | undefined> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.lock, { id });
    return row ? fromProperties(row.props) : undefined;
  },

  async update(
    tx: Tx,
    current: { id: string; status: PrincipalStatus },
    changes: PrincipalChanges,
    now: string,
  ): Promise<Principal> {
    const id = current.id;
    const set: Record<string, unknown> = {
      ...prefixed(ATTR_PREFIX, changes.attributes ?? {}),
      ...prefixed(META_PREFIX, changes.metadata ?? {}),
    };
    for (const field of ['name', 'description', 'status', 'email'] as const) {
      if (changes[field] !== undefined) set[field] = changes[field];
    }
    Object.assign(set, changes.extra ?? {});
    const changedKeys = Object.keys(changes.attributes ?? {});
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.update, {
      id,
      set,
      now,
      riskScore: changes.risk.score,
      riskFactors: JSON.stringify(changes.risk.factors),
      changedKeys,
      entries: attributeEntries(changes.attributes ?? {}),
      fromStatusLabel: STATUS_LABEL[current.status],
      toStatusLabel: STATUS_LABEL[changes.status ?? current.status],
      managerChanged: changes.manager !== undefined,
      managerId: changes.manager?.id ?? null,
    });
    return fromProperties(row!.props);
  },

  async delete(
    tx: Tx,
    id: string,
    deletedBy: string,
    now: string,
  ): Promise<{ principal: Principal; groups: string[] }> {
    const row = await tx.first<{ props: Record<string, unknown>; groups: string[] }>(Q.delete, {
      id,
      deletedBy,
      now,
    });
    return { principal: fromProperties(row!.props), groups: row!.groups };
  },

  async relationships(
    tx: Reader,
    id: string,
    types: readonly string[],
    depth: number,
    cap: number,
  ): Promise<RelationshipRows | undefined> {
    const row = await tx.first<{
      managers: { depth: number; principal: Card }[];
      reports: { depth: number; count: number; principals: Card[]; managers: string[] }[];
      groups: { depth: number; count: number; groups: [string, string, string[]][] }[];
    }>(Q.relationships, { id, types: [...types], depth, cap });
    if (!row) return undefined;
    const person = ([pid, name, type, email]: Card): RelatedPrincipal => ({
      id: pid,
      name,
      type,
      email: email === '' ? null : email,
    });
    return {
      managers: row.managers.map((m) => ({ depth: m.depth, principal: person(m.principal) })),
      reports: row.reports.map(({ depth, count, principals, managers }) => ({
        depth,
        count,
        principals: principals.map((card, i) => ({ ...person(card), manager_id: managers[i]! })),
      })),
      groups: row.groups.map((g) => ({
        ...g,
        groups: g.groups.map(([gid, name, via]) => ({ id: gid, name, via: via.sort() })),
      })),
    };
  },

  /**
   * Principals by id under their write locks, with what their risk score reads (`RISK_READS`):
   * what the risk updaters need to score them again.
   */
  async lockRiskInputs(tx: Tx, ids: readonly string[]): Promise<(RiskInput & { id: string })[]> {
    const rows = await tx.run<{ r: unknown[] }>(Q.lock_risk_inputs, {
      ids: [...ids],
      attributes: [...RISK_READS.attributes],
      metadata: [...RISK_READS.metadata],
    });
    return rows.map(({ r }) => {
      const [id, type, status, lastLogin, ownerState, delegationState, privileges, attrs, meta] = r as [
        string,
        PrincipalType,
        PrincipalStatus,
        string | null,
        OwnerState | null,
        DelegationState | null,
        string | null,
        (AttributeValue | null)[],
        (string | null)[],
      ];
      const attributes: Attributes = {};
      RISK_READS.attributes.forEach((key, i) => {
        if (attrs[i] !== null && attrs[i] !== undefined) attributes[key] = attrs[i]!;
      });
      const metadata: Metadata = {};
      RISK_READS.metadata.forEach((key, i) => {
        if (typeof meta[i] === 'string') metadata[key] = meta[i]!;
      });
      return {
        id,
        type,
        status,
        last_login: lastLogin ?? null,
        owner_state: ownerState ?? null,
        delegation_state: delegationState ?? null,
        privilege_factors: typeof privileges === 'string' ? (JSON.parse(privileges) as RiskFactor[]) : [],
        attributes,
        metadata,
      };
    });
  },

  /** Writes privilege factors with the risk they make, where they changed; returns how many. */
  async setPrivileges(
    tx: Tx,
    rows: readonly { id: string; privileges: string; score: number; factors: string }[],
  ): Promise<number> {
    const row = await tx.first<{ updated: number }>(Q.set_privileges, { rows: [...rows] });
    return row?.updated ?? 0;
  },

  /**
   * Creates a batch of principals (one statement); answers those whose manager is not in the
   * graph yet, for a later pass.
   */
  async createMany(tx: Tx, params: ReturnType<typeof principalRows>): Promise<string[]> {
    const [result] = await tx.run<{ pending: string[] }>(Q.create_many, params);
    return result?.pending ?? [];
  },

  /** Deprovisions a batch of principals, each with the risk it now scores. */
  async deprovisionMany(
    tx: Tx,
    rows: readonly { id: string; score: number; factors: string }[],
    now: string,
  ): Promise<void> {
    await tx.run(Q.deprovision_many, { rows: [...rows], now });
  },

  /** Sets each principal's manager link (and the reference it waits on) as given. */
  async setManagers(tx: Tx, rows: readonly ManagerLink[], now: string): Promise<void> {
    await tx.run(Q.set_managers, { rows: [...rows], now });
  },

  /** Manager edges of a bulk load, once every manager exists. */
  async loadManagers(tx: Tx, rows: readonly { id: string; managerId: string }[]): Promise<void> {
    await tx.run(Q.load_managers, { rows: [...rows] });
  },

  async managerCheck(
    tx: Tx,
    id: string,
    managerId: string,
  ): Promise<{ exists: boolean; status: PrincipalStatus | null; cycle: boolean }> {
    const row = await tx.first<{ exists: boolean; status: PrincipalStatus | null; cycle: boolean | null }>(
      Q.manager_check,
      {
        id,
        managerId,
      },
    );
    return { exists: row?.exists ?? false, status: row?.status ?? null, cycle: row?.cycle ?? false };
  },

  /**
   * USER principals, `batch` at most, whose last login is before `dormantBefore` but whose stored
   * risk does not have the dormant factor yet.
   */
  async dormantCandidates(tx: Tx, dormantBefore: string, batch: number): Promise<Principal[]> {
    const rows = await tx.run<{ props: Record<string, unknown> }>(Q.dormant_candidates, {
      dormantBefore,
      batch,
    });
    return rows.map((r) => fromProperties(r.props));
  },

  /** Writes recomputed risk scores and factors; returns how many principals it updated. */
  async setRisk(tx: Tx, rows: readonly { id: string; score: number; factors: string }[]): Promise<number> {
    const row = await tx.first<{ updated: number }>(Q.set_risk, { rows: [...rows] });
    return row?.updated ?? 0;
  },

  /**
   * Of the principals named in `ids` and those whose owner is one of `refs` (principal ids and
   * emails), the living non-USER ones whose stored owner state is out of date, with the state
   * their owner is in now (`null`: the owner lives, or none is named).
   */
  async ownerStates(
    tx: Reader,
    ids: readonly string[],
    refs: readonly string[],
  ): Promise<{ id: string; state: OwnerState | null }[]> {
    return tx.run<{ id: string; state: OwnerState | null }>(Q.owner_states, {
      ids: [...ids],
      refs: [...refs],
    });
  },

  /** The ids of the next `limit` living non-USER principals after `after`, in id order. */
  async ownedPage(tx: Reader, after: string, limit: number): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.owned_page, { after, limit });
    return rows.map((r) => r.id);
  },

  /** Writes owner states with the risk they make, where they changed; returns how many. */
  async setOwnerState(
    tx: Tx,
    rows: readonly { id: string; state: OwnerState | null; score: number; factors: string }[],
  ): Promise<number> {
    const row = await tx.first<{ updated: number }>(Q.set_owner_state, { rows: [...rows] });
    return row?.updated ?? 0;
  },

  /**
   * Of the AI agents named in `ids`, those principals of `ids` delegate to, and the delegates of
   * the delegations named in `delegations`, the living ones whose stored delegation state is out of
   * date at `now`, with the state they are in (`null`: they hold no active delegation).
   */
  async delegationStates(
    tx: Reader,
    ids: readonly string[],
    delegations: readonly string[],
    now: string,
  ): Promise<{ id: string; state: DelegationState | null }[]> {
    return tx.run<{ id: string; state: DelegationState | null }>(Q.delegation_states, {
      ids: [...ids],
      delegations: [...delegations],
      now,
    });
  },

  /**
   * The ids of the next `limit` living AI agents after `after`, in id order, that hold or once held
   * a delegation.
   */
  async delegatingPage(tx: Reader, after: string, limit: number): Promise<string[]> {
    const rows = await tx.run<{ id: string }>(Q.delegating_page, { after, limit });
    return rows.map((r) => r.id);
  },

  /** Writes delegation states with the risk they make, where they changed; returns how many. */
  async setDelegationState(
    tx: Tx,
    rows: readonly { id: string; state: DelegationState | null; score: number; factors: string }[],
  ): Promise<number> {
    const row = await tx.first<{ updated: number }>(Q.set_delegation_state, { rows: [...rows] });
    return row?.updated ?? 0;
  },

  /** The total of a search and the requested page of it. */
  async search(tx: Reader, statement: SearchStatement): Promise<{ total: number; items: Principal[] }> {
    const row = await tx.first<{ total: number; rows: Record<string, unknown>[] }>(
      { name: statement.name, text: statement.text },
      statement.params,
    );
    return { total: row?.total ?? 0, items: (row?.rows ?? []).map(fromProperties) };
  },

  /** A search statement compiled for ids only (`Rows`): the total and the ids of the page. */
  async searchIds(tx: Reader, statement: SearchStatement): Promise<{ total: number; ids: string[] }> {
    const row = await tx.first<{ total: number; rows: string[] }>(
      { name: statement.name, text: statement.text },
      statement.params,
    );
    return { total: row?.total ?? 0, ids: row?.rows ?? [] };
  },

  /** Runs a search statement once, for Neo4j to plan it and keep the plan; the rows are not needed. */
  async planSearch(tx: Reader, statement: SearchStatement): Promise<void> {
    await tx.run({ name: statement.name, text: statement.text }, statement.params);
  },
};
