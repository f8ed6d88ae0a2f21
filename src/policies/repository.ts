import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import { fromProperties, nodeProperties, type Policy, type PolicyBody } from './model.js';

const Q = defineQueries('policies', [
  'create',
  'get',
  'lock',
  'update',
  'relink',
  'delete',
  'page',
  'versions',
  'expired_due',
  'expire',
  'opened_due',
  'open',
  'load',
]);

export interface PolicyVersionRow {
  policy_id: string;
  version: number;
  policy: Record<string, unknown>;
  status: string;
  created_at: string;
  created_by: string;
}

/** A policy of a bulk load (benchmarks and imports): a body checked as the API checks it. */
export interface LoadedPolicy {
  id: string;
  body: PolicyBody;
  createdAt: string;
}

export const policyRepository = {
  /**
   * Policies of a bulk load at their first version, with their subject and resource edges.
   * Batches naming the same new resource must not run concurrently (each would create it).
   */
  async load(tx: Tx, rows: readonly LoadedPolicy[], actor: string): Promise<void> {
    const params = rows.map((p) => {
      const { props, exact, window } = nodeProperties(p.body);
      return { id: p.id, props, exact, window, body: JSON.stringify(p.body), createdAt: p.createdAt };
    });
    await tx.run(Q.load, { rows: params, actor });
  },

  async create(tx: Tx, id: string, body: PolicyBody, actor: string, now: string): Promise<Policy> {
    const { props, exact, window } = nodeProperties(body);
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.create, {
      id,
      props,
      window,
      body: JSON.stringify(body),
      actor,
      now,
    });
    await tx.run(Q.relink, { id, exact, link: true, now });
    return fromProperties(row!.props);
  },

  async get(tx: Reader, id: string): Promise<Policy | undefined> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.get, { id });
    return row ? fromProperties(row.props) : undefined;
  },

  async lock(tx: Tx, id: string): Promise<Policy | undefined> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.lock, { id });
    return row ? fromProperties(row.props) : undefined;
  },

  async replace(tx: Tx, id: string, body: PolicyBody, actor: string, now: string): Promise<Policy> {
    const { props, exact, window } = nodeProperties(body);
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.update, {
      id,
      props,
      window,
      body: JSON.stringify(body),
      actor,
      now,
    });
    await tx.run(Q.relink, { id, exact, link: true, now });
    return fromProperties(row!.props);
  },

  async delete(tx: Tx, id: string, body: PolicyBody, actor: string, now: string): Promise<Policy> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.delete, {
      id,
      body: JSON.stringify(body),
      actor,
      now,
    });
    await tx.run(Q.relink, { id, exact: [], link: false, now });
    return fromProperties(row!.props);
  },

  async list(
    tx: Reader,
    filter: { statuses: readonly string[]; effect: string | null },
    page: Page,
  ): Promise<{ total: number; policies: Policy[] }> {
    const row = await tx.first<{ total: number; policies: Record<string, unknown>[] }>(Q.page, {
      statuses: [...filter.statuses],
      effect: filter.effect,
      skip: page.skip,
      limit: page.limit,
    });
    return { total: row?.total ?? 0, policies: (row?.policies ?? []).map(fromProperties) };
  },

  /**
   * Marks recorded the close of the windows that closed by `now` and were not recorded yet, at
   * most `limit`; answers the policies it marked, with when their windows closed.
   */
  async expire(tx: Tx, now: string, limit: number): Promise<{ id: string; valid_until: string }[]> {
    const due = await tx.first<{ ids: string[] }>(Q.expired_due, { now, limit });
    if (!due || due.ids.length === 0) return [];
    return tx.run<{ id: string; valid_until: string }>(Q.expire, { ids: due.ids, now });
  },

  /**
   * Marks recorded the opening of the windows that opened by `now` and were not recorded yet, at
   * most `limit`; answers the policies it marked, with when their windows opened.
   */
  async open(tx: Tx, now: string, limit: number): Promise<{ id: string; valid_from: string }[]> {
    const due = await tx.first<{ ids: string[] }>(Q.opened_due, { now, limit });
    if (!due || due.ids.length === 0) return [];
    return tx.run<{ id: string; valid_from: string }>(Q.open, { ids: due.ids, now });
  },

  async versions(
    tx: Reader,
    id: string,
    page: Page,
  ): Promise<{ total: number; versions: PolicyVersionRow[] } | undefined> {
    const row = await tx.first<{ total: number; versions: Record<string, unknown>[] }>(Q.versions, {
      id,
      skip: page.skip,
      limit: page.limit,
    });
    if (!row) return undefined;
    return {
      total: row.total,
      versions: row.versions.map((v) => ({
        policy_id: v['policy_id'] as string,
        version: v['version'] as number,
        policy: JSON.parse(v['body'] as string) as Record<string, unknown>,
        status: v['status'] as string,
        created_at: v['created_at'] as string,
        created_by: v['created_by'] as string,
      })),
    };
  },
};
