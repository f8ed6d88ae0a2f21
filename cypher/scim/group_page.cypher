// One page of the groups of one connector (by its id) in creation order (then id), with how many
// it holds, in one round trip; members (read as group_get reads them) for the page alone, when
// asked. The (connector_ref, created_at) index serves both the filter and the order.
CALL () {
  MATCH (g:Group) USING INDEX g:Group(connector_ref, created_at)
  WHERE g.connector_ref = $connector AND g.created_at IS NOT NULL AND g.source = 'connector'
  RETURN count(g) AS total
}
CALL () {
  MATCH (g:Group) USING INDEX g:Group(connector_ref, created_at)
  WHERE g.connector_ref = $connector AND g.created_at IS NOT NULL AND g.source = 'connector'
  WITH g
  // connector_ref first, a constant here, lets the index give the order.
  ORDER BY g.connector_ref, g.created_at, g.id
  SKIP $skip
  LIMIT $limit
  RETURN collect({
    props: properties(g),
    members: CASE WHEN $withMembers THEN [(m)-[r:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
      {value: m.id, display: coalesce(r.scim_display, m.name), type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END
  }) AS groups
}
RETURN total, groups
