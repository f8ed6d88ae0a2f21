// The group of one connector (by its id) whose name has the key $nameKey (its name, trimmed and
// lower-cased, unique within the connector), with its members when asked, read as group_get
// reads them.
MATCH (g:Group {name_key: $nameKey})
WHERE g.connector_ref = $connector AND g.source = 'connector'
RETURN properties(g) AS props,
  CASE WHEN $withMembers THEN [(m)-[r:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: coalesce(r.scim_display, m.name), type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END AS members
