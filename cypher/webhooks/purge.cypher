// Forgets delivery attempts older than the retention, a batch at a time, and entries left behind
// by webhooks that no longer exist.
CALL () {
  MATCH (d:WebhookDelivery)
  WHERE d.attempted_at < datetime($before)
  WITH d LIMIT $batch
  DELETE d
  RETURN count(*) AS attempts
}
CALL () {
  MATCH (m:WebhookMessage)
  WHERE NOT EXISTS { MATCH (w:Webhook {id: m.webhook_id}) }
  WITH m LIMIT $batch
  DELETE m
  RETURN count(*) AS orphans
}
RETURN attempts + orphans AS removed
