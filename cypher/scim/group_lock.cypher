// A group of the connector (by its id) under its write lock, for a change that follows, read as
// group_get reads it (with its members), each member also with the display its client sent
// (`sent`, null when none was).
MATCH (g:Group {id: $id})
WHERE g.connector_ref = $connector AND g.source = 'connector'
SET g.locking = true
REMOVE g.locking
WITH g
RETURN properties(g) AS props,
  [(m)-[r:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: coalesce(r.scim_display, m.name), sent: r.scim_display,
     type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] AS members
