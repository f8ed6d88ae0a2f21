// Groups of one connector, with their members when asked (a deprovisioned user is no longer one
// for SCIM).
MATCH (g:Group)
WHERE g.id IN $ids AND g.connector_source = $source AND g.source = 'connector'
RETURN properties(g) AS props,
  CASE WHEN $withMembers THEN [(m)-[:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: m.name, type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END AS members
