MATCH (r:Report)
WHERE ($type IS NULL OR r.type = $type) AND ($status IS NULL OR r.status = $status)
WITH r
ORDER BY r.requested_at DESC, r.id DESC
SKIP $skip
LIMIT $limit
RETURN r {.id, .type, .format, .parameters, .status, .requested_at, .requested_by, .started_at, .completed_at, .progress, .row_count, .error, .expires_at, .bytes} AS report
