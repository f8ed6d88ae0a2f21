// The decision index at start: principals in pages of $batch by id, each with the groups it is a
// direct member of.
MATCH (p:Principal)
WHERE p.id > $after
WITH p
ORDER BY p.id
LIMIT $batch
RETURN properties(p) AS props, [(p)-[:MEMBER_OF]->(g:Group) | g.id] AS groups
