// Deprovisioned users give up the externalIds a snapshot provisions again.
UNWIND $externalIds AS externalId
MATCH (p:Principal {connector_source: $source, connector_id: externalId})
WHERE p.status IN ['deprovisioned', 'deleted']
REMOVE p.connector_id
