CREATE (j:Job {
  id: $id,
  kind: $kind,
  payload: $payload,
  status: 'pending',
  attempts: 0,
  max_attempts: $maxAttempts,
  run_at: datetime($runAt),
  created_at: datetime($now),
  trace_parent: $traceParent
})
RETURN j.id AS id
