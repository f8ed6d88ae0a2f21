// Groups of one connector (by its id), with their members when asked (a deprovisioned user is no
// longer one for SCIM), each shown by the display its client sent with it, else its own name.
MATCH (g:Group)
WHERE g.id IN $ids AND g.connector_ref = $connector AND g.source = 'connector'
RETURN properties(g) AS props,
  CASE WHEN $withMembers THEN [(m)-[r:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: coalesce(r.scim_display, m.name), type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END AS members
