MATCH (r:Report {id: $id})
RETURN r {.id, .type, .format, .parameters, .status, .requested_at, .requested_by, .started_at, .completed_at, .progress, .row_count, .error, .expires_at, .bytes} AS report
