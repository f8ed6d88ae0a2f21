import type { AttributeValue, Attributes, Metadata, Principal, RiskFactor } from '../schemas/principals.js';
import type { PrincipalStatus, PrincipalType } from '../vocabulary/principals.js';

export type { AttributeValue, Attributes, Metadata, Principal, RiskFactor };

/** Where the owner of a non-USER principal stands, when it does not live. */
export type OwnerState = NonNullable<Principal['owner_state']>;

/** Where the delegations an AI agent holds stand, when it holds any. */
export type DelegationState = NonNullable<Principal['delegation_state']>;

/** What a principal's risk is scored from. */
export type RiskInput = Pick<Principal, 'type' | 'status' | 'attributes' | 'metadata' | 'last_login'> & {
  /** Factors from what the principal can access (src/risk/privileges.ts). */
  privilege_factors?: readonly RiskFactor[];
  /** Where its owner stands when it does not live (src/risk/ownership.ts). */
  owner_state?: Principal['owner_state'] | undefined;
  /** Where the delegations it holds stand (src/risk/delegations.ts). */
  delegation_state?: Principal['delegation_state'] | undefined;
};

/**
 * The attributes and metadata keys the risk score reads (src/risk/score.ts): what the risk
 * updaters read of a principal, and nothing more (`lockRiskInputs`).
 */
export const RISK_READS = { attributes: ['allowed_tools', 'capabilities'], metadata: ['owner'] } as const;

/**
 * Scores a principal's risk: src/risk/score.ts's `assessRisk`, which the runtime hands to the
 * services that write principals (the risk folder reads principals, so principals do not import it).
 */
export type RiskRule = (p: RiskInput, now?: number) => { score: number; factors: RiskFactor[] };

/**
 * Each principal also carries its status as a label: filtering on a label reads the node record
 * alone, where a property read walks the node's property chain (about three times dearer in
 * searches over thousands of principals), and `MATCH (p:Suspended)` reads well in the Browser.
 */
export const STATUS_LABEL: Record<PrincipalStatus, string> = {
  active: 'Active',
  suspended: 'Suspended',
  deprovisioned: 'Deprovisioned',
  deleted: 'Deleted',
};

/** The second label each principal carries, so the graph reads well in Neo4j Browser. */
export const TYPE_LABEL: Record<PrincipalType, string> = {
  USER: 'User',
  SERVICE_ACCOUNT: 'ServiceAccount',
  API_KEY: 'ApiKey',
  AI_AGENT: 'AiAgent',
};

/** Attribute and metadata keys live on the node as `attr.<key>` and `meta.<key>` properties. */
export const ATTR_PREFIX = 'attr.';
export const META_PREFIX = 'meta.';

/**
 * The manager link is kept as a REPORTS_TO edge, not as an attribute value node, so it is
 * left out of the attribute vocabulary.
 */
export const MANAGER_KEY = 'manager_id';

/**
 * The attribute and metadata keys an identity connector maps from SCIM (docs/api.md §7) on the USER
 * principals it provisions: the connector owns them, and `/v1` cannot change them.
 */
export const CONNECTOR_ATTRIBUTES = ['role', 'department', MANAGER_KEY] as const;
export const CONNECTOR_METADATA = ['employee_number', 'cost_center'] as const;

/**
 * Every principal that is not deleted carries a `card` property, [id, name, type, email or '']
 * (Neo4j lists hold no nulls): what principals/relationships returns for each related principal,
 * in one property read instead of four. Whatever writes a principal's name or email recomputes
 * the card in the same statement from the node's own properties (principals/create,
 * principals/update, principals/create_many); deleting a principal
 * removes it; migration 005 gave one to principals written before.
 */
export type Card = [id: string, name: string, type: string, email: string];

/** A principal as it appears among relationships and group members. */
export function summary(p: { id: string; name: string; type: PrincipalType; email?: string | null }) {
  return { id: p.id, name: p.name, type: p.type, email: p.email ?? null };
}

/** A group as it appears among a principal's relationships or a group's members. */
export function groupSummary(g: { id: string; name: string }) {
  return { id: g.id, name: g.name, type: 'GROUP' as const };
}

/** Node properties → principal record. */
export function fromProperties(props: Record<string, unknown>): Principal {
  const attributes: Attributes = {};
  const metadata: Metadata = {};
  for (const [key, value] of Object.entries(props)) {
    if (key.startsWith(ATTR_PREFIX)) attributes[key.slice(ATTR_PREFIX.length)] = value as AttributeValue;
    else if (key.startsWith(META_PREFIX)) metadata[key.slice(META_PREFIX.length)] = value as string;
  }
  const text = (k: string): string | null => {
    const value = props[k];
    return typeof value === 'string' ? value : null;
  };
  return {
    id: props['id'] as string,
    type: props['type'] as PrincipalType,
    name: props['name'] as string,
    description: text('description'),
    email: text('email'),
    attributes: sortKeys(attributes),
    metadata: sortKeys(metadata),
    connector_source: text('connector_source'),
    connector_id: text('connector_id'),
    status: props['status'] as PrincipalStatus,
    created_at: props['created_at'] as string,
    created_by: props['created_by'] as string,
    updated_at: props['updated_at'] as string,
    last_login: text('last_login'),
    deleted_at: text('deleted_at'),
    deleted_by: text('deleted_by'),
    risk_score: (props['risk_score'] as number | undefined) ?? 0,
    risk_factors:
      typeof props['risk_factors'] === 'string' ? (JSON.parse(props['risk_factors']) as RiskFactor[]) : [],
    version: (props['version'] as number | undefined) ?? 1,
    privilege_factors:
      typeof props['privilege_factors'] === 'string'
        ? (JSON.parse(props['privilege_factors']) as RiskFactor[])
        : [],
    owner_state: (props['owner_state'] as OwnerState | undefined) ?? null,
    delegation_state: (props['delegation_state'] as DelegationState | undefined) ?? null,
  };
}

function sortKeys<T>(map: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The optional text properties of a new principal node that have a value. */
export function optionalProperties(p: {
  description?: string | null | undefined;
  email?: string | null | undefined;
  connectorSource?: string | null | undefined;
  connectorId?: string | null | undefined;
}): Record<string, string> {
  const candidates = {
    description: p.description,
    email: p.email,
    connector_source: p.connectorSource,
    connector_id: p.connectorId,
  };
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(candidates)) if (typeof value === 'string') out[key] = value;
  return out;
}

/** Property writes for a set of attribute/metadata changes; `null` removes the property. */
export function prefixed<T>(prefix: string, map: Record<string, T | null>): Record<string, T | null> {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [`${prefix}${k}`, v]));
}

export interface AttributeEntry {
  key: string;
  value: string;
  /**
   * `true` on a link to an element of an array attribute; `null` (no property stored, so a
   * scalar link costs no property record) on a link to a string value.
   */
  array: true | null;
}

/** The attribute value nodes a set of attributes links to (one per array element). */
export function attributeEntries(attributes: Record<string, AttributeValue | null>): AttributeEntry[] {
  const entries: AttributeEntry[] = [];
  for (const [key, value] of Object.entries(attributes)) {
    if (key === MANAGER_KEY || value === null) continue;
    if (Array.isArray(value)) {
      for (const element of new Set(value)) entries.push({ key, value: element, array: true });
    } else {
      entries.push({ key, value, array: null });
    }
  }
  return entries;
}

/**
 * A principal written in a batch (a provisioning sync, a bulk load): ready node content, no
 * per-row checks. The batch write scores its risk.
 */
export interface PrincipalRow {
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
  /** Further node properties a provisioning source keeps (SCIM: user_name, scim, manager_ref). */
  extra?: Record<string, unknown>;
}

/** A principal's manager link as a provisioning source has it. */
export interface ManagerLink {
  id: string;
  /** The manager it reports to, or none. */
  managerId: string | null;
  /** The manager reference it waits on when its manager is not among the source's principals. */
  ref: string | null;
}
