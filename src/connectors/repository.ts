import type { ScimCaller } from './model.js';
import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { ConnectorView, DeletedConnectorView } from '../schemas/connectors.js';
import type { ConnectorProfile } from '../vocabulary/connector-profiles.js';

const Q = defineQueries('connectors', [
  'create',
  'get',
  'count',
  'page',
  'lock',
  'update',
  'delete',
  'rotate_token',
  'by_token',
  'sync_chunk',
  'sync_create',
  'sync_get',
  'sync_chunk_read',
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
  profile: ConnectorProfile;
  tokenHash: string;
  createdBy: string;
}

/** What a connector's change may set: its SCIM dialect and its description. */
export interface ConnectorChange {
  profile: ConnectorProfile;
  description: string | null;
}

/** A connector as its write lock reads it, for a change that follows. */
export type LockedConnector = Pick<StoredConnector, 'id' | 'name' | 'status' | 'description' | 'profile'>;

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
      profile: c.profile,
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
  async lock(tx: Tx, id: string): Promise<LockedConnector | undefined> {
    const row = await tx.first<{ connector: LockedConnector }>(Q.lock, { id });
    return row?.connector;
  },

  async update(tx: Tx, id: string, change: ConnectorChange): Promise<StoredConnector> {
    const row = await tx.first<{ connector: StoredConnector }>(Q.update, {
      id,
      profile: change.profile,
      description: change.description,
    });
    return row!.connector;
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

  /** The piece of a sync's snapshot at `seq` (0 first); undefined past the last. */
  async syncChunk(tx: Reader, syncId: string, seq: number): Promise<string | undefined> {
    const row = await tx.first<{ text: string }>(Q.sync_chunk_read, { syncId, seq });
    return row?.text;
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
