// The next deliveries due for a webhook in event order, with the events they carry (an audit
// event, or a message of access changes). An entry
// waiting for its retry is passed over only when its receiver refused that one event (a 4xx):
// when the receiver itself failed, the whole webhook waits (its `retry_at`), so the entry is due
// again before the ones behind it.
// The (webhook_id, occurred_at) index gives the order, so a batch reads as far as it needs and
// no further, however long the queue.
MATCH (m:WebhookMessage)
USING INDEX m:WebhookMessage(webhook_id, occurred_at)
WHERE m.webhook_id = $webhookId AND m.occurred_at IS NOT NULL AND m.next_attempt_at <= datetime($now)
WITH m
ORDER BY m.webhook_id, m.occurred_at, m.event_id
LIMIT $limit
OPTIONAL MATCH (e:AuditEvent {id: m.event_id})
OPTIONAL MATCH (a:AccessChangeMessage {id: m.event_id})
RETURN m.id AS id, m.event_id AS eventId, m.event_type AS eventType, m.attempt AS attempt,
       e {.*} AS event, a {.occurred_at, .body} AS message
