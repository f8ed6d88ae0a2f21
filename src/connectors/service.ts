import type { OperationContext } from '../audit/audit.js';
import { generateSecret, sha256 } from '../auth/secrets.js';
import { defineQueries } from '../db/catalogue.js';
import type { Database } from '../db/database.js';
import { AppError, conflict, notFound } from '../errors/errors.js';
import type { ChangeEvent } from '../events/feed.js';
import type { EventSink } from '../events/sink.js';
import { newId } from '../ids.js';
import type { Page, Paged } from '../pagination.js';
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
]);

type StoredConnector = Omit<ConnectorView, 'scim_base_url' | 'deleted_at' | 'deleted_by'> & {
  deleted_at?: string | null;
  deleted_by?: string | null;
};

/** The connector a SCIM request comes from, as its bearer token decides. */
export interface ScimCaller {
  id: string;
  /** The `connector_source` of everything the connector provisions. */
  name: string;
}

const TOKEN_PREFIX = 'pas_scim_';

/** Tokens remembered at most (the memory is emptied beyond). */
const REMEMBERED_TOKENS = 10_000;

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
    private readonly db: Database,
    private readonly events: EventSink,
    private readonly scimBaseUrl: string,
  ) {}

  async create(
    input: { name: string; description?: string | undefined },
    op: OperationContext,
  ): Promise<ConnectorView & { token: string }> {
    const token = generateSecret(TOKEN_PREFIX);
    const id = newId('connector');
    try {
      const connector = await this.db.write('connectors/create', async (tx) => {
        const row = await tx.first<{ connector: StoredConnector }>(Q.create, {
          id,
          name: input.name,
          nameKey: input.name.toLowerCase(),
          description: input.description ?? null,
          tokenHash: sha256(token),
          createdBy: op.actor.id,
        });
        this.events.record(tx, op, {
          type: 'connector.created',
          target: { type: 'connector', id },
          changes: {
            name: { to: input.name },
            ...(input.description !== undefined ? { description: { to: input.description } } : {}),
          },
        });
        return this.view(row!.connector);
      });
      return { ...connector, token };
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT')
        throw conflict(`a connector named "${input.name}" already exists`);
      throw err;
    }
  }

  async get(id: string): Promise<ConnectorView> {
    const row = await this.db.first<{ connector: StoredConnector }>(Q.get, { id });
    if (!row) throw notFound('connector', id);
    return this.view(row.connector);
  }

  async list(statuses: ConnectorView['status'][], page: Page): Promise<Paged<ConnectorView>> {
    return this.db.read('connectors/list', async (tx) => {
      const [count] = await tx.run<{ total: number }>(Q.count, { statuses });
      const rows = await tx.run<{ connector: StoredConnector }>(Q.page, {
        statuses,
        skip: page.skip,
        limit: page.limit,
      });
      return { total: count?.total ?? 0, items: rows.map((r) => this.view(r.connector)), page };
    });
  }

  /** Stops the connector's SCIM access at once; what it provisioned stays. */
  async delete(id: string, op: OperationContext): Promise<DeletedConnectorView> {
    return this.db.write('connectors/delete', async (tx) => {
      const current = await tx.first<{ connector: { status: string } }>(Q.lock, { id });
      if (!current) throw notFound('connector', id);
      if (current.connector.status === 'deleted') throw conflict(`connector ${id} is already deleted`);
      const row = await tx.first<{ connector: DeletedConnectorView }>(Q.delete, {
        id,
        deletedBy: op.actor.id,
      });
      this.events.record(tx, op, {
        type: 'connector.deleted',
        target: { type: 'connector', id },
        changes: { status: { from: 'active', to: 'deleted' } },
      });
      return row!.connector;
    });
  }

  /** A new SCIM token; the previous one stops working when this returns. */
  async rotateToken(id: string, op: OperationContext): Promise<{ token: string }> {
    const token = generateSecret(TOKEN_PREFIX);
    return this.db.write('connectors/rotate_token', async (tx) => {
      const current = await tx.first<{ connector: { status: string } }>(Q.lock, { id });
      if (!current) throw notFound('connector', id);
      if (current.connector.status === 'deleted') throw conflict(`connector ${id} is deleted`);
      await tx.run(Q.rotate_token, { id, tokenHash: sha256(token) });
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
    const row = await this.db.first<{ connector: ScimCaller }>(Q.by_token, { tokenHash: hash });
    if (row && generation === this.generation) {
      if (this.known.size >= REMEMBERED_TOKENS) this.known.clear();
      this.known.set(hash, row.connector);
    }
    return row?.connector;
  }

  /** Follows the change feed: a connector created, rotated or deleted anywhere. */
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
