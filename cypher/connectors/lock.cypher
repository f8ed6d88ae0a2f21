// Reads the connector under its write lock (the SET takes it), for a change that follows.
MATCH (c:Connector {id: $id})
SET c._lock = true
REMOVE c._lock
RETURN c {.id, .name, .description, profile: coalesce(c.profile, 'generic'), .status} AS connector
