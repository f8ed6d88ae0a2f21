// A run of the report's job begins: from where the last stored piece ends (a run cut short by a
// crash or a shutdown resumes there), or from nothing.
MATCH (r:Report {id: $id})
SET r.status = CASE WHEN r.status IN ['completed', 'failed'] THEN r.status ELSE 'running' END,
    r.started_at = coalesce(r.started_at, datetime($now))
RETURN r {.id, .type, .format, .parameters, .status, .requested_at, .requested_by, .cursor, .row_count, .chunks, .bytes, .total, .scanned, .exhausted} AS report
