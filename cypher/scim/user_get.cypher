// The users of one connector (by its id) that SCIM still sees (a deprovisioned user is gone for
// SCIM), with their manager and the connector's groups they are directly in.
MATCH (p:Principal)
WHERE p.id IN $ids AND p.connector_ref = $connector AND p.type = 'USER' AND p.status IN ['active', 'suspended']
OPTIONAL MATCH (p)-[:REPORTS_TO]->(m:Principal)
RETURN properties(p) AS props, m.id AS managerId,
  [(p)-[:MEMBER_OF]->(g:Group) WHERE g.connector_ref = $connector | {value: g.id, display: g.name}] AS groups
