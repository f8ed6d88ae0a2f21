// Direct members of a group (principals and nested groups), by name then id, with the total in
// the same round trip. Deleted principals never appear.
MATCH (g:Group {id: $id})
CALL (g) {
  MATCH (m)-[:MEMBER_OF]->(g)
  WHERE NOT m:Deleted
  RETURN count(m) AS total
}
CALL (g) {
  MATCH (m)-[:MEMBER_OF]->(g)
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
