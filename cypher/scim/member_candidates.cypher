// Which of $ids may be members of a group of the connector: its users SCIM still sees, and its
// groups.
UNWIND $ids AS id
OPTIONAL MATCH (p:Principal {id: id})
WHERE p.connector_source = $source AND p.type = 'USER' AND p.status IN ['active', 'suspended']
OPTIONAL MATCH (g:Group {id: id})
WHERE g.connector_source = $source AND g.source = 'connector'
WITH id, coalesce(p, g) AS m
WHERE m IS NOT NULL
RETURN id
