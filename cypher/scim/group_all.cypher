// Every group of one connector, oldest first, for a filter to choose from.
MATCH (g:Group)
WHERE g.connector_source = $source AND g.source = 'connector'
WITH g
ORDER BY g.created_at, g.id
RETURN properties(g) AS props,
  CASE WHEN $withMembers THEN [(m)-[:MEMBER_OF]->(g) WHERE m:Group OR m.status IN ['active', 'suspended'] |
    {value: m.id, display: m.name, type: CASE WHEN m:Group THEN 'Group' ELSE 'User' END}] END AS members
