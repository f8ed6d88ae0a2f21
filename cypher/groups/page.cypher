// One page of all groups by name, then id, with the total in the same round trip. Every group
// has a name, so the name index can supply the order.
CALL () {
  MATCH (g:Group)
  RETURN count(g) AS total
}
CALL () {
  MATCH (g:Group)
  WHERE g.name IS NOT NULL
  WITH g
  ORDER BY g.name, g.id
  SKIP $skip
  LIMIT $limit
  RETURN collect(g {
    .id, .name, .description, .source, .connector_source, .connector_id, .created_at, .created_by, .updated_at,
    member_count: COUNT { (m)-[:MEMBER_OF]->(g) WHERE NOT m:Deleted }
  }) AS groups
}
RETURN total, groups
