// The users of one connector that SCIM still sees (a deprovisioned user is gone for SCIM).
MATCH (p:Principal)
WHERE p.id IN $ids AND p.connector_source = $source AND p.type = 'USER' AND p.status IN ['active', 'suspended']
OPTIONAL MATCH (p)-[:REPORTS_TO]->(m:Principal)
RETURN properties(p) AS props, m.id AS managerId
