import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import { ATTR_PREFIX, prefixed } from '../principals/model.js';
import type { Attributes, AttributeValue } from '../schemas/principals.js';
import type { Resource } from '../schemas/resources.js';

const Q = defineQueries('resources', ['lock', 'register', 'unregister', 'get', 'page', 'load']);

export type { Resource };

/** Node properties → the resource as the API shows it (attributes from `attr.<key>`). */
export function resourceFromProperties(props: Record<string, unknown>): Resource {
  const attributes: Attributes = {};
  for (const key of Object.keys(props).sort()) {
    if (key.startsWith(ATTR_PREFIX)) attributes[key.slice(ATTR_PREFIX.length)] = props[key] as AttributeValue;
  }
  return {
    type: props['type'] as string,
    identifier: props['identifier'] as string,
    attributes,
    owner_id: typeof props['owner_id'] === 'string' ? props['owner_id'] : null,
    registered: props['registered'] === true,
    created_at: props['created_at'] as string,
    updated_at: props['updated_at'] as string,
  };
}

/** A resource of a bulk load (benchmarks and imports), registered with its attributes and owner. */
export interface LoadedResource {
  type: string;
  identifier: string;
  attributes: Attributes;
  ownerId?: string | null;
  createdAt: string;
}

export const resourceRepository = {
  /** Registered resources of a bulk load, a batch in one statement. */
  async load(tx: Tx, rows: readonly LoadedResource[]): Promise<void> {
    const params = rows.map((r) => ({
      props: {
        ...prefixed(ATTR_PREFIX, r.attributes),
        type: r.type,
        identifier: r.identifier,
        owner_id: r.ownerId ?? null,
      },
      createdAt: r.createdAt,
    }));
    await tx.run(Q.load, { rows: params });
  },

  /** The resource under its write lock (created unregistered when new). */
  async lock(
    tx: Tx,
    type: string,
    identifier: string,
    now: string,
  ): Promise<{ resource: Resource; created: boolean }> {
    const row = await tx.first<{ props: Record<string, unknown>; created: boolean }>(Q.lock, {
      type,
      identifier,
      now,
    });
    return { resource: resourceFromProperties(row!.props), created: row!.created };
  },

  async register(
    tx: Tx,
    ref: { type: string; identifier: string },
    attributes: Attributes,
    ownerId: string | null,
    now: string,
  ): Promise<Resource> {
    const props: Record<string, unknown> = { type: ref.type, identifier: ref.identifier, owner_id: ownerId };
    for (const [key, value] of Object.entries(attributes)) props[`${ATTR_PREFIX}${key}`] = value;
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.register, {
      ...ref,
      props,
      ownerId,
      now,
    });
    return resourceFromProperties(row!.props);
  },

  /** Takes the registration back; `named` counts the policies that keep the resource in being. */
  async unregister(
    tx: Tx,
    type: string,
    identifier: string,
    now: string,
  ): Promise<{ named: number } | undefined> {
    return tx.first<{ named: number }>(Q.unregister, { type, identifier, now });
  },

  async get(tx: Reader, type: string, identifier: string): Promise<Resource | undefined> {
    const row = await tx.first<{ props: Record<string, unknown> }>(Q.get, { type, identifier });
    return row ? resourceFromProperties(row.props) : undefined;
  },

  async list(
    tx: Reader,
    filter: { type: string | null; registered: boolean | null },
    page: Page,
  ): Promise<{ total: number; resources: Resource[] }> {
    const row = await tx.first<{ total: number; resources: Record<string, unknown>[] }>(Q.page, {
      ...filter,
      skip: page.skip,
      limit: page.limit,
    });
    return { total: row?.total ?? 0, resources: (row?.resources ?? []).map(resourceFromProperties) };
  },
};
