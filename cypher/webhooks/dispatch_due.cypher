// The next deliveries due for a webhook, oldest first, with the events they carry. Fresh entries
// are due when their event happened, so this is event order.
MATCH (m:WebhookMessage {webhook_id: $webhookId})
WHERE m.next_attempt_at <= datetime($now)
WITH m
ORDER BY m.next_attempt_at, m.occurred_at, m.event_id
LIMIT $limit
OPTIONAL MATCH (e:AuditEvent {id: m.event_id})
RETURN m.id AS id, m.event_id AS eventId, m.event_type AS eventType, m.attempt AS attempt,
       e {.*} AS event
