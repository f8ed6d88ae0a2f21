import type { AuditEvent, Changes, OperationContext } from '../audit/audit.js';
import { sha256 } from '../auth/secrets.js';
import type { Transactions } from '../db/database.js';
import { notFound, validationFailed, type FieldError } from '../errors/errors.js';
import type { EventRecorder } from '../events/sink.js';
import { newId } from '../ids.js';
import type { Page, Paged } from '../pagination.js';
import type {
  CreateWebhookInput,
  DeliveryView,
  UpdateWebhookInput,
  WebhookView,
} from '../schemas/webhooks.js';
import { nowIso } from '../time.js';
import { checkWebhookUrl, type AddressPolicy } from './address-guard.js';
import {
  attemptRecord,
  checkEventPatterns,
  SECRET_OVERLAP_MS,
  sealSecret,
  outgoingOf,
  signedMessage,
  signingSecrets,
} from './messages.js';
import { webhookRepository, type StoredWebhook } from './repository.js';
import { newWebhookSecret } from './signature.js';
import type { WebhookTransport } from './transport.js';

export interface WebhookServiceOptions {
  /** Encrypts the signing secrets at rest. */
  kek: Buffer;
  addresses: AddressPolicy;
}

/**
 * The webhook queries the service runs (the dispatcher's are its own): unit tests give it an
 * in-memory stand-in.
 */
export type WebhookRepository = Pick<
  typeof webhookRepository,
  | 'create'
  | 'get'
  | 'count'
  | 'page'
  | 'lock'
  | 'update'
  | 'delete'
  | 'rotateSecret'
  | 'secrets'
  | 'recordTest'
  | 'countDeliveries'
  | 'deliveries'
>;

/**
 * Webhook subscriptions: who receives which audit events, and with which signing secret. The
 * secret is shown once, kept encrypted (it must be recovered to sign), and rotatable with a day
 * of overlap. Every change is an audit event of its own.
 */
export class WebhookService {
  constructor(
    private readonly db: Transactions,
    private readonly events: EventRecorder,
    private readonly transport: Pick<WebhookTransport, 'send'>,
    private readonly options: WebhookServiceOptions,
    private readonly repo: WebhookRepository = webhookRepository,
  ) {}

  async create(input: CreateWebhookInput, op: OperationContext): Promise<WebhookView & { secret: string }> {
    const url = this.checkUrl(input.url);
    checkPatterns(input.events);
    const id = newId('webhook');
    const secret = newWebhookSecret();
    const webhook = await this.db.write('webhooks/create', async (tx) => {
      // A retry after a lost commit answer returns what the first run committed.
      const committed = tx.attempt > 1 ? await this.repo.get(tx, id) : undefined;
      if (committed) return view(committed);
      const created = await this.repo.create(tx, {
        id,
        url,
        events: input.events,
        description: input.description ?? null,
        secretSealed: sealSecret(this.options.kek, id, secret),
        createdBy: op.actor.id,
      });
      this.events.record(tx, op, {
        type: 'webhook.created',
        target: { type: 'webhook', id },
        changes: {
          url: { to: urlForAudit(url) },
          events: { to: input.events },
          ...(input.description !== undefined ? { description: { to: input.description } } : {}),
        },
      });
      return view(created);
    });
    return { ...webhook, secret };
  }

  async get(id: string): Promise<WebhookView> {
    const webhook = await this.repo.get(this.db, id);
    if (!webhook) throw notFound('webhook', id);
    return view(webhook);
  }

  async list(status: WebhookView['status'] | undefined, page: Page): Promise<Paged<WebhookView>> {
    return this.db.read('webhooks/list', async (tx) => {
      const total = await this.repo.count(tx, status ?? null);
      const webhooks = await this.repo.page(tx, status ?? null, page);
      return { total, items: webhooks.map(view), page };
    });
  }

  /**
   * Changes the URL, the subscribed events, the description or the status. A webhook the
   * dispatcher disabled is enabled again here; what was queued for it is then delivered.
   */
  async update(id: string, patch: UpdateWebhookInput, op: OperationContext): Promise<WebhookView> {
    const url = patch.url === undefined ? undefined : this.checkUrl(patch.url);
    if (patch.events) checkPatterns(patch.events);
    return this.db.write('webhooks/update', async (tx) => {
      const before = await this.repo.lock(tx, id);
      if (!before) throw notFound('webhook', id);
      const next = {
        url: url ?? before.url,
        events: patch.events ?? before.events,
        description: patch.description === undefined ? (before.description ?? null) : patch.description,
        status: patch.status ?? before.status,
      };
      const updated = await this.repo.update(
        tx,
        id,
        next,
        next.status === 'disabled' ? `disabled by ${op.actor.id}` : null,
      );
      const changes: Changes = {};
      for (const key of Object.keys(next) as (keyof typeof next)[]) {
        const from = key === 'description' ? (before.description ?? null) : before[key];
        if (JSON.stringify(from) === JSON.stringify(next[key])) continue;
        changes[key] =
          key === 'url'
            ? { from: urlForAudit(before.url), to: urlForAudit(next.url) }
            : { from, to: next[key] };
      }
      if (Object.keys(changes).length > 0) {
        this.events.record(tx, op, { type: 'webhook.updated', target: { type: 'webhook', id }, changes });
      }
      return view(updated);
    });
  }

  /** Removes the webhook and what is still queued for it; its delivery log ages out. */
  async delete(
    id: string,
    op: OperationContext,
  ): Promise<{ id: string; status: 'deleted'; deleted_at: string; deleted_by: string }> {
    return this.db.write('webhooks/delete', async (tx) => {
      const current = await this.repo.lock(tx, id);
      if (!current) throw notFound('webhook', id);
      await this.repo.delete(tx, id);
      this.events.record(tx, op, {
        type: 'webhook.deleted',
        target: { type: 'webhook', id },
        changes: {
          url: { from: urlForAudit(current.url) },
          status: { from: current.status, to: 'deleted' },
        },
      });
      return { id, status: 'deleted' as const, deleted_at: nowIso(), deleted_by: op.actor.id };
    });
  }

  /** A new signing secret, answered once; the previous one keeps signing for a day beside it. */
  async rotateSecret(
    id: string,
    op: OperationContext,
  ): Promise<{ secret: string; previous_secret_expires_at: string }> {
    const secret = newWebhookSecret();
    const overlapUntil = new Date(Date.now() + SECRET_OVERLAP_MS).toISOString();
    return this.db.write('webhooks/rotate_secret', async (tx) => {
      const current = await this.repo.lock(tx, id);
      if (!current) throw notFound('webhook', id);
      await this.repo.rotateSecret(tx, id, sealSecret(this.options.kek, id, secret), overlapUntil);
      this.events.record(tx, op, { type: 'webhook.secret_rotated', target: { type: 'webhook', id } });
      return { secret, previous_secret_expires_at: overlapUntil };
    });
  }

  /**
   * Delivers a `webhook.test` event now, whatever the webhook's status, and logs the attempt. The
   * answer says how the receiver took it; nothing is retried.
   */
  async test(
    id: string,
    op: OperationContext,
  ): Promise<{
    delivery_id: string;
    success: boolean;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
  }> {
    const webhook = await this.repo.secrets(this.db, id);
    if (!webhook) throw notFound('webhook', id);
    const event: AuditEvent = {
      id: newId('event'),
      type: 'webhook.test',
      occurred_at: nowIso(),
      actor: { type: op.actor.type, id: op.actor.id },
      target: { type: 'webhook', id },
      outcome: 'success',
      request_id: op.meta.requestId,
      source_ip: op.meta.sourceIp,
      user_agent: op.meta.userAgent,
      changes: null,
    };
    const message = signedMessage(outgoingOf(event), signingSecrets(this.options.kek, webhook));
    const attemptedAt = nowIso();
    const result = await this.transport.send({ url: webhook.url, ...message });
    const delivery = attemptRecord({ webhookId: id, event, number: 1, attemptedAt }, result);
    await this.db.write('webhooks/record_test', (tx) => this.repo.recordTest(tx, delivery));
    return {
      delivery_id: delivery.id,
      success: delivery.success,
      status_code: delivery.status_code,
      duration_ms: delivery.duration_ms,
      error: delivery.error,
    };
  }

  async deliveries(
    id: string,
    filter: { eventId?: string | undefined; success?: boolean | undefined },
    page: Page,
  ): Promise<Paged<DeliveryView>> {
    return this.db.read('webhooks/deliveries', async (tx) => {
      const exists = await this.repo.get(tx, id);
      if (!exists) throw notFound('webhook', id);
      const criteria = { eventId: filter.eventId ?? null, success: filter.success ?? null };
      const total = await this.repo.countDeliveries(tx, id, criteria);
      const items = await this.repo.deliveries(tx, id, criteria, page);
      return { total, items, page };
    });
  }

  private checkUrl(raw: string): string {
    const checked = checkWebhookUrl(raw, this.options.addresses);
    if ('problem' in checked) {
      throw validationFailed(checked.problem, [{ pointer: '/url', message: checked.problem }]);
    }
    return checked.url.href;
  }
}

/**
 * A webhook URL as the audit trail shows it: receivers often take a secret in the path or the
 * query (chat and automation services do), and secrets never reach events, so events show the
 * origin and a fingerprint of the whole URL, which tells two URLs apart without revealing them.
 */
function urlForAudit(url: string): string {
  return `${new URL(url).origin}/… (sha256:${sha256(url).slice(0, 12)})`;
}

function checkPatterns(patterns: readonly string[]): void {
  const errors: FieldError[] = checkEventPatterns(patterns);
  if (errors.length > 0) throw validationFailed('events names an unknown event type', errors);
}

function view(row: StoredWebhook): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description ?? null,
    status: row.status,
    created_at: row.created_at,
    created_by: row.created_by,
    last_delivery_at: row.last_delivery_at ?? null,
    failure_count: row.failure_count ?? 0,
    ...(row.failing_since ? { failing_since: row.failing_since } : {}),
    ...(row.disabled_at ? { disabled_at: row.disabled_at } : {}),
    ...(row.disabled_reason ? { disabled_reason: row.disabled_reason } : {}),
    ...(row.secret_rotated_at ? { secret_rotated_at: row.secret_rotated_at } : {}),
  };
}
