OPTIONAL MATCH (p:Principal {id: $memberId})
OPTIONAL MATCH (sub:Group {id: $memberId})
WITH coalesce(p, sub) AS m
MATCH (m)-[r:MEMBER_OF]->(:Group {id: $groupId})
DELETE r
RETURN count(*) AS removed
