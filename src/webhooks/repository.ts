import type { StoredEvent } from '../audit/audit.js';
import { defineQueries } from '../db/catalogue.js';
import type { Reader, Tx } from '../db/database.js';
import type { Page } from '../pagination.js';
import type { DeliveryView, WebhookView } from '../schemas/webhooks.js';
import type { AttemptRecord, SealedSecrets } from './messages.js';

const Q = defineQueries('webhooks', [
  'create',
  'get',
  'count',
  'page',
  'lock',
  'update',
  'delete',
  'rotate_secret',
  'secrets',
  'deliveries_count',
  'deliveries_page',
  'record_test',
  'dispatch_claim',
  'dispatch_due',
  'dispatch_record',
  'dispatch_release',
  'disable',
  'purge',
]);

/** A webhook node as the queries return it. */
export type StoredWebhook = Omit<WebhookView, 'description' | 'last_delivery_at'> & {
  description?: string | null;
  last_delivery_at?: string | null;
  failing_since?: string | null;
  disabled_at?: string | null;
  disabled_reason?: string | null;
  secret_rotated_at?: string | null;
  updated_at?: string;
};

export interface NewWebhook {
  id: string;
  url: string;
  events: readonly string[];
  description: string | null;
  secretSealed: string;
  createdBy: string;
}

/** The fields a client may change, as they are after the change. */
export interface WebhookFields {
  url: string;
  events: readonly string[];
  description: string | null;
  status: WebhookView['status'];
}

/** A webhook with what signing a delivery to it takes. */
export interface WebhookSecrets extends SealedSecrets {
  url: string;
}

/** A webhook a dispatcher has claimed, with what delivering to it takes. */
export type ClaimedWebhook = WebhookSecrets;

/** An outbox entry due for delivery, with the event it carries (null once the event is gone). */
export interface DueEntry {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  event: StoredEvent | null;
  /**
   * For a message that is no audit event (`access.changed`): when it happened, and its data
   * (JSON) where it was stored with it (else the dispatcher's `messages` reads it).
   */
  message: { occurred_at: string; body: string | null } | null;
}

/** One attempt of a round, with the outbox entry it was for. */
export interface Attempt {
  message_id: string;
  delivery: AttemptRecord;
}

export interface DeliveryFilter {
  eventId: string | null;
  success: boolean | null;
}

/** What a dispatcher records of one round to a webhook (see dispatch_record.cypher). */
export interface RoundRecord {
  webhookId: string;
  attempts: readonly Attempt[];
  lastAttemptAt: string;
  failedAt: string | null;
  anySuccess: boolean;
  retryAt: string | null;
  owner: string;
  leaseUntil: string;
}

/**
 * Named queries over webhook nodes, their outbox entries and their delivery log; always inside
 * the caller's transaction (or, for single reads, on the database itself).
 */
export const webhookRepository = {
  async create(tx: Tx, w: NewWebhook): Promise<StoredWebhook> {
    const row = await tx.first<{ webhook: StoredWebhook }>(Q.create, {
      id: w.id,
      url: w.url,
      events: w.events,
      description: w.description,
      secretSealed: w.secretSealed,
      createdBy: w.createdBy,
    });
    return row!.webhook;
  },

  async get(tx: Reader, id: string): Promise<StoredWebhook | undefined> {
    const row = await tx.first<{ webhook: StoredWebhook }>(Q.get, { id });
    return row?.webhook;
  },

  async count(tx: Reader, status: WebhookView['status'] | null): Promise<number> {
    const row = await tx.first<{ total: number }>(Q.count, { status });
    return row?.total ?? 0;
  },

  /** A page of webhooks, newest first. */
  async page(tx: Reader, status: WebhookView['status'] | null, page: Page): Promise<StoredWebhook[]> {
    const rows = await tx.run<{ webhook: StoredWebhook }>(Q.page, {
      status,
      skip: page.skip,
      limit: page.limit,
    });
    return rows.map((r) => r.webhook);
  },

  /** Reads the webhook and holds its write lock until the transaction ends. */
  async lock(tx: Tx, id: string): Promise<StoredWebhook | undefined> {
    const row = await tx.first<{ webhook: StoredWebhook }>(Q.lock, { id });
    return row?.webhook;
  },

  /**
   * Sets the fields a client may change; `reason` says why when the webhook becomes disabled.
   * Enabling a webhook starts it afresh (see update.cypher).
   */
  async update(tx: Tx, id: string, fields: WebhookFields, reason: string | null): Promise<StoredWebhook> {
    const row = await tx.first<{ webhook: StoredWebhook }>(Q.update, { id, ...fields, reason });
    return row!.webhook;
  },

  /** Removes the webhook and what is still queued for it; its delivery log stays until it ages out. */
  async delete(tx: Tx, id: string): Promise<void> {
    await tx.run(Q.delete, { id });
  },

  /** The new secret signs from now on; the previous one keeps signing until `overlapUntil`. */
  async rotateSecret(tx: Tx, id: string, secretSealed: string, overlapUntil: string): Promise<void> {
    await tx.run(Q.rotate_secret, { id, secretSealed, overlapUntil });
  },

  async secrets(tx: Reader, id: string): Promise<WebhookSecrets | undefined> {
    const row = await tx.first<{ webhook: WebhookSecrets }>(Q.secrets, { id });
    return row?.webhook;
  },

  /** Logs the attempt of a test delivery, which changes nothing else. */
  async recordTest(tx: Tx, delivery: AttemptRecord): Promise<void> {
    await tx.run(Q.record_test, { delivery });
  },

  async countDeliveries(tx: Reader, id: string, filter: DeliveryFilter): Promise<number> {
    const row = await tx.first<{ total: number }>(Q.deliveries_count, { id, ...filter });
    return row?.total ?? 0;
  },

  /** A page of a webhook's delivery log, latest attempt first. */
  async deliveries(tx: Reader, id: string, filter: DeliveryFilter, page: Page): Promise<DeliveryView[]> {
    const rows = await tx.run<{ delivery: DeliveryView }>(Q.deliveries_page, {
      id,
      ...filter,
      skip: page.skip,
      limit: page.limit,
    });
    return rows.map((r) => r.delivery);
  },

  /**
   * Takes up to `limit` webhooks with deliveries due that no instance holds (and none of
   * `skip`) under a lease of `leaseMs` for `owner`.
   */
  async claim(
    tx: Tx,
    claim: { now: string; limit: number; skip: readonly string[]; owner: string; leaseMs: number },
  ): Promise<ClaimedWebhook[]> {
    const rows = await tx.run<{ webhook: ClaimedWebhook }>(Q.dispatch_claim, claim);
    return rows.map((r) => r.webhook);
  },

  /** The next `limit` deliveries due for a webhook, in event order. */
  async due(tx: Reader, webhookId: string, now: string, limit: number): Promise<DueEntry[]> {
    return tx.run<DueEntry>(Q.dispatch_due, { webhookId, now, limit });
  },

  /**
   * Records the attempts of one round and extends the lease; the webhook's status and since when
   * it has been failing afterwards, or undefined when the webhook is gone.
   */
  async recordRound(
    tx: Tx,
    round: RoundRecord,
  ): Promise<{ status: string; failing_since: string | null } | undefined> {
    const row = await tx.first<{ webhook: { status: string; failing_since: string | null } }>(
      Q.dispatch_record,
      { ...round },
    );
    return row?.webhook;
  },

  /** Lets go of a webhook `owner` holds. */
  async release(tx: Tx, webhookId: string, owner: string): Promise<void> {
    await tx.run(Q.dispatch_release, { webhookId, owner });
  },

  /** Disables an active webhook; false when it was no longer active (or is gone). */
  async disable(tx: Tx, id: string, reason: string): Promise<boolean> {
    const row = await tx.first(Q.disable, { id, reason });
    return row !== undefined;
  },

  /**
   * Forgets up to `batch` delivery attempts from before `before` and as many entries of webhooks
   * that are gone; how many went.
   */
  async purge(tx: Tx, before: string, batch: number): Promise<number> {
    const row = await tx.first<{ removed: number }>(Q.purge, { before, batch });
    return row?.removed ?? 0;
  },
};
