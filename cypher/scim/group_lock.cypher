// A group of the connector under its write lock, for a change that follows, read as group_get
// reads it (with its members).
MATCH (g:Group {id: $id})
WHERE g.connector_source = $source AND g.source = 'connector'
SET g.locking = true
REMOVE g.locking
WITH g
RETURN properties(g) AS props,
  [(m)-[:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: m.name, type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] AS members
