// Every user of the connector that SCIM still sees, with its manager: what a snapshot is
// reconciled against.
MATCH (p:Principal) USING INDEX SEEK p:Principal(connector_source)
WHERE p.connector_source = $source AND p.type = 'USER' AND p.status IN ['active', 'suspended']
OPTIONAL MATCH (p)-[:REPORTS_TO]->(m:Principal)
RETURN properties(p) AS props, m.id AS managerId
