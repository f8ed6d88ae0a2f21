// A user of the connector (by its id) under its write lock, for a change that follows, read as
// user_get reads it.
MATCH (p:Principal {id: $id})
WHERE p.connector_ref = $connector AND p.type = 'USER' AND p.status IN ['active', 'suspended']
SET p.locking = true
REMOVE p.locking
WITH p
OPTIONAL MATCH (p)-[:REPORTS_TO]->(m:Principal)
RETURN properties(p) AS props, m.id AS managerId,
  [(p)-[:MEMBER_OF]->(g:Group) WHERE g.connector_ref = $connector | {value: g.id, display: g.name}] AS groups
