MATCH (d:WebhookDelivery {webhook_id: $id})
WHERE ($eventId IS NULL OR d.event_id = $eventId) AND ($success IS NULL OR d.success = $success)
WITH d
ORDER BY d.attempted_at DESC, d.id DESC
SKIP $skip
LIMIT $limit
RETURN d {.id, .event_id, .event_type, .attempt, .success, .status_code, .error, .duration_ms, .attempted_at, .next_attempt_at} AS delivery
