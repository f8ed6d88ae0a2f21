// A snapshot accepted for reconciliation, with the request it came in (for the audit trail of
// what the job changes), linked to its connector.
MATCH (c:Connector {id: $connectorId})
WHERE c.status = 'active'
CREATE (c)-[:HAS_SYNC]->(s:ConnectorSync {
  id: $id,
  connector_id: c.id,
  connector_name: c.name,
  bytes: $bytes,
  requested_at: datetime(),
  requested_by: $requestedBy,
  request_id: $requestId,
  source_ip: $sourceIp,
  user_agent: $userAgent
})
RETURN s {.*} AS sync
