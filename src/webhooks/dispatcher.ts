import { fromStored, SYSTEM_CONTEXT } from '../audit/audit.js';
import type { Database } from '../db/database.js';
import type { EventSink } from '../events/sink.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics.js';
import { nowIso } from '../time.js';
import { inSpan, outgoingTraceHeaders, SpanKind, SpanStatusCode } from '../tracing/tracing.js';
import { attemptRecord, outgoingOf, signedMessage, signingSecrets, type OutgoingEvent } from './messages.js';
import { webhookRepository as repo, type Attempt, type ClaimedWebhook, type DueEntry } from './repository.js';
import type { SendResult, WebhookTransport } from './transport.js';

export interface DispatcherOptions {
  /** Names this instance in webhook leases. */
  instanceId: string;
  kek: Buffer;
  /** Seconds before each retry; after the last, a delivery is given up. */
  retryScheduleS: readonly number[];
  /** A webhook failing without a success for this long is disabled. */
  disableAfterMs: number;
  /** Webhooks delivered to at the same time. */
  concurrency: number;
  /**
   * How long a claim on a webhook lasts unless the instance records progress. A round sends for at
   * most a third of it, and the lease adds the receiver's timeout for the send still in flight
   * then, so a live instance never loses its claim mid-send.
   */
  leaseMs: number;
  /** How long one send may take (the transport's timeout). */
  sendTimeoutMs: number;
  /** How long to wait for more work once every claimed webhook is busy or none is due. */
  pollMs: number;
  logRetentionDays: number;
  logger: Logger;
  /** Where the attempts are counted (`webhook_deliveries_total`, `webhook_delivery_duration_seconds`). */
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookDeliverySeconds'>;
  /** Entries read per round. */
  batchSize?: number;
  /**
   * The data of the `access.changed` messages among `ids` stored without it, by id (read from
   * the access changes they announce, src/access-history); one missing is gone.
   */
  messages?: (ids: readonly string[]) => Promise<ReadonlyMap<string, unknown>>;
}

/**
 * Delivers the outbox. Each instance takes webhooks that have deliveries due under a lease, so
 * one instance at a time delivers to a webhook, one event after another in event order.
 *
 * When the receiver fails (no answer, a timeout, a 5xx, 408, 429 or a redirect), the round ends
 * and the whole webhook waits until the failed event's next attempt: a receiver that is down
 * gets one attempt per step of the retry schedule, not one per queued event, and the events
 * behind keep their order and their attempts. When it refuses one event (another 4xx), that event
 * alone waits for its retry and the others go on, so one event the receiver cannot take does not
 * hold up the rest. An event is given up after its last retry.
 *
 * Attempts are recorded after each round, so an instance that dies mid-round has its claim
 * taken over when the lease runs out and the unrecorded deliveries are sent again: at least
 * once, with the same `webhook-id`. On shutdown, deliveries in flight finish and are recorded
 * before the webhook is let go.
 */
export class WebhookDispatcher {
  private readonly batchSize: number;
  /**
   * Webhooks whose last round broke off on an error of this service (not of the receiver), and
   * until when they are left alone: without the pause, the deliveries that could not be recorded
   * would be sent again at once, and again.
   */
  private readonly resting = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly events: EventSink,
    private readonly transport: WebhookTransport,
    private readonly options: DispatcherOptions,
  ) {
    this.batchSize = options.batchSize ?? 100;
  }

  /** Works until nothing is due, or until the signal asks it to stop. */
  async run(signal: AbortSignal): Promise<void> {
    const active = new Map<string, Promise<void>>();
    try {
      while (!signal.aborted) {
        const free = this.options.concurrency - active.size;
        let claimed = 0;
        if (free > 0) {
          const now = Date.now();
          for (const [id, until] of this.resting) if (until <= now) this.resting.delete(id);
          for (const webhook of await this.claim(free, [...active.keys(), ...this.resting.keys()])) {
            claimed += 1;
            const work = this.deliver(webhook, signal)
              .catch((err: unknown) => {
                this.resting.set(webhook.id, Date.now() + REST_AFTER_ERROR_MS);
                this.options.logger.warn({ err, webhook: webhook.id }, 'webhook delivery round failed');
              })
              .finally(() => active.delete(webhook.id));
            active.set(webhook.id, work);
          }
        }
        if (active.size === 0) return;
        // While busy with nothing more to take, look again less often: a claim is a write, and
        // one every poll would compete with the deliveries for the database.
        const pause = claimed === 0 ? Math.max(this.options.pollMs, BUSY_CLAIM_MS) : this.options.pollMs;
        await Promise.race([...active.values(), sleep(pause)]);
      }
    } finally {
      await Promise.all(active.values());
    }
  }

  /** Forgets delivery attempts past their retention and entries of webhooks that are gone. */
  async purge(): Promise<void> {
    const before = new Date(Date.now() - this.options.logRetentionDays * 86_400_000).toISOString();
    for (;;) {
      const removed = await this.db.write('webhooks/purge', (tx) => repo.purge(tx, before, 5_000));
      if (removed < 5_000) return;
    }
  }

  private async claim(limit: number, skip: string[]): Promise<ClaimedWebhook[]> {
    return this.db.write('webhooks/dispatch_claim', (tx) =>
      repo.claim(tx, {
        now: nowIso(),
        limit,
        skip,
        owner: this.options.instanceId,
        leaseMs: this.leaseMs,
      }),
    );
  }

  private async deliver(webhook: ClaimedWebhook, signal: AbortSignal): Promise<void> {
    try {
      const secrets = signingSecrets(this.options.kek, webhook);
      // A claim is let go after a while even with more to send, and taken again with what the
      // webhook says then: a rotated secret or a new URL is used within that time.
      const until = Date.now() + this.options.leaseMs;
      while (!signal.aborted && Date.now() < until) {
        const due = await repo.due(this.db, webhook.id, nowIso(), this.batchSize);
        if (due.length === 0) return;
        const round = await this.round(webhook, secrets, due, await this.dataOf(due), signal);
        if (round.attempts.length === 0) return;
        const last = round.attempts[round.attempts.length - 1]!.delivery;
        const failedAt = last.success ? null : last.attempted_at;
        const retryAt = round.receiverFailed
          ? (last.next_attempt_at ?? this.after(this.options.retryScheduleS[0] ?? 5))
          : null;
        const recorded = await this.db.write('webhooks/dispatch_record', (tx) =>
          repo.recordRound(tx, {
            webhookId: webhook.id,
            attempts: round.attempts,
            lastAttemptAt: last.attempted_at,
            failedAt,
            anySuccess: round.attempts.some((a) => a.delivery.success),
            retryAt,
            owner: this.options.instanceId,
            leaseUntil: new Date(Date.now() + this.leaseMs).toISOString(),
          }),
        );
        if (!recorded || recorded.status !== 'active') return;
        if (failedAt === null) continue;
        const failingSince = recorded.failing_since;
        if (last.status_code === 410) {
          await this.disable(webhook.id, 'the receiver answered 410 Gone');
          return;
        }
        if (failingSince && Date.now() - Date.parse(failingSince) >= this.options.disableAfterMs) {
          await this.disable(webhook.id, `every delivery has failed since ${failingSince}`);
          return;
        }
        if (round.receiverFailed) return;
      }
    } finally {
      await this.db
        .write('webhooks/dispatch_release', (tx) => repo.release(tx, webhook.id, this.options.instanceId))
        .catch((err: unknown) =>
          this.options.logger.warn({ err, webhook: webhook.id }, 'could not release a webhook'),
        );
    }
  }

  /**
   * Sends due entries one after another until the receiver fails (or is gone: 410), the round
   * has taken a third of the lease (it is extended when the round is recorded), or shutdown
   * begins. A send in flight is never cut short: it finishes and is recorded.
   */
  private async round(
    webhook: ClaimedWebhook,
    secrets: string[],
    due: DueEntry[],
    data: ReadonlyMap<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ attempts: Attempt[]; receiverFailed: boolean }> {
    const attempts: Attempt[] = [];
    let receiverFailed = false;
    const started = Date.now();
    for (const entry of due) {
      if (signal.aborted || Date.now() - started > this.options.leaseMs / 3) break;
      const number = entry.attempt + 1;
      const attempt = {
        webhookId: webhook.id,
        event: { id: entry.eventId, type: entry.eventType },
        number,
        attemptedAt: nowIso(),
      };
      const event = outgoing(entry, data);
      if (!event) {
        const gone = { success: false, statusCode: null, error: 'the event no longer exists', durationMs: 0 };
        attempts.push({ message_id: entry.id, delivery: attemptRecord(attempt, gone) });
        continue;
      }
      const result = await this.send(webhook, entry, signedMessage(event, secrets));
      const next = result.success ? null : this.nextAttemptAt(number, result.statusCode);
      attempts.push({ message_id: entry.id, delivery: attemptRecord(attempt, result, next) });
      if (!result.success && (result.statusCode === 410 || receiverFault(result.statusCode))) {
        receiverFailed = result.statusCode !== 410;
        break;
      }
    }
    return { attempts, receiverFailed };
  }

  /** The data of the due messages stored without it, by event id. */
  private async dataOf(due: readonly DueEntry[]): Promise<ReadonlyMap<string, unknown>> {
    const ids = due.filter((e) => e.message && e.message.body === null).map((e) => e.eventId);
    return ids.length > 0 && this.options.messages ? this.options.messages(ids) : new Map();
  }

  /**
   * One delivery, in a span of its own that joins the trace of the request behind the event; the
   * receiver gets that span as its `traceparent` (without tracing, the request's own, as it came).
   */
  private send(
    webhook: ClaimedWebhook,
    entry: DueEntry,
    message: { headers: Record<string, string>; body: string },
  ): Promise<SendResult> {
    const traceparent = entry.event?.trace_parent ?? null;
    const span = {
      kind: SpanKind.CLIENT,
      parent: traceparent,
      attributes: {
        'http.request.method': 'POST',
        'server.address': hostOf(webhook.url),
        'pas.webhook.id': webhook.id,
        'pas.event.id': entry.eventId,
        'pas.event.type': entry.eventType,
        'pas.delivery.attempt': entry.attempt + 1,
      },
    };
    return inSpan('webhook deliver', span, async (traced) => {
      const headers = { ...message.headers, ...outgoingTraceHeaders(traceparent) };
      const result = await this.transport.send({ url: webhook.url, headers, body: message.body });
      const { metrics } = this.options;
      metrics?.webhookDeliveries.inc({ outcome: result.success ? 'success' : 'failure' });
      metrics?.webhookDeliverySeconds.observe(result.durationMs / 1000);
      if (traced) {
        if (result.statusCode !== null) traced.setAttribute('http.response.status_code', result.statusCode);
        if (!result.success)
          traced.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? 'failed' });
      }
      return result;
    });
  }

  private get leaseMs(): number {
    return this.options.leaseMs + this.options.sendTimeoutMs;
  }

  private after(seconds: number): string {
    return new Date(Date.now() + seconds * 1000).toISOString();
  }

  /** When a failed attempt is tried again; null when it was the last (or the receiver is gone). */
  private nextAttemptAt(attempt: number, statusCode: number | null): string | null {
    const waitS = statusCode === 410 ? undefined : this.options.retryScheduleS[attempt - 1];
    return waitS === undefined ? null : this.after(waitS);
  }

  private async disable(id: string, reason: string): Promise<void> {
    await this.db.write('webhooks/disable', async (tx) => {
      const disabled = await repo.disable(tx, id, reason);
      if (!disabled) return;
      this.events.record(tx, SYSTEM_CONTEXT, {
        type: 'webhook.disabled',
        target: { type: 'webhook', id },
        outcome: 'success',
        reason,
        changes: { status: { from: 'active', to: 'disabled' } },
      });
    });
    this.options.logger.warn({ webhook: id, reason }, 'webhook disabled');
  }
}

const REST_AFTER_ERROR_MS = 5_000;
/** How often a dispatcher busy with every webhook it could take looks for more. */
const BUSY_CLAIM_MS = 1_000;

/**
 * What a due entry delivers: its audit event, or its message of access changes (its data as
 * stored with it, or else as `data` has it); null when gone.
 */
function outgoing(entry: DueEntry, data: ReadonlyMap<string, unknown>): OutgoingEvent | null {
  if (entry.event) return outgoingOf(fromStored(entry.event));
  if (!entry.message) return null;
  const { occurred_at, body } = entry.message;
  const carried = body !== null ? (JSON.parse(body) as unknown) : data.get(entry.eventId);
  if (carried === undefined) return null;
  return { id: entry.eventId, type: entry.eventType, occurred_at, data: carried };
}

/**
 * Whether a failed attempt says the receiver is failing as a whole (so every event would fail
 * now), rather than refusing this one event: no answer, a redirect (a moved endpoint), a 5xx,
 * 408 or 429.
 */
function receiverFault(statusCode: number | null): boolean {
  if (statusCode === null || statusCode < 400 || statusCode >= 500) return true;
  return statusCode === 408 || statusCode === 429;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The host a webhook delivers to, for its spans: never the whole URL, which may carry a token. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
