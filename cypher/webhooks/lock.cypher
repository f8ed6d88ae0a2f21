// Reads the webhook under its write lock (the SET takes it), for a change that follows.
MATCH (w:Webhook {id: $id})
SET w._lock = true
REMOVE w._lock
RETURN w {.*} AS webhook
