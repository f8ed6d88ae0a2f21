MATCH (g:Group {id: $groupId})
OPTIONAL MATCH (p:Principal {id: $memberId})
OPTIONAL MATCH (sub:Group {id: $memberId})
WITH g, coalesce(p, sub) AS m
WHERE m IS NOT NULL
CREATE (m)-[r:MEMBER_OF {added_at: datetime($now), added_by: $addedBy}]->(g)
RETURN r.added_at AS addedAt
