// A deprovisioned user gives its externalId up when the connector provisions it again.
MATCH (p:Principal {connector_source: $source, connector_id: $externalId})
WHERE p.status IN ['deprovisioned', 'deleted']
REMOVE p.connector_id
