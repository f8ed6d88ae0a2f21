// Every group of one connector (by its id), oldest first, for a snapshot to be matched with, with
// their members (read as group_get reads them) when asked.
MATCH (g:Group)
WHERE g.connector_ref = $connector AND g.source = 'connector'
WITH g
ORDER BY g.created_at, g.id
RETURN properties(g) AS props,
  CASE WHEN $withMembers THEN [(m)-[r:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: coalesce(r.scim_display, m.name), type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END AS members
