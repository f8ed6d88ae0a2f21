// Forgets `access.changed` messages that no webhook outbox holds any more (delivered, given up,
// or their webhook deleted), a slice at a time.
MATCH (a:AccessChangeMessage)
WHERE NOT EXISTS { MATCH (m:WebhookMessage) WHERE m.id STARTS WITH a.id + '/' }
WITH a LIMIT $limit
DETACH DELETE a
RETURN count(*) AS purged
