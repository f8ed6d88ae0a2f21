// One page of delegations, newest first, with the total; $delegatorId, $delegateId and $status
// (null: any) filter. A principal named by a filter anchors the walk on its node.
CALL () {
  MATCH (a:Principal)-[d:DELEGATES_TO]->(b:Principal)
  WHERE ($delegatorId IS NULL OR a.id = $delegatorId) AND ($delegateId IS NULL OR b.id = $delegateId)
    AND ($status IS NULL OR d.status = $status)
  RETURN count(d) AS total
}
CALL () {
  MATCH (a:Principal)-[d:DELEGATES_TO]->(b:Principal)
  WHERE ($delegatorId IS NULL OR a.id = $delegatorId) AND ($delegateId IS NULL OR b.id = $delegateId)
    AND ($status IS NULL OR d.status = $status)
  WITH a, d, b
  ORDER BY d.created_at DESC, d.id DESC
  SKIP $skip
  LIMIT $limit
  RETURN collect(d {.*, delegator_id: a.id, delegate_id: b.id, delegator_status: a.status, delegate_status: b.status}) AS delegations
}
RETURN total, delegations
