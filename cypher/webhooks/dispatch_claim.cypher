// Takes webhooks that have deliveries due, that are not waiting for their receiver to come back
// (`retry_at`) and that no instance is delivering to, under a lease: one instance at a time
// delivers to a webhook, in event order. The conditions are read again
// under each webhook's write lock, so two instances never both take one; a lease whose instance
// stopped renewing it (it crashed) runs out and the webhook is taken over.
MATCH (w:Webhook {status: 'active'})
WHERE coalesce(w.dispatch_until < datetime($now), true)
  AND coalesce(w.retry_at <= datetime($now), true)
  AND NOT w.id IN $skip
  AND EXISTS {
    MATCH (m:WebhookMessage {webhook_id: w.id})
    WHERE m.next_attempt_at <= datetime($now)
  }
WITH w
LIMIT $limit
SET w._lock = true
REMOVE w._lock
WITH w
WHERE w.status = 'active' AND coalesce(w.dispatch_until < datetime($now), true)
SET w.dispatch_owner = $owner,
    w.dispatch_until = datetime($now) + duration({milliseconds: $leaseMs})
RETURN w {.id, .url, .secret_sealed, .previous_secret_sealed, .previous_secret_until, .failing_since} AS webhook
