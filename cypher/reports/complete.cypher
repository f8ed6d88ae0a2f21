// The last piece of the file goes in with the report's completion.
MATCH (r:Report {id: $id})
WHERE r.status = 'running' AND r.chunks = $seq
CREATE (:ReportChunk {report_id: $id, seq: $seq, data: $data})
SET r.chunks = $seq + 1,
    r.bytes = r.bytes + $bytes,
    r.status = 'completed',
    r.progress = 100,
    r.completed_at = datetime($now),
    r.expires_at = datetime($expiresAt),
    r.cursor = null
RETURN r.row_count AS rowCount
