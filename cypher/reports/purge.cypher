// Reports past their retention go with their files, a batch at a time.
MATCH (r:Report)
WHERE r.expires_at < datetime($now)
   OR (r.status = 'failed' AND r.completed_at < datetime($failedBefore))
WITH r LIMIT $batch
CALL (r) {
  MATCH (c:ReportChunk {report_id: r.id})
  DELETE c
}
DELETE r
RETURN count(*) AS removed
