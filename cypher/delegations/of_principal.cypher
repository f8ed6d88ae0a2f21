// A principal's delegations: those it gives and those it receives, newest first.
MATCH (p:Principal {id: $id})
CALL (p) {
  OPTIONAL MATCH (p)<-[d:DELEGATES_TO]-(a:Principal)
  WITH p, d, a ORDER BY d.created_at DESC
  RETURN collect(d {.*, delegator_id: a.id, delegate_id: p.id, delegator_status: a.status, delegate_status: p.status}) AS received
}
CALL (p) {
  OPTIONAL MATCH (p)-[d:DELEGATES_TO]->(b:Principal)
  WITH p, d, b ORDER BY d.created_at DESC
  RETURN collect(d {.*, delegator_id: p.id, delegate_id: b.id, delegator_status: p.status, delegate_status: b.status}) AS given
}
RETURN received, given
