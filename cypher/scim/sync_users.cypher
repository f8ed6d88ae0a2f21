// Every user of the connector (by its id) that SCIM still sees, with its manager: what a snapshot
// is reconciled against.
MATCH (p:Principal) USING INDEX SEEK p:Principal(connector_ref)
WHERE p.connector_ref = $connector AND p.type = 'USER' AND p.status IN ['active', 'suspended']
OPTIONAL MATCH (p)-[:REPORTS_TO]->(m:Principal)
RETURN properties(p) AS props, m.id AS managerId
