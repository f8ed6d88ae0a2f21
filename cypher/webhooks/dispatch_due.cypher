// The next deliveries due for a webhook in event order, with the events they carry. An entry
// waiting for its retry is passed over only when its receiver refused that one event (a 4xx):
// when the receiver itself failed, the whole webhook waits (its `retry_at`), so the entry is due
// again before the ones behind it.
MATCH (m:WebhookMessage {webhook_id: $webhookId})
WHERE m.occurred_at IS NOT NULL AND m.next_attempt_at <= datetime($now)
WITH m
ORDER BY m.occurred_at, m.event_id
LIMIT $limit
OPTIONAL MATCH (e:AuditEvent {id: m.event_id})
RETURN m.id AS id, m.event_id AS eventId, m.event_type AS eventType, m.attempt AS attempt,
       e {.*} AS event
