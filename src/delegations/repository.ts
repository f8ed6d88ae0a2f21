import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import { resourceOf } from '../policies/model.js';
import type { Delegation, DelegationStatus } from '../schemas/delegations.js';

const Q = defineQueries('delegations', [
  'lock',
  'cycle',
  'create',
  'get',
  'by_ids',
  'revoke',
  'expire_due',
  'page',
  'of_principal',
  'load',
]);

export type { Delegation };

/** The principals at both ends of a delegation, as the checks need them. */
export interface Party {
  id: string;
  type: string;
  status: string;
}

/** What a new delegation stores (beyond who delegates to whom). */
export interface NewDelegation {
  id: string;
  actions: string[];
  /** `type:identifier` texts, readable in Neo4j Browser; null: every resource. */
  resources: string[] | null;
  reason: string | null;
  created_by: string;
}

/** The edge's properties (with both principals' ids and statuses) → the delegation as the API shows it. */
export function delegationFromProperties(props: Record<string, unknown>, now = Date.now()): Delegation {
  const status = props['status'] as DelegationStatus;
  const expiresAt = props['expires_at'] as string;
  const delegatorStatus = props['delegator_status'] as string;
  const delegateStatus = props['delegate_status'] as string;
  const resources = props['resources'] as string[] | null | undefined;
  const out: Delegation = {
    id: props['id'] as string,
    delegator_id: props['delegator_id'] as string,
    delegate_id: props['delegate_id'] as string,
    actions: (props['actions'] as string[] | null) ?? ['*'],
    resources: resources ? resources.map(resourceOf) : null,
    expires_at: expiresAt,
    reason: (props['reason'] as string | null | undefined) ?? null,
    status,
    applies:
      status === 'active' &&
      Date.parse(expiresAt) > now &&
      delegatorStatus === 'active' &&
      delegateStatus === 'active',
    delegator_status: delegatorStatus,
    delegate_status: delegateStatus,
    created_at: props['created_at'] as string,
    created_by: props['created_by'] as string,
  };
  for (const key of ['revoked_at', 'revoked_by', 'expired_at'] as const) {
    const value = props[key];
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

const toDelegations = (rows: { props: Record<string, unknown> }[]): Delegation[] =>
  rows.map((r) => delegationFromProperties(r.props));

/** A delegation of a bulk load (benchmarks and imports), active between principals that exist. */
export interface LoadedDelegation {
  id: string;
  delegatorId: string;
  delegateId: string;
  actions: string[];
  /** `type:identifier` texts; null: every resource. */
  resources: string[] | null;
  expiresAt: string;
  createdAt: string;
}

export const delegationRepository = {
  /** Active delegations of a bulk load, a batch in one statement. */
  async load(tx: Tx, rows: readonly LoadedDelegation[], actor: string): Promise<void> {
    const params = rows.map((d) => ({
      delegatorId: d.delegatorId,
      delegateId: d.delegateId,
      expiresAt: d.expiresAt,
      createdAt: d.createdAt,
      props: { id: d.id, actions: d.actions, resources: d.resources, reason: null, created_by: actor },
    }));
    await tx.run(Q.load, { rows: params });
  },

  /** Both principals under their write lock; either is undefined when no principal has the id. */
  async lock(
    tx: Tx,
    delegatorId: string,
    delegateId: string,
  ): Promise<{ delegator: Party | undefined; delegate: Party | undefined }> {
    const row = await tx.first<{ delegator: Party | null; delegate: Party | null }>(Q.lock, {
      delegatorId,
      delegateId,
    });
    return { delegator: row?.delegator ?? undefined, delegate: row?.delegate ?? undefined };
  },

  /** Whether the delegate already acts, down active delegations, for the delegator. */
  async closesCycle(tx: Reader, delegatorId: string, delegateId: string, now: string): Promise<boolean> {
    const row = await tx.first<{ cycle: boolean }>(Q.cycle, { delegatorId, delegateId, now });
    return row?.cycle === true;
  },

  async create(
    tx: Tx,
    delegatorId: string,
    delegateId: string,
    expiresAt: string,
    props: NewDelegation,
    now: string,
  ): Promise<Delegation> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.create, {
      delegatorId,
      delegateId,
      expiresAt,
      now,
      props: { ...props, status: 'active' },
    });
    return delegationFromProperties(row!.props);
  },

  async get(tx: Reader, id: string): Promise<Delegation | undefined> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.get, { id });
    return row ? delegationFromProperties(row.props) : undefined;
  },

  async byIds(tx: Reader, ids: readonly string[]): Promise<Delegation[]> {
    return toDelegations(await tx.run<{ props: Record<string, unknown> }>(Q.by_ids, { ids: [...ids] }));
  },

  /** Revokes an active delegation; undefined when it is not active. */
  async revoke(tx: Tx, id: string, revokedBy: string, now: string): Promise<Delegation | undefined> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.revoke, { id, revokedBy, now });
    return row ? delegationFromProperties(row.props) : undefined;
  },

  /** Marks expired up to `limit` active delegations whose time is up, and answers them. */
  async expireDue(tx: Tx, now: string, limit: number): Promise<Delegation[]> {
    return toDelegations(await tx.run<{ props: Record<string, unknown> }>(Q.expire_due, { now, limit }));
  },

  async list(
    tx: Reader,
    filter: { delegatorId: string | null; delegateId: string | null; status: DelegationStatus | null },
    page: Page,
  ): Promise<{ total: number; delegations: Delegation[] }> {
    const row = await tx.first<{ total: number; delegations: Record<string, unknown>[] }>(Q.page, {
      ...filter,
      skip: page.skip,
      limit: page.limit,
    });
    return {
      total: row?.total ?? 0,
      delegations: (row?.delegations ?? []).map((props) => delegationFromProperties(props)),
    };
  },

  /** A principal's own delegations, given and received; undefined when it does not exist. */
  async ofPrincipal(
    tx: Reader,
    id: string,
  ): Promise<{ given: Delegation[]; received: Delegation[] } | undefined> {
    const row = await tx.first<{ given: Record<string, unknown>[]; received: Record<string, unknown>[] }>(
      Q.of_principal,
      { id },
    );
    if (!row) return undefined;
    return {
      given: row.given.map((props) => delegationFromProperties(props)),
      received: row.received.map((props) => delegationFromProperties(props)),
    };
  },
};
