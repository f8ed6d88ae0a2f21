// A group of the connector under its write lock, for a change that follows.
MATCH (g:Group {id: $id})
WHERE g.connector_source = $source AND g.source = 'connector'
SET g.locking = true
REMOVE g.locking
RETURN g.id AS id
