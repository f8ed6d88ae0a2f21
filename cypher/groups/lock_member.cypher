// The would-be member (a principal or a group) under its write lock, so that a concurrent
// deletion of it is serialised with the addition, and its current membership of the group.
OPTIONAL MATCH (p:Principal {id: $memberId})
OPTIONAL MATCH (sub:Group {id: $memberId})
WITH coalesce(p, sub) AS m
WHERE m IS NOT NULL
SET m.locking = true
REMOVE m.locking
WITH m
OPTIONAL MATCH (m)-[r:MEMBER_OF]->(:Group {id: $groupId})
RETURN m {
  .id, .name, .status,
  type: CASE WHEN m:Group THEN 'GROUP' ELSE m.type END,
  email: CASE WHEN m.type = 'USER' THEN m.email END
} AS member, r.added_at AS addedAt
