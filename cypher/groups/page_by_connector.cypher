// One page of the groups of one connector by name, then id, with the total in the same round
// trip; a separate query so that the connector_source index serves the filter.
CALL () {
  MATCH (g:Group)
  WHERE g.connector_source = $connectorSource
  RETURN count(g) AS total
}
CALL () {
  MATCH (g:Group)
  WHERE g.connector_source = $connectorSource
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
