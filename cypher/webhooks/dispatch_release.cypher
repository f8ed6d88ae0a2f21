MATCH (w:Webhook {id: $webhookId})
WHERE w.dispatch_owner = $owner
SET w.dispatch_owner = null, w.dispatch_until = null
RETURN w.id AS id
