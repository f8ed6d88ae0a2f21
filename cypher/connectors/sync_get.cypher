MATCH (s:ConnectorSync {id: $id})
WHERE $connectorId IS NULL OR s.connector_id = $connectorId
RETURN s {.*} AS sync
