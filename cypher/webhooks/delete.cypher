// Removes the webhook and what is still queued for it; the log of its attempts stays until it
// ages out.
MATCH (w:Webhook {id: $id})
OPTIONAL MATCH (m:WebhookMessage {webhook_id: $id})
DETACH DELETE m
WITH DISTINCT w
DETACH DELETE w
RETURN $id AS id
