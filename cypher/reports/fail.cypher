// A report that failed for good keeps no part of its file.
MATCH (r:Report {id: $id})
WHERE r.status IN ['pending', 'running']
SET r.status = 'failed', r.error = $error, r.completed_at = datetime($now), r.cursor = null
WITH r
CALL (r) {
  MATCH (c:ReportChunk {report_id: r.id})
  DELETE c
}
RETURN r.id AS id
