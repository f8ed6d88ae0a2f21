import type { ScimCaller } from './model.js';
import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { ConnectorView, DeletedConnectorView } from '../schemas/connectors.js';

const Q = defineQueries('connectors', [
  'create',
  'get',
  'count',
  'page',
  'lock',
  'delete',
  'rotate_token',
  'by_token',
  'sync_chunk',
  'sync_create',
  'sync_get',
  'sync_chunks',
  'sync_finish',
  'sync_discard',
]);

export type StoredConnector = Omit<ConnectorView, 'scim_base_url' | 'deleted_at' | 'deleted_by'> & {
  deleted_at?: string | null;
  deleted_by?: string | null;
};

export interface NewConnector {
  id: string;
  name: string;
  description: string | null;
  tokenHash: string;
  createdBy: string;
}

export interface StoredSync {
  id: string;
  connector_id: string;
  connector_name: string;
  bytes: number;
  requested_at: string;
  requested_by: string;
  request_id: string | null;
  source_ip: string | null;
  user_agent: string | null;
  completed_at?: string | null;
}

export interface NewSync {
  id: string;
  connectorId: string;
  bytes: number;
  requestedBy: string;
  requestId: string | null;
  sourceIp: string | null;
  userAgent: string | null;
}

/** Named queries over connector nodes and their syncs (with the pieces of their snapshots). */
export const connectorRepository = {
  async create(tx: Tx, c: NewConnector): Promise<StoredConnector> {
    const row = await tx.first<{ connector: StoredConnector }>(Q.create, {
      id: c.id,
      name: c.name,
      nameKey: c.name.toLowerCase(),
      description: c.description,
      tokenHash: c.tokenHash,
      createdBy: c.createdBy,
    });
    return row!.connector;
  },

  async get(tx: Reader, id: string): Promise<StoredConnector | undefined> {
    const row = await tx.first<{ connector: StoredConnector }>(Q.get, { id });
    return row?.connector;
  },

  async count(tx: Reader, statuses: ConnectorView['status'][]): Promise<number> {
    const [count] = await tx.run<{ total: number }>(Q.count, { statuses });
    return count?.total ?? 0;
  },

  async page(tx: Reader, statuses: ConnectorView['status'][], page: Page): Promise<StoredConnector[]> {
    const rows = await tx.run<{ connector: StoredConnector }>(Q.page, {
      statuses,
      skip: page.skip,
      limit: page.limit,
    });
    return rows.map((r) => r.connector);
  },

  /** The connector under its write lock, for a change that follows. */
  async lock(tx: Tx, id: string): Promise<Pick<StoredConnector, 'id' | 'name' | 'status'> | undefined> {
    const row = await tx.first<{ connector: Pick<StoredConnector, 'id' | 'name' | 'status'> }>(Q.lock, {
      id,
    });
    return row?.connector;
  },

  /** Soft delete: the node stays; its token and name are given up. */
  async delete(tx: Tx, id: string, deletedBy: string): Promise<DeletedConnectorView> {
    const row = await tx.first<{ connector: DeletedConnectorView }>(Q.delete, { id, deletedBy });
    return row!.connector;
  },

  async rotateToken(tx: Tx, id: string, tokenHash: string): Promise<void> {
    await tx.run(Q.rotate_token, { id, tokenHash });
  },

  /** The active connector holding the token with this digest, if any. */
  async byToken(tx: Reader, tokenHash: string): Promise<ScimCaller | undefined> {
    const row = await tx.first<{ connector: ScimCaller }>(Q.by_token, { tokenHash });
    return row?.connector;
  },

  /** One piece of a submitted snapshot; the sync that reads it is created once every piece is in. */
  async addSyncChunk(tx: Tx, syncId: string, seq: number, text: string): Promise<void> {
    await tx.run(Q.sync_chunk, { syncId, seq, text });
  },

  /** The sync of an active connector; undefined when the connector is not (or no longer) active. */
  async createSync(tx: Tx, s: NewSync): Promise<StoredSync | undefined> {
    const row = await tx.first<{ sync: StoredSync }>(Q.sync_create, {
      id: s.id,
      connectorId: s.connectorId,
      bytes: s.bytes,
      requestedBy: s.requestedBy,
      requestId: s.requestId,
      sourceIp: s.sourceIp,
      userAgent: s.userAgent,
    });
    return row?.sync;
  },

  /** A sync, of the given connector only unless `connectorId` is null. */
  async getSync(tx: Reader, id: string, connectorId: string | null): Promise<StoredSync | undefined> {
    const row = await tx.first<{ sync: StoredSync }>(Q.sync_get, { id, connectorId });
    return row?.sync;
  },

  /** The pieces of a sync's snapshot, in order. */
  async syncChunks(tx: Reader, syncId: string): Promise<string[]> {
    const rows = await tx.run<{ text: string }>(Q.sync_chunks, { syncId });
    return rows.map((r) => r.text);
  },

  /** Marks the sync completed and lets its snapshot's pieces go. */
  async finishSync(tx: Tx, syncId: string): Promise<void> {
    await tx.run(Q.sync_finish, { syncId });
  },

  /** Lets the pieces of a sync's snapshot go. */
  async discardSync(tx: Tx, syncId: string): Promise<void> {
    await tx.run(Q.sync_discard, { syncId });
  },
};
