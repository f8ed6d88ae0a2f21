// A user of the connector under its write lock, for a change that follows.
MATCH (p:Principal {id: $id})
WHERE p.connector_source = $source AND p.type = 'USER' AND p.status IN ['active', 'suspended']
SET p.locking = true
REMOVE p.locking
RETURN properties(p) AS props
