import type { Changes, OperationContext } from '../audit/audit.js';
import { generateSecret, sha256 } from '../auth/secrets.js';
import type { Transactions } from '../db/database.js';
import { AppError, conflict, notFound } from '../errors/errors.js';
import type { ChangeEvent } from '../events/feed.js';
import type { EventRecorder } from '../events/sink.js';
import { newId } from '../ids.js';
import type { Page, Paged } from '../pagination.js';
import type { ConnectorView, DeletedConnectorView, UpdateConnectorInput } from '../schemas/connectors.js';
import { DEFAULT_CONNECTOR_PROFILE, type ConnectorProfile } from '../vocabulary/connector-profiles.js';
import { connectorRepository, type StoredConnector } from './repository.js';
import type { ScimCaller } from './model.js';

const TOKEN_PREFIX = 'pas_scim_';

/** Tokens remembered at most (the memory is emptied beyond). */
const REMEMBERED_TOKENS = 10_000;

/**
 * The connector queries the service runs (the snapshot sync's are its own): unit tests give it
 * an in-memory stand-in.
 */
export type ConnectorRepository = Pick<
  typeof connectorRepository,
  'create' | 'get' | 'count' | 'page' | 'lock' | 'update' | 'delete' | 'rotateToken' | 'byToken'
>;

/** What a snapshot sync stores with its connector: src/scim/sync-service.ts takes it. */
export type ConnectorSyncStore = Pick<
  typeof connectorRepository,
  'get' | 'createSync' | 'addSyncChunk' | 'discardSync' | 'getSync' | 'syncChunk' | 'finishSync'
>;
export const connectorSyncStore: ConnectorSyncStore = connectorRepository;

/**
 * Identity connectors: each provisions USER principals and groups through SCIM with its own
 * bearer token, kept only as a SHA-256 digest (the token is 32 random bytes, so a fast digest is
 * enough). The token decides the connector on every SCIM request. A token found once is
 * remembered, and forgotten on any connector change the change feed reports: at once on the
 * instance that rotates or deletes, within the feed's delay (a second) on the others.
 */
export class ConnectorService {
  private readonly known = new Map<string, ScimCaller>();
  /** Counts connector changes, so that a lookup that raced one is not remembered. */
  private generation = 0;

  constructor(
    private readonly db: Transactions,
    private readonly events: EventRecorder,
    private readonly scimBaseUrl: string,
    private readonly repo: ConnectorRepository = connectorRepository,
  ) {}

  async create(
    input: { name: string; description?: string | undefined; profile?: ConnectorProfile | undefined },
    op: OperationContext,
  ): Promise<ConnectorView & { token: string }> {
    const token = generateSecret(TOKEN_PREFIX);
    const id = newId('connector');
    const profile = input.profile ?? DEFAULT_CONNECTOR_PROFILE;
    try {
      const connector = await this.db.write('connectors/create', async (tx) => {
        const created = await this.repo.create(tx, {
          id,
          name: input.name,
          description: input.description ?? null,
          profile,
          tokenHash: sha256(token),
          createdBy: op.actor.id,
        });
        this.events.record(tx, op, {
          type: 'connector.created',
          target: { type: 'connector', id },
          changes: {
            name: { to: input.name },
            ...(input.description !== undefined ? { description: { to: input.description } } : {}),
            profile: { to: profile },
          },
        });
        return this.view(created);
      });
      return { ...connector, token };
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT')
        throw conflict(`a connector named "${input.name}" already exists`);
      throw err;
    }
  }

  async get(id: string): Promise<ConnectorView> {
    const connector = await this.repo.get(this.db, id);
    if (!connector) throw notFound('connector', id);
    return this.view(connector);
  }

  async list(statuses: ConnectorView['status'][], page: Page): Promise<Paged<ConnectorView>> {
    return this.db.read('connectors/list', async (tx) => {
      const total = await this.repo.count(tx, statuses);
      const connectors = await this.repo.page(tx, statuses, page);
      return { total, items: connectors.map((c) => this.view(c)), page };
    });
  }

  /**
   * Changes the connector's profile or description. A new profile applies to its next SCIM
   * request on this instance, and within the change feed's delay on the others.
   */
  async update(id: string, patch: UpdateConnectorInput, op: OperationContext): Promise<ConnectorView> {
    return this.db.write('connectors/update', async (tx) => {
      const current = await this.repo.lock(tx, id);
      if (!current) throw notFound('connector', id);
      if (current.status === 'deleted') throw conflict(`connector ${id} is deleted`);
      const before = { profile: current.profile, description: current.description ?? null };
      const after = {
        profile: patch.profile ?? before.profile,
        description: patch.description === undefined ? before.description : patch.description,
      };
      const changes: Changes = {};
      for (const key of ['profile', 'description'] as const) {
        if (before[key] !== after[key]) changes[key] = { from: before[key], to: after[key] };
      }
      const updated = await this.repo.update(tx, id, after);
      if (Object.keys(changes).length > 0)
        this.events.record(tx, op, {
          type: 'connector.updated',
          target: { type: 'connector', id },
          changes,
        });
      return this.view(updated);
    });
  }

  /** Stops the connector's SCIM access at once; what it provisioned stays. */
  async delete(id: string, op: OperationContext): Promise<DeletedConnectorView> {
    return this.db.write('connectors/delete', async (tx) => {
      const current = await this.repo.lock(tx, id);
      if (!current) throw notFound('connector', id);
      if (current.status === 'deleted') throw conflict(`connector ${id} is already deleted`);
      const deleted = await this.repo.delete(tx, id, op.actor.id);
      this.events.record(tx, op, {
        type: 'connector.deleted',
        target: { type: 'connector', id },
        changes: { status: { from: 'active', to: 'deleted' } },
      });
      return deleted;
    });
  }

  /** A new SCIM token; the previous one stops working when this returns. */
  async rotateToken(id: string, op: OperationContext): Promise<{ token: string }> {
    const token = generateSecret(TOKEN_PREFIX);
    return this.db.write('connectors/rotate_token', async (tx) => {
      const current = await this.repo.lock(tx, id);
      if (!current) throw notFound('connector', id);
      if (current.status === 'deleted') throw conflict(`connector ${id} is deleted`);
      await this.repo.rotateToken(tx, id, sha256(token));
      this.events.record(tx, op, { type: 'connector.token_rotated', target: { type: 'connector', id } });
      return { token };
    });
  }

  /** The active connector holding this SCIM token, if any. */
  async authenticate(token: string): Promise<ScimCaller | undefined> {
    if (!token.startsWith(TOKEN_PREFIX)) return undefined;
    const hash = sha256(token);
    const known = this.known.get(hash);
    if (known) return known;
    const generation = this.generation;
    const caller = await this.repo.byToken(this.db, hash);
    if (caller && generation === this.generation) {
      if (this.known.size >= REMEMBERED_TOKENS) this.known.clear();
      this.known.set(hash, caller);
    }
    return caller;
  }

  /** Follows the change feed: a connector created, changed, rotated or deleted anywhere. */
  readonly onChange = (event: ChangeEvent): void => {
    if (!event.type.startsWith('connector.')) return;
    this.generation += 1;
    this.known.clear();
  };

  private view(row: StoredConnector): ConnectorView {
    const { deleted_at, deleted_by, ...rest } = row;
    return {
      ...rest,
      scim_base_url: this.scimBaseUrl,
      ...(deleted_at ? { deleted_at } : {}),
      ...(deleted_by ? { deleted_by } : {}),
    };
  }
}
