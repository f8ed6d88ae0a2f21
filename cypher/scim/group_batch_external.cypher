// A batch of the groups of one connector (by its id) whose externalId is $externalId, as
// group_batch reads them (in creation order, after $at and $id); the (connector_ref,
// connector_id) index finds them.
MATCH (g:Group) USING INDEX g:Group(connector_ref, connector_id)
WHERE g.connector_ref = $connector AND g.connector_id = $externalId AND g.source = 'connector'
WITH g
WHERE g.created_at >= datetime($at) AND NOT (g.created_at = datetime($at) AND g.id <= $id)
WITH g
ORDER BY g.created_at, g.id
LIMIT $limit
RETURN properties(g) AS props, toString(g.created_at) AS at,
  CASE WHEN $withMembers THEN [(m)-[r:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: coalesce(r.scim_display, m.name), type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END AS members
