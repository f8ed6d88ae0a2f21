// Users of the connector whose manager had not arrived when they did, waiting on one of $refs.
MATCH (r:Principal)
WHERE r.manager_ref IN $refs AND r.connector_source = $source AND r.status IN ['active', 'suspended']
RETURN r.id AS id
