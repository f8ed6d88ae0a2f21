// A batch of the groups of one connector (by its id) in creation order (then id), those after
// the last of the previous batch ($at, the text of its created_at, and $id); each with that text
// as the next batch's start, and its members (read as group_get reads them) when asked. The
// (connector_ref, created_at) index seeks the start and gives the order.
MATCH (g:Group) USING INDEX g:Group(connector_ref, created_at)
WHERE g.connector_ref = $connector AND g.created_at >= datetime($at)
  AND NOT (g.created_at = datetime($at) AND g.id <= $id)
  AND g.source = 'connector'
WITH g
// connector_ref first, a constant here, lets the index give the order.
ORDER BY g.connector_ref, g.created_at, g.id
LIMIT $limit
RETURN properties(g) AS props, toString(g.created_at) AS at,
  CASE WHEN $withMembers THEN [(m)-[r:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: coalesce(r.scim_display, m.name), type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END AS members
