// Records the attempts of one round to a webhook: each goes into the log; a delivered entry, and
// one given up after its last attempt, leaves the outbox; a failed one waits for its next
// attempt. The webhook keeps when it last delivered and since when it has been failing, waits
// until $retryAt when its receiver failed (rather than refused one event), and its lease is
// extended while its instance is still at work.
MATCH (w:Webhook {id: $webhookId})
CALL (w) {
  UNWIND $attempts AS a
  WITH a.message_id AS messageId, a.delivery AS attempt
  CREATE (d:WebhookDelivery)
  SET d = attempt {.*,
    attempted_at: datetime(attempt.attempted_at),
    next_attempt_at: CASE WHEN attempt.next_attempt_at IS NULL THEN null ELSE datetime(attempt.next_attempt_at) END}
  WITH messageId, attempt
  MATCH (m:WebhookMessage {id: messageId})
  FOREACH (_ IN CASE WHEN attempt.next_attempt_at IS NULL THEN [1] ELSE [] END | DELETE m)
  FOREACH (_ IN CASE WHEN attempt.next_attempt_at IS NULL THEN [] ELSE [1] END |
    SET m.attempt = attempt.attempt, m.next_attempt_at = datetime(attempt.next_attempt_at))
}
SET w.last_delivery_at = datetime($lastAttemptAt),
    w.failure_count = CASE
      WHEN $failedAt IS NULL THEN 0
      WHEN $anySuccess THEN 1
      ELSE coalesce(w.failure_count, 0) + 1 END,
    w.failing_since = CASE
      WHEN $failedAt IS NULL THEN null
      WHEN $anySuccess THEN datetime($failedAt)
      ELSE coalesce(w.failing_since, datetime($failedAt)) END,
    w.retry_at = CASE WHEN $retryAt IS NULL THEN null ELSE datetime($retryAt) END,
    w.dispatch_until = CASE WHEN w.dispatch_owner = $owner THEN datetime($leaseUntil) ELSE w.dispatch_until END
RETURN w {.status, .failing_since} AS webhook
