// Members leaving a group, all at once; answers those that were members.
MATCH (g:Group {id: $groupId})
UNWIND $ids AS id
OPTIONAL MATCH (p:Principal {id: id})
OPTIONAL MATCH (sub:Group {id: id})
WITH g, id, coalesce(p, sub) AS m
MATCH (m)-[r:MEMBER_OF]->(g)
DELETE r
RETURN id
