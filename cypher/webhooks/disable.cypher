// Disables a webhook the dispatcher gave up on (its receiver answered 410 Gone, or it has failed
// for too long); false when it was no longer active.
MATCH (w:Webhook {id: $id})
SET w._lock = true
REMOVE w._lock
WITH w
WHERE w.status = 'active'
SET w.status = 'disabled',
    w.disabled_at = datetime(),
    w.disabled_reason = $reason,
    w.updated_at = datetime()
RETURN w.id AS id
