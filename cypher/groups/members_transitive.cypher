// Every distinct principal and group reachable through nesting, by name then id. Nesting is
// capped at 16 levels, so a principal is at most 16 MEMBER_OF edges below the group.
MATCH (g:Group {id: $id})
CALL (g) {
  MATCH (m)-[:MEMBER_OF*1..16]->(g)
  WITH DISTINCT m
  WHERE NOT m:Deleted
  RETURN count(m) AS total
}
CALL (g) {
  MATCH (m)-[:MEMBER_OF*1..16]->(g)
  WITH DISTINCT m
  WHERE NOT m:Deleted
  WITH m
  ORDER BY m.name, m.id
  SKIP $skip
  LIMIT $limit
  RETURN collect(m {
    .id, .name,
    type: CASE WHEN m:Group THEN 'GROUP' ELSE m.type END,
    email: CASE WHEN m.type = 'USER' THEN m.email END
  }) AS members
}
RETURN total, members
