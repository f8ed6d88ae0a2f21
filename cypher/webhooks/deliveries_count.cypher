MATCH (d:WebhookDelivery {webhook_id: $id})
WHERE ($eventId IS NULL OR d.event_id = $eventId) AND ($success IS NULL OR d.success = $success)
RETURN count(d) AS total
