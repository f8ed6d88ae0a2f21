// Principals as they are now, for the decision index to follow a change; ids that no longer
// exist give no row.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
RETURN properties(p) AS props, [(p)-[:MEMBER_OF]->(g:Group) | g.id] AS groups
