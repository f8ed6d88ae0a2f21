// Members joining a group, all at once (each already checked by the caller); answers those that
// were not members yet.
MATCH (g:Group {id: $groupId})
UNWIND $ids AS id
MATCH (p:Principal {id: id})
WHERE NOT (p)-[:MEMBER_OF]->(g)
CREATE (p)-[:MEMBER_OF {added_at: datetime($now), added_by: $addedBy}]->(g)
RETURN p.id AS id
