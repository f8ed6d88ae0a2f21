CREATE (r:Report {
  id: $id,
  type: $type,
  format: $format,
  parameters: $parameters,
  status: 'pending',
  requested_at: datetime($now),
  requested_by: $requestedBy,
  progress: 0,
  row_count: 0,
  bytes: 0,
  chunks: 0
})
RETURN r {.id, .type, .format, .parameters, .status, .requested_at, .requested_by, .started_at, .completed_at, .progress, .row_count, .error, .expires_at, .bytes} AS report
